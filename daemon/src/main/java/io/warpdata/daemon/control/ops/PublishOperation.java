package io.warpdata.daemon.control.ops;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.OperationContext;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Names;
import io.warpdata.daemon.control.protocol.PathList;
import io.warpdata.daemon.control.protocol.PublishCall;
import io.warpdata.daemon.control.protocol.Wire;
import io.warpdata.daemon.control.SourceAccess;
import io.warpdata.daemon.publish.InputPaths;
import io.warpdata.daemon.publish.InvalidInputException;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishRequest;
import io.warpdata.daemon.publish.PublishResult;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.daemon.publish.TarHeaders;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.DatasetRef;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@code publish {dataset, tables:{name:[abs paths]}, artifacts:{name:[abs paths]}, bindings:[...],
 * set_latest, shard_size, allow_threshold_violations, allow_missing_members}}: publishes with the daemon's credentials ({@link Publisher} on the
 * daemon's store and catalog), after checking that the peer could read every source itself,
 * then refreshes the catalog so the new version is in the mount when the reply arrives. A client
 * that goes away (Ctrl-C on warpctl) stops it at the next of: a blob's upload, the manifest's
 * write, the pointers' move. warpctl waits for the answer and says whether it was cancelled or
 * came too late. Blobs already uploaded stay (running it again reuses them).
 */
public final class PublishOperation extends TypedOperation<PublishCall.Request, PublishCall.Reply, PublishCall.Progress> {
    private static final Logger LOG = LoggerFactory.getLogger(PublishOperation.class);
    /** Parallel uploads: S3 likes several streams; 8 keep one host busy. */
    private static final int UPLOAD_THREADS = 8;

    private final Catalog catalog;
    private final BlobStore store;
    private final Path staging;
    private final Clock clock;
    private final Runnable beforePublish;
    private final Runnable afterPublish;
    private final SourceAccess access;

    /**
     * @param staging       where packed shards are staged (a fresh directory below it per publish)
     * @param beforePublish run first (warpd: try the store now even if it was just found down)
     * @param afterPublish  run once the version is published and the catalog refreshed (warpd: the
     *                      mount re-checks its links, so the new version is visible on return)
     */
    public PublishOperation(Catalog catalog, BlobStore store, Path staging, Clock clock, Runnable beforePublish,
                            Runnable afterPublish, SourceAccess access) {
        super(Calls.PUBLISH, AccessPolicy.Access.PRIVILEGED);
        this.catalog = catalog;
        this.store = store;
        this.staging = staging;
        this.clock = clock;
        this.beforePublish = beforePublish;
        this.afterPublish = afterPublish;
        this.access = access;
    }

    /** The writer's request from the wire's: absolute paths, already expanded by the client. */
    static PublishRequest request(PublishCall.Request q) {
        DatasetRef ref = Datasets.toPublish(q.dataset());
        if (!(ref.ref() instanceof DatasetRef.Latest)) {
            throw badArg("dataset", "must be workspace/name without @version (publish makes the version)");
        }
        TreeMap<String, List<String>> tables = pathMap("tables", q.tables());
        TreeMap<String, List<String>> artifacts = pathMap("artifacts", q.artifacts());
        if (tables.isEmpty() && artifacts.isEmpty()) {
            throw badArg("tables", "and 'artifacts' are both empty: nothing to publish");
        }
        List<Binding> bindings = new ArrayList<>();
        for (String b : Names.list(q.bindings())) {
            bindings.add(PublishRequest.parseBinding(b));
        }
        long shardSize = q.shardSize() == null ? 0 : q.shardSize().bytes();
        if (q.shardSize() != null && shardSize < 4096) {
            // As warpctl's --shard-size says it (audit 30: 1 came back as a Java exception, 0 was taken as the default).
            throw badArg("shard_size", shardSize + " bytes is too small: pass at least 4 KiB (4096)");
        }
        Optional<String> branch = Optional.ofNullable(q.branch()).map(PublishRequest::requireBranchName);
        return new PublishRequest(ref.id(), tables, artifacts, bindings, q.setLatest(),
                shardSize > 0 ? shardSize : PublishRequest.DEFAULT_SHARD_SIZE, Path.of("/"), branch,
                q.allowThresholdViolations(), q.allowMissingMembers(), !Boolean.FALSE.equals(q.shardFiles()),
                !Boolean.FALSE.equals(q.tensorHashes()), !Boolean.FALSE.equals(q.tensorHeaders()));
    }

    /**
     * Heap a publish takes per file of an artifact folder while it packs it (the sorted file
     * list, the index being built and the built index: ~750 bytes measured for ImageNet-like
     * paths, with room for longer ones).
     */
    static final long HEAP_PER_FILE = 1024;
    /** How often a publish through warpd tells its client how far a phase is. */
    static final java.time.Duration PROGRESS_EVERY = java.time.Duration.ofSeconds(5);

