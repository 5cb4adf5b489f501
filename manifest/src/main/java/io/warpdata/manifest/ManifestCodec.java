package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Reads and writes manifests as JSON, by hand on Jackson's streaming API (keys are constants
 * here; no annotations, no data binding), so that the bytes that are hashed are fully under
 * our control.
 *
 * <p>Canonical form: object keys sorted, no insignificant whitespace, integers only (all our
 * numbers are byte sizes and counts), strings as Jackson escapes them, fields with their
 * defaults still written. The version id is SHA-256 over the canonical JSON of everything but
 * {@code version_hash} and {@code metadata}.
 *
 * <p>Stored form ({@link #toJson}): the canonical fields plus {@code version_hash} and
 * {@code metadata}, keys still sorted, compact.
 *
 * <pre>
 * {"artifacts":{"images":{"index":{"blocks":H,"byte_size":N,"hash":H},"kind":"tar_shards",
 *    "member_bytes":N,"member_count":N,"shards":[{"blocks":H,"byte_size":N,"hash":H}]}},
 *  "bindings":[{"artifact":"images","column":"path","ref_type":"image","table":"main"}],
 *  "dataset_id":"ws/name",
 *  "derived_from":{"dataset_id":"ws/parent","query":{"where":"..."},"table":"main","version":H},
 *  "format_version":1,"metadata":{"created_at":"..."},
 *  "stats":{"total_bytes":N,"total_members":N,"total_rows":N},
 *  "tables":{"main":{"format":"parquet","schema":[{"name":"id","type":"BIGINT"}],
 *    "shards":[{"blocks":H,"byte_size":N,"hash":H,"name":"part-0.parquet","row_count":N}]}},
 *  "version_hash":H}
 * </pre>
 *
 * <p>Reading is strict: any key order and whitespace is accepted (only the hash is over the
 * canonical form), but unknown, duplicate, missing or mistyped fields, non-integer numbers,
 * invalid values, an unknown {@code format_version}, trailing bytes and a {@code version_hash}
 * that is not the hash of the content are all {@link ManifestCorruptedException}s naming the
 * JSON path of the field, e.g. {@code tables.main.shards[1].hash}.
 *
 * <p>One small codec per type ({@link TableCodec}, {@link ArtifactCodec}, {@link BindingCodec},
 * {@link StatsCodec}, {@link BlobRefCodec}, {@link DerivationCodec}), on one shared helper ({@link StrictJson}) that
 * enforces required, once-only and typed fields; values are checked by the records' own
 * constructors, whose errors become corruption at the field's path. A new optional field is a
 * few lines in one codec.
 */
public final class ManifestCodec {
    /**
     * The newest format this Warp reads and writes; readers refuse newer ones
     * ({@link ManifestFormatTooNewException}). A version is written in the oldest format that
     * describes it ({@link Manifest#formatFor}), so an older reader refuses only the versions it
     * cannot read, by their number rather than by failing on what they name:
     * <ul>
     * <li>1: every member index is one flat blob;</li>
     * <li>2: an artifact of more than {@link MemberIndex#PART_MEMBERS} members has its index in
     *     parts. Versions published in parts before this number existed (from commit 2d598f7
     *     on, parts of 8,192 members until d032906) carry 1 and are read as they are (the index
     *     says its own layout); they keep their ids.</li>
     * <li>3: WebDataset shards name the files they were published as ({@code shard_names}), which
     *     the mount shows as {@code ARTIFACT.tars/}.</li>
     * <li>4: an artifact with safetensors members names the SHA-256 of each of their tensors
     *     ({@code tensor_hashes}, {@link TensorHashes}), by which one tensor is fetched on its own.</li>
     * <li>5: such an artifact also names its members' headers, deflated ({@code tensor_headers},
     *     {@link TensorHeaders}), by which a tensor is found without its file's header.</li>
     * </ul>
     * A new layout of anything a manifest names is a new number here.
     */
    public static final int FORMAT_VERSION = 5;

    // Keys are written in sorted order by hand; ManifestCodecTest checks that every object of
    // the canonical form has sorted keys, so a new key in the wrong place fails the build.
    private static final String ARTIFACTS = "artifacts";
    private static final String BINDINGS = "bindings";
    private static final String DATASET_ID = "dataset_id";
    private static final String DERIVED_FROM = "derived_from";
    private static final String FORMAT_VERSION_KEY = "format_version";
    private static final String METADATA = "metadata";
    private static final String STATS = "stats";
    private static final String TABLES = "tables";
    private static final String VERSION_HASH = "version_hash";

    /**
     * Thread-safe once built and never reconfigured. Parser defaults are strict JSON. Writer
     * features that shape the hashed bytes are pinned explicitly, so that a Jackson upgrade
     * changing a default cannot change version ids: non-ASCII is written as raw UTF-8 (also
     * characters outside the BMP), '/' is not escaped, control characters use upper-case hex.
     */
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
            .disable(JsonWriteFeature.ESCAPE_NON_ASCII)
            .disable(JsonWriteFeature.ESCAPE_FORWARD_SLASHES)
            .enable(JsonWriteFeature.WRITE_HEX_UPPER_CASE)
            .enable(JsonWriteFeature.QUOTE_FIELD_NAMES)
            .disable(JsonWriteFeature.WRITE_NUMBERS_AS_STRINGS)
            .build();

    private ManifestCodec() {
    }

    /** Canonical JSON of the hashed part (no {@code version_hash}, no {@code metadata}). */
    public static byte[] canonicalJson(Manifest manifest) {
        return write(manifest, false, null);
    }

    /** The version id: SHA-256 of {@link #canonicalJson(Manifest)}. */
    public static VersionHash version(Manifest manifest) {
        return new VersionHash(HexFormat.of().formatHex(BlobId.sha256().digest(canonicalJson(manifest))));
    }

    /** The stored form, including {@code version_hash} and {@code metadata}. */
    public static byte[] toJson(Manifest manifest) {
        return write(manifest, true, version(manifest));
    }

    /**
     * Parses and validates a stored manifest.
     *
     * @param json the stored bytes
     * @param source what to name in errors (e.g. the store key)
     * @return the manifest
     * @throws ManifestFormatTooNewException if its {@code format_version} is newer than this
     *         Warp reads (whatever else it holds)
     * @throws ManifestCorruptedException if it does not parse, fails validation (naming the
     *         field), or its {@code version_hash} is not the hash of its content
     */
    public static Manifest fromJson(byte[] json, String source) {
        StrictJson.Obj root = StrictJson.parse(json, source, "manifest object");
        // The number first: a newer format may have fields, kinds and values this reader calls
        // damage, and it must say "too new", not "corrupted".
        if (root.get(FORMAT_VERSION_KEY) != null && root.integer(FORMAT_VERSION_KEY) > FORMAT_VERSION) {
            throw new ManifestFormatTooNewException(source, root.integer(FORMAT_VERSION_KEY), FORMAT_VERSION);
        }
        root.allow(ARTIFACTS, BINDINGS, DATASET_ID, DERIVED_FROM, FORMAT_VERSION_KEY, METADATA, STATS, TABLES, VERSION_HASH);
        SortedMap<String, Artifact> artifacts = ArtifactCodec.readAll(root.object(ARTIFACTS));
        List<Binding> bindings = BindingCodec.readAll(root.array(BINDINGS));
        String idText = root.string(DATASET_ID);
        DatasetId id = root.check(DATASET_ID, () -> DatasetId.parse(idText));
        Optional<Derivation> derivedFrom = root.get(DERIVED_FROM) == null ? Optional.empty()
                : Optional.of(DerivationCodec.read(root.object(DERIVED_FROM)));
        long format = root.integer(FORMAT_VERSION_KEY);
        if (format < 1) {
            throw root.corrupted(FORMAT_VERSION_KEY, "format version " + format + " (versions start at 1)");
        }
        SortedMap<String, String> metadata = metadata(root.object(METADATA));
        Stats stats = StatsCodec.read(root.object(STATS));
        SortedMap<String, Table> tables = TableCodec.readAll(root.object(TABLES));
        String stored = root.string(VERSION_HASH);
        root.check(VERSION_HASH, () -> new VersionHash(stored));
        Manifest m = root.check("$", () -> new Manifest(id, tables, artifacts, bindings, stats, metadata, derivedFrom,
                (int) format));
        String actual = root.check("$", () -> version(m)).hex();
        if (!actual.equals(stored)) {
            throw root.corrupted(VERSION_HASH, "hash mismatch: stored " + stored + ", content hashes to " + actual);
        }
        return m;
    }

    private static SortedMap<String, String> metadata(StrictJson.Obj o) {
        SortedMap<String, String> out = new TreeMap<>();
        for (Map.Entry<String, StrictJson.Value> f : o.fields()) {
            if (out.containsKey(f.getKey())) {
                throw o.corrupted(o.at(f.getKey()), "duplicate metadata key '" + f.getKey() + "'");
            }
            out.put(f.getKey(), o.string(f));
        }
        return out;
    }

    private static byte[] write(Manifest m, boolean stored, VersionHash version) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        try (JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeObjectFieldStart(ARTIFACTS);
            for (var e : m.artifacts().entrySet()) {
                g.writeFieldName(e.getKey());
                ArtifactCodec.write(g, e.getValue());
            }
            g.writeEndObject();
            g.writeArrayFieldStart(BINDINGS);
            for (Binding b : m.bindings()) {
                BindingCodec.write(g, b);
            }
            g.writeEndArray();
            g.writeStringField(DATASET_ID, m.datasetId().toString());
            // Written only for views, so every ordinary version keeps the id it always had.
            if (m.derivedFrom().isPresent()) {
                g.writeFieldName(DERIVED_FROM);
                DerivationCodec.write(g, m.derivedFrom().get());
            }
            g.writeNumberField(FORMAT_VERSION_KEY, m.formatVersion());
            if (stored) {
                g.writeObjectFieldStart(METADATA);
                for (var e : m.metadata().entrySet()) {
                    g.writeStringField(e.getKey(), e.getValue());
                }
                g.writeEndObject();
            }
            g.writeFieldName(STATS);
            StatsCodec.write(g, m.stats());
            g.writeObjectFieldStart(TABLES);
            for (var e : m.tables().entrySet()) {
                g.writeFieldName(e.getKey());
                TableCodec.write(g, e.getValue());
            }
            g.writeEndObject();
            if (stored) {
                g.writeStringField(VERSION_HASH, version.hex());
            }
            g.writeEndObject();
        } catch (JsonProcessingException e) {
            // e.g. a string holding an unpaired surrogate, which has no UTF-8 form
            throw new ManifestValidationException("$", "cannot be written as JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return out.toByteArray();
    }
}
