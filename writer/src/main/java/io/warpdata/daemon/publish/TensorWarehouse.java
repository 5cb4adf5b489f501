package io.warpdata.daemon.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.manifest.formats.TwhException;
import io.warpdata.manifest.formats.TwhHeader;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A tensor warehouse as seed 003's ETL writer leaves it: a folder with {@code manifest.json}
 * ({@code dataset_root}, {@code transform}, {@code version}, {@code shards[id, relative_path,
 * shard_version, samples, width, height, channels, max_boxes, dtype, endianness,
 * checksum_sha256]}, {@code summary}, {@code thresholds}) and the TWH1 shards it lists. Checked
 * whole before anything is packed or uploaded: the manifest's fields; every shard's header
 * ({@link TwhHeader}) against its manifest entry; every shard's SHA-256 against
 * {@code checksum_sha256}; no TWH1 shard the manifest does not list; and the summary against the
 * thresholds, refused unless the publisher allows violations. The shards are then published as
 * they are (packed like any folder), so training mmaps them through the mount.
 *
 * <p>Recognised by its top-level {@code manifest.json} naming TWH1 shards: the manifest is a JSON
 * object with {@code dataset_root} and {@code shards}, or (a manifest broken or missing those
 * fields) a file directly in the folder starts with the magic {@code TWH1}, so a damaged
 * warehouse is refused rather than published as a plain folder. Other folders holding a
 * {@code manifest.json} are plain folders.
 *
 * <p>Thresholds: judged by {@link Thresholds} (the spellings of a share of the total it reads;
 * a threshold it cannot read is reported as not checked, never a refusal).
 */
final class TensorWarehouse {
    private static final WriterManifest FIELDS = new WriterManifest(
            "Fix manifest.json (dataset_root, transform, version, shards[id, relative_path, shard_version, samples,"
                    + " width, height, channels, max_boxes, dtype, endianness, checksum_sha256], summary, thresholds)"
                    + " or run the ETL job again.");
    static final String MANIFEST = "manifest.json";
    /** The artifact facts naming thresholds violated (published as allowed) and thresholds not checked. */
    static final String VIOLATIONS_FACT = "threshold_violations";
    static final String UNCHECKED_FACT = "thresholds_not_checked";
    /** A warehouse manifest lists shards of 128-256 MB: thousands of entries at most, well below this. */
    private static final long MAX_MANIFEST_BYTES = 64L << 20;
    /**
     * How many top-level entries recognition looks at for a TWH1 file: 10,000 shards of the
     * seed's 128-256 MB target are over a terabyte; a folder beyond that with a broken manifest is
     * taken for a plain folder rather than read file by file.
     */
    private static final int MAX_SCANNED = 10_000;
    private static final Pattern SHA256 = Pattern.compile("[0-9a-fA-F]{64}");
    private static final ObjectMapper JSON = WriterManifest.JSON;
    private static final byte[] MAGIC = {'T', 'W', 'H', '1'};

    private TensorWarehouse() {
    }

    /**
     * What a checked warehouse holds.
     *
     * @param violations the thresholds its summary violates (published only when allowed)
     * @param unchecked  the thresholds that could not be checked, with the reason (published)
     * @param read       the files the check read, relative to its folder
     */
    record Summary(int shards, long samples, long bytes, List<String> violations, List<String> unchecked,
                   java.util.SortedMap<String, Long> dims, java.util.Set<String> read) {
        Summary {
            violations = List.copyOf(violations);
            unchecked = List.copyOf(unchecked);
            dims = new java.util.TreeMap<>(dims);
        }

        /** As the artifact's facts (hashed into the version; shown by inspect). */
        java.util.Map<String, String> facts() {
            java.util.Map<String, String> f = new java.util.LinkedHashMap<>();
            f.put("format", "tensor_warehouse");
            f.put("shards", Integer.toString(shards));
            f.put("samples", Long.toString(samples));
            StringBuilder d = new StringBuilder();
            dims.forEach((k, v) -> d.append(d.length() == 0 ? "" : " ").append(k).append(':').append(v));
            f.put("dims", d.toString());
            if (!violations.isEmpty()) {
                f.put(VIOLATIONS_FACT, String.join("; ", violations));
            }
            if (!unchecked.isEmpty()) {
                f.put(UNCHECKED_FACT, String.join("; ", unchecked));
            }
            return f;
        }
    }

