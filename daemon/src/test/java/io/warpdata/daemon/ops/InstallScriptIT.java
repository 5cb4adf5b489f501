package io.warpdata.daemon.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** scripts/install into a staging root (--root): what a package or an admin gets. */
class InstallScriptIT {
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    @TempDir
    Path root;

    @Test
    void installsJarLaunchersUnitAndConfigIntoTheStagingRoot() throws Exception {
        ScriptRun run = install("--root", root.toString());

        assertThat(run.exitCode()).as(run.toString()).isZero();
        // audit 27: a staged tree is not importable yet by the machine's python3; it said it was.
        assertThat(run.stdout() + run.stderr()).doesNotContain("import warpdata works in /usr/bin/python3")
                .contains("staged for /usr/bin/python3 in " + root);
        Path lib = root.resolve("usr/local/lib/warp");
        assertThat(lib.resolve("warp.jar")).isRegularFile().hasSameBinaryContentAs(ScriptRun.builtJar());
        for (String program : List.of("warpd", "warpctl")) {
            assertThat(lib.resolve("bin").resolve(program)).isExecutable();
            Path link = root.resolve("usr/local/bin").resolve(program);
            assertThat(Files.isSymbolicLink(link)).as(link + " is a symlink").isTrue();
            assertThat(Files.readSymbolicLink(link)).as("relative, so the staging root can move")
                    .isEqualTo(Path.of("../lib/warp/bin").resolve(program));
            assertThat(link).isExecutable();
        }
        assertThat(lib.resolve("bin/lib/common.sh")).isRegularFile();
        assertThat(lib.resolve("python/warpdata/__init__.py")).isRegularFile();
        assertThat(lib.resolve("python/warpdata/dataset.py")).hasSameTextualContentAs(
                ScriptRun.repoRoot().resolve("python/warpdata/dataset.py"));
        // And where Debian's python3 imports from: import warpdata works with the staged tree on its path.
        try (var dirs = Files.list(root.resolve("usr/local/lib"))) {
            Path site = dirs.filter(d -> d.getFileName().toString().startsWith("python3.")).findFirst().orElseThrow()
                    .resolve("dist-packages");
            var p = new ProcessBuilder("/usr/bin/python3", "-c", "import sys; sys.path.insert(0, sys.argv[1]); import warpdata;"
                    + " print(warpdata.__file__)", site.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(p.waitFor()).as(out).isZero();
            assertThat(out.trim()).isEqualTo(site.resolve("warpdata/__init__.py").toString());
        }
        assertThat(root.resolve("etc/systemd/system/warpd.service")).content()
                .contains("ExecStart=/usr/local/bin/warpd --config /etc/warp/warpd.conf");
        assertThat(root.resolve("etc/warp/warpd.conf")).content().contains("mount = /warp");
        assertThat(Files.getPosixFilePermissions(root.resolve("etc/warp/warpd.env")))
                .as("credentials: the owner's only (the warp group is who may use the socket)")
                .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        // one an earlier install left 0640 is closed again
        Files.setPosixFilePermissions(root.resolve("etc/warp/warpd.env"),
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));
        ScriptRun again = install("--root", root.toString());
        assertThat(again.exitCode()).as(again.toString()).isZero();
        assertThat(again.stdout() + again.stderr()).contains("readable by its owner only");
        assertThat(Files.getPosixFilePermissions(root.resolve("etc/warp/warpd.env")))
                .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void installsBashAndZshCompletionAndManPages() throws Exception {
        ScriptRun run = install("--root", root.toString());

        assertThat(run.exitCode()).as(run.toString()).isZero();
        Path completions = root.resolve("usr/local/share/bash-completion/completions");
        ScriptRun registered = ScriptRun.run(List.of("bash", "-c", "source " + completions.resolve("warpctl")
                + " && source " + completions.resolve("warpd") + " && complete -p warpctl warpd"), Map.of(), TIMEOUT);
        assertThat(registered.exitCode()).as(registered.toString()).isZero();
        assertThat(registered.stdout()).contains("-F _complete_warpctl", " warpctl\n", "-F _complete_warpd", " warpd\n");
        assertThat(root.resolve("usr/local/share/warp/warp.zsh")).content().contains("bashcompinit", "_complete_warpctl");

        // scripts/test installs asciidoctor, so the man pages are real roff here.
        Path man1 = root.resolve("usr/local/share/man/man1");
        assertThat(man1.resolve("warpd.1")).content().contains(".TH \"WARPD\"", "metrics\\-listen");
        assertThat(man1.resolve("warpctl.1")).isRegularFile();
        assertThat(man1.resolve("warpctl-status.1")).isRegularFile();
        ScriptRun man = ScriptRun.run(List.of("man", "-l", man1.resolve("warpctl-metrics.1").toString()),
                Map.of("MANPAGER", "cat", "MANWIDTH", "100"), TIMEOUT);
        assertThat(man.exitCode()).as(man.toString()).isZero();
        assertThat(man.stdout()).contains("warpctl-metrics", "Prometheus");
        assertThat(run.stdout()).contains("zsh: add 'source /usr/local/share/warp/warp.zsh' to ~/.zshrc");
    }

    @Test
    void installedLauncherRunsTheInstalledJar() throws Exception {
        assertThat(install("--root", root.toString()).exitCode()).isZero();

        // -XshowSettings prints the class path the JVM really got, then the program runs as usual.
        ScriptRun run = ScriptRun.run(List.of(root.resolve("usr/local/bin/warpctl").toString()),
                Map.of("WARP_JAVA_OPTS", "-XshowSettings:properties"), TIMEOUT);

        assertThat(run.stderr()).as(run.toString())
                .contains("java.class.path = " + root.resolve("usr/local/lib/warp/warp.jar"))
                .doesNotContain("Building Warp");
    }

    @Test
    void customPrefixMovesTheFilesAndTheUnitsExecStart() throws Exception {
        ScriptRun run = install("--prefix", "/opt/warp", "--root", root.toString());

        assertThat(run.exitCode()).as(run.toString()).isZero();
        assertThat(root.resolve("opt/warp/lib/warp/warp.jar")).isRegularFile();
        assertThat(root.resolve("opt/warp/bin/warpd")).isExecutable();
        assertThat(root.resolve("etc/systemd/system/warpd.service")).content()
                .contains("ExecStart=/opt/warp/bin/warpd --config")
                .doesNotContain("/usr/local/bin/warpd");
    }

    @Test
    void reinstallingKeepsTheAdministratorsConfiguration() throws Exception {
        assertThat(install("--root", root.toString()).exitCode()).isZero();
        Path conf = root.resolve("etc/warp/warpd.conf");
        Files.writeString(conf, "remote = s3://production-bucket\n");

        ScriptRun again = install("--root", root.toString());

        assertThat(again.exitCode()).as(again.toString()).isZero();
        assertThat(conf).hasContent("remote = s3://production-bucket");
    }

    @Test
    void refusesARelativePrefix() throws Exception {
        ScriptRun run = install("--prefix", "usr/local", "--root", root.toString());

        assertThat(run.exitCode()).isNotZero();
        assertThat(run.stderr()).contains("--prefix must be an absolute path");
        assertThat(root.resolve("usr")).doesNotExist();
    }

    private static ScriptRun install(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>();
        command.add(ScriptRun.repoRoot().resolve("scripts/install").toString());
        command.addAll(List.of(args));
        return ScriptRun.run(command, Map.of("WARP_JAR", ScriptRun.builtJar().toString()), TIMEOUT);
    }
}
