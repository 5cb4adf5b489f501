package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.ByteCount;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Names;
import io.warpdata.daemon.control.protocol.WarmCall;
import io.warpdata.daemon.ByteSize;
import io.warpdata.daemon.control.ControlClient;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code warpctl warm DATASET [--tables a,b] [--artifacts x] [--shards 0:50] [--max-bytes 200GB]}:
 * the daemon fills its cache; this shows a progress bar (bytes, rate, ETA). Ctrl-C closes the
 * connection, which cancels the warm in the daemon; blocks already fetched stay cached.
 */
@Command(name = "warm", mixinStandardHelpOptions = true, description = "Fill warpd's cache with a dataset (or some of its tables, artifacts, shards) before training.")
public final class WarmCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DATASET", description = "workspace/name or workspace/name@version")
    String dataset;

    @Option(names = "--tables", split = ",", paramLabel = "NAME", description = "only these tables (comma-separated)")
    List<String> tables = List.of();

    @Option(names = "--artifacts", split = ",", paramLabel = "NAME", description = "only these artifacts (comma-separated)")
    List<String> artifacts = List.of();

    @Option(names = "--shards", paramLabel = "FROM:TO", description = "only these shard positions, e.g. 0:50 (to exclusive)")
    String shards;

    @Option(names = "--max-bytes", paramLabel = "SIZE", converter = SizeConverter.class,
            description = "stop after this many bytes, e.g. 200GB")
    Long maxBytes;

    @Option(names = "--progress", description = "show the progress bar even when stderr is not a terminal")
    boolean progress;


    @Override
    public Integer call() {
        if (shards != null) {
            try {
                io.warpdata.daemon.control.ops.ShardRange.parse(shards); // the command line's own form: exit 2
            } catch (IllegalArgumentException malformed) {
                throw new UsageException("--shards: " + malformed.getMessage(),
                        "Pass --shards FROM:TO with FROM <= TO, e.g. --shards 0:50 (TO exclusive).");
            }
        }
        WarmCall.Request request = new WarmCall.Request(dataset, Names.of(tables), Names.of(artifacts), shards,
                maxBytes == null ? null : new ByteCount(maxBytes));
        boolean json = DaemonCalls.json(spec);
        boolean showBar = !json && (progress || stderrIsTerminal());
        AtomicReference<ProgressBar> bar = new AtomicReference<>();
        WarmCall.Reply result;
        try (ControlClient c = DaemonCalls.connect(spec)) {
            // Ctrl-C: the JVM exits, the socket closes, the daemon cancels; just end the bar's line cleanly.
            Thread hook = new Thread(() -> {
                ProgressBar b = bar.get();
                if (b != null) {
                    b.close();
                }
                c.close();
            });
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                result = c.call(Calls.WARM, request, event -> {
                    if (!showBar) {
                        return;
                    }
                    if (bar.get() == null) {
                        bar.set(newBar(event.bytesTotal()));
                    }
                    bar.get().stepTo(event.bytesDone());
                });
            } finally {
                ProgressBar b = bar.getAndSet(null);
                if (b != null) {
                    b.close();
                }
                Runtime.getRuntime().removeShutdownHook(hook);
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        // Less in the cache than was asked, though not stopped at --max-bytes: the cache cannot
        // hold it (each block warmed later evicted one warmed before). Said, and not a success:
        // a script that goes offline after warm would find EIO in --mode local.
        boolean notAllCached = !result.truncated()
                && (result.bytesDone() < result.bytesTotal() || Boolean.FALSE.equals(result.fits()));
        if (json) {
            DaemonCalls.printJson(out, result);
        } else {
            out.println(summary(result, notAllCached));
            out.flush();
        }
        if (!notAllCached && result.fits() == null) {
            // Audit 42: a warpd before "fits" answered none, and this said "in cache" of a cache
            // that held nothing (a disk that refused every write).
            PrintWriter err = spec.commandLine().getErr();
            err.println("warpctl: warpd is older than this warpctl and does not say whether what it warmed stays in its"
                    + " cache; 'warpctl cache stats' shows what it holds");
            err.flush();
        }
        if (notAllCached) {
            PrintWriter err = spec.commandLine().getErr();
            err.printf("warpctl: the %s asked for does not all fit in warpd's cache (its --cache-size, the disk's"
                            + " free-space floor, or a disk that refuses writes): what was warmed first was evicted"
                            + " again, or never written, and reads of it go to the store (EIO in --mode local).%n"
                            + "  what to do: raise --cache-size, or free the cache's disk (warpctl doctor shows the"
                            + " limit, the disk and skipped writes), or warm less (--tables, --artifacts,"
                            + " --max-bytes).%n",
                    ByteSize.format(result.bytesTotal()));
            err.flush();
            return NOT_ALL_CACHED;
        }
        return 0;
    }

    /**
     * The line warm ends with. Not "in cache" when it does not fit: what was warmed first was
     * evicted again (audit 18); "kept of": bytesDone is what the cache holds at the end (audit 31
     * read "read through" as all of it); "read through" when warpd does not say (one before
     * {@code fits}, audit 42).
     */
    static String summary(WarmCall.Reply result, boolean notAllCached) {
        String where = notAllCached ? "kept in the cache of the " + ByteSize.format(result.bytesTotal())
                + " asked, the rest did not fit" : result.fits() == null ? "read through" : "in cache";
        return String.format(java.util.Locale.ROOT, "warmed %s@%s: %s %s (%s fetched now) in %.1f s%s",
                result.dataset(), result.version().substring(0, Math.min(12, result.version().length())),
                ByteSize.format(result.bytesDone()), where, ByteSize.format(result.bytesFetched()),
                result.seconds(), result.truncated() ? " (stopped at --max-bytes)" : "");
    }

    /** Exit status when less than asked fits in the cache (the summary is still printed). */
    static final int NOT_ALL_CACHED = 4;

    /** Exact on Linux: fd 2 is a terminal iff it links to a tty device. */
    private static boolean stderrIsTerminal() {
        try {
            String target = java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/2")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (java.io.IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    private ProgressBar newBar(long total) {
        return new ProgressBarBuilder()
                .setTaskName("warm " + dataset)
                .setInitialMax(Math.max(1, total))
                .setUnit(" MB", 1_000_000)
                .showSpeed()
                .setStyle(ProgressBarStyle.ASCII)
                .setConsumer(new ConsoleProgressBarConsumer(DaemonCalls.root(spec).context.err()))
                .build();
    }
}