    /** Whether {@code dir} is a tensor warehouse (see the class comment). */
    static boolean isOne(Path dir) {
        Path m = dir.resolve(MANIFEST);
        if (!Files.isRegularFile(m)) {
            return false;
        }
        try {
            if (Files.size(m) <= MAX_MANIFEST_BYTES) {
                JsonNode n = JSON.readTree(m.toFile());
                if (n != null && n.isObject() && n.has("dataset_root") && n.has("shards")) {
                    return true;
                }
            }
        } catch (IOException e) {
            // Not JSON: a warehouse only if shards sit beside it (looked at below).
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            int seen = 0;
            for (Path p : s) {
                if (++seen > MAX_SCANNED) {
                    return false;
                }
                if (startsWithMagic(p)) {
                    return true;
                }
            }
        } catch (IOException e) {
            throw new InvalidInputException("Cannot list " + dir + ": " + e.getMessage(), "Make it readable.", e);
        }
        return false;
    }

    /**
     * Checks the warehouse in {@code dir}.
     *
     * @param allowViolations publish a summary that violates its thresholds ({@code --allow-threshold-violations})
     * @throws InvalidInputException naming the file: a manifest that is not JSON or lacks a field
     *         (ManifestCorrupted), a listed shard missing (DatasetIncomplete), a header that
     *         disagrees with its entry, a wrong checksum, a TWH1 shard not listed
     * @throws TwhException naming the shard and the field: a header that breaks the format
     * @throws ThresholdViolationException a summary beyond its thresholds, unless allowed
     */
    static Summary check(String artifact, Path folder, boolean allowViolations) {
        Path dir = folder.toAbsolutePath().normalize();
        Path manifestPath = dir.resolve(MANIFEST);
        String where = "Artifact '" + artifact + "': " + manifestPath;
        JsonNode m = readManifest(where, manifestPath);
        FIELDS.text(m, "dataset_root", where);
        if (!m.path("transform").isObject()) {
            throw FIELDS.corrupted(where, m.has("transform") ? "has 'transform' that is not an object" : "lacks 'transform'");
        }
        String version = FIELDS.text(m, "version", where);
        if (!SHA256.matcher(version).matches()) {
            throw FIELDS.corrupted(where, "has 'version' " + quoted(version) + ", not a SHA-256 in hex (64 hex digits)");
        }
        JsonNode summary = FIELDS.object(m, "summary", where);
        JsonNode thresholds = FIELDS.object(m, "thresholds", where);
        JsonNode shards = m.get("shards");
        if (shards == null || !shards.isArray() || shards.isEmpty()) {
            throw FIELDS.corrupted(where, shards == null ? "has no 'shards' array" : "has 'shards' that is not a non-empty array");
        }
        Set<String> ids = new HashSet<>();
        Set<Path> listed = new HashSet<>();
        long samples = 0;
        java.util.SortedMap<String, Long> dims = new java.util.TreeMap<>();
        long bytes = 0;
        for (int i = 0; i < shards.size(); i++) {
            JsonNode s = shards.get(i);
            String at = FIELDS.shardAt(shards, i, where);
            String id = FIELDS.text(s, "id", at);
            if (!ids.add(id)) {
                throw FIELDS.corrupted(at, "has id " + quoted(id) + " a second time");
            }
            String rel = FIELDS.text(s, "relative_path", at);
            Path p = dir.resolve(rel).normalize();
            if (rel.isEmpty() || !p.startsWith(dir) || p.equals(dir) || p.equals(manifestPath)) {
                throw FIELDS.corrupted(at, "has relative_path " + quoted(rel) + ", which is not a shard file inside the folder");
            }
            if (!listed.add(p)) {
                throw FIELDS.corrupted(at, "lists " + quoted(rel) + " a second time");
            }
            Entry e = entry(s, at);
            if (!Files.isRegularFile(p)) {
                throw new InvalidInputException(where + " lists shard " + rel + " (id " + quoted(id) + "), which the folder"
                        + " lacks", "The warehouse is incomplete (DatasetIncomplete): copy the missing shard, or run the"
                        + " ETL job again.");
            }
            long size = WriterManifest.size(p);
            TwhHeader h = header(p, rel, size);
            agree(where, i, id, rel, e, h);
            String actual = sha256(p);
            if (!actual.equalsIgnoreCase(e.checksum)) {
                throw new InvalidInputException(where + " shards[" + i + "] says shard " + rel + " has SHA-256 "
                        + e.checksum.toLowerCase(Locale.ROOT) + ", but it has " + actual,
                        "The shard changed after the manifest was written (or was copied damaged); run the ETL job again"
                                + " or restore the shard.");
            }
            samples += h.samples();
            bytes += size;
            dims.merge(h.channels() + "x" + h.height() + "x" + h.width() + " " + h.dtype() + " boxes " + h.maxBoxes(), 1L,
                    Long::sum);
        }
        unlistedShards(artifact, dir, listed);
        Thresholds.Judgement judged = Thresholds.judge(summary, thresholds);
        if (!judged.violations().isEmpty() && !allowViolations) {
            throw new ThresholdViolationException(where + ": its summary violates its thresholds: "
                    + String.join("; ", judged.violations())
                    + (judged.unchecked().isEmpty() ? "" : " (and " + String.join("; ", judged.unchecked()) + ")"));
        }
        java.util.Set<String> read = new java.util.TreeSet<>();
        listed.forEach(f -> read.add(dir.relativize(f).toString()));
        read.add(MANIFEST);
        return new Summary(shards.size(), samples, bytes, judged.violations(), judged.unchecked(), dims, read);
    }

