package io.warpdata.daemon.publish;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.Binding;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.ManifestCodec;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.Names;
import io.warpdata.manifest.Printable;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Publishes a dataset version (DESIGN.md section 7).
 *
 * <p>Order is what makes a publish safe to interrupt: (1) every input is validated, read and
 * packed locally, so a bad input stops the publish before the store sees a single request;
 * (2) blobs missing from the store are uploaded, in parallel; (3) only then is the manifest
 * written, and (4) {@code latest} moved if asked. A reader can never find a version whose bytes
 * are missing; a crash leaves at most unreferenced blobs, which the next publish reuses.
 *
 * <p>Everything is content-addressed, so publishing the same input again computes the same
 * version hash and finds every blob already stored: nothing is uploaded.
 */
public final class Publisher {
    private final BlobStore store;
    private final Catalog catalog;
    private final Clock clock;
    private final String creator;
    private final Path stagingParent;
    private final int uploadThreads;
    private final PublishProgress progress;

    /**
     * @param store where blobs go
     * @param catalog the same store's catalog, where the manifest and latest pointer go
     * @param clock for {@code created_at}
     * @param creator user name recorded in the metadata (never a machine path)
     * @param stagingParent where packed shards are staged (a fresh directory below it, removed after)
     * @param uploadThreads parallel uploads (S3 likes several streams; 8 keeps one host busy)
     * @param progress progress sink
     */
    public Publisher(BlobStore store, Catalog catalog, Clock clock, String creator, Path stagingParent, int uploadThreads,
                     PublishProgress progress) {
        this.store = Objects.requireNonNull(store, "store");
        this.catalog = Objects.requireNonNull(catalog, "catalog");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.creator = Objects.requireNonNull(creator, "creator");
        this.stagingParent = Objects.requireNonNull(stagingParent, "stagingParent");
        if (uploadThreads < 1) {
            throw new IllegalArgumentException("uploadThreads must be >= 1");
        }
        this.uploadThreads = uploadThreads;
        this.progress = Objects.requireNonNull(progress, "progress");
    }

    /** A table ready to publish. */
    private record StagedTable(List<String> names, List<String> dirs, List<StagedBlob> files, List<Long> rows,
                               List<Column> schema, List<Path> sources) {
    }

