package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.ByteCount;
import io.warpdata.daemon.control.protocol.CacheCalls;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.ReadSourceCount;
import io.warpdata.daemon.control.protocol.Wire;
import io.warpdata.daemon.ByteSize;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** {@code warpctl cache stats | gc [--limit SIZE] | verify}. */
@Command(name = "cache", mixinStandardHelpOptions = true, description = "Inspect and maintain warpd's disk cache.",
        subcommands = {CacheCommand.Stats.class, CacheCommand.Gc.class, CacheCommand.Verify.class})
public final class CacheCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: stats, gc or verify");
    }

    @Command(name = "stats", mixinStandardHelpOptions = true, description = "Size, limit, hit rate, GETs, bytes fetched, prefetch efficiency, evictions.")
    static final class Stats implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            CacheCalls.Stats stats = DaemonCalls.call(spec, Calls.CACHE_STATS, Empty.INSTANCE);
            PrintWriter out = spec.commandLine().getOut();
            if (DaemonCalls.json(spec)) {
                DaemonCalls.printJson(out, stats);
                return 0;
            }
            // Every field, as named on the wire: the record's own order.
            JsonNode s = Wire.tree(stats);
            s.fields().forEachRemaining(f -> {
                if (f.getKey().equals("mirrors") && f.getValue().isArray()) {
                    f.getValue().forEach(m -> {
                        out.printf("mirror %s:%n", m.path("mirror").asText());
                        m.fields().forEachRemaining(g -> {
                            if (!g.getKey().equals("mirror")) {
                                out.printf("  %-24s %s%n", g.getKey(), show(g.getKey(), g.getValue()));
                            }
                        });
                    });
                } else if (f.getValue().isArray()) {
                    // Other lists are printed from their records below.
                } else if (f.getValue().isObject()) {
                    out.printf("%s:%n", f.getKey());
                    f.getValue().fields().forEachRemaining(g -> out.printf("  %-24s %s%n", g.getKey(), show(g.getKey(), g.getValue())));
                } else {
                    out.printf("%-26s %s%n", f.getKey(), show(f.getKey(), f.getValue()));
                }
            });
            printSources(out, stats.readsBySource());
            out.flush();
            return 0;
        }

        /** Reads and bytes by source, in the order the read plan tries them; bytes add up to hit plus miss bytes. */
        static void printSources(PrintWriter out, java.util.List<ReadSourceCount> sources) {
            if (sources.isEmpty()) {
                return;
            }
            out.printf("reads by source:%n  %-24s %12s  %s%n", "source", "reads", "bytes");
            for (ReadSourceCount c : sources) {
                out.printf("  %-24s %12d  %s (%d)%n", c.source(), c.reads(), ByteSize.format(c.bytes()), c.bytes());
            }
        }

        static String show(String key, JsonNode v) {
            if (v.isNull()) {
                // A cache in memory (--mode remote) has no directory and no disk (audit 33: "dir null").
                return key.equals("dir") || key.equals("free_bytes") ? "(none: the cache is in memory)" : "(none)";
            }
            if (v.isIntegralNumber() && key.contains("bytes")) {
                return ByteSize.format(v.asLong()) + " (" + v.asLong() + ")";
            }
            if (v.isFloatingPointNumber() && key.contains("rate")) {
                return String.format(java.util.Locale.ROOT, "%.1f%%", v.asDouble() * 100);
            }
            return v.isTextual() ? v.asText() : v.toString();
        }
    }

    @Command(name = "gc", mixinStandardHelpOptions = true, description = "Evict least valuable blocks down to a size (default: the configured limit). Needs root, warpd's user or the control group.")
    static final class Gc implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--limit", paramLabel = "SIZE", converter = SizeConverter.class,
                description = "evict down to this size, e.g. 500GB")
        Long limit;

        @Override
        public Integer call() {
            CacheCalls.GcReply r = DaemonCalls.call(spec, Calls.CACHE_GC,
                    new CacheCalls.GcRequest(limit == null ? null : new ByteCount(limit)));
            return DaemonCalls.print(spec, r, String.format("cache gc: %s -> %s (%s evicted)%n",
                    ByteSize.format(r.bytesBefore()), ByteSize.format(r.bytesAfter()), ByteSize.format(r.bytesEvicted())));
        }
    }

    @Command(name = "verify", mixinStandardHelpOptions = true, description = "Re-hash every cached block and remove bad ones. Needs root, warpd's user or the control group.")
    static final class Verify implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            CacheCalls.VerifyReply r = DaemonCalls.call(spec, Calls.CACHE_VERIFY, Empty.INSTANCE);
            return DaemonCalls.print(spec, r, String.format("cache verify: %d blocks (%s) checked, %d bad removed%s%n",
                    r.blocksChecked(), ByteSize.format(r.bytesChecked()), r.blocksRemoved(), r.blocksMissing() == 0 ? ""
                            : String.format("; %d whose files were gone (deleted by something else) forgotten",
                            r.blocksMissing())));
        }
    }
}