    /** A shard's manifest entry, its fields checked for type. */
    private record Entry(long shardVersion, long samples, long width, long height, long channels, long maxBoxes,
                         TwhHeader.Dtype dtype, TwhHeader.Endianness endianness, String checksum) {
    }

    private static Entry entry(JsonNode s, String at) {
        long shardVersion = FIELDS.count(s, "shard_version", at);
        long samples = FIELDS.count(s, "samples", at);
        long width = FIELDS.count(s, "width", at);
        long height = FIELDS.count(s, "height", at);
        long channels = FIELDS.count(s, "channels", at);
        long maxBoxes = FIELDS.count(s, "max_boxes", at);
        String dt = FIELDS.text(s, "dtype", at);
        TwhHeader.Dtype dtype = switch (dt) {
            case "F32" -> TwhHeader.Dtype.F32;
            case "F16" -> TwhHeader.Dtype.F16;
            default -> throw FIELDS.corrupted(at, "has dtype " + quoted(dt) + "; it must be \"F32\" or \"F16\"");
        };
        String en = FIELDS.text(s, "endianness", at);
        TwhHeader.Endianness endianness = switch (en) {
            case "Little" -> TwhHeader.Endianness.LITTLE;
            case "Big" -> TwhHeader.Endianness.BIG;
            default -> throw FIELDS.corrupted(at, "has endianness " + quoted(en) + "; it must be \"Little\" or \"Big\"");
        };
        JsonNode c = s.get("checksum_sha256");
        if (c == null || c.isNull()) {
            throw FIELDS.corrupted(at, "has no checksum_sha256 (the seed lets it wait until populated; a published warehouse"
                    + " needs it)");
        }
        if (!c.isTextual() || !SHA256.matcher(c.asText()).matches()) {
            throw FIELDS.corrupted(at, "has checksum_sha256 " + c + ", not a SHA-256 in hex (64 hex digits)");
        }
        return new Entry(shardVersion, samples, width, height, channels, maxBoxes, dtype, endianness, c.asText());
    }

