package io.warpdata.daemon.view;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.catalog.RefExistsException;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreLayout;
import io.warpdata.daemon.inspect.HivePartitions;
import io.warpdata.daemon.publish.BlobUploader;
import io.warpdata.daemon.publish.PointerMoves;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.Publisher;
import io.warpdata.daemon.publish.StagedBlob;
import io.warpdata.daemon.publish.Staging;
import io.warpdata.daemon.publish.StagedIndex;
import io.warpdata.manifest.IndexBytes;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.Derivation;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.ManifestCodec;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.MemberIndexBuilder;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Publishes a view: a derived version made of the rows a {@link ViewQuery} selects from one
 * table of a parent version, written as one Parquet file by DuckDB, and, for every artifact bound
 * to that table, a new member index holding exactly the members the selected rows name, pointing
 * into the parent's tar shard blobs. No member byte is copied or uploaded: a view's uploads are
 * its table and its indexes (and their block hash lists). Other tables and unbound artifacts are
 * kept as they are. The parent and the query are recorded in the hashed manifest
 * ({@link Derivation}), so the same view of the same parent is the same version everywhere; its
 * members are the parent's blobs, so reading them shares the parent's cache.
 */
public final class ViewPublisher {
    private static final String MISSING_MEMBERS_FACT = Publisher.MISSING_MEMBERS_FACT;
    /** Table files are read from the store in pieces of this size (memory stays small). */
    private static final int READ_CHUNK = 8 << 20;
    /** A member index larger than this is not read into memory (a hostile or broken store). */
    private static final long MAX_INDEX_BYTES = 1L << 30;

    private final BlobStore store;
    private final Catalog catalog;
    private final Clock clock;
    private final String creator;
    private final Path stagingParent;
    private final PublishProgress progress;

    /**
     * @param catalog       the store's catalog: the parent is read and the view written there
     * @param creator       user name recorded in the view's metadata
     * @param stagingParent where the parent's table and the view's Parquet file are staged
     */
    public ViewPublisher(BlobStore store, Catalog catalog, Clock clock, String creator, Path stagingParent,
                         PublishProgress progress) {
        this.store = Objects.requireNonNull(store, "store");
        this.catalog = Objects.requireNonNull(catalog, "catalog");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.creator = Objects.requireNonNull(creator, "creator");
        this.stagingParent = Objects.requireNonNull(stagingParent, "stagingParent");
        this.progress = Objects.requireNonNull(progress, "progress");
    }

    /**
     * Where the view goes and which pointers name it.
     *
     * @param as        the view's dataset id
     * @param setLatest move {@code as}'s latest
     * @param branch    move this branch of {@code as}
     * @param tag       tag the view with this name (tags never move: an existing tag naming
     *                  another version fails)
     */
    public record Target(DatasetId as, boolean setLatest, Optional<String> branch, Optional<String> tag) {
        public Target {
            Objects.requireNonNull(as, "as");
            Objects.requireNonNull(branch, "branch");
            Objects.requireNonNull(tag, "tag");
            if (branch.isPresent() && branch.equals(tag)) {
                throw new RefExistsException(as + "@" + tag.get() + " cannot be both the view's"
                        + " branch and its tag (tags and branches share one namespace)",
                        "Give the tag or the branch another name.");
            }
        }

        /** Named by nothing but latest being asked for: the plain {@code --as WS/NAME} form. */
        boolean namesNothingExplicitly() {
            return !setLatest && branch.isEmpty() && tag.isEmpty();
        }
    }

