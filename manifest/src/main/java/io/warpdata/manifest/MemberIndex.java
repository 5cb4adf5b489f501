package io.warpdata.manifest;

/**
 * An artifact's member index: member path -> (shard, data offset, length, mode, content hash),
 * for up to tens of millions of members. Compact on disk and in memory (target: under 200 bytes
 * of heap per member; loads 1,000,000 members in under 2 s): parallel primitive arrays and one
 * UTF-8 byte array of paths, no object per member.
 *
 * <p>Members are sorted by path in <em>component order</em>: paths compare as if '/' sorted
 * before every other byte, so that all members under a directory form one contiguous run,
 * which makes directory listing a range scan.
 */
public final class MemberIndex {
    private MemberIndex() {
        throw new UnsupportedOperationException("TODO");
    }

    /** Number of members. */
    public int size() {
        throw new UnsupportedOperationException("TODO");
    }

    /** Position of {@code path} in the index, or -1. */
    public int find(String path) {
        throw new UnsupportedOperationException("TODO");
    }

    public String path(int i) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Index into {@link Artifact#shards()}. */
    public int shard(int i) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Offset of the member's first data byte within its shard. */
    public long offset(int i) {
        throw new UnsupportedOperationException("TODO");
    }

    public long length(int i) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Permission bits (e.g. 0644, 0755). */
    public int mode(int i) {
        throw new UnsupportedOperationException("TODO");
    }

    /** SHA-256 of the member's bytes. */
    public BlobId hash(int i) {
        throw new UnsupportedOperationException("TODO");
    }

    public byte[] serialize() {
        throw new UnsupportedOperationException("TODO");
    }

    /**
     * @throws ManifestCorruptedException if the bytes are not a valid index (bad magic, version,
     *         truncation, unsorted or duplicate paths, invalid member paths)
     */
    public static MemberIndex parse(byte[] bytes, String source) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Collects members in any order; {@link #build()} sorts and validates. */
    public static final class Builder {
        public Builder add(String path, int shard, long offset, long length, int mode, BlobId hash) {
            throw new UnsupportedOperationException("TODO");
        }

        /**
         * @throws ManifestValidationException on an invalid or duplicate path (naming it)
         */
        public MemberIndex build() {
            throw new UnsupportedOperationException("TODO");
        }
    }
}