    /**
     * Publishes {@code request}.
     *
     * @throws InvalidInputException if any input is unusable (nothing is uploaded then)
     * @throws StoreException if the store fails (no manifest is written then)
     */
    public PublishResult publish(PublishRequest request) {
        checkNames(request);
        Map<String, CommittedDataset> tableFiles = new TreeMap<>();
        request.tables().forEach((name, specs) -> tableFiles.put(name,
                tableInputs(name, expandAll(specs, request.workDir(), "table " + name))));
        Map<String, List<Path>> artifactInputs = new TreeMap<>();
        request.artifacts().forEach((name, specs) -> artifactInputs.put(name,
                expandAll(specs, request.workDir(), "artifact " + name)));
        artifactInputs.forEach((name, inputs) -> tensorIndexTable(name, inputs, request)
                .ifPresent(index -> tableFiles.put(name + TENSOR_INDEX_TABLE, index)));

        // The heads the pointers move from: read before the work, so a publisher that started
        // from the same head as another and finished second loses (compare-and-swap).
        PointerMoves pointers = PointerMoves.begin(catalog, request.dataset(), request.setLatest(), request.branch());
        try (Staging stagingDir = Staging.create(stagingParent, "warp-publish-", "enough free space for the packed artifacts")) {
            Path staging = stagingDir.dir();
            Map<String, StagedTable> tables = new TreeMap<>();
            try (ParquetInspector inspector = new ParquetInspector()) {
                tableFiles.forEach((name, files) -> tables.put(name, stageTable(name, files, inspector)));
            }
            checkBindings(request.bindings(), tables, artifactInputs.keySet());
            Map<String, PackedArtifact> artifacts = new TreeMap<>();
            List<String> checkNotes = new ArrayList<>();
            artifactInputs.forEach((name, inputs) -> artifacts.put(name,
                    requireMembers(name, inputs, packArtifact(name, inputs, staging.resolve(name), request.shardSize(),
                            request.allowThresholdViolations(), checkNotes))));
            checkBoundMembers(request, tables, artifacts);
            keepShardFoldersFree(artifacts, tables.keySet());
            if (!request.shardFiles()) {
                // --no-shard-files: members only, a version every reader of format 1 or 2 reads.
                artifacts.replaceAll((name, a) -> a.shardNames().isEmpty() ? a : a.withoutShardNames(""));
            }

            Map<String, TensorHashing.Staged> tensorHashes = new TreeMap<>();
            if (request.tensorHashes()) {
                artifacts.forEach((name, a) -> TensorHashing.of(name, a, progress, request.tensorHeaders())
                        .ifPresent(h -> tensorHashes.put(name, h)));
            }
            Manifest manifest = manifest(request, tables, artifacts, tensorHashes);
            VersionHash version = ManifestCodec.version(manifest);
            // A listing first: unlike HEAD, a refused LIST carries the error code, so wrong
            // credentials surface as an authentication error rather than a bare 403.
            store.list(StoreLayout.dataset(request.dataset()));
            List<StagedBlob> staged = blobs(tables, artifacts, tensorHashes);
            BlobUploader.Upload upload = new BlobUploader(store, uploadThreads, progress).uploadMissing(staged);
            // Every input read in place is still what it was at its first read, after the last read
            // (a table's partition typing and bound columns read it after its hash) and whether or
            // not its blob was uploaded (one the store had, or a duplicate, skipped the upload's
            // check: the review).
            for (StagedBlob b : staged) {
                b.stamp().ifPresent(st -> st.requireSame(b.file().orElseThrow(), "during the publish"));
            }
            progress.checkpoint("write the manifest of " + request.dataset() + "@" + version.hex());
            boolean manifestWritten = store.length(StoreLayout.version(request.dataset(), version)).isEmpty();
            List<String> notes = notes(manifest);
            notes.addAll(checkNotes);
            artifacts.values().stream().map(PackedArtifact::shardNamesLeftOut).filter(n -> !n.isEmpty())
                    .forEach(notes::add);
            if (manifestWritten) {
                catalog.putVersion(manifest);
            } else if (catalog.repairVersion(manifest)) {
                notes.add("the store's copy of this version's manifest failed verification (damaged or edited in the"
                        + " store) and was written again from this publish");
            }
            progress.checkpoint("move the pointers of " + request.dataset());
            // Not even the pointer is rewritten when it already points here: same input, zero PUTs.
            List<String> moved = pointers.finish(version, creator);
            return new PublishResult(request.dataset(), version, tables.size(),
                    tables.values().stream().mapToInt(t -> t.files().size()).sum(),
                    manifest.stats().totalRows(), artifacts.size(), manifest.stats().totalMembers(),
                    upload.uploaded(), upload.skipped(), upload.bytesUploaded(), upload.bytesSkipped(),
                    manifestWritten, request.setLatest() || latestNames(request, version), moved, notes,
                    manifest.formatVersion());
        }
    }

    /**
     * Whether latest already names {@code version} though this publish did not move it (the same
     * input published again without --set-latest): then there is nothing to point it at (audit 21).
     */
    private boolean latestNames(PublishRequest request, VersionHash version) {
        if (request.branch().isPresent()) {
            return false;
        }
        try {
            return catalog.latest(request.dataset()).filter(version::equals).isPresent();
        } catch (io.warpdata.store.StoreException e) {
            return false;
        }
    }

    /** What the publish output says beside the summary: thresholds of tensor warehouses not checked or violated. */
    private static List<String> notes(Manifest manifest) {
        List<String> notes = new ArrayList<>();
        manifest.artifacts().forEach((name, a) -> {
            String unchecked = a.facts().get(TensorWarehouse.UNCHECKED_FACT);
            if (unchecked != null) {
                for (String u : unchecked.split("; ")) {
                    notes.add("artifact " + name + ": " + u);
                }
            }
            String violated = a.facts().get(TensorWarehouse.VIOLATIONS_FACT);
            if (violated != null) {
                notes.add("artifact " + name + ": published although its summary violates its thresholds"
                        + " (--allow-threshold-violations): " + violated);
            }
        });
        return notes;
    }