    /**
     * What a view publish did.
     *
     * @param parent       the parent version
     * @param rows         rows the view's table has
     * @param members      members of its bound artifacts, per artifact
     * @param bytesUploaded bytes sent to the store (its table, indexes and hash lists)
     * @param moved        pointers moved ({@code latest -> ...}, {@code branch b -> ...}, {@code tag t -> ...})
     * @param latestKept   when nothing names the view (no latest move, branch or tag): where latest
     *                     stays (a short hash, or "(none)")
     */
    public record Result(DatasetId dataset, VersionHash version, DatasetId parentId, VersionHash parent, long rows,
                         Map<String, Long> members, boolean manifestWritten, long bytesUploaded, List<String> moved,
                         Optional<String> latestKept) {
        /** How to read this version, and how to point latest at it, when latest did not move. */
        public Optional<String> latestHint() {
            return latestKept.map(kept -> "latest of " + dataset + " not moved (still " + kept + "): read the view as "
                    + dataset + "@" + version.shortHex(16) + ", or point latest at it with: warpctl latest " + dataset
                    + " " + version.shortHex(16) + " (or pass --set-latest)");
        }

        /** The one-line summary printed at the end (and the hint when latest did not move). */
        public String summary() {
            return line() + latestHint().map(h -> "\n" + h).orElse("");
        }

        private String line() {
            return "published view " + dataset + "@" + version.hex() + " of " + parentId + "@" + parent.shortHex(12)
                    + ": " + rows + " row(s)" + members.entrySet().stream()
                    .map(e -> ", " + e.getValue() + " member(s) of " + e.getKey()).reduce("", String::concat)
                    + "; uploaded " + bytesUploaded + " byte(s), no member bytes"
                    + (manifestWritten ? "" : "; version already existed")
                    + (moved.isEmpty() ? "" : "; " + String.join(", ", moved));
        }
    }