    /** The header must say what the manifest entry says, field by field. */
    private static void agree(String where, int i, String id, String rel, Entry e, TwhHeader h) {
        disagree(where, i, id, rel, "shard_version", e.shardVersion, h.shardVersion());
        disagree(where, i, id, rel, "samples", e.samples, h.samples());
        disagree(where, i, id, rel, "width", e.width, h.width());
        disagree(where, i, id, rel, "height", e.height, h.height());
        disagree(where, i, id, rel, "channels", e.channels, h.channels());
        disagree(where, i, id, rel, "max_boxes", e.maxBoxes, h.maxBoxes());
        if (e.dtype != h.dtype()) {
            throw mismatch(where, i, id, rel, "dtype", "\"" + e.dtype + "\"", h.dtype().code() + " (" + h.dtype() + ")");
        }
        if (e.endianness != h.endianness()) {
            throw mismatch(where, i, id, rel, "endianness", "\"" + e.endianness.manifestName() + "\"",
                    h.endianness().code() + " (" + h.endianness().manifestName() + ")");
        }
    }

    private static void disagree(String where, int i, String id, String rel, String field, long manifest, long header) {
        if (manifest != header) {
            throw mismatch(where, i, id, rel, field, String.valueOf(manifest), String.valueOf(header));
        }
    }

    private static InvalidInputException mismatch(String where, int i, String id, String rel, String field, String manifest,
                                                  String header) {
        return new InvalidInputException(where + " shards[" + i + "] (id " + quoted(id) + ") says " + field + " " + manifest
                + ", but the header of shard " + rel + " says " + header,
                "The shard and its manifest entry come from different ETL runs; run the ETL job again so both agree.");
    }

    /** A file that starts with TWH1 but that the manifest does not list would be invisible to training. */
    private static void unlistedShards(String artifact, Path dir, Set<Path> listed) {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Iterator<Path> it = s.iterator(); it.hasNext(); ) {
                Path p = it.next();
                if (!listed.contains(p) && startsWithMagic(p)) {
                    throw new InvalidInputException("Artifact '" + artifact + "': " + p + " is a TWH1 shard not listed in "
                            + MANIFEST, "List it in the manifest or remove it: training reads only the shards the manifest"
                            + " lists.");
                }
            }
        } catch (IOException e) {
            throw new InvalidInputException("Cannot list " + dir + ": " + e.getMessage(), "Make it readable.", e);
        }
    }

    private static TwhHeader header(Path p, String name, long size) {
        try (InputStream in = Files.newInputStream(p)) {
            return TwhHeader.parse(in.readNBytes(TwhHeader.HEADER_BYTES), size, name);
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + p + ": " + e.getMessage(), "Make it readable and publish again.", e);
        }
    }

    private static boolean startsWithMagic(Path p) {
        if (!Files.isRegularFile(p)) {
            return false;
        }
        try (InputStream in = Files.newInputStream(p)) {
            return Arrays.equals(in.readNBytes(MAGIC.length), MAGIC);
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + p + ": " + e.getMessage(), "Make it readable.", e);
        }
    }

    private static String sha256(Path p) {
        try (InputStream in = Files.newInputStream(p)) {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 20];
            int n;
            while ((n = in.read(buf)) > 0) {
                d.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(d.digest());
        } catch (IOException e) {
            throw new InvalidInputException("Cannot read " + p + ": " + e.getMessage(), "Make it readable and publish again.", e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private static JsonNode readManifest(String where, Path p) {
        try {
            if (WriterManifest.size(p) > MAX_MANIFEST_BYTES) {
                throw FIELDS.corrupted(where, "is larger than " + MAX_MANIFEST_BYTES + " bytes");
            }
            JsonNode m = JSON.readTree(p.toFile());
            if (m == null || !m.isObject()) {
                throw FIELDS.corrupted(where, "is not a JSON object");
            }
            return m;
        } catch (IOException e) {
            throw FIELDS.corrupted(where, WriterManifest.unreadable(e));
        }
    }





    private static String quoted(String s) {
        return "'" + (s.length() > 200 ? s.substring(0, 200) + "..." : s) + "'";
    }

}
