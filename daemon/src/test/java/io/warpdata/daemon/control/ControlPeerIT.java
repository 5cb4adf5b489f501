package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Peers running as another uid, via {@code setpriv --reuid=65534} and a tiny python3 client
 * speaking the protocol over AF_UNIX: SO_PEERCRED identifies them and the policy applies.
 */
class ControlPeerIT {
    private static final int NOBODY = 65534;
    private static final String CLIENT = """
            import json, socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            f = s.makefile("rwb")
            out = {}
            for i, (op, args) in enumerate(json.loads(sys.argv[2])):
                f.write((json.dumps({"id": i, "op": op, "args": args}) + "\\n").encode())
                f.flush()
                while True:
                    m = json.loads(f.readline())
                    if "event" not in m:
                        out[op] = m
                        break
            print(json.dumps(out))
            """;

    private Path base;
    private Path secret;
    private ControlWorld world;
    private ControlServer server;

    @BeforeEach
    void setUp() throws IOException {
        // Under /tmp, traversable by others: the socket directory itself is created 0750 root:nogroup.
        base = Files.createTempDirectory(Path.of("/tmp"), "warp-peer-it");
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
        // A folder to publish as an artifact, readable by root only.
        secret = Files.createDirectories(base.resolve("secret"));
        Files.writeString(secret.resolve("a.txt"), "only root may read this");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rwx------"));
        world = new ControlWorld(base);
    }