    /**
     * Selects, builds and publishes the view of {@code source} that {@code query} describes.
     *
     * @throws ViewException for a query DuckDB refuses, an unknown table or column, a view that
     *         selects no rows, a selected row naming a member its artifact lacks, or a view that
     *         would silently replace the source's latest; nothing is published then
     * @throws StoreException if the store fails (no manifest is written then)
     */
    public Result publish(DatasetRef source, ViewQuery query, Target target) {
        Catalog.Resolved parent = catalog.resolve(source);
        Manifest pm = parent.manifest();
        Table table = pm.tables().get(query.table());
        if (table == null) {
            throw new ViewException(parent.id() + "@" + parent.version().shortHex(12) + " has no table '" + query.table()
                    + "'", pm.tables().isEmpty() ? "It has no tables: a view selects rows of a table. For a folder-only dataset, publish a table"
                    + " of its member paths (one row per file: path, label, ...; e.g. written with DuckDB) bound to the"
                    + " artifact (--table main=paths.parquet --bind main.path=ARTIFACT:image) and view that; docs/views.md."
                    : "Pass --table with one of: " + String.join(", ", pm.tables().keySet()) + ".");
        }
        if (target.as().equals(parent.id()) && target.namesNothingExplicitly()) {
            throw new ViewException("--as " + target.as() + " is the source dataset itself, and nothing would name the"
                    + " view (its latest moves only with --set-latest)", "Pass --set-latest to replace latest on purpose, or --branch B / --tag T to name"
                    + " the view without moving latest, or choose another --as WS/NAME.");
        }
        // latest moves by default only for a new dataset: an existing one's latest moves with
        // --set-latest alone, so that a view never takes over a dataset by accident (issue 23).
        boolean moveLatest = target.setLatest()
                || (target.namesNothingExplicitly() && catalog.versions(target.as()).isEmpty());
        Optional<VersionHash> latestBefore = moveLatest || !target.namesNothingExplicitly() ? Optional.empty()
                : catalog.head(target.as(), null).version();
        PointerMoves pointers = PointerMoves.begin(catalog, target.as(), moveLatest, target.branch());
        List<Binding> bound = pm.bindings().stream().filter(b -> b.table().equals(query.table())).toList();
        Set<String> boundColumns = new LinkedHashSet<>();
        bound.forEach(b -> boundColumns.add(b.column()));

        try (Staging stagingDir = Staging.create(stagingParent, "warp-view-", "room for the source table")) {
            Path staging = stagingDir.dir();
            List<Path> files = downloadTable(query.table(), table, staging);
            Path out = staging.resolve("view.parquet");
            ViewSelector.Selection selection;
            try (ViewSelector selector = new ViewSelector()) {
                List<String> readArgs = table.shards().stream().map(sh -> HivePartitions.readArgs(sh, table.schema())).toList();
                selection = selector.select(files, readArgs, table.schema().stream().map(Column::name).toList(), query, out,
                        boundColumns);
            }
            List<StagedBlob> uploads = new ArrayList<>();
            StagedBlob viewTable = StagedBlob.ofStagedFile(out);
            uploads.add(viewTable);
            String shardName = table.shards().size() == 1 ? table.shards().get(0).name() : "part-0.parquet";
            Map<String, Table> tables = new TreeMap<>(pm.tables());
            tables.put(query.table(), new Table(List.of(new TableShard(shardName, viewTable.ref(), selection.rows())),
                    table.schema()));

            Map<String, Artifact> artifacts = new TreeMap<>(pm.artifacts());
            Map<String, Long> members = new LinkedHashMap<>();
            for (String name : bound.stream().map(Binding::artifact).distinct().toList()) {
                List<ViewSelector.BoundValue> refs = new ArrayList<>();
                bound.stream().filter(b -> b.artifact().equals(name))
                        .forEach(b -> refs.addAll(selection.bound().get(b.column())));
                Subset subset = subset(name, pm.artifacts().get(name), refs, table, query.table(), parent);
                if (subset.index() != null) {
                    uploads.addAll(subset.index().blobs());
                }
                artifacts.put(name, subset.artifact());
                members.put(name, subset.artifact().memberCount());
            }

            Map<String, String> metadata = new TreeMap<>();
            metadata.put("created_at", clock.instant().toString());
            metadata.put("creator", creator);
            Manifest manifest = Manifest.of(target.as(), tables, artifacts, pm.bindings(), metadata)
                    .derivedFrom(new Derivation(parent.id(), parent.version(), query.table(), terms(query)));
            VersionHash version = ManifestCodec.version(manifest);
            // A tag that cannot name this version fails now, before anything is uploaded.
            // Its advice is for the view's command, which has no --force (audit 32): the view is
            // not published, so the tag can move to it only once it is.
            target.tag().ifPresent(t -> {
                try {
                    catalog.requireTagFree(target.as(), t, Optional.of(version));
                } catch (RefExistsException e) {
                    throw new RefExistsException(e.getMessage(), "Use another --tag; or run the"
                            + " view without --tag, then move the tag to it: warpctl tag " + target.as() + "@"
                            + version.shortHex(12) + " " + t + " --force");
                }
            });

            BlobUploader.Upload upload = new BlobUploader(store, 4, progress).uploadMissing(uploads);
            boolean manifestWritten = store.length(StoreLayout.version(target.as(), version)).isEmpty();
            if (manifestWritten) {
                catalog.putVersion(manifest);
            }
            List<String> moved = new ArrayList<>(pointers.finish(version, creator));
            if (target.tag().isPresent() && catalog.tag(target.as(), target.tag().get(), version, creator, false)) {
                moved.add("tag " + target.tag().get() + " -> " + version.shortHex(12));
            }
            return new Result(target.as(), version, parent.id(), parent.version(), selection.rows(), members,
                    manifestWritten, upload.bytesUploaded(), moved, moveLatest || !target.namesNothingExplicitly()
                            // the same view again: latest already is this version, nothing to tell
                            || latestBefore.filter(version::equals).isPresent()
                    ? Optional.empty() : Optional.of(latestBefore.map(v -> v.shortHex(12)).orElse("(none)")));
        }
    }