    private static void checkNames(PublishRequest request) {
        for (String name : request.tables().keySet()) {
            component("Table name", name);
            if (request.artifacts().containsKey(name)) {
                throw new InvalidInputException("'" + name + "' is given both as a table and as an artifact",
                        "Tables and artifacts share one namespace (each is a directory of the version); rename one.");
            }
        }
        for (String name : request.artifacts().keySet()) {
            component("Artifact name", name);
        }
    }

    private static void component(String what, String name) {
        try {
            Names.requireComponent("name", name);
        } catch (ManifestValidationException e) {
            throw new InvalidInputException(what + " '" + name + "' is not valid: " + e.getMessage(),
                    "Use letters, digits, '_', '.', '=', '+' and '-'.");
        }
        if (name.equals(".warp")) {
            throw new InvalidInputException(what + " '.warp' is reserved", "Choose another name.");
        }
    }

    private static List<Path> expandAll(List<String> specs, Path workDir, String what) {
        List<Path> out = new ArrayList<>();
        for (String spec : specs) {
            out.addAll(InputPaths.expand(spec, workDir, what));
        }
        return out;
    }

    /** A safetensors dataset's {@code _tensor_index.parquet} is also the table {@code <artifact>_tensor_index}. */
    static final String TENSOR_INDEX_TABLE = "_tensor_index";

    /**
     * The {@code _tensor_index.parquet} of a safetensors dataset (seed 001: tensor_key, file_name,
     * shape, dtype) as a table of its own, so that DuckDB, {@code warpctl schema} and views find the
     * file that holds a key; it also stays a file of the artifact, as written.
     */
    private static Optional<CommittedDataset> tensorIndexTable(String artifact, List<Path> inputs, PublishRequest request) {
        if (inputs.size() != 1 || !Files.isDirectory(inputs.get(0)) || !SafetensorsDataset.isOne(inputs.get(0))) {
            return Optional.empty();
        }
        if (!TensorIndexCheck.has(inputs.get(0))) {
            return Optional.empty();
        }
        Path index = inputs.get(0).resolve(TensorIndexCheck.FILE);
        String table = artifact + TENSOR_INDEX_TABLE;
        if (request.tables().containsKey(table) || request.artifacts().containsKey(table)) {
            throw new InvalidInputException("'" + table + "' is given, but it is the name of artifact " + artifact
                    + "'s tensor index table", "Rename the table or artifact " + table + ".");
        }
        // A file, or a folder of parts with _SUCCESS as Spark writes it (the review: such an index
        // was neither checked nor a table, and nothing said so).
        return Optional.of(TensorIndexCheck.table("Artifact '" + artifact + "': " + index, index));
    }

    /**
     * What a table's inputs are: one folder is a committed dataset ({@link CommittedDataset}:
     * {@code _SUCCESS}, a seed-002 manifest or partition folders); anything else is loose Parquet
     * files, in file name order.
     */
    private static CommittedDataset tableInputs(String table, List<Path> files) {
        if (files.size() == 1 && Files.isDirectory(files.get(0))) {
            return CommittedDataset.read(table, files.get(0));
        }
        List<Path> sorted = new ArrayList<>(files);
        sorted.sort(Comparator.comparing(p -> p.getFileName().toString()));
        List<CommittedDataset.Part> parts = new ArrayList<>();
        for (Path file : sorted) {
            if (Files.isDirectory(file)) {
                throw new InvalidInputException("Table '" + table + "' input " + file + " is a directory among other"
                        + " inputs", "Give one committed dataset folder (with _SUCCESS), or Parquet files or a glob,"
                        + " e.g. --table " + table + "=" + file + "/*.parquet");
            }
            parts.add(CommittedDataset.Part.of(file, ""));
        }
        return CommittedDataset.loose(parts);
    }

