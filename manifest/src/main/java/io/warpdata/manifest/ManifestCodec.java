package io.warpdata.manifest;

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
 *  "dataset_id":"ws/name","format_version":1,"metadata":{"created_at":"..."},
 *  "stats":{"total_bytes":N,"total_members":N,"total_rows":N},
 *  "tables":{"main":{"format":"parquet","schema":[{"name":"id","type":"BIGINT"}],
 *    "shards":[{"blocks":H,"byte_size":N,"hash":H,"name":"part-0.parquet","row_count":N}]}},
 *  "version_hash":H}
 * </pre>
 */
public final class ManifestCodec {
    /** Bumped only with a migration story; readers refuse versions they do not know. */
    public static final int FORMAT_VERSION = 1;

    private ManifestCodec() {
    }

    /** Canonical JSON of the hashed part (no {@code version_hash}, no {@code metadata}). */
    public static byte[] canonicalJson(Manifest manifest) {
        throw new UnsupportedOperationException("TODO");
    }

    /** The version id: SHA-256 of {@link #canonicalJson(Manifest)}. */
    public static VersionHash version(Manifest manifest) {
        throw new UnsupportedOperationException("TODO");
    }

    /** The stored form, including {@code version_hash} and {@code metadata}. */
    public static byte[] toJson(Manifest manifest) {
        throw new UnsupportedOperationException("TODO");
    }

    /**
     * Parses and validates a stored manifest.
     *
     * @param json the stored bytes
     * @param source what to name in errors (e.g. the store key)
     * @return the manifest
     * @throws ManifestCorruptedException if it does not parse, fails validation (naming the
     *         field), has an unknown format version, or its {@code version_hash} is not the hash
     *         of its content
     */
    public static Manifest fromJson(byte[] json, String source) {
        throw new UnsupportedOperationException("TODO");
    }
}
