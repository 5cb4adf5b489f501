package io.warpdata.daemon.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.manifest.formats.SafetensorsException;
import io.warpdata.manifest.formats.SafetensorsHeader;
import io.warpdata.manifest.formats.TensorPaths;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * A safetensors dataset as the Spark writer of seed 001 leaves it: a folder with
 * {@code dataset_manifest.json} ({@code format_version}, {@code total_samples},
 * {@code total_bytes}, {@code shards[file, samples_count, bytes]}), the {@code *.safetensors}
 * files it lists, and optionally {@code _tensor_index.parquet}. Checked whole before anything is
 * packed or uploaded: the manifest's fields, that its files and byte counts are the folder's and
 * its totals add up, every file's header ({@link SafetensorsHeader}), and the index's rows
 * against the headers ({@link TensorIndexCheck}). The files are then
 * published as they are (packed like any folder), so they read and mmap through the mount.
 *
 * <p>Not checked: {@code samples_count} against the tensors, since how samples map to tensors
 * depends on the writer's mode (a row per tensor, or per key group); the sum is checked.
 */
final class SafetensorsDataset {
    private static final WriterManifest FIELDS = new WriterManifest(
            "Fix dataset_manifest.json (format_version, total_samples, total_bytes, shards[file, samples_count,"
                    + " bytes]) or write the dataset again.");
    static final String MANIFEST = "dataset_manifest.json";
    static final String SUFFIX = ".safetensors";
    /** A dataset manifest is a short listing; anything larger is not one. */
    private static final long MAX_MANIFEST_BYTES = 64L << 20;
    private static final ObjectMapper JSON = WriterManifest.JSON;

    private SafetensorsDataset() {
    }