    /**
     * Refuses, before anything is read or written, a publish whose artifact folders and tar files
     * hold more files than a quarter of warpd's heap can pack or index (audit 18: 1.28M files in
     * folders ran a 384 MiB warpd out of memory, and the mount with it; audit 34: 1.28M members in
     * 10 tar files did the same). warpctl then publishes in its own process. Counting stops at the
     * limit; a tar's members are counted from their headers alone ({@link #tarMembers}). A glob
     * (as {@code wd.publish} sends it; warpctl expands its own) is expanded as the publish will.
     */
    static void requireRoomInHeap(Map<String, List<String>> artifacts, long maxHeap) {
        long limit = Math.max(10_000, maxHeap / 4 / HEAP_PER_FILE);
        long files = 0;
        for (List<String> specs : artifacts.values()) {
            List<Path> sources = new ArrayList<>();
            for (String spec : specs) {
                try {
                    sources.addAll(InputPaths.expand(spec, Path.of("/"), "an artifact"));
                } catch (InvalidInputException e) {
                    return; // the publish itself reports it, naming the artifact
                }
            }
            for (Path p : sources) {
                if (Files.isDirectory(p)) {
                    try (java.util.stream.Stream<Path> walk = Files.walk(p)) {
                        files += walk.filter(Files::isRegularFile).limit(limit + 1 - files).count();
                    } catch (IOException | UncheckedIOException e) {
                        return; // the publish itself reports what cannot be read, naming it
                    }
                } else if (Files.isRegularFile(p)) { // not a fifo: opening one waits for a writer
                    files += tarMembers(p, limit + 1 - files);
                }
                if (files > limit) {
                    throw new ControlException(ControlException.PUBLISH_TOO_LARGE, "this publish holds more than "
                            + limit + " files or tar members; warpd's heap (" + (maxHeap >> 20) + " MiB) packs or"
                            + " indexes at most that many at once alongside the mount", "Publish in your own process:"
                            + " warpctl publish --no-daemon (warpctl does so by itself), or give warpd a larger heap"
                            + " (WARP_HEAP=1g for about 260,000 files, 4g for a million; docs/publish.md).");
                }
            }
        }
    }

    /**
     * The regular-file members of a tar, counted from its headers alone ({@link TarHeaders}: no
     * member's bytes are read), at most {@code atMost}; 0 for a file that does not start as a
     * tar, and the count so far where one stops being one (the publish itself then says what is
     * wrong with it).
     */
    static long tarMembers(Path tar, long atMost) {
        long[] members = {0};
        try {
            TarHeaders.walk(tar, h -> {
                if (h.regularFile()) {
                    members[0]++;
                }
                return members[0] < atMost;
            });
        } catch (IOException e) {
            // unreadable: the publish itself reports it, naming the file
        }
        return members[0];
    }

    private static ControlException badArg(String field, String problem) {
        return Wire.badArgument(Calls.PUBLISH.op(), field, problem);
    }

    private static TreeMap<String, List<String>> pathMap(String field, Map<String, PathList> in) {
        TreeMap<String, List<String>> out = new TreeMap<>();
        for (Map.Entry<String, PathList> e : in.entrySet()) {
            List<String> paths = new ArrayList<>();
            for (String v : e.getValue() == null ? List.<String>of() : e.getValue().paths()) {
                if (!Path.of(v).isAbsolute()) {
                    throw badArg(field, "." + e.getKey() + " must hold absolute paths, got \"" + v + "\"");
                }
                paths.add(Path.of(v).normalize().toString());
            }
            if (paths.isEmpty()) {
                throw badArg(field, "." + e.getKey() + " names no files");
            }
            out.put(e.getKey(), paths);
        }
        return out;
    }