    /** The query's terms as the manifest records them (only those given). */
    static TreeMap<String, String> terms(ViewQuery q) {
        TreeMap<String, String> t = new TreeMap<>();
        q.where().ifPresent(w -> t.put("where", w));
        q.orderBy().ifPresent(o -> t.put("order_by", o));
        q.limit().ifPresent(l -> t.put("limit", Long.toString(l)));
        q.sample().ifPresent(s -> t.put("sample", Long.toString(s)));
        q.fraction().ifPresent(f -> t.put("fraction", f.stripTrailingZeros().toPlainString()));
        q.stratifyBy().ifPresent(s -> t.put("stratify_by", s));
        if (q.sample().isPresent() || q.fraction().isPresent() || drawsRandomly(q.where()) || drawsRandomly(q.orderBy())) {
            t.put("seed", Long.toString(q.seed()));
        }
        return t;
    }

    /**
     * Whether SQL calls one of DuckDB's random functions ({@code random()}, which the view's
     * seed seeds): then the seed decided the rows, and the manifest must say which.
     */
    private static boolean drawsRandomly(Optional<String> sql) {
        return sql.map(s -> s.toLowerCase(java.util.Locale.ROOT).contains("random")).orElse(false);
    }

    /** A view's artifact, and its new member index to upload (null: the parent's, every member kept). */
    private record Subset(Artifact artifact, StagedIndex index) {
    }

    /**
     * The members of {@code artifact} that {@code refs} name, as a new index into the parent's
     * shards (only the shards they sit in are kept, renumbered in order).
     */
    private Subset subset(String name, Artifact artifact, List<ViewSelector.BoundValue> refs, Table source,
                          String table, Catalog.Resolved parent) {
        MemberIndex index = readIndex(name, artifact);
        BitSet selected = new BitSet(index.size());
        // A parent published with --allow-missing-members says so in its facts: its rows that
        // name no member are skipped, and counted in the view's facts too.
        boolean allowed = artifact.facts().containsKey(MISSING_MEMBERS_FACT);
        long missing = 0;
        ViewSelector.BoundValue first = null;
        for (ViewSelector.BoundValue ref : refs) {
            if (ref.value() == null) {
                continue;
            }
            int i = index.findSpelled(ref.value());
            if (i < 0) {
                missing++;
                first = first == null ? ref : first;
                continue;
            }
            selected.set(i);
        }
        TreeMap<String, String> facts = new TreeMap<>();
        if (missing > 0 && !allowed) {
            TableShard file = source.shards().get(first.file());
            throw new ViewException(missing + " selected row(s) of table " + table + " of " + parent.id() + "@"
                    + parent.version().shortHex(12) + " name no member of artifact " + name + ", e.g. row "
                    + first.row() + " of " + (file.dir().isEmpty() ? "" : file.dir() + "/") + file.name() + " names '"
                    + first.value() + "'",
                    "Exclude those rows with --where; member paths are relative to the artifact, as 'ls' shows them"
                            + " under " + parent.id() + "/" + name + "/ in the mount.");
        }
        if (missing > 0) {
            facts.put(MISSING_MEMBERS_FACT, missing + " selected value(s) naming no member");
        }
        if (selected.cardinality() == index.size()) {
            // Every member: the parent's artifact as it is (its index, the names of its shard files,
            // shown as NAME.tars/, its tensor hashes), with the view's facts (audit 32: a view of all
            // the rows lost NAME.tars/ and wrote an index equal to the parent's).
            return new Subset(new Artifact(artifact.kind(), artifact.shards(), artifact.index(), artifact.memberCount(),
                    artifact.memberBytes(), facts, artifact.shardNames(), artifact.tensorHashes(), artifact.tensorHeaders()), null);
        }
        int[] shardMap = new int[artifact.shards().size()];
        Arrays.fill(shardMap, -1);
        List<BlobRef> shards = new ArrayList<>();
        for (int i = selected.nextSetBit(0); i >= 0; i = selected.nextSetBit(i + 1)) {
            int s = index.shard(i);
            if (shardMap[s] < 0) {
                shardMap[s] = -2;
            }
        }
        for (int s = 0; s < shardMap.length; s++) {
            if (shardMap[s] == -2) {
                shardMap[s] = shards.size();
                shards.add(artifact.shards().get(s));
            }
        }
        MemberIndexBuilder b = new MemberIndexBuilder();
        long bytes = 0;
        for (int i = selected.nextSetBit(0); i >= 0; i = selected.nextSetBit(i + 1)) {
            b.add(index.path(i), shardMap[index.shard(i)], index.offset(i), index.length(i), index.mode(i), index.hash(i));
            bytes += index.length(i);
        }
        StagedIndex staged = StagedIndex.of(b.build());
        // Tensor hashes and headers are found by each member's own hash: the parent's serve the subset too.
        return new Subset(new Artifact(artifact.kind(), shards, staged.top().ref(), selected.cardinality(), bytes, facts)
                .withTensorHashes(artifact.tensorHashes(), artifact.tensorHeaders()), staged);
    }

