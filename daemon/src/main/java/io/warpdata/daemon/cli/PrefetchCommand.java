package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.PrefetchOrderCall;
import io.warpdata.daemon.ByteSize;
import io.warpdata.daemon.control.ControlClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code warpctl prefetch --order FILE [--root DIR] [--plan NAME]}: tells warpd the order in which
 * files under the mount will be read (one path per line), so that it fetches ahead in exactly that
 * order ({@code prefetch.order}); {@code --stop --plan NAME} stops a plan. The generated loader
 * ({@code warpctl init}) does this itself for every epoch.
 */
@Command(name = "prefetch", mixinStandardHelpOptions = true,
        description = "Tell warpd the order files will be read in (one path per line), so it fetches ahead in that order.")
public final class PrefetchCommand implements Callable<Integer> {
    /** JSON bytes of paths per request: well under the socket's 1 MiB line limit. */
    static final int PART_BYTES = 512 * 1024;

    @Spec
    CommandSpec spec;

    @Option(names = "--order", paramLabel = "FILE",
            description = "the paths in read order, one per line ('-': stdin): absolute paths under the mount, or relative to --root")
    String order;

    @Option(names = "--root", paramLabel = "DIR",
            description = "directory the relative paths start from: under the mount, absolute or relative to it (default: the mount)")
    String root;

    @Option(names = "--plan", paramLabel = "NAME", defaultValue = "default",
            description = "the plan's name: a new order of the same name replaces the old one (default: ${DEFAULT-VALUE})")
    String plan;

    @Option(names = "--stop", description = "stop the plan named by --plan instead")
    boolean stop;

    @Option(names = "--fetch", paramLabel = "WHAT", defaultValue = "auto",
            description = "auto (default): warpd fetches the blocks, or each file on its own when the blocks are more than"
                    + " the cache keeps or mostly bytes nobody reads; blocks: not for the latter (fewer, larger GETs);"
                    + " files: each file on its own (the fewest bytes)")
    String fetch;

    @Override
    public Integer call() {
        if (stop == (order != null)) {
            throw new UsageException(stop ? "--stop takes no --order" : "Missing --order FILE",
                    "Run 'warpctl prefetch --order FILE' (one path per line), or 'warpctl prefetch --stop --plan NAME'.");
        }
        PrefetchOrderCall.Fetch what;
        try {
            what = PrefetchOrderCall.Fetch.of(fetch);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--fetch is '" + fetch + "'", "Give --fetch auto, blocks or files.");
        }
        PrefetchOrderCall.Reply result;
        try (ControlClient c = DaemonCalls.connect(spec)) {
            if (stop) {
                result = c.call(Calls.PREFETCH_ORDER, new PrefetchOrderCall.Request(plan, null, List.of(), null, false));
            } else {
                String mount = c.call(Calls.STATUS).mount();
                result = send(c, mount, readLines(), what);
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        if (DaemonCalls.json(spec)) {
            DaemonCalls.printJson(out, result);
        } else if (stop) {
            out.printf(Boolean.TRUE.equals(result.stopped()) ? "stopped plan '%s'%n" : "no plan '%s' to stop%n", plan);
        } else {
            out.printf("planned %d files (%s in %d shards) as plan '%s'; warpd fetches %s up to %s ahead of the reader%s%n",
                    orZero(result.members()), ByteSize.format(orZero(result.plannedBytes())),
                    orZero(result.blobs()), plan, "files".equals(result.fetches()) ? "the files one by one" : "their blocks", ByteSize.format(orZero(result.aheadBytes())),
                    Boolean.TRUE.equals(result.replaced()) ? " (replaces the previous order)" : "");
        }
        out.flush();
        return 0;
    }

    private static long orZero(Long n) {
        return n == null ? 0 : n;
    }

    private List<String> readLines() {
        try (BufferedReader r = order.equals("-")
                ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                : Files.newBufferedReader(DaemonCalls.root(spec).context.cwd().resolve(order), StandardCharsets.UTF_8)) {
            List<String> lines = new ArrayList<>();
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (!line.isBlank()) {
                    lines.add(line.strip());
                }
            }
            return lines;
        } catch (IOException e) {
            throw new UsageException("Cannot read " + order + ": " + e.getMessage(), "Pass a readable file of paths, one per line.");
        }
    }

    /** A relative path without its leading "./" (and "a//b", "a/./b" folded), as the daemon names members. */
    static String relative(String line) {
        String p = line;
        while (p.startsWith("./")) {
            p = p.substring(2);
        }
        return p.replace("/./", "/").replaceAll("/{2,}", "/");
    }

    /** Sends the order in parts of at most {@link #PART_BYTES}; returns the last part's answer. */
    private PrefetchOrderCall.Reply send(ControlClient c, String mount, List<String> lines, PrefetchOrderCall.Fetch what) {
        String rootArg = root == null ? "" : root;
        String rootAbs = rootArg.startsWith("/") ? rootArg : (mount + (rootArg.isEmpty() ? "" : "/" + rootArg));
        while (rootAbs.endsWith("/") && rootAbs.length() > 1) {
            rootAbs = rootAbs.substring(0, rootAbs.length() - 1);
        }
        if (lines.isEmpty()) {
            throw new UsageException("No paths in " + order, "List the files in the order they will be read, one per line"
                    + " (to stop a plan: warpctl prefetch --stop --plan NAME).");
        }
        List<String> paths = new ArrayList<>(lines.size());
        for (String line : lines) {
            if (line.startsWith("/")) {
                if (!line.startsWith(rootAbs + "/")) {
                    throw new UsageException(line + " is not under " + rootAbs,
                            "List files under the mount " + mount + " (or under --root), one per line.");
                }
                paths.add(line.substring(rootAbs.length() + 1));
            } else {
                // Relative to --root as 'find .' prints them: ./cat/cat_000.png is cat/cat_000.png.
                paths.add(relative(line));
            }
        }
        PrefetchOrderCall.Reply last = null;
        int part = 0;
        int i = 0;
        do {
            List<String> batch = new ArrayList<>();
            long bytes = 0;
            while (i < paths.size()) {
                int size = paths.get(i).getBytes(StandardCharsets.UTF_8).length + 8;
                if (bytes > 0 && bytes + size > PART_BYTES) {
                    break;
                }
                batch.add(paths.get(i));
                bytes += size;
                i++;
            }
            last = c.call(Calls.PREFETCH_ORDER, new PrefetchOrderCall.Request(plan, rootArg, batch, part, i < paths.size(),
                    part == 0 && what != PrefetchOrderCall.Fetch.AUTO ? what : null));
            part++;
        } while (i < paths.size());
        return last;
    }
}
