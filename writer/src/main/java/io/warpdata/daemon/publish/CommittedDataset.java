package io.warpdata.daemon.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.Names;

import java.io.IOException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.FileVisitOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The Parquet files of one table, in the order they are published, and what their writer
 * promised about them. Given a folder, the folder must be a <em>committed</em> dataset: its
 * writer wrote {@code _SUCCESS} last (seed 002's commit marker, also Spark's and Hadoop's), so a
 * folder without it is half-written and refused ({@code DatasetIncomplete}).
 * <ul>
 *   <li>With seed 002's {@code manifest.json} ({@code dataset_key}, {@code parts},
 *       {@code row_count}, {@code schema_hash}, {@code compression}, {@code created_at_utc},
 *       optional {@code run_id} and {@code metadata}): exactly its parts, in its order; every
 *       part must exist (else {@code DatasetIncomplete}) and the footers' rows must add up to
 *       {@code row_count}. {@code schema_hash} is the first 16 hex of SHA-256 over pyarrow's
 *       {@code schema.to_string()}, which Warp (reading Parquet with DuckDB, not Arrow) cannot
 *       reproduce byte for byte: it is not checked; every part must have one schema instead.</li>
 *   <li>Without it (Spark, DuckDB {@code COPY ... PARTITION_BY}): every {@code *.parquet}
 *       below the folder, in path order, Hive partition folders ({@code k=v/}) kept as folders
 *       of the table in the mount. Not data: {@code _SUCCESS}, {@code .crc} files, and files and
 *       folders whose names start with {@code _} or {@code .} ({@code _temporary/},
 *       {@code _committed_*}, {@code .part-*.crc}).</li>
 * </ul>
 *
 * @param parts    the files and the partition folder each sits in ({@code ""}: the table's own)
 * @param rowCount rows the writer's manifest promises, if it has one
 * @param source   what to name in messages
 */
record CommittedDataset(List<Part> parts, OptionalLong rowCount, String source) {
    static final String SUCCESS = "_SUCCESS";
    static final String MANIFEST = "manifest.json";
    private static final long MAX_MANIFEST_BYTES = 64L << 20;
    private static final ObjectMapper JSON = WriterManifest.JSON;

    /**
     * One Parquet file and the partition folder it sits in.
     *
     * @param file what is read: the file itself, through no link (a link moved away and back
     *             between two reads gave a version of one file's rows and the other's bytes, and
     *             other bytes in the store under a blob's hash: audit 47)
     * @param dir  the partition folder, "" for the table's own
     * @param name the file's name in the table: as its folder names it (a Hugging Face snapshot's
     *             train-00000.parquet is a link to a blob named by its hash)
     */
    record Part(Path file, String dir, String name) {
        Part {
            Objects.requireNonNull(file, "file");
            Objects.requireNonNull(dir, "dir");
            Objects.requireNonNull(name, "name");
        }

        /** {@code file} read where it leads now, once, under its own name. */
        static Part of(Path file, String dir) {
            try {
                return new Part(file.toRealPath(), dir, file.getFileName().toString());
            } catch (IOException e) {
                throw new InvalidInputException("Cannot read " + file + ": " + e.getMessage(),
                        "Check that the file exists and is readable by you, then publish again.", e);
            }
        }
    }

    CommittedDataset {
        parts = List.copyOf(parts);
    }

    /** Whether {@code dir} holds a Hive partition folder ({@code year=2026/}). */
    private static boolean hasPartitionFolders(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.anyMatch(p -> Files.isDirectory(p) && p.getFileName().toString().indexOf('=') > 0);
        } catch (IOException e) {
            return false;
        }
    }

    /** Loose files (not a folder): nothing promised. */
    static CommittedDataset loose(List<Part> parts) {
        return new CommittedDataset(parts, OptionalLong.empty(), "the given files");
    }

    /** What to call the writer's promise in messages. */
    String describe() {
        return source;
    }

    /**
     * Reads the committed dataset in {@code dir} for table {@code table}.
     *
     * @throws InvalidInputException naming the file: no {@code _SUCCESS} or a listed part missing
     *         ({@code DatasetIncomplete}), a manifest that is not JSON or lacks a field
     *         ({@code ManifestCorrupted}), no Parquet file at all
     */
    static CommittedDataset read(String table, Path dir) {
        String what = "Table '" + table + "' folder " + dir;
        // Read from where a symlinked folder leads (a 'latest' link to a dated output, which
        // InputPaths resolves once for the whole publish), _SUCCESS included: a walk of the link
        // itself yields the link alone, and the folder was called empty (audit 44); a manifest's
        // parts read through a link that moved came from two outputs (audit 45).
        Path root;
        try {
            root = dir.toRealPath();
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + dir + ": " + e.getMessage(), "Make it readable.", e);
        }
        if (!Files.isRegularFile(root.resolve(SUCCESS))) {
            throw new InvalidInputException(what + " has no " + SUCCESS + ": its writer has not finished, or failed"
                    + " (DatasetIncomplete)", "Publish the folder once its writer has written " + SUCCESS + " (Spark and"
                    + " Hadoop write it last). DuckDB's COPY ... (PARTITION_BY ...) writes none: once COPY has returned,"
                    + " run 'touch " + dir.resolve(SUCCESS) + "' and publish again"
                    + (hasPartitionFolders(root) ? " (a glob of its files would lose the partition columns)."
                            : "; or give its Parquet files or a glob to publish them as they are."));
        }
        Path manifest = root.resolve(MANIFEST);
        if (Files.isRegularFile(manifest)) {
            return fromManifest(what, root, manifest);
        }
        List<Part> parts = new ArrayList<>();
        for (Path[] walkedAndReal : walk(what, dir, root)) {
            Path rel = root.relativize(walkedAndReal[0]);
            String folder = rel.getParent() == null ? "" : rel.getParent().toString();
            if (!folder.isEmpty()) {
                try {
                    Names.requireMemberPath("dir", folder);
                } catch (ManifestValidationException e) {
                    throw new InvalidInputException(what + ": partition folder " + folder + " cannot be shown in"
                            + " the mount: " + e.getMessage(), "Rename the folder.");
                }
            }
            parts.add(new Part(walkedAndReal[1], folder, walkedAndReal[0].getFileName().toString()));
        }
        if (parts.isEmpty()) {
            throw new InvalidInputException(what + " holds no .parquet file", "Give the folder a Parquet writer"
                    + " committed, or Parquet files.");
        }
        return new CommittedDataset(parts, OptionalLong.empty(), what);
    }

    /**
     * The {@code *.parquet} files below {@code root}, in path order: each as the table's folders
     * name it, and where it is read from. Hidden folders ({@link #hidden}) are not entered. A symlinked folder or file is
     * followed when it leads outside the table (a partition linked from elsewhere: its rows were
     * silently left out, audit 45) or into a hidden folder, and skipped when it leads to what the
     * walk reaches anyway (a {@code latest} link beside the dated folders would publish their rows
     * twice: the review); one leading back above is a loop, a broken one is refused.
     */
    private static List<Path[]> walk(String what, Path dir, Path root) {
        List<Path[]> files = new ArrayList<>();
        List<Path[]> links = new ArrayList<>();
        // Each folder as walked, and where it led when the walk listed it.
        java.util.Map<Path, Path> realFolders = new java.util.HashMap<>();
        try {
            Files.walkFileTree(root, java.util.EnumSet.of(FileVisitOption.FOLLOW_LINKS), Integer.MAX_VALUE,
                    new java.nio.file.SimpleFileVisitor<>() {
                        @Override
                        public java.nio.file.FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs)
                                throws IOException {
                            if (d.equals(root)) {
                                realFolders.put(d, root);
                                return java.nio.file.FileVisitResult.CONTINUE;
                            }
                            if (hidden(root.relativize(d))) {
                                return java.nio.file.FileVisitResult.SKIP_SUBTREE;
                            }
                            // Resolved once, here, as the walk lists it (the review: resolved again
                            // after the walk, a link repointed meanwhile mixed two outputs).
                            Path real = Files.isSymbolicLink(d) ? d.toRealPath() : realFolders.get(d.getParent()).resolve(d.getFileName());
                            if (Files.isSymbolicLink(d) && real.startsWith(root) && !hidden(root.relativize(real))) {
                                return java.nio.file.FileVisitResult.SKIP_SUBTREE; // walked by its own name
                            }
                            realFolders.put(d, real);
                            return java.nio.file.FileVisitResult.CONTINUE;
                        }

                        @Override
                        public java.nio.file.FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                            if (hidden(root.relativize(f))) {
                                return java.nio.file.FileVisitResult.CONTINUE;
                            }
                            if (attrs.isSymbolicLink()) {
                                // A link the walk could not follow, to a file or a partition folder:
                                // its rows would be lost without a word (audit 46, the review).
                                throw new InvalidInputException(what + ": " + f + " is a symlink that cannot be followed (to "
                                        + Files.readSymbolicLink(f) + ": missing, or not readable by you)",
                                        "Point it at its file or folder, or remove it.");
                            }
                            if (!f.getFileName().toString().endsWith(".parquet") || !attrs.isRegularFile()) {
                                return java.nio.file.FileVisitResult.CONTINUE;
                            }
                            // As the folder names it (a link to a file keeps its own name: a Hugging Face
                            // snapshot's train-00000.parquet leads to a blob named by its hash, the review),
                            // in the folder the walk listed, a link read from its target.
                            Path folder = realFolders.get(f.getParent()).resolve(f.getFileName());
                            if (Files.isSymbolicLink(f)) {
                                links.add(new Path[] {f, folder.toRealPath()});
                            } else {
                                files.add(new Path[] {f, folder});
                            }
                            return java.nio.file.FileVisitResult.CONTINUE;
                        }

                        @Override
                        public java.nio.file.FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                            if (e instanceof FileSystemLoopException) {
                                throw new InvalidInputException(what + ": " + f + " is a symlink leading back to a folder"
                                        + " above it (a loop)", "Remove the symlink, or point it at a folder outside "
                                        + dir + ".", e);
                            }
                            if (hidden(root.relativize(f))) {
                                return java.nio.file.FileVisitResult.CONTINUE; // not data: never read
                            }
                            throw e;
                        }
                    });
        } catch (IOException e) {
            throw new InvalidInputException("Cannot list " + dir + ": " + e.getMessage(), "Make it readable.", e);
        }
        // A link to a file the walk took by its own name would publish its rows twice (audit 46;
        // the review: also inside a partition folder linked from outside); to anything else (a
        // hidden folder's file, data.parquet -> data.parquet.20261130, blobs) it is the only way.
        java.util.Set<Path> taken = new java.util.HashSet<>();
        files.forEach(f -> taken.add(f[1]));
        links.stream().filter(l -> !taken.contains(l[1])).forEach(files::add);
        files.sort((a, b) -> a[0].compareTo(b[0]));
        return files;
    }

    /** Spark's and Hadoop's bookkeeping: any path component starting with '_' or '.'. */
    private static boolean hidden(Path rel) {
        for (Path c : rel) {
            String n = c.toString();
            if (n.startsWith("_") || n.startsWith(".")) {
                return true;
            }
        }
        return false;
    }

    private static CommittedDataset fromManifest(String what, Path dir, Path file) {
        String where = what + ": " + MANIFEST;
        JsonNode m;
        try {
            if (Files.size(file) > MAX_MANIFEST_BYTES) {
                throw corrupted(where, "is larger than " + MAX_MANIFEST_BYTES + " bytes");
            }
            m = JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw corrupted(where, WriterManifest.unreadable(e));
        }
        if (m == null || !m.isObject()) {
            throw corrupted(where, "is not a JSON object");
        }
        for (String field : List.of("dataset_key", "schema_hash", "compression", "created_at_utc")) {
            JsonNode v = m.get(field);
            if (v == null || !v.isTextual()) {
                throw corrupted(where, v == null ? "lacks '" + field + "'" : "has '" + field + "' that is not a string");
            }
        }
        for (String optional : List.of("run_id")) {
            JsonNode v = m.get(optional);
            if (v != null && !v.isNull() && !v.isTextual()) {
                throw corrupted(where, "has '" + optional + "' that is neither a string nor null");
            }
        }
        JsonNode meta = m.get("metadata");
        if (meta != null && !meta.isNull() && !meta.isObject()) {
            throw corrupted(where, "has 'metadata' that is neither an object nor null");
        }
        if (meta != null && meta.isObject()) {
            // dict[str, str] in the writer's spec (seed 002): {"n": 1} was published (audit 28).
            for (var e : (Iterable<java.util.Map.Entry<String, JsonNode>>) meta::fields) {
                if (!e.getValue().isTextual()) {
                    throw corrupted(where, "has 'metadata' whose value of '" + e.getKey() + "' is not a string"
                            + " (the writer's metadata maps strings to strings)");
                }
            }
        }
        JsonNode rows = m.get("row_count");
        if (rows == null || !rows.isIntegralNumber() || !rows.canConvertToLong() || rows.asLong() < 0) {
            throw corrupted(where, rows == null ? "lacks 'row_count'" : "has 'row_count' that is not a count");
        }
        JsonNode partsNode = m.get("parts");
        if (partsNode == null || !partsNode.isArray() || partsNode.isEmpty()) {
            throw corrupted(where, partsNode == null ? "lacks 'parts'" : "has 'parts' that is not a non-empty list");
        }
        List<Part> parts = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < partsNode.size(); i++) {
            JsonNode p = partsNode.get(i);
            if (!p.isTextual() || p.asText().isEmpty() || p.asText().contains("/") || p.asText().startsWith(".")) {
                throw corrupted(where, "has parts[" + i + "] = " + p + ", which is not a file name in the folder");
            }
            if (!seen.add(p.asText())) {
                throw corrupted(where, "lists part " + p.asText() + " twice");
            }
            Path part = dir.resolve(p.asText());
            if (!Files.isRegularFile(part)) {
                throw new InvalidInputException(where + " lists part " + p.asText() + ", which the folder lacks"
                        + " (DatasetIncomplete)", "Copy the missing part, or write the dataset again.");
            }
            parts.add(Part.of(part, ""));
        }
        return new CommittedDataset(parts, OptionalLong.of(rows.asLong()), where);
    }

    /** Seed 002's ManifestCorrupted, with its reason. */
    private static InvalidInputException corrupted(String where, String reason) {
        return new InvalidInputException(where + " " + reason + " (ManifestCorrupted)",
                "Fix manifest.json (dataset_key, parts, row_count, schema_hash, compression, created_at_utc) or write"
                        + " the dataset again.");
    }
}