    @Override
    protected PublishCall.Reply run(PublishCall.Request request, Events<PublishCall.Progress> events) {
        OperationContext ctx = events.context();
        PublishRequest req = request(request);
        long warpdUid = io.warpdata.daemon.control.ProcessIdentity.uid();
        if (!ctx.peer().isRoot() && ctx.peer().uid() != warpdUid) {
            // warpd would read the files with its own rights: a check of the caller's access before
            // the read cannot hold against a path the caller changes in between (a symlink flipped
            // to a file only warpd may read was published). The caller publishes as itself instead.
            throw new io.warpdata.daemon.control.ControlException(io.warpdata.daemon.control.ControlException.ACCESS_DENIED,
                    "warpd runs as uid " + warpdUid + " and would read your files (uid " + ctx.peer().uid()
                            + ") with its own rights, so it publishes only for its own user and root",
                    "Publish as yourself: warpctl publish --no-daemon ... (the same options; it reads the files and"
                            + " writes the store with your rights and credentials).");
        }
        for (List<String> specs : List.of(flat(req.tables()), flat(req.artifacts()))) {
            for (String source : specs) {
                access.checkReadable(ctx.peer(), Path.of(source));
            }
        }
        requireRoomInHeap(req.artifacts(), Runtime.getRuntime().maxMemory());
        ctx.cancellation().throwIfCancelled("publish of " + req.dataset());
        beforePublish.run();
        PublishProgress progress = new PublishProgress() {
            // A line every PROGRESS_EVERY within a phase, so a 3-minute pack or upload is not silent.
            private volatile String task = "";
            private volatile long total;
            private final java.util.concurrent.atomic.AtomicLong done = new java.util.concurrent.atomic.AtomicLong();
            private final java.util.concurrent.atomic.AtomicLong nextLine = new java.util.concurrent.atomic.AtomicLong();

            @Override
            public void start(String task, long totalBytes) {
                this.task = task;
                this.total = totalBytes;
                done.set(0);
                nextLine.set(System.nanoTime() + PROGRESS_EVERY.toNanos());
                events.send(new PublishCall.Progress(task + " (" + totalBytes + " bytes)"));
            }

            @Override
            public void advance(long bytes) {
                long d = done.addAndGet(bytes);
                long now = System.nanoTime();
                long next = nextLine.get();
                if (now - next >= 0 && nextLine.compareAndSet(next, now + PROGRESS_EVERY.toNanos())) {
                    events.send(new PublishCall.Progress(task + ": " + io.warpdata.daemon.ByteSize.format(d) + " of "
                            + io.warpdata.daemon.ByteSize.format(total)));
                }
            }

            @Override
            public void note(String text) {
                events.send(new PublishCall.Progress(text));
            }

            @Override
            public void checkpoint(String next) {
                ctx.cancellation().throwIfCancelled("publish of " + req.dataset() + " (before it could " + next + ")");
            }
        };
        PublishResult res;
        try {
            res = new Publisher(store, catalog, clock, ctx.peer().userName(), staging, UPLOAD_THREADS, progress)
                    .publish(req);
        } catch (ControlException e) {
            if (ControlException.CANCELLED.equals(e.type())) {
                LOG.info("{}: its client went away (Ctrl-C?); no pointer moved (blobs already uploaded stay)",
                        e.getMessage());
            }
            throw e;
        }
        // The mount re-reads pointers on a TTL; refresh now so the version is visible on return.
        catalog.refresh();
        keepForOffline(res.dataset());
        afterPublish.run();
        return reply(withFormatNote(res, request));
    }

    /**
     * {@code res}, with a note when the version is of a format newer than the client's release
     * reads ({@link PublishCall.Request#clientReadsFormat}): a warpctl or warpdata from before
     * formats 3 and 4 names neither option (format 2), one from before format 5 names them but
     * not the format it reads (4), and each wrote, through a newer warpd, a version its own
     * release refuses (audit 42). This release's clients say the format they read. An older
     * client prints the summary, which carries the note.
     */
    static PublishResult withFormatNote(PublishResult res, PublishCall.Request q) {
        if (res.formatVersion() <= q.clientReadsFormat()) {
            return res;
        }
        List<String> notes = new ArrayList<>(res.notes());
        notes.add("this version is manifest format " + res.formatVersion() + " ("
                + switch (res.formatVersion()) {
                    case 3 -> "WebDataset tars' file names), which Warp releases before commit 00a20612 (2026-11-29)";
                    case 4 -> "per-tensor hashes), which Warp releases before commit 7f889ead (2026-11-29)";
                    default -> "per-tensor hashes and deflated headers), which Warp releases before 2026-12-01";
                }
                + " cannot read, and this client did not say it reads it: if it is such a release, it cannot read"
                + " this version; publish again with its --no-daemon, or upgrade it");
        return new PublishResult(res.dataset(), res.version(), res.tables(), res.tableFiles(), res.rows(), res.artifacts(),
                res.members(), res.blobsUploaded(), res.blobsSkipped(), res.bytesUploaded(), res.bytesSkipped(),
                res.manifestWritten(), res.latestSet(), res.pointersMoved(), notes, res.formatVersion());
    }

    /**
     * Asks the store for the new dataset's listings now, so that they are kept for offline use:
     * warpd restarted with {@code --mode local} showed only the datasets the mount had listed, not
     * one published through it since. Best effort: a store that fails here only leaves them unkept.
     */
    private void keepForOffline(io.warpdata.manifest.DatasetId dataset) {
        try {
            catalog.workspaces();
            catalog.datasets(dataset.workspace());
            catalog.versions(dataset);
            catalog.latest(dataset);
        } catch (RuntimeException e) {
            LOG.debug("could not list {} after its publish: {}", dataset, e.toString());
        }
    }

    /** The wire's form of a publish's result (warpctl prints the same with --json when it publishes itself). */
    public static PublishCall.Reply reply(PublishResult res) {
        return new PublishCall.Reply(res.dataset().toString(), res.version().hex(), res.tables(), res.tableFiles(),
                res.rows(), res.artifacts(), res.members(), res.blobsUploaded(), res.blobsSkipped(), res.bytesUploaded(),
                res.bytesSkipped(), res.manifestWritten(), res.latestSet(), res.pointersMoved(), res.notes(), res.summary(),
                res.formatVersion());
    }

    private static List<String> flat(Map<String, List<String>> m) {
        return m.values().stream().flatMap(List::stream).toList();
    }
}
