package io.warpdata.daemon.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** systemd/warpd.service: valid for systemd, and sandboxed without hiding the mount. */
class SystemdUnitIT {
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    @TempDir
    Path root;

    @Test
    void installedUnitPassesSystemdAnalyzeVerify() throws Exception {
        assumeTrue(onPath("systemd-analyze"),
                "systemd-analyze is not installed (apt-get install systemd): the unit was not verified");
        ScriptRun install = ScriptRun.run(
                List.of(ScriptRun.repoRoot().resolve("scripts/install").toString(), "--root", root.toString()),
                Map.of("WARP_JAR", ScriptRun.builtJar().toString()), TIMEOUT);
        assertThat(install.exitCode()).as(install.toString()).isZero();
        // verify checks that ExecStart's program exists and is executable: point it at the staged
        // launcher (the unit itself names the final path, /usr/local/bin/warpd).
        Path unit = root.resolve("warpd.service");
        Files.writeString(unit, Files.readString(root.resolve("etc/systemd/system/warpd.service"))
                .replace("/usr/local/bin/warpd", root.resolve("usr/local/bin/warpd").toString()));

        ScriptRun verify = ScriptRun.run(List.of("systemd-analyze", "verify", "--man=no", unit.toString()),
                Map.of(), TIMEOUT);

        assertThat(verify.exitCode()).as(verify.toString()).isZero();
        assertThat(verify.stdout() + verify.stderr()).as("systemd-analyze warnings").isBlank();
    }

    @Test
    void unitSetsUpNoPrivateMountNamespaceThatWouldHideTheMount() throws Exception {
        // Any of these makes systemd run warpd in a mount namespace whose mounts never reach the
        // host: /warp would be empty for every user (see the comment at the top of the unit).
        List<String> namespacing = List.of("ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices",
                "PrivateMounts", "ReadWritePaths", "ReadOnlyPaths", "InaccessiblePaths", "TemporaryFileSystem",
                "BindPaths", "BindReadOnlyPaths", "ProtectKernelTunables", "ProtectKernelModules",
                "ProtectKernelLogs", "ProtectControlGroups", "ProtectProc", "MountFlags", "DynamicUser");

        assertThat(directives()).noneMatch(d -> namespacing.contains(d.substring(0, d.indexOf('='))));
    }

    @Test
    void unitRunsUnprivilegedWithOnlyTheCapabilityToMount() throws Exception {
        assertThat(directives()).contains("User=warp", "NoNewPrivileges=yes",
                "AmbientCapabilities=CAP_SYS_ADMIN", "CapabilityBoundingSet=CAP_SYS_ADMIN",
                "DevicePolicy=closed", "DeviceAllow=/dev/fuse rw", "Restart=on-failure",
                "RuntimeDirectory=warp", "CacheDirectory=warp");
    }

    private static List<String> directives() throws Exception {
        return Files.readAllLines(ScriptRun.repoRoot().resolve("systemd/warpd.service")).stream()
                .map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#") && !l.startsWith("[") && l.contains("="))
                .toList();
    }

    private static boolean onPath(String program) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(dir -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, program)));
    }
}
