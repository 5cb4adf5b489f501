package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.control.ControlClient;
import io.warpdata.daemon.control.ControlProtocol;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code warpctl status}: what the running warpd is doing. */
@Command(name = "status", mixinStandardHelpOptions = true, description = "Show the running warpd: version, mount, remote, mode, uptime, open files, recent errors.")
public final class StatusCommand implements Callable<Integer> {
    /** How often --watch asks warpd for its counters. */
    static final long WATCH_INTERVAL_MILLIS = 1000;

    @Spec
    CommandSpec spec;

    @Option(names = "--watch", description = "A live view, refreshed each second: throughput, cache hit rate, GETs in flight,"
            + " busiest datasets (Ctrl-C stops it). With --json: one stats sample per line.")
    boolean watch;


    @Override
    public Integer call() throws InterruptedException {
        if (watch) {
            return watch();
        }
        JsonNode s;
        try (ControlClient c = DaemonCalls.connect(spec)) {
            s = c.call("status", ControlProtocol.object());
        }
        PrintWriter out = spec.commandLine().getOut();
        if (DaemonCalls.json(spec)) {
            DaemonCalls.printJson(out, s);
            return 0;
        }
        out.printf("warpd %s, up %s%n", s.path("version").asText(), uptime(s.path("uptime_seconds").asLong()));
        out.printf("  mount:      %s%n", s.path("mount").asText());
        out.printf("  remote:     %s%n", s.path("remote").asText());
        out.printf("  mode:       %s%n", s.path("mode").asText());
        out.printf("  open files: %s%s%n", s.path("open_files").isNull() || s.path("open_files").isMissingNode()
                        ? "n/a" : s.path("open_files").asText(),
                s.path("open_directories").isNumber() ? " (and " + s.path("open_directories").asText() + " directories)" : "");
        out.printf("  store:      %s%n", storeLine(s.path("store")));
        s.path("mirrors").forEach(m -> out.printf("  mirror:     %s%n", mirrorLine(m)));
        JsonNode errors = s.path("recent_errors");
        if (errors.isEmpty()) {
            out.println("  recent errors: none");
        } else {
            out.println("  recent errors:");
            errors.forEach(e -> out.println("    " + e.asText()));
        }
        JsonNode peer = s.path("peer");
        out.printf("  you:        %s (uid %d)%s%n", peer.path("user").asText(), peer.path("uid").asInt(),
                peer.path("privileged").asBoolean() ? ", may gc/verify/publish" : ", read-only operations");
        out.flush();
        return 0;
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
        JsonNode previous = null;
        long previousNanos = 0;
        while (true) {
            JsonNode sample;
            try (ControlClient c = DaemonCalls.connect(spec)) {
                sample = c.call("stats", ControlProtocol.object());
            }
            long nanos = System.nanoTime();
            if (json) {
                out.println(sample.toString());
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
    static String mirrorLine(JsonNode m) {
        return String.format(java.util.Locale.ROOT, "%s %s, %.1f%% hits, %s served, %d verification failure(s), %d error(s)"
                        + " (%d timeout(s))",
                m.path("mirror").asText(), m.path("state").asText(), m.path("hit_rate").asDouble() * 100,
                io.warpdata.daemon.ByteSize.format(m.path("served_bytes").asLong()), m.path("verification_failures").asLong(),
                m.path("errors").asLong(), m.path("timeouts").asLong());
    }

    static String storeLine(JsonNode store) {
        if (store.isMissingNode() || store.isEmpty()) {
            return "n/a";
        }
        String counters = store.path("stale_answers").asLong() + " answers from the last known state, "
                + store.path("fast_failures").asLong() + " reads failed fast";
        if (store.path("offline").asBoolean()) {
            return "offline (--mode local): never contacted; serving cached data and known datasets";
        }
        if (store.path("reachable").asBoolean()) {
            long outages = store.path("outages").asLong();
            return "reachable" + (outages > 0 ? " (" + outages + " outage(s) since start; " + counters + ")" : "");
        }
        String state = store.path("not_answering").asBoolean() ? "unreachable (not answering)" : "unreachable";
        return state + " since " + store.path("unreachable_since").asText() + " (" + store.path("last_error").asText()
                + "); serving from cache; " + counters;
    }

    static String uptime(long seconds) {
        long d = seconds / 86400;
        long h = seconds % 86400 / 3600;
        long m = seconds % 3600 / 60;
        return d > 0 ? d + "d " + h + "h" : h > 0 ? h + "h " + m + "m" : m + "m " + seconds % 60 + "s";
    }
}
