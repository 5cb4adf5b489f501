package io.warpdata.daemon.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's commands are typed without sudo: as root they run as they are (a machine used as
 * root often has no sudo), and another user's run goes through sudo, or says how to become root.
 * The non-root runs use the unprivileged user nobody (setpriv) and a recording stand-in for sudo.
 */
class RootOrSudoIT {
    private static final Duration TIMEOUT = Duration.ofMinutes(1);

    @TempDir
    Path dir;
    private Path fakeSudoDir;
    private Path noSudoDir;

    @BeforeEach
    void standInForSudo() throws Exception {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        fakeSudoDir = Files.createDirectories(dir.resolve("with-sudo"));
        Path sudo = fakeSudoDir.resolve("sudo");
        // Records how it was asked to run the script, and does not run it.
        Files.writeString(sudo, "#!/bin/sh\necho \"sudo was asked: $*\"\n");
        Files.setPosixFilePermissions(sudo, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(fakeSudoDir, PosixFilePermissions.fromString("rwxr-xr-x"));
        noSudoDir = Files.createDirectories(dir.resolve("without-sudo"));
        Files.setPosixFilePermissions(noSudoDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void asRootWithoutSudoTheScriptsRunAsTheyAre() throws Exception {
        assumeTrue(isRoot(), "runs as root");
        String common = ScriptRun.repoRoot().resolve("scripts/lib/common.sh").toString();

        ScriptRun run = ScriptRun.run(List.of("bash", "-c", "source '" + common + "' && as_root 'needs root' /bin/false"
                + " && echo 'ran on as root'"), Map.of("PATH", noSudoDir + ":/usr/bin:/bin"), TIMEOUT);

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("ran on as root");
        assertThat(run.stderr()).doesNotContain("sudo");
    }

    @Test
    void anotherUserWithSudoIsRunAgainThroughSudoWithItsArgumentsAndPath() throws Exception {
        assumeTrue(isRoot() && Files.isExecutable(Path.of("/usr/bin/setpriv")), "runs as root, with setpriv");
        String path = fakeSudoDir + ":/usr/bin:/bin";
        Path test = ScriptRun.repoRoot().resolve("scripts/test");
        Path demo = ScriptRun.repoRoot().resolve("scripts/demo");

        ScriptRun viaTest = asNobody(List.of(test.toString(), "-Dit.test=SomeIT"), path);
        ScriptRun viaDemo = asNobody(List.of(demo.toString()), path);

        assertThat(viaTest.stdout()).as(viaTest.toString())
                .contains("sudo was asked: -E env PATH=" + path + " " + test + " -Dit.test=SomeIT");
        assertThat(viaTest.stderr()).contains("needs root", "through sudo");
        assertThat(viaDemo.stdout()).as(viaDemo.toString()).contains("sudo was asked: -E env PATH=" + path + " " + demo);
    }

    @Test
    void anotherUserWithoutSudoIsToldHowToBecomeRoot() throws Exception {
        assumeTrue(isRoot() && Files.isExecutable(Path.of("/usr/bin/setpriv")), "runs as root, with setpriv");
        Path demo = ScriptRun.repoRoot().resolve("scripts/demo");

        ScriptRun run = asNobody(List.of(demo.toString()), noSudoDir + ":/usr/bin:/bin");

        assertThat(run.exitCode()).as(run.toString()).isEqualTo(1);
        assertThat(run.stderr()).contains("needs root", "without sudo", "su -c '" + demo);
    }

    @Test
    void unitTestsNeedNoRoot() throws Exception {
        assumeTrue(isRoot() && Files.isExecutable(Path.of("/usr/bin/setpriv")), "runs as root, with setpriv");

        // A stand-in for Maven: the run reaches it as nobody, without asking sudo on the way.
        Path mvn = fakeSudoDir.resolve("mvn");
        Files.writeString(mvn, "#!/bin/sh\necho \"mvn ran as $(id -un): $*\"\n");
        Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> command = new ArrayList<>(List.of("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                ScriptRun.repoRoot().resolve("scripts/test").toString(), "--unit-only"));

        ScriptRun run = ScriptRun.run(command, Map.of("PATH", fakeSudoDir + ":/usr/bin:/bin", "HOME", dir.toString(),
                "JAVA_HOME", System.getProperty("java.home")), TIMEOUT);

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(run.stdout()).contains("mvn ran as nobody", "-DskipITs").doesNotContain("sudo was asked");
    }

    private ScriptRun asNobody(List<String> command, String path) throws Exception {
        List<String> full = new ArrayList<>(List.of("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"));
        full.addAll(command);
        return ScriptRun.run(full, Map.of("PATH", path, "HOME", dir.toString()), TIMEOUT);
    }

    private static boolean isRoot() throws Exception {
        return "0".equals(new String(new ProcessBuilder("id", "-u").start().getInputStream().readAllBytes()).strip());
    }
}