    private StagedTable stageTable(String table, CommittedDataset input, ParquetInspector inspector) {
        List<String> names = new ArrayList<>();
        List<String> dirs = new ArrayList<>();
        java.util.Set<String> paths = new java.util.HashSet<>();
        List<StagedBlob> blobs = new ArrayList<>();
        List<Long> rows = new ArrayList<>();
        List<Column> schema = null;
        Path schemaFrom = null;
        for (CommittedDataset.Part part : input.parts()) {
            Path file = part.file();
            String name = part.name();
            String path = part.dir().isEmpty() ? name : part.dir() + "/" + name;
            if (!paths.add(path)) {
                throw new InvalidInputException("Table '" + table + "' has two files named " + path,
                        "Shard file names must be unique within a table; rename one.");
            }
            try {
                Names.requireComponent("name", name);
            } catch (ManifestValidationException e) {
                throw new InvalidInputException("Table '" + table + "' file " + file + " has a name a table file"
                        + " cannot have: table file names are ASCII letters, digits, '_', '.', '=', '+' and '-', not"
                        + " starting with '.' or '-' (artifact members may have any UTF-8 name without NUL or backslash)",
                        "Rename the file (e.g. part-0.parquet); its rows are not affected.");
            }
            // Its rows and schema from the footer, its bytes hashed and uploaded later: one file
            // throughout (audit 46: a link moved meanwhile gave a version of one file's row count
            // and the other's bytes).
            FileStamp stamp = FileStamp.read(file);
            ParquetInspector.ParquetInfo info = inspector.inspect(file);
            if (schema == null) {
                schema = info.schema();
                schemaFrom = file;
            } else if (!schema.equals(info.schema())) {
                throw new InvalidInputException("Table '" + table + "' file " + file + " has schema (" + schemaText(info.schema())
                        + ") but " + schemaFrom + " has (" + schemaText(schema) + ")",
                        "All files of one table must share one schema; publish them as separate tables.");
            }
            names.add(name);
            dirs.add(part.dir());
            rows.add(info.rowCount());
            progress.start("hash " + name, safeSize(file));
            blobs.add(StagedBlob.ofFile(file, stamp));
            progress.advance(safeSize(file));
            progress.finish();
        }
        if (dirs.stream().anyMatch(d -> !d.isEmpty())) {
            // The partition columns, typed over every folder's value as DuckDB reads the table.
            schema = inspector.partitionedSchema(input.parts().stream().map(CommittedDataset.Part::file).toList(), dirs);
        }
        long total = rows.stream().mapToLong(Long::longValue).sum();
        if (input.rowCount().isPresent() && input.rowCount().getAsLong() != total) {
            throw new InvalidInputException(input.describe() + " says row_count "
                    + input.rowCount().getAsLong() + " but the parts' Parquet footers hold " + total + " rows",
                    "The parts were changed after the dataset was committed; write the dataset again.");
        }
        return new StagedTable(names, dirs, blobs, rows, schema,
                input.parts().stream().map(CommittedDataset.Part::file).toList());
    }

    private static long safeSize(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }

    private static void checkBindings(List<Binding> bindings, Map<String, StagedTable> tables,
                                      java.util.Set<String> artifacts) {
        for (Binding b : bindings) {
            StagedTable t = tables.get(b.table());
            if (t == null) {
                throw new InvalidInputException("Binding " + b.table() + "." + b.column() + " names table '" + b.table()
                        + "', which is not published", "Tables given: " + tables.keySet() + ".");
            }
            if (t.schema().stream().noneMatch(c -> c.name().equals(b.column()))) {
                throw new InvalidInputException("Binding " + b.table() + "." + b.column() + ": table '" + b.table()
                        + "' has no column '" + b.column() + "'",
                        "Its columns are " + t.schema().stream().map(Column::name).toList() + ".");
            }
            if (!artifacts.contains(b.artifact())) {
                throw new InvalidInputException("Binding " + b.table() + "." + b.column() + " names artifact '"
                        + b.artifact() + "', which is not published", "Artifacts given: " + artifacts + ".");
            }
        }
    }

    /** The fact a publish with {@code --allow-missing-members} records on an artifact. */
    public static final String MISSING_MEMBERS_FACT = "missing_members";
    /** Rows a refusal shows as examples. */
    private static final int EXAMPLES = 3;

