package io.warpdata.manifest;

import java.util.Arrays;
import java.util.Objects;

/**
 * A member index in the flat form (see {@link MemberIndex}), read in place from its bytes: every
 * field of member {@code i} is at a position computed from {@code i}, so nothing per member is
 * held on the heap, and an index in a file costs only the pages it reads.
 */
final class FlatMemberIndex extends MemberIndex {
    private final IndexBytes b;
    private final int count;
    private final long pathsBase;
    private final long shardsBase;
    private final long offsetsBase;
    private final long lengthsBase;
    private final long modesBase;
    private final long hashesBase;

    FlatMemberIndex(IndexBytes b, int count, long pathBytes) {
        this.b = b;
        this.count = count;
        this.pathsBase = HEADER + 4L * count;
        this.shardsBase = pathsBase + pathBytes;
        this.offsetsBase = shardsBase + 4L * count;
        this.lengthsBase = offsetsBase + 8L * count;
        this.modesBase = lengthsBase + 8L * count;
        this.hashesBase = modesBase + 4L * count;
    }

    /**
     * Checks all of {@code b} in one sequential pass (a file is read page by page, never held
     * whole) and opens it.
     *
     * @throws ManifestCorruptedException if the bytes are not a valid flat index
     */
    static FlatMemberIndex openFlat(IndexBytes b, String source) {
        long size = IndexChecks.header(b, source, "member index", HEADER, MAGIC, FORMAT_VERSION);
        int count = b.getInt(8);
        if (count < 0 || HEADER + (long) PER_MEMBER * count > size) {
            throw new ManifestCorruptedException(source, "count", Integer.toUnsignedString(count)
                    + " members need more than the " + size + " bytes present");
        }
        int prevEnd = IndexChecks.ends(b, source, "members", HEADER, count, size);
        long expected = HEADER + (long) PER_MEMBER * count + prevEnd;
        if (expected != size) {
            throw new ManifestCorruptedException(source, "length", count + " members with " + prevEnd
                    + " bytes of paths take " + expected + " bytes, found " + size);
        }
        FlatMemberIndex index = new FlatMemberIndex(b, count, prevEnd);
        index.check(source);
        return index;
    }

    private void check(String source) {
        byte[] prev = null;
        for (int i = 0; i < count; i++) {
            byte[] p = pathBytes(i);
            IndexChecks.sortedPath(source, "members", i, "path", prev, p);
            if (prev != null && ComponentOrder.isDirectoryOf(prev, 0, prev.length, p, 0, p.length)) {
                throw new ManifestCorruptedException(source, field(i, "path"), "'" + IndexChecks.str(prev)
                        + "' is both a member and a directory of '" + IndexChecks.str(p) + "'");
            }
            prev = p;
            int shard = shard(i);
            if (shard < 0) {
                throw new ManifestCorruptedException(source, field(i, "shard"), "negative shard index " + shard);
            }
            long offset = offset(i);
            if (offset < 0) {
                throw new ManifestCorruptedException(source, field(i, "offset"), "negative offset " + offset);
            }
            long length = length(i);
            if (length < 0) {
                throw new ManifestCorruptedException(source, field(i, "length"), "negative length " + length);
            }
            int mode = mode(i);
            if (mode < 0 || mode > MAX_MODE) {
                throw new ManifestCorruptedException(source, field(i, "mode"), "mode 0" + Integer.toOctalString(mode)
                        + " is not permission bits (at most 07777)");
            }
        }
    }

    private static String field(int i, String field) {
        return IndexChecks.name("members", i, field);
    }

    @Override
    public int size() {
        return count;
    }

    private int start(int i) {
        return i == 0 ? 0 : b.getInt(HEADER + 4L * (i - 1));
    }

    private int end(int i) {
        return b.getInt(HEADER + 4L * i);
    }

    @Override
    public int pathLength(int i) {
        Objects.checkIndex(i, count);
        return end(i) - start(i);
    }

    @Override
    public byte[] pathBytes(int i) {
        Objects.checkIndex(i, count);
        int s = start(i);
        byte[] p = new byte[end(i) - s];
        b.get(pathsBase + s, p, 0, p.length);
        return p;
    }

    /** Position of member {@code i}'s entry in the column of {@code width}-byte entries at {@code base}. */
    private long at(long base, int width, int i) {
        return base + (long) width * Objects.checkIndex(i, count);
    }

    @Override
    public int shard(int i) {
        return b.getInt(at(shardsBase, 4, i));
    }

    @Override
    public long offset(int i) {
        return b.getLong(at(offsetsBase, 8, i));
    }

    @Override
    public long length(int i) {
        return b.getLong(at(lengthsBase, 8, i));
    }

    @Override
    public int mode(int i) {
        return b.getInt(at(modesBase, 4, i));
    }

    @Override
    public BlobId hash(int i) {
        byte[] d = new byte[HASH];
        b.get(at(hashesBase, HASH, i), d, 0, HASH);
        return BlobId.fromDigest(d);
    }

    @Override
    public boolean hashEquals(int i, byte[] digest, int off) {
        Objects.checkFromIndexSize(off, HASH, digest.length);
        long at = at(hashesBase, HASH, i);
        for (int k = 0; k < HASH; k++) {
            if (b.get(at + k) != digest[off + k]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public long retainedBytes() {
        return 64 + b.retainedBytes();
    }

    @Override
    public byte[] serialize() {
        if (b instanceof IndexBytes.Heap h) {
            return h.array().clone();
        }
        return MemberIndexWriter.flat(this, 0, count);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FlatMemberIndex m && count == m.count && Arrays.equals(serialize(), m.serialize());
    }

    @Override
    public int hashCode() {
        return 31 * count + (count == 0 ? 0 : Arrays.hashCode(pathBytes(0)));
    }
}