    @AfterEach
    void tearDown() throws IOException {
        if (server != null) {
            server.close();
        }
        world.close();
        try (var walk = Files.walk(base)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private void start(Optional<String> controlGroup) {
        UserDatabase users = EtcUserDatabase.system();
        AccessPolicy policy = new AccessPolicy(ProcessIdentity.uid(), "root",
                controlGroup.map(g -> new AccessPolicy.Group(g, users.gid(g).orElseThrow())));
        server = ControlServer.start(new ControlServer.Config(base.resolve("run/warpd.sock"), Optional.of(NOBODY)),
                world.operations(policy), policy, new PeerResolver(users));
    }

    private JsonNode asNobody(String requests) throws Exception {
        Process p = new ProcessBuilder("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups",
                "/usr/bin/python3", "-c", CLIENT, server.socketPath().toString(), requests)
                .redirectErrorStream(true).start();
        try {
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("python client finished").isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(out).isZero();
            return ControlProtocol.json().readTree(out);
        } finally {
            p.destroyForcibly();
        }
    }

    private String requests() {
        return "[[\"status\",{}],[\"cache.gc\",{\"limit\":0}],"
                + "[\"publish\",{\"dataset\":\"ws/x\",\"artifacts\":{\"files\":[\"" + secret + "\"]}}],"
                + "[\"warm\",{\"dataset\":\"ws/name\",\"tables\":[\"main\"]}]]";
    }

    @Test
    void otherUidGetsStatusAndWarmButIsRefusedGcAndPublish() throws Exception {
        start(Optional.empty());
        JsonNode r = asNobody(requests());
        assertThat(r.get("status").get("ok").asBoolean()).isTrue();
        assertThat(r.get("status").get("result").get("peer").get("uid").asInt()).isEqualTo(NOBODY);
        assertThat(r.get("status").get("result").get("peer").get("privileged").asBoolean()).isFalse();
        assertThat(r.get("warm").get("ok").asBoolean()).isTrue();
        for (String op : List.of("cache.gc", "publish")) {
            JsonNode err = r.get(op).get("error");
            assertThat(err.get("type").asText()).as(op).isEqualTo("AccessDenied");
            assertThat(err.get("message").asText()).contains("uid 65534", op);
            assertThat(err.get("next_step").asText()).contains("root");
        }
        assertThat(world.catalog.versions(io.warpdata.manifest.DatasetId.parse("ws/x"))).isEmpty();
    }

    /**
     * A control-group member may gc, but a root warpd publishes for nobody else: it would read with
     * its own rights, and a check of the caller's access cannot hold against a path the caller
     * changes between the check and the read (a symlink flipped to a root-only folder was published).
     */
    @Test
    void controlGroupMemberMayGcButARootWarpdPublishesOnlyForRoot() throws Exception {
        start(Optional.of("nogroup"));
        world.cache.warm(world.mainShards.get(0), Long.MAX_VALUE, (done, total) -> { }, () -> false);
        long cached = world.cache.stats().sizeBytes();
        assertThat(cached).isPositive();
        JsonNode r = asNobody(requests());
        assertThat(r.get("cache.gc").get("ok").asBoolean()).isTrue();
        assertThat(r.get("cache.gc").get("result").get("bytes_before").asLong()).isEqualTo(cached);
        assertThat(r.get("cache.gc").get("result").get("bytes_after").asLong()).isZero();
        JsonNode err = r.get("publish").get("error");
        assertThat(err.get("type").asText()).isEqualTo("AccessDenied");
        assertThat(err.get("message").asText()).contains("would read your files (uid 65534) with its own rights");
        assertThat(err.get("next_step").asText()).contains("warpctl publish --no-daemon");
        assertThat(world.catalog.versions(io.warpdata.manifest.DatasetId.parse("ws/x"))).isEmpty();

        // readable to the caller or not: the same
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(secret.resolve("a.txt"), PosixFilePermissions.fromString("rw-r--r--"));
        JsonNode again = asNobody("[[\"publish\",{\"dataset\":\"ws/x\",\"artifacts\":{\"files\":[\"" + secret + "\"]}}]]");
        assertThat(again.get("publish").get("error").get("type").asText()).isEqualTo("AccessDenied");
        assertThat(world.catalog.versions(io.warpdata.manifest.DatasetId.parse("ws/x"))).isEmpty();
    }

    /**
     * Audit 37: warpctl sent every publish to a warpd it could reach, so each member of the
     * socket's group who typed the README's publish was refused and told to pass --no-daemon.
     * It now publishes in its own process, with its own rights, saying why.
     */
    @Test
    void warpctlPublishAsAnotherUserPublishesInItsOwnProcessInsteadOfBeingRefused() throws Exception {
        start(Optional.of("nogroup"));
        String served = "file://" + base.resolve("nobodys").resolve("store");
        world.daemon.remote = served; // no --remote given below: the store warpd says it serves (the review)
        Path jar = Files.copy(Path.of("target/warp.jar").toAbsolutePath(), base.resolve("warp.jar")); // nobody may read it here
        Path open = Files.createDirectories(base.resolve("nobodys"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path mine = Files.createDirectories(base.resolve("mine"));
        Files.writeString(mine.resolve("b.txt"), "nobody's own file");
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups",
                java, "-jar", jar.toString(), "warpctl", "--socket", server.socketPath().toString(), "publish", "ws/mine",
                "--artifact", "files=" + mine)
                .redirectErrorStream(true);
        pb.environment().put("HOME", open.toString());
        pb.environment().remove("WARP_SOCKET");
        pb.environment().remove("WARP_REMOTE");
        pb.environment().remove("WARP_S3_ENDPOINT");
        Process p = pb.start();
        try {
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("warpctl finished").isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(out).isZero();
            assertThat(out).contains("publishes only for its own user and root: publishing here")
                    .doesNotContain("AccessDenied").doesNotContain("may not run");
        } finally {
            p.destroyForcibly();
        }
        assertThat(world.catalog.versions(io.warpdata.manifest.DatasetId.parse("ws/mine"))).as("not through warpd's store")
                .isEmpty();
        try (var store = io.warpdata.store.BlobStores.open("file://" + open.resolve("store"), Optional.empty())) {
            assertThat(new io.warpdata.catalog.Catalog(store, io.warpdata.catalog.Catalog.Config.defaults(), System::nanoTime)
                    .versions(io.warpdata.manifest.DatasetId.parse("ws/mine"))).hasSize(1);
        }
    }

    /**
     * The review: the unit runs warpd as user warp, which may give its socket only to its own
     * groups; another socket-group failed at the socket, after the mount. Refused first.
     */
    @Test
    void aWarpdThatIsNotRootRefusesASocketGroupItIsNotInBeforeMounting() throws Exception {
        Path jar = Files.copy(Path.of("target/warp.jar").toAbsolutePath(), base.resolve("warp.jar"));
        Path open = Files.createDirectories(base.resolve("nobodys-warpd"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups",
                java, "-jar", jar.toString(), "warpd", "--mount", open.resolve("mnt").toString(), "--remote",
                "file://" + open.resolve("store"), "--cache-dir", open.resolve("cache").toString(), "--socket",
                open.resolve("run/warpd.sock").toString(), "--socket-group", "root").redirectErrorStream(true);
        pb.environment().put("HOME", open.toString());
        Process p = pb.start();
        try {
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("warpd gave up").isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(out).isEqualTo(1);
            assertThat(out).contains("--socket-group root: warpd runs as nobody (uid 65534), which is not in group root")
                    .doesNotContain("mounted");
            assertThat(Files.exists(open.resolve("mnt"))).as("nothing made for a mount").isFalse();
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void peerOutsideTheSocketGroupCannotConnectAtAll() throws Exception {
        start(Optional.empty());
        Process p = new ProcessBuilder("setpriv", "--reuid=" + NOBODY, "--regid=1", "--clear-groups",
                "/usr/bin/python3", "-c", CLIENT, server.socketPath().toString(), "[[\"status\",{}]]")
                .redirectErrorStream(true).start();
        try {
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.exitValue()).isNotZero();
            assertThat(out).contains("PermissionError");
        } finally {
            p.destroyForcibly();
        }
    }
}