    /**
     * Every non-null value of a bound column must be the path of a member of its artifact (a
     * folder is not one). Refused naming the user's file, the row and the value, and how many
     * rows are affected, unless {@code --allow-missing-members}: then the artifact's facts record
     * how many rows of which column name no member ({@link #MISSING_MEMBERS_FACT}).
     */
    private static void checkBoundMembers(PublishRequest request, Map<String, StagedTable> tables,
                                          Map<String, PackedArtifact> artifacts) {
        if (request.bindings().isEmpty()) {
            return;
        }
        Map<String, List<String>> recorded = new TreeMap<>();
        try (ParquetInspector inspector = new ParquetInspector()) {
            for (Binding b : request.bindings()) {
                StagedTable t = tables.get(b.table());
                PackedArtifact a = artifacts.get(b.artifact());
                MemberIndex index = a.members();
                long[] missing = {0};
                long[] rows = {0};
                List<String> examples = new ArrayList<>();
                List<String> exampleValues = new ArrayList<>();
                for (Path source : t.sources()) {
                    inspector.forEachValue(source, b.column(), (row, value) -> {
                        rows[0]++;
                        if (value == null || index.findSpelled(value) >= 0) {
                            return;
                        }
                        missing[0]++;
                        if (examples.size() < EXAMPLES) {
                            examples.add("row " + row + " of " + source + " names '" + value + "'");
                            exampleValues.add(value);
                        }
                    });
                }
                if (missing[0] == 0) {
                    continue;
                }
                String binding = b.table() + "." + b.column();
                if (request.allowMissingMembers()) {
                    recorded.computeIfAbsent(b.artifact(), k -> new ArrayList<>())
                            .add(missing[0] + " of " + rows[0] + " row(s) of " + binding);
                    continue;
                }
                List<String> folders = exampleValues.stream().filter(v -> isFolder(index, v)).distinct().toList();
                throw new InvalidInputException("Binding " + binding + "=" + b.artifact() + ": " + missing[0] + " of "
                        + rows[0] + " row(s) name no member of artifact '" + b.artifact() + "' (" + index.size()
                        + " member(s)" + (index.size() > 0 ? ", e.g. '" + index.path(0) + "'" : "") + "): "
                        + String.join("; ", examples) + (missing[0] > examples.size() ? "; ..." : "")
                        + (folders.isEmpty() ? "" : ". " + String.join(", ", folders.stream().map(v -> "'" + v + "'")
                        .toList()) + (folders.size() == 1 ? " is a folder" : " are folders") + " of the artifact, not"
                        + " a member: a bound value names one file"),
                        "Member paths are relative to the artifact (for --artifact " + b.artifact() + "=DIR, the"
                                + " file DIR/cat/1.jpg is 'cat/1.jpg'). Fix the column's values or the artifact, or"
                                + " publish anyway with --allow-missing-members (the count is recorded in the"
                                + " artifact's facts; views skip those values).");
            }
        }
        recorded.forEach((name, what) -> artifacts.put(name,
                artifacts.get(name).withFact(MISSING_MEMBERS_FACT, String.join("; ", what))));
    }

    /**
     * Drops, saying so, the shard names of an artifact whose folder of shard files
     * ({@code ARTIFACT.tars}) a table or another artifact of the version is named: that name is
     * theirs. The members are published all the same.
     */
    private void keepShardFoldersFree(Map<String, PackedArtifact> artifacts, java.util.Set<String> tables) {
        for (Map.Entry<String, PackedArtifact> a : List.copyOf(artifacts.entrySet())) {
            if (a.getValue().shardNames().isEmpty()) {
                continue;
            }
            String folder = a.getKey() + Artifact.SHARD_FOLDER_SUFFIX;
            String why = folder.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 255
                    ? "'" + folder + "' is longer than a file name may be (255 bytes)"
                    : tables.contains(folder) ? "'" + folder + "' is the name of a table"
                    : artifacts.containsKey(folder) ? "'" + folder + "' is the name of an artifact" : null;
            if (why != null) {
                // Said once, in the result's notes (audit 32: also sent as progress, it was printed twice).
                artifacts.put(a.getKey(), a.getValue().withoutShardNames(TarShardIndexer.notShown(a.getKey(), why)));
            }
        }
    }

