package io.warpdata.daemon;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class CommandDocsTest {
    @TempDir
    Path out;

    @Test
    void bashCompletionIsRegisteredAndCompletesCommandsAndOptions() throws Exception {
        CommandDocs.write(out);
        Path warpctl = out.resolve("completion/warpctl");
        Path warpd = out.resolve("completion/warpd");

        assertThat(bash("source " + warpctl + " && complete -p warpctl"))
                .startsWith("complete ").contains("-F _complete_warpctl").endsWith(" warpctl\n");
        assertThat(complete(warpctl, "_complete_warpctl", "warpctl", "ca")).contains("cache");
        assertThat(complete(warpctl, "_complete_warpctl", "warpctl", "cache", "")).contains("stats", "gc", "verify");
        assertThat(complete(warpctl, "_complete_warpctl", "warpctl", "me")).contains("metrics");
        assertThat(complete(warpctl, "_complete_warpctl", "warpctl", "status", "--so")).contains("--socket");
        assertThat(bash("source " + warpd + " && complete -p warpd")).contains("-F _complete_warpd");
        assertThat(complete(warpd, "_complete_warpd", "warpd", "--metr")).contains("--metrics-listen");
        assertThat(Files.readString(out.resolve("completion/warp.zsh")))
                .contains("bashcompinit", "_complete_warpctl", "_complete_warpd");
    }

    @Test
    void zshRegistersBothProgramsThroughBashcompinit() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/zsh")),
                "zsh is not installed (scripts/test installs it)");
        CommandDocs.write(out);
        Process p = new ProcessBuilder("zsh", "-c", "source " + out.resolve("completion/warp.zsh")
                + " && print -r -- \"${_comps[warpctl]}|${_comps[warpd]}\"").redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).contains("_bash_complete -F _complete_warpctl", "|_bash_complete -F _complete_warpd");
    }

    @Test
    void manPagesAreGeneratedForBothProgramsAndEverySubcommand() throws Exception {
        List<Path> files = CommandDocs.write(out);
        assertThat(files).contains(out.resolve("man/warpctl.adoc"), out.resolve("man/warpd.adoc"),
                out.resolve("man/warpctl-status.adoc"), out.resolve("man/warpctl-cache.adoc"));
        assertThat(Files.readString(out.resolve("man/warpd.adoc"))).contains(":doctype: manpage", "--metrics-listen",
                "Mounts versioned datasets");
        assertThat(Files.readString(out.resolve("man/warpctl.adoc"))).contains("status", "metrics", "--socket");
    }

    /** COMPREPLY of {@code function} for the command line {@code words} (the last one being completed). */
    private static String complete(Path script, String function, String... words) throws Exception {
        StringBuilder array = new StringBuilder();
        for (String w : words) {
            array.append('\'').append(w).append("' ");
        }
        String line = String.join(" ", words);
        return bash("source " + script + " && COMP_WORDS=(" + array + ") && COMP_CWORD=" + (words.length - 1)
                + " && COMP_LINE='" + line + "' && COMP_POINT=" + line.length() + " && " + function
                + " && printf '%s\\n' \"${COMPREPLY[@]}\"");
    }

    private static String bash(String script) throws Exception {
        Process p = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        return output;
    }
}
