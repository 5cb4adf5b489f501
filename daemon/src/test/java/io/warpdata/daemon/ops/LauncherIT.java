package io.warpdata.daemon.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** scripts/warpd and scripts/warpctl: choosing a Java 21+ and the flags the JVM gets. */
class LauncherIT {
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    @TempDir
    Path dir;
    private Path oldJavaBin;
    private Path jvmRoot;

    @BeforeEach
    void fakeAnOldJavaFirstOnPath() throws Exception {
        // A "java" that claims to be 17, found first on PATH (Debian's default java is 17).
        oldJavaBin = Files.createDirectories(dir.resolve("old-jdk/bin"));
        executable(oldJavaBin.resolve("java"), "#!/bin/sh\necho 'openjdk version \"17.0.15\" 2025-04-15' >&2\n");
        jvmRoot = Files.createDirectories(dir.resolve("jvm"));
    }

    @Test
    void refusesJavaOlderThan21AndSaysWhatToInstall() throws Exception {
        ScriptRun run = launch("warpctl", Map.of("JAVA_HOME", dir.resolve("old-jdk").toString()));

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.stderr()).contains("needs a Java runtime 21 or newer", "old-jdk", "openjdk-21");
    }

    @Test
    void picksAJava21PlusUnderTheJvmDirectoryWhenPathHasAnOldOne() throws Exception {
        Path current = Path.of(System.getProperty("java.home"));
        Path wrapper = Files.createDirectories(jvmRoot.resolve("jdk-current/bin"));
        executable(wrapper.resolve("java"), "#!/bin/sh\nexec '" + current.resolve("bin/java") + "' \"$@\"\n");

        ScriptRun run = launch("warpd", Map.of("WARP_JAVA_OPTS", "-XshowSettings:properties"));

        assertThat(run.stderr()).as(run.toString())
                .contains("java.home = " + current)
                .contains("java.class.path = " + ScriptRun.builtJar());
    }

    @Test
    void daemonRunsWithG1AndExitsOnOutOfMemory() throws Exception {
        Path current = Path.of(System.getProperty("java.home"));
        ScriptRun run = launch("warpd", Map.of("JAVA_HOME", current.toString(),
                "WARP_JAVA_OPTS", "-XshowSettings:vm -XX:+PrintCommandLineFlags"));

        assertThat(run.stdout() + run.stderr()).as(run.toString())
                .contains("-XX:+ExitOnOutOfMemoryError", "-XX:+UseG1GC");
    }

    @Test
    void daemonGetsABoundedHeapAndDirectMemoryThatTheEnvironmentCanChange() throws Exception {
        Map<String, String> env = Map.of("JAVA_HOME", System.getProperty("java.home"),
                "WARP_JAVA_OPTS", "-XX:+PrintCommandLineFlags");

        ScriptRun defaults = launch("warpd", env);
        ScriptRun raised = launch("warpd", Map.of("JAVA_HOME", System.getProperty("java.home"),
                "WARP_HEAP", "3g", "WARP_DIRECT_MEMORY", "256m", "WARP_JAVA_OPTS", "-XX:+PrintCommandLineFlags"));
        ScriptRun overridden = launch("warpd", Map.of("JAVA_HOME", System.getProperty("java.home"),
                "WARP_JAVA_OPTS", "-Xmx2g -XX:+PrintCommandLineFlags"));

        assertThat(defaults.stdout() + defaults.stderr()).as(defaults.toString())
                .contains("-XX:MaxHeapSize=402653184", "-XX:MaxDirectMemorySize=134217728");
        assertThat(raised.stdout() + raised.stderr()).as(raised.toString())
                .contains("-XX:MaxHeapSize=3221225472", "-XX:MaxDirectMemorySize=268435456");
        assertThat(overridden.stdout() + overridden.stderr()).as(overridden.toString())
                .contains("-XX:MaxHeapSize=2147483648");
    }

    /**
     * warpd runs with two glibc malloc arenas unless the environment sets their number: with
     * glibc's default (8 per core) a long epoch's arenas held twice what was in use
     * (docs/bench.md, "Native memory in a long epoch"). warpctl, a short-lived client, is left alone.
     */
    @Test
    void daemonRunsWithTwoMallocArenasUnlessTheEnvironmentSetsThem() throws Exception {
        Path current = Path.of(System.getProperty("java.home"));
        Path seen = dir.resolve("seen.txt");
        Path wrapper = Files.createDirectories(jvmRoot.resolve("jdk-current/bin"));
        // Records the environment of the launch that runs the jar (not of the version probes).
        executable(wrapper.resolve("java"), "#!/bin/sh\ncase \"$*\" in *-jar*) echo \"${MALLOC_ARENA_MAX:-unset}\" >> '"
                + seen + "' ;; esac\nexec '" + current.resolve("bin/java") + "' \"$@\"\n");

        ScriptRun defaults = launch("warpd", Map.of());
        ScriptRun chosen = launch("warpd", Map.of("MALLOC_ARENA_MAX", "8"));
        ScriptRun client = launch("warpctl", Map.of());

        assertThat(Files.exists(seen) ? Files.readAllLines(seen) : List.of()).as(defaults + "\n" + chosen + "\n" + client)
                .containsExactly("2", "8", "unset");
    }

    @Test
    void memoryDefaultsAreWrittenOnceAndTheDocsStateThem() throws Exception {
        Path repo = ScriptRun.repoRoot();
        String common = Files.readString(repo.resolve("scripts/lib/common.sh"));
        java.util.regex.Matcher heap = java.util.regex.Pattern.compile("(?m)^WARP_DEFAULT_HEAP=(\\d+)m$").matcher(common);
        java.util.regex.Matcher direct = java.util.regex.Pattern.compile("(?m)^WARP_DEFAULT_DIRECT_MEMORY=(\\d+)m$").matcher(common);
        assertThat(heap.find()).as("WARP_DEFAULT_HEAP in common.sh").isTrue();
        assertThat(direct.find()).as("WARP_DEFAULT_DIRECT_MEMORY in common.sh").isTrue();

        // The launcher, the installer and the unit name no default of their own.
        for (String file : List.of("scripts/warpd", "scripts/install", "systemd/warpd.service")) {
            assertThat(Files.readString(repo.resolve(file))).as(file)
                    .doesNotContainPattern("(?i)default\\s+\\d+\\s*[mg]")
                    .doesNotContainPattern("Environment=.*WARP_(HEAP|DIRECT_MEMORY)");
        }
        String readme = Files.readString(repo.resolve("README.md")).replaceAll("\\s+", " ");
        assertThat(readme).contains("a " + heap.group(1) + " MiB heap", direct.group(1) + " MiB of direct memory");
        assertThat(Files.readString(repo.resolve("systemd/warpd.conf")))
                .contains("WARP_HEAP, default " + heap.group(1) + "m", "WARP_DIRECT_MEMORY, default " + direct.group(1) + "m");
    }

    private ScriptRun launch(String program, Map<String, String> extraEnv) throws Exception {
        Map<String, String> env = new java.util.HashMap<>(extraEnv);
        env.put("PATH", oldJavaBin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        env.put("WARP_JVM_ROOT", jvmRoot.toString());
        env.put("WARP_JAR", ScriptRun.builtJar().toString());
        env.putIfAbsent("JAVA_HOME", "");
        // Empty counts as not set, for the launcher and for glibc: a value in the user's shell must not leak in.
        env.putIfAbsent("MALLOC_ARENA_MAX", "");
        return ScriptRun.run(List.of(ScriptRun.repoRoot().resolve("scripts").resolve(program).toString(),
                "--help"), env, TIMEOUT);
    }

    @Test
    void scriptsThatStartWarpdInstallLibfuse2WhenTheLinkerCannotFindIt() throws Exception {
        // A fresh Debian box: fusermount there, libfuse.so.2 not (scripts/scale failed minutes in,
        // warpd unable to mount). apt-get, dpkg-query and ldconfig are fakes first on PATH; apt-get
        // records what it was asked. ensure_packages installs only as root, which the ITs run as.
        Path bin = Files.createDirectories(dir.resolve("fake-bin"));
        Path asked = dir.resolve("apt-asked");
        executable(bin.resolve("apt-get"), "#!/bin/sh\necho \"$*\" >> '" + asked + "'\n");
        executable(bin.resolve("dpkg-query"), "#!/bin/sh\nexit 1\n");
        executable(bin.resolve("fusermount"), "#!/bin/sh\nexit 0\n");
        executable(bin.resolve("ldconfig"), "#!/bin/sh\necho '\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6'\n");
        String path = bin + ":" + System.getenv("PATH");
        List<String> ensure = List.of("bash", "-c", "source scripts/lib/common.sh && ensure_fuse && echo ensured");

        ScriptRun missing = ScriptRun.run(ensure, Map.of("PATH", path, "WARP_APT_UPDATED", ""), TIMEOUT);

        assertThat(missing.exitCode()).as(missing.toString()).isZero();
        assertThat(Files.readAllLines(asked)).as(missing.toString())
                .containsExactly("update -q", "install -y -q --no-install-recommends libfuse2");

        Files.delete(asked);
        executable(bin.resolve("ldconfig"), "#!/bin/sh\necho '\tlibfuse.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libfuse.so.2'\n");
        ScriptRun present = ScriptRun.run(ensure, Map.of("PATH", path, "WARP_APT_UPDATED", ""), TIMEOUT);

        assertThat(present.stdout()).as(present.toString()).contains("ensured");
        assertThat(asked).doesNotExist();
        for (String script : List.of("scale", "epochs", "soak", "bench", "demo")) {
            assertThat(Files.readString(ScriptRun.repoRoot().resolve("scripts").resolve(script)))
                    .as("scripts/" + script + " starts warpd, so it makes sure libfuse2 is there").contains("ensure_fuse");
        }
    }

    private static void executable(Path file, String content) throws Exception {
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
