package io.warpdata.daemon.mount;

import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A store that takes connections and never answers (issue 23): a real S3Proxy in its own process
 * stopped with SIGSTOP under a running mount, then a listener that accepts and never answers in
 * its place. Every class of FUSE operation (readdir of the root, a workspace and a version,
 * lookup, getattr, readlink, statfs, reads of cached and of uncached data) is timed against the
 * bound, through real clients (ls, stat, readlink, sha256sum, cat), and must keep its answer:
 * known names and cached bytes keep serving, uncached reads fail with EIO.
 *
 * <p>Eight datasets in one workspace, so that a listing past the pointer TTL re-checks eight
 * pointers (one after another, each with a 120 s timeout, it froze {@code ls} for minutes).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HungStoreIT {
    /** The issue's bound for any FUSE operation while the store hangs. */
    private static final long BOUND_MS = 15_000;
    private static final DatasetId WARM = new DatasetId("hung", "warm");
    private static final DatasetId COLD = new DatasetId("hung", "cold");
    private static final int EXTRAS = 6;

    private static MountedStore m;
    private static Path mount;
    private static Path warmSrc;
    private static VersionHash warm;
    private static VersionHash cold;
    private static ServerSocket silent;
    private static final List<Socket> held = new ArrayList<>();

    @BeforeAll
    static void publishAndMount() throws IOException {
        m = MountedStore.serveFromOwnProcess("it-hung");
        mount = m.mount;
        warmSrc = m.writeSample("warm-src", 2_000, 3, 1);
        warm = m.publish(WARM, warmSrc);
        cold = m.publish(COLD, m.writeSample("cold-src", 2_000, 11, 2));
        for (int i = 0; i < EXTRAS; i++) {
            m.publish(new DatasetId("hung", "extra" + i), warmSrc);
        }
        m.mount("--pointer-ttl", "1s");
    }

    @AfterAll
    static void stopEverything() throws IOException {
        try {
            if (m != null) {
                m.close();
            }
        } finally {
            closeSilentListener();
        }
    }

    /** A command's result and how long it took. */
    private record Timed(Shell.Result result, long ms) {
    }

    /** Runs a client command against the mount and checks it answered within the bound. */
    private static Timed within(String what, String... command) {
        long start = System.nanoTime();
        Shell.Result r = Shell.run(mount, Map.of(), 120, List.of(command));
        long ms = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("HungStoreIT: %s: %d ms (exit %d)%n", what, ms, r.exit());
        assertThat(ms).as("%s answered within %d ms (%s)", what, BOUND_MS, r).isLessThan(BOUND_MS);
        return new Timed(r, ms);
    }

    private static Map<String, String> warmSource() {
        Map<String, String> expected = new TreeMap<>();
        SampleData.hashes(warmSrc.resolve("main")).forEach((p, h) -> expected.put("main/" + p, h));
        SampleData.hashes(warmSrc.resolve("images")).forEach((p, h) -> expected.put("images/" + p, h));
        return expected;
    }

    private static Map<String, String> sha256OfEveryFile(Shell.Result r) {
        Map<String, String> out = new TreeMap<>();
        for (String line : r.requireSuccess().out().split("\n")) {
            if (!line.isBlank()) {
                out.put(line.substring(66).replaceFirst("^\\./", ""), line.substring(0, 64));
            }
        }
        return out;
    }

    private static String coldMember() {
        return "hung/cold@" + cold.hex() + "/images/cat/img0.png";
    }

    private static Shell.Result warpctl(String... args) {
        return WarpdProcess.warpctl(m.socket(), Map.of(), args);
    }

    /**
     * Every class of FUSE operation, each within the bound: known names list and resolve, cached
     * bytes are served right, uncached bytes fail with EIO, and status says the store is not
     * answering.
     */
    private static void everyOperationAnswersWithinTheBound() {
        assertThat(within("readdir of the root", "ls").result().requireSuccess().out()).contains("hung");
        Shell.Result ws = within("readdir of a workspace past the pointer TTL", "ls", "hung").result().requireSuccess();
        assertThat(ws.out().split("\n")).contains("warm", "cold", "warm@" + warm.hex(), "cold@" + cold.hex(), "extra0",
                "extra" + (EXTRAS - 1));
        within("lookup and getattr of a latest link", "stat", "hung/warm").result().requireSuccess();
        assertThat(within("readlink", "readlink", "hung/cold").result().requireSuccess().out().trim())
                .isEqualTo("cold@" + cold.hex());
        assertThat(within("readdir of a version", "ls", "hung/warm/").result().requireSuccess().out())
                .contains("images", "main");
        within("statfs", "stat", "-f", ".").result().requireSuccess();
        Timed cached = within("reads of cached data", "bash", "-c",
                "cd hung/warm/ && find . -type f -not -path './.warp/*' -print0 | sort -z | xargs -0 sha256sum");
        assertThat(sha256OfEveryFile(cached.result())).isEqualTo(warmSource());
        Shell.Result uncached = within("a read of uncached data", "cat", coldMember()).result();
        assertThat(uncached.exit()).isNotZero();
        assertThat(uncached.err()).contains("Input/output error");
        assertThat(within("lookup of a name never seen", "stat", "hung/never-published").result().exit()).isNotZero();
    }

    @Test
    @Order(1)
    void beforeTheHangTheWarmDatasetIsReadWholeAndTheColdOneListed() {
        Shell.Result r = Shell.run(mount, Map.of(), 120, List.of("bash", "-c",
                "cd hung/warm/ && find . -type f -not -path './.warp/*' -print0 | sort -z | xargs -0 sha256sum"));
        assertThat(sha256OfEveryFile(r)).isEqualTo(warmSource());
        Shell.run(mount, Map.of(), 120, List.of("ls", "-R", "hung/cold/")).requireSuccess();
        Shell.run(mount, Map.of(), 120, List.of("ls", "hung")).requireSuccess();
    }

    @Test
    @Order(2)
    void withTheServerStoppedBySigstopEveryFuseOperationAnswersWithinTheBound() throws InterruptedException {
        m.serverProcess().stop();
        Thread.sleep(1_500); // past the pointer TTL: listings and links must be re-checked
        everyOperationAnswersWithinTheBound();
        Thread.sleep(1_500); // and again, once the store is known not to answer
        everyOperationAnswersWithinTheBound();
        Shell.Result status = warpctl("status");
        assertThat(status.out()).as(status.err()).contains("unreachable (not answering)");
    }

    @Test
    @Order(3)
    void whenTheServerAnswersAgainUncachedDataReads() throws InterruptedException {
        m.serverProcess().resume();
        // The cold table, not the cold images: those must stay uncached for the next stage.
        String table = "hung/cold@" + cold.hex() + "/main/";
        String shard = table + Shell.run(mount, Map.of(), 120, List.of("ls", table)).requireSuccess().out().split("\n")[0];
        long end = System.nanoTime() + 60_000_000_000L;
        Shell.Result r;
        do {
            Thread.sleep(500);
            r = Shell.run(mount, Map.of(), 120, List.of("sha256sum", shard));
        } while (r.exit() != 0 && System.nanoTime() < end);
        assertThat(r.exit()).as("the cold table reads once the store answers: %s", r).isZero();
        assertThat(warpctl("status").out()).contains("reachable");
    }

    @Test
    @Order(4)
    void againstAListenerThatAcceptsAndNeverAnswersWarpdStartsAndServesWhatItKnows() throws Exception {
        assertThat(m.warpd().terminate(30)).isZero();
        silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(HungStoreIT::acceptAndHold, "silent-listener");
        acceptor.setDaemon(true);
        acceptor.start();
        Map<String, String> endpoint = Map.of("WARP_S3_ENDPOINT", "http://127.0.0.1:" + silent.getLocalPort());
        long start = System.nanoTime();
        m.mount(endpoint, "--pointer-ttl", "1s");
        assertThat((System.nanoTime() - start) / 1_000_000).as("mounted without waiting on the store for long")
                .isLessThan(40_000);
        everyOperationAnswersWithinTheBound();
        assertThat(warpctl("status").out()).contains("unreachable (not answering)");
        assertThat(held).as("the listener really was asked").isNotEmpty();
    }

    private static void acceptAndHold() {
        try {
            while (!silent.isClosed()) {
                Socket s = silent.accept();
                synchronized (held) {
                    held.add(s); // read nothing, answer nothing
                }
            }
        } catch (IOException closed) {
            // the test is over
        }
    }

    private static void closeSilentListener() throws IOException {
        if (silent == null) {
            return;
        }
        if (silent != null) {
            silent.close();
        }
        synchronized (held) {
            for (Socket s : held) {
                s.close();
            }
        }
    }
}