    /** What a checked dataset holds; {@code read}: the files the check read, relative to its folder. */
    record Summary(long files, long tensors, long samples, long bytes, Map<String, Long> dtypes,
                   Map<String, Long> shapes, List<String> notes, java.util.Set<String> read) {
        /** Most common shapes kept in the facts: a summary, not a listing. */
        static final int SHAPES_KEPT = 8;

        /** As the artifact's facts (hashed into the version; shown by inspect). */
        Map<String, String> facts() {
            Map<String, String> f = new LinkedHashMap<>();
            f.put("format", "safetensors");
            f.put("files", Long.toString(files));
            f.put("tensors", Long.toString(tensors));
            f.put("samples", Long.toString(samples));
            f.put("dtypes", histogram(dtypes, Integer.MAX_VALUE));
            f.put("shapes", histogram(shapes, SHAPES_KEPT));
            return f;
        }

        /** {@code key:count} by count, most first (then by key), at most {@code kept} of them. */
        private static String histogram(Map<String, Long> counts, int kept) {
            List<Map.Entry<String, Long>> e = new ArrayList<>(counts.entrySet());
            e.sort(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()));
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < Math.min(kept, e.size()); i++) {
                sb.append(i == 0 ? "" : " ").append(e.get(i).getKey()).append(':').append(e.get(i).getValue());
            }
            return e.size() > kept ? sb + " ..." : sb.toString();
        }
    }

    /** Whether {@code dir} is a safetensors dataset (it holds {@code dataset_manifest.json}). */
    static boolean isOne(Path dir) {
        return Files.isRegularFile(dir.resolve(MANIFEST));
    }

    /**
     * Checks the dataset in {@code dir}.
     *
     * @throws InvalidInputException naming the file: a manifest that is not JSON or lacks a
     *         field, a listed file missing or of another size, a safetensors file not listed,
     *         totals that do not add up
     * @throws SafetensorsException naming the file and the tensor: a header that breaks the format
     */
    static Summary check(String artifact, Path dir) {
        return check(artifact, dir, Path.of(System.getProperty("java.io.tmpdir")));
    }

    /** As {@link #check(String, Path)}, the index's check spilling below {@code spillParent} (the publish's staging). */
    static Summary check(String artifact, Path dir, Path spillParent) {
        JsonNode m = readManifest(artifact, dir);
        try (TensorIndexCheck index = TensorIndexCheck.of(artifact, dir, spillParent)) {
            return check(artifact, dir, m, index);
        }
    }

    private static Summary check(String artifact, Path dir, JsonNode m, TensorIndexCheck index) {
        String where = "Artifact '" + artifact + "': " + dir.resolve(MANIFEST);
        FIELDS.text(m, "format_version", where);
        long totalSamples = FIELDS.count(m, "total_samples", where);
        long totalBytes = FIELDS.count(m, "total_bytes", where);
        JsonNode shards = m.get("shards");
        if (shards == null || !shards.isArray()) {
            throw FIELDS.corrupted(where, "has no 'shards' array");
        }
        TreeSet<String> listed = new TreeSet<>();
        long samples = 0;
        long bytes = 0;
        long tensors = 0;
        long leftOut = 0;
        String leftOutExample = null;
        List<String> notes = new ArrayList<>();
        Map<String, Long> dtypes = new LinkedHashMap<>();
        Map<String, Long> shapes = new LinkedHashMap<>();
        for (int i = 0; i < shards.size(); i++) {
            JsonNode s = shards.get(i);
            String at = FIELDS.shardAt(shards, i, where);
            String file = FIELDS.text(s, "file", at);
            long count = FIELDS.count(s, "samples_count", at);
            long size = FIELDS.count(s, "bytes", at);
            Path p = dir.resolve(file).normalize();
            if (!p.startsWith(dir) || file.isEmpty() || !file.endsWith(SUFFIX)) {
                throw FIELDS.corrupted(at, "names '" + file + "', which is not a .safetensors file inside the folder");
            }
            // The folder's own spelling of it: "./part-00000.safetensors" is part-00000.safetensors.
            if (!listed.add(dir.relativize(p).toString())) {
                throw FIELDS.corrupted(at, "lists '" + file + "' a second time");
            }
            if (!Files.isRegularFile(p)) {
                throw new InvalidInputException(where + " lists " + file + ", which the folder lacks",
                        "The dataset is incomplete (DatasetIncomplete): copy the missing file, or publish the writer's"
                                + " output again.");
            }
            long actual = WriterManifest.size(p);
            if (actual != size) {
                throw new InvalidInputException(where + " says " + file + " has " + size + " bytes; it has " + actual,
                        "The file was changed or truncated after the dataset was written; write it again.");
            }
            SafetensorsHeader h = header(p, file, actual);
            if (index != null) {
                index.add(dir.relativize(p).toString(), h);
            }
            tensors += h.tensors().size();
            // What the mount's F.tensors/ folder will not show, said now rather than met as
            // FileNotFoundError in a training job (audit 40).
            var files = TensorPaths.of(h.tensors()).files();
            if (files.size() < h.tensors().size()) {
                leftOut += h.tensors().size() - files.size();
                if (leftOutExample == null) {
                    java.util.Set<SafetensorsHeader.Tensor> kept = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
                    kept.addAll(files.values());
                    leftOutExample = h.tensors().stream().filter(t -> !kept.contains(t)).findFirst()
                            .map(t -> quoted(t.name()) + " of " + file).orElse("");
                }
            }
            if (!TensorPaths.listsAtDefaultHeap(h.headerLength())) {
                notes.add(file + " has a header of " + h.headerLength() + " bytes (" + h.tensors().size() + " tensors):"
                        + " warpd lists its .tensors/ folder with a heap of at least "
                        + TensorPaths.heapMibFor(h.headerLength() * TensorPaths.HEAP_PER_HEADER_BYTE) + "m (WARP_HEAP;"
                        + " the default " + TensorPaths.DEFAULT_HEAP_MIB + "m refuses it as TensorFolderTooLarge); the file"
                        + " itself reads at any heap (numpy.memmap, safetensors' safe_open)");
            }
            h.tensors().forEach(t -> {
                dtypes.merge(t.dtype().name(), 1L, Long::sum);
                shapes.merge(t.shape().isEmpty() ? "scalar" : TensorIndexCheck.shape(t.shape()), 1L, Long::sum);
            });
            samples += count;
            bytes += size;
        }
        for (String file : listed) {
            // The mount shows each file's tensors in a folder beside it: a.safetensors -> a.tensors/
            String folder = file.substring(0, file.length() - SUFFIX.length()) + ".tensors";
            if (Files.exists(dir.resolve(folder), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                throw new InvalidInputException("Artifact '" + artifact + "': " + dir.resolve(folder) + " has the name of"
                        + " the folder the mount makes for the tensors of " + file + ", which it would hide",
                        "Rename or remove " + folder + " (the mount shows " + file + "'s tensors there, one .npy each).");
            }
        }
        for (String file : safetensorsFiles(dir)) {
            if (!listed.contains(file)) {
                throw new InvalidInputException("Artifact '" + artifact + "': " + dir.resolve(file) + " is not listed in "
                        + MANIFEST, "List it in the manifest or remove it: a reader of the manifest would not see it.");
            }
        }
        if (samples != totalSamples) {
            throw FIELDS.corrupted(where, "says total_samples " + totalSamples + " but its shards add up to " + samples);
        }
        if (bytes != totalBytes) {
            throw FIELDS.corrupted(where, "says total_bytes " + totalBytes + " but its shards add up to " + bytes);
        }
        if (leftOut > 0) {
            notes.add(0, (leftOut == 1 ? "1 tensor key cannot be a file name" : leftOut + " tensor keys cannot be file names")
                    + " (an empty, '.' or '..' part, a NUL, a part over 255 bytes, or a file that is also another key's"
                    + " folder), so the .tensors/ folders leave " + (leftOut == 1 ? "it" : "them") + " out, e.g. "
                    + leftOutExample + "; " + (leftOut == 1 ? "it reads" : "they read") + " from the .safetensors files");
        }
        if (index != null) {
            notes.addAll(index.finish(listed));
        }
        java.util.Set<String> read = new TreeSet<>(listed);
        read.add(MANIFEST);
        return new Summary(listed.size(), tensors, samples, bytes, dtypes, shapes, List.copyOf(notes), read);
    }

    /**
     * A key as JSON writes it, quoted and escaped: a key is the input's bytes, and a newline or a
     * terminal's escape in one must not make lines or colours of the publish's output (audit 41).
     */
    static String quoted(String key) {
        try {
            return JSON.writeValueAsString(key);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The file's header, read from disk (8 bytes, then the header only; never the buffer). */
    static SafetensorsHeader header(Path p, String name, long size) {
        try (InputStream in = Files.newInputStream(p)) {
            long n = SafetensorsHeader.headerLength(in.readNBytes(8), size, name);
            byte[] header = in.readNBytes((int) n);
            if (header.length != n) {
                throw new SafetensorsException(name, null, "ends inside its header");
            }
            return SafetensorsHeader.parse(header, size, name);
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + p + ": " + e.getMessage(), "Make it readable and publish again.", e);
        }
    }

    private static JsonNode readManifest(String artifact, Path dir) {
        Path p = dir.resolve(MANIFEST);
        try {
            if (WriterManifest.size(p) > MAX_MANIFEST_BYTES) {
                throw FIELDS.corrupted("Artifact '" + artifact + "': " + p, "is larger than " + MAX_MANIFEST_BYTES + " bytes");
            }
            JsonNode m = JSON.readTree(p.toFile());
            if (m == null || !m.isObject()) {
                throw FIELDS.corrupted("Artifact '" + artifact + "': " + p, "is not a JSON object");
            }
            return m;
        } catch (IOException e) {
            throw FIELDS.corrupted("Artifact '" + artifact + "': " + p, WriterManifest.unreadable(e));
        }
    }

    private static List<String> safetensorsFiles(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            List<String> out = new ArrayList<>();
            s.filter(p -> p.getFileName().toString().endsWith(SUFFIX) && Files.isRegularFile(p))
                    .forEach(p -> out.add(dir.relativize(p).toString()));
            return out;
        } catch (IOException e) {
            throw new InvalidInputException("Cannot list " + dir + ": " + e.getMessage(), "Make it readable.", e);
        }
    }




}