    /** Whether some member lies below {@code value} (the index is sorted, but not by plain prefix: scan). */
    private static boolean isFolder(MemberIndex index, String value) {
        String member = MemberIndex.memberPath(value);
        String prefix = member.endsWith("/") ? member : member + "/";
        for (int i = 0; i < index.size(); i++) {
            if (index.path(i).startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Refuses an artifact with no file in it, as an empty tar is refused: an empty folder (folders
     * are not members), or tars holding only folder entries. It published an artifact of 0
     * members, most likely from a wrong path.
     */
    private static PackedArtifact requireMembers(String name, List<Path> inputs, PackedArtifact packed) {
        if (packed.memberCount() == 0) {
            throw holdsNoFile(name, inputs);
        }
        return packed;
    }

    /** An artifact whose inputs hold no file (the packer says so before it packs nothing). */
    static InvalidInputException holdsNoFile(String name, List<Path> inputs) {
        return new InvalidInputException("Artifact '" + name + "' holds no file: " + (inputs.size() == 1 ? inputs.get(0)
                : inputs.size() + " inputs") + " has no file in it (folders alone are not members)",
                "Check the path; an artifact is the files under it.");
    }

    /**
     * What a format's check read is what the packer copies: every file the check read is in the
     * folder's listing (one made after it and gone again before a second listing, a writer
     * flipping it, is caught only so: audit 48's flipper, 1 in 16), and the folder, listed again,
     * holds the same files anywhere below it (a writer's next shard and manifest, also in a
     * subfolder, were in the facts and not in the artifact: the review, audit 48).
     */
    private static void requireListingHolds(String name, Path dir, List<ArtifactPacker.SourceFile> listed, Set<String> read,
                                            ArtifactPacker packer) {
        Set<String> before = new java.util.TreeSet<>(listed.stream().map(ArtifactPacker.SourceFile::member).toList());
        for (String f : read) {
            if (!before.contains(f)) {
                throw new InvalidInputException("Artifact '" + name + "': " + dir + " changed while the publish"
                        + " listed and checked it (" + Printable.of(f) + " was read by the check but not there when"
                        + " the folder was listed): nothing was published", "Publish again once its writer has finished.");
            }
        }
        Set<String> after = new java.util.TreeSet<>(packer.scan(name, dir).stream().map(ArtifactPacker.SourceFile::member).toList());
        if (!before.equals(after)) {
            Set<String> made = new java.util.TreeSet<>(after);
            made.removeAll(before);
            Set<String> gone = new java.util.TreeSet<>(before);
            gone.removeAll(after);
            throw new InvalidInputException("Artifact '" + name + "': " + dir + " changed while the publish listed and"
                    + " checked it (" + String.join("; ", java.util.stream.Stream.of(some("made", made), some("gone", gone))
                    .filter(x -> !x.isEmpty()).toList()) + "): nothing was published", "Publish again once its writer has finished.");
        }
    }

    /** "made: a and 2 more", or "" for none. */
    private static String some(String what, Set<String> names) {
        return names.isEmpty() ? "" : what + ": " + Printable.of(names.iterator().next())
                + (names.size() > 1 ? " and " + (names.size() - 1) + " more" : "");
    }

    /** @param notes takes what the format's check says beside the summary (for the publish's result) */
    private PackedArtifact packArtifact(String name, List<Path> inputs, Path staging, long shardSize,
                                        boolean allowThresholdViolations, List<String> notes) {
        if (inputs.size() == 1 && Files.isDirectory(inputs.get(0))) {
            Path dir = inputs.get(0);
            // Listed first: the checks below read the files, and the packer checks each against
            // its listing when it copies it, so facts and bytes are of one file (the review).
            ArtifactPacker packer = new ArtifactPacker(staging, shardSize);
            List<ArtifactPacker.SourceFile> listed = packer.list(name, dir, progress);
            boolean isSafetensors = SafetensorsDataset.isOne(dir);
            boolean checked = isSafetensors || TensorWarehouse.isOne(dir);
            if (checked) {
                // These folders' files are read by their check, then copied: stamped with their
                // change time now (a few files), so a rewrite with its time put back in between
                // is seen at the copy (audit 48: the facts said F32, the packed header I32).
                listed = listed.stream().map(f -> f.restamped(FileStamp.read(f.file()))).toList();
            }
            // A safetensors dataset is checked whole before any byte is packed (seed 001).
            SafetensorsDataset.Summary safetensors = isSafetensors ? SafetensorsDataset.check(name, dir, staging) : null;
            if (safetensors != null) {
                safetensors.notes().forEach(n -> notes.add("artifact " + name + ": " + n));
            }
            // So is a tensor warehouse: its manifest, every shard's header and checksum, its
            // thresholds (seed 003).
            TensorWarehouse.Summary warehouse = safetensors == null && TensorWarehouse.isOne(dir)
                    ? TensorWarehouse.check(name, dir, allowThresholdViolations) : null;
            if (checked) {
                requireListingHolds(name, dir, listed, safetensors != null ? safetensors.read()
                        : warehouse != null ? warehouse.read() : Set.of(), packer);
            }
            PackedArtifact packed = packer.pack(name, dir, listed, progress);
            return safetensors != null ? packed.asFormat(ArtifactKind.SAFETENSORS, safetensors.facts())
                    : warehouse != null ? packed.asFormat(ArtifactKind.TENSOR_WAREHOUSE, warehouse.facts()) : packed;
        }
        for (Path p : inputs) {
            if (Files.isDirectory(p)) {
                // Most often the same name given twice (audit 27): --artifact files=a --artifact files=b.
                throw new InvalidInputException("Artifact '" + name + "' mixes a directory (" + p + ") with other inputs"
                        + " (was --artifact " + name + "=... given more than once?)",
                        "Give each artifact one directory under its own name (--artifact a=DIR1 --artifact b=DIR2), or"
                                + " tar files only.");
            }
        }
        return new TarShardIndexer().index(name, inputs, progress, java.util.Optional.of(staging.resolve("index")));
    }

    private Manifest manifest(PublishRequest request, Map<String, StagedTable> tables,
                              Map<String, PackedArtifact> artifacts, Map<String, TensorHashing.Staged> tensorHashes) {
        Map<String, Table> tableMap = new TreeMap<>();
        tables.forEach((name, t) -> {
            List<TableShard> shards = new ArrayList<>();
            for (int i = 0; i < t.files().size(); i++) {
                shards.add(new TableShard(t.names().get(i), t.files().get(i).ref(), t.rows().get(i), t.dirs().get(i)));
            }
            tableMap.put(name, new Table(shards, t.schema()));
        });
        Map<String, Artifact> artifactMap = new TreeMap<>();
        artifacts.forEach((name, a) -> {
            TensorHashing.Staged t = tensorHashes.get(name);
            artifactMap.put(name, new Artifact(a.kind(), a.shards().stream().map(StagedBlob::ref).toList(),
                    a.index().ref(), a.memberCount(), a.memberBytes(), a.facts(), a.shardNames(),
                    t == null ? null : t.hashes().ref(), t == null || t.headers() == null ? null : t.headers().ref()));
        });
        Map<String, String> metadata = new TreeMap<>();
        metadata.put("created_at", clock.instant().toString());
        metadata.put("creator", creator);
        return Manifest.of(request.dataset(), tableMap, artifactMap, request.bindings(), metadata);
    }

    /** Every blob of the version (block hash lists are added by the uploader). */
    private static List<StagedBlob> blobs(Map<String, StagedTable> tables, Map<String, PackedArtifact> artifacts,
                                          Map<String, TensorHashing.Staged> tensorHashes) {
        List<StagedBlob> main = new ArrayList<>();
        tables.values().forEach(t -> main.addAll(t.files()));
        artifacts.values().forEach(a -> {
            main.addAll(a.shards());
            main.addAll(a.stagedIndex().blobs());
        });
        tensorHashes.values().forEach(t -> {
            main.add(t.hashes());
            if (t.headers() != null) {
                main.add(t.headers());
            }
        });
        return main;
    }

    /** A schema as a reader writes one: {@code id BIGINT, path VARCHAR}. */
    private static String schemaText(List<io.warpdata.manifest.Column> columns) {
        return String.join(", ", columns.stream().map(c -> c.name() + " " + c.type()).toList());
    }
}
