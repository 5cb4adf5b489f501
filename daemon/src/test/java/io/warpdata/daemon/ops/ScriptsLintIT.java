package io.warpdata.daemon.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The shell entry points parse, and pass shellcheck where it is installed. */
class ScriptsLintIT {
    private static final Duration TIMEOUT = Duration.ofMinutes(1);
    private static final List<String> SCRIPTS = List.of("scripts/warpd", "scripts/warpctl", "scripts/demo",
            "scripts/soak", "scripts/test", "scripts/install", "scripts/lib/common.sh", ".ci/run");

    @Test
    void everyScriptParsesAndEntryPointsAreExecutable() throws Exception {
        for (String script : SCRIPTS) {
            Path file = ScriptRun.repoRoot().resolve(script);
            ScriptRun syntax = ScriptRun.run(List.of("bash", "-n", file.toString()), Map.of(), TIMEOUT);
            assertThat(syntax.exitCode()).as(script + ": " + syntax).isZero();
            if (!script.endsWith(".sh")) {
                assertThat(file).as(script).isExecutable();
                assertThat(Files.readAllLines(file).get(0)).as(script).isEqualTo("#!/usr/bin/env bash");
            }
        }
    }

    @Test
    void scriptsPassShellcheck() throws Exception {
        assumeTrue(Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                        .anyMatch(dir -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, "shellcheck"))),
                "shellcheck is not installed (apt-get install shellcheck): the scripts were not linted");
        List<String> command = new ArrayList<>(List.of("shellcheck", "-x", "-P", "SCRIPTDIR"));
        SCRIPTS.forEach(s -> command.add(ScriptRun.repoRoot().resolve(s).toString()));

        ScriptRun lint = ScriptRun.run(command, Map.of(), TIMEOUT);

        assertThat(lint.exitCode()).as(lint.toString()).isZero();
    }
}