    private MemberIndex readIndex(String name, Artifact artifact) {
        BlobRef ref = artifact.index();
        return MemberIndex.open(IndexBytes.of(indexBlob(name, ref)), StoreLayout.blob(ref.id()),
                part -> IndexBytes.of(indexBlob(name, part)));
    }

    /** An index blob (a flat index, a parted one's top or one of its parts), checked against its hash. */
    private byte[] indexBlob(String name, BlobRef ref) {
        if (ref.size() > MAX_INDEX_BYTES) {
            throw new ViewException("The member index of artifact " + name + " has " + ref.size() + " bytes, more than a"
                    + " view reads into memory (" + MAX_INDEX_BYTES + ")", "Make views of a smaller dataset.");
        }
        // Bounded by the size the (verified) manifest states: the store may hold anything there.
        byte[] data = store.get(StoreLayout.blob(ref.id()), (int) ref.size());
        if (data.length != ref.size() || !BlobId.of(data).equals(ref.id())) {
            throw new StoreException("The member index " + ref.id() + " of artifact " + name + " in " + store.describe()
                    + " does not match its hash", "The store holds a damaged blob; publish the parent again.", null);
        }
        return data;
    }

    /** The parent table's files, fetched and checked against their hashes. */
    private List<Path> downloadTable(String name, Table table, Path staging) {
        List<Path> files = new ArrayList<>();
        long total = table.shards().stream().mapToLong(s -> s.blob().size()).sum();
        progress.start("read table " + name, total);
        try {
            byte[] buf = new byte[(int) Math.min(READ_CHUNK, Math.max(1, total))];
            for (int i = 0; i < table.shards().size(); i++) {
                TableShard shard = table.shards().get(i);
                // In its partition folders, so that the view reads their columns (HivePartitions).
                Path file = shard.dir().isEmpty() ? staging.resolve("parent-" + i + ".parquet")
                        : Files.createDirectories(staging.resolve("parent-" + i).resolve(shard.dir())).resolve("shard.parquet");
                MessageDigest sha = BlobId.sha256();
                String key = StoreLayout.blob(shard.blob().id());
                try (OutputStream out = Files.newOutputStream(file)) {
                    for (long off = 0; off < shard.blob().size(); ) {
                        int n = (int) Math.min(buf.length, shard.blob().size() - off);
                        store.read(key, off, buf, 0, n);
                        sha.update(buf, 0, n);
                        out.write(buf, 0, n);
                        off += n;
                        progress.advance(n);
                    }
                }
                if (!BlobId.fromDigest(sha.digest()).equals(shard.blob().id())) {
                    throw new StoreException("Table " + name + " file " + shard.name() + " (blob " + shard.blob().id()
                            + ") in " + store.describe() + " does not match its hash",
                            "The store holds a damaged blob; publish the parent again.", null);
                }
                files.add(file);
            }
            return files;
        } catch (IOException e) {
            throw io.warpdata.daemon.publish.StagingFullException.of("staging table " + name + " under " + staging, staging, e);
        } finally {
            progress.finish();
        }
    }

}
