package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.CacheCalls;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.MirrorStatus;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.PassthroughStatus;
import io.warpdata.daemon.control.protocol.StatsCall;
import io.warpdata.daemon.control.protocol.StatusCall;
import io.warpdata.daemon.control.protocol.StoreStatus;
import io.warpdata.daemon.control.protocol.Wire;
import io.warpdata.manifest.WarpException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code warpctl status}: what the running warpd is doing. */
@Command(name = "status", mixinStandardHelpOptions = true, description = "Show the running warpd: version, mount, remote, mode, uptime, open files, store, cache and its disk (with a warning when full), recent errors.")
public final class StatusCommand implements Callable<Integer> {
    /** How often --watch asks warpd for its counters. */
    static final long WATCH_INTERVAL_MILLIS = 1000;

    @Spec
    CommandSpec spec;

    @Option(names = "--watch", description = "A live view, refreshed each second: throughput, cache hit rate, GETs in flight,"
            + " busiest datasets (Ctrl-C stops it). With --json: one stats sample per line.")
    boolean watch;

    @Option(names = "--check", description = "Exit 1 when warpd answers but is degraded: its store unreachable or"
            + " failing (not --mode local), or its cache keeping nothing it fetches (the cache: line). For health checks and"
            + " alerts from scripts; without it, status exits 0 whenever warpd answers.")
    boolean check;

    @Override
    public Integer call() throws InterruptedException {
        if (watch) {
            return watch();
        }
        StatusCall.Reply s = DaemonCalls.call(spec, Calls.STATUS, Empty.INSTANCE);
        PrintWriter out = spec.commandLine().getOut();
        Doctor.Check cache = cacheCheck();
        int exit = check && degraded(s.store(), cache) ? 1 : 0;
        if (DaemonCalls.json(spec)) {
            DaemonCalls.printJson(out, s);
            return exit;
        }
        out.printf("warpd %s, up %s%n", s.version(), uptime(s.uptimeSeconds()));
        out.printf("  mount:      %s%n", s.mount());
        out.printf("  remote:     %s%s%n", s.remote(), s.endpoint() == null || s.endpoint().isEmpty() ? "" : " at " + s.endpoint());
        out.printf("  mode:       %s%n", s.mode());
        out.printf("  open files: %s%s%n", s.openFiles() == null ? "n/a" : s.openFiles(),
                s.openDirectories() != null ? " (and " + s.openDirectories() + " directories)" : "");
        out.printf("  store:      %s%n", storeLine(s.store()));
        if (cache != null) {
            cacheLines(cache).forEach(out::println);
        }
        s.mirrors().forEach(m -> out.printf("  mirror:     %s%n", mirrorLine(m)));
        if (s.passthrough() != null) {
            out.printf("  passthrough: %s%n", passthroughLine(s.passthrough()));
        }
        if (s.recentErrors().isEmpty()) {
            out.println("  recent errors: none");
        } else {
            out.println("  recent errors:");
            s.recentErrors().forEach(e -> out.println("    " + e));
        }
        StatusCall.Asker peer = s.peer() == null ? new StatusCall.Asker(-1, "?", false) : s.peer();
        out.printf("  you:        %s (uid %d)%s%n", peer.user(), peer.uid(),
                peer.privileged() ? ", may gc and cache verify" : ", read-only operations");
        out.flush();
        return exit;
    }

    /**
     * What {@code --check} fails on: a store that is down (not offline by choice), or a cache
     * that keeps nothing it fetches (its disk refusing writes, or under the free-space floor with
     * nothing of its own left to evict). Audit 38: status exited 0 with the store unreachable and
     * the cache disk under its floor, so a health check had nothing cheap to run. The warnings that
     * forecast (a disk that reaches the floor before the cache limit) or that warpd mends itself
     * (evicting to get back above the floor, few inodes, v1/ deleted) do not fail it (the review:
     * a 100 GB default cache on a smaller disk failed it for good).
     */
    static boolean degraded(StoreStatus store, Doctor.Check cache) {
        boolean storeDown = store != null && !store.reachable() && !store.offline();
        return storeDown || (cache != null && cache.status() != Doctor.Status.PASS
                && cache.detail().contains(Doctor.CACHES_NOTHING));
    }

    /**
     * The "cache:" line: doctor's check of warpd's cache (its use, the free space on its disk, and
     * a warning with its fix when the disk is under warpd's free-space floor, out of inodes,
     * refusing writes or deleted; audit 35: status said nothing of a full cache disk). None from
     * a warpd that does not answer {@code cache.stats}.
     */
    private Doctor.Check cacheCheck() {
        CacheCalls.Stats c;
        try {
            c = DaemonCalls.call(spec, Calls.CACHE_STATS, Empty.INSTANCE);
        } catch (WarpException e) {
            return null;
        }
        return Doctor.cacheCheck(c, false);
    }

    static List<String> cacheLines(Doctor.Check c) {
        if (c.status() == Doctor.Status.PASS) {
            return List.of("  cache:      " + c.detail());
        }
        return List.of("  cache:      " + c.status() + " " + c.detail(), "              fix: " + c.fix());
    }

    /**
     * Samples warpd's counters ({@code stats}) each second and shows what changed, until
     * interrupted; fails (exit 1) when warpd goes away.
     */
    private int watch() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        boolean json = DaemonCalls.json(spec);
        boolean terminal = !json && stdoutIsTerminal();
        java.time.Clock clock = DaemonCalls.root(spec).context.clock();
        java.time.format.DateTimeFormatter hms = java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss")
                .withZone(java.time.ZoneId.systemDefault());
        StatsCall.Reply previous = null;
        long previousNanos = 0;
        while (true) {
            StatsCall.Reply sample = DaemonCalls.call(spec, Calls.STATS, Empty.INSTANCE);
            long nanos = System.nanoTime();
            if (json) {
                out.println(Wire.tree(sample).toString());
            } else {
                String frame = StatusWatch.frame(previous, sample, (nanos - previousNanos) / 1e9,
                        hms.format(clock.instant()));
                // A terminal gets the frame in place (cursor home, clear); a pipe or a log one after another.
                out.print(terminal ? "\033[H\033[2J" + frame : frame + "----\n");
            }
            out.flush();
            previous = sample;
            previousNanos = nanos;
            Thread.sleep(WATCH_INTERVAL_MILLIS);
        }
    }

    /** Exact on Linux: fd 1 is a terminal iff it links to a tty device. */
    private static boolean stdoutIsTerminal() {
        try {
            String target = java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/1")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (Exception e) {
            return false;
        }
    }

    /**
     * "reachable", "offline (--mode local): ...", or "unreachable [(not answering)] since T (error);
     * serving from cache".
     */
    /** One mirror: state, hit rate, bytes served, and what an operator must see (poisoned, dead). */
    static String mirrorLine(MirrorStatus m) {
        return String.format(java.util.Locale.ROOT, "%s %s, %.1f%% hits, %s served, %d verification failure(s), %d error(s)"
                        + " (%d timeout(s))",
                m.mirror(), m.state(), m.hitRate() * 100, io.warpdata.daemon.ByteSize.format(m.servedBytes()),
                m.verificationFailures(), m.errors(), m.timeouts());
    }

    /** "off", "on: N opens served from local copies (C copies, B)", or "unavailable: why". */
    static String passthroughLine(PassthroughStatus p) {
        return switch (p.state()) {
            case "on" -> "on: " + p.opens() + " open(s) served from local copies (" + p.localCopies() + " cop"
                    + (p.localCopies() == 1 ? "y" : "ies") + ", " + io.warpdata.daemon.ByteSize.format(p.localCopyBytes())
                    + ")";
            case "off" -> "off";
            default -> p.state() + ": " + p.reason();
        };
    }

    static String storeLine(StoreStatus store) {
        if (store == null) {
            return "n/a";
        }
        String counters = store.staleAnswers() + " answers from the last known state, "
                + store.fastFailures() + " reads failed fast";
        if (store.offline()) {
            return "offline (--mode local): never contacted; serving cached data and known datasets";
        }
        if (store.reachable()) {
            long outages = store.outages();
            return "reachable" + (outages > 0 ? " (" + outages + " outage(s) since start; " + counters + ")" : "");
        }
        if ("failing".equals(store.state())) {
            // It answers, with errors: reads of uncached data wait out their deadline rather than
            // failing fast (audit 38: this said "unreachable ... serving from cache").
            return "failing since " + store.unreachableSince() + " (" + store.lastError() + "); reads the cache lacks retry"
                    + " until their read deadline (60 s) and then fail; cached data is served; " + counters;
        }
        String state = store.notAnswering() ? "unreachable (not answering)" : "unreachable";
        return state + " since " + store.unreachableSince() + " (" + store.lastError()
                + "); serving from cache; " + counters;
    }

    static String uptime(long seconds) {
        long d = seconds / 86400;
        long h = seconds % 86400 / 3600;
        long m = seconds % 3600 / 60;
        return d > 0 ? d + "d " + h + "h" : h > 0 ? h + "h " + m + "m" : m + "m " + seconds % 60 + "s";
    }
}
