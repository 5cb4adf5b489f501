package io.warpdata.manifest;

import java.nio.charset.StandardCharsets;
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
        long size = b.length();
        if (size < HEADER) {
            throw new ManifestCorruptedException(source, "header", "truncated: " + size
                    + " bytes, a member index has at least " + HEADER);
        }
        int magic = b.getInt(0);
        if (magic != MAGIC) {
            throw new ManifestCorruptedException(source, "magic", String.format("not a member index (magic 0x%08x)", magic));
        }
        int version = b.getInt(4);
        if (version != FORMAT_VERSION) {
            throw new ManifestCorruptedException(source, "version", "unknown member index version "
                    + Integer.toUnsignedString(version) + " (this Warp reads version " + FORMAT_VERSION + ")");
        }
        int count = b.getInt(8);
        if (count < 0 || HEADER + (long) PER_MEMBER * count > size) {
            throw new ManifestCorruptedException(source, "count", Integer.toUnsignedString(count)
                    + " members need more than the " + size + " bytes present");
        }
        int prevEnd = 0;
        for (int i = 0; i < count; i++) {
            int end = b.getInt(HEADER + 4L * i);
            if (end <= prevEnd) { // also catches offsets past 2^31 (negative)
                throw new ManifestCorruptedException(source, "members[" + i + "].path",
                        "path end offset " + Integer.toUnsignedString(end) + " is not after " + prevEnd);
            }
            prevEnd = end;
        }
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
            String problem = Names.memberPathProblem(p, 0, p.length);
            if (problem != null) {
                throw new ManifestCorruptedException(source, field(i, "path"), problem + " '"
                        + new String(p, StandardCharsets.UTF_8) + "'");
            }
            if (prev != null) {
                int c = ComponentOrder.compare(prev, 0, prev.length, p, 0, p.length);
                if (c >= 0) {
                    throw new ManifestCorruptedException(source, field(i, "path"), (c == 0 ? "duplicate path '" : "path '")
                            + str(p) + (c == 0 ? "'" : "' is out of order after '" + str(prev) + "'"));
                }
                if (ComponentOrder.isDirectoryOf(prev, 0, prev.length, p, 0, p.length)) {
                    throw new ManifestCorruptedException(source, field(i, "path"), "'" + str(prev)
                            + "' is both a member and a directory of '" + str(p) + "'");
                }
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
        return "members[" + i + "]." + field;
    }

    private static String str(byte[] p) {
        return new String(p, StandardCharsets.UTF_8);
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

    @Override
    public int shard(int i) {
        return b.getInt(shardsBase + 4L * Objects.checkIndex(i, count));
    }

    @Override
    public long offset(int i) {
        return b.getLong(offsetsBase + 8L * Objects.checkIndex(i, count));
    }

    @Override
    public long length(int i) {
        return b.getLong(lengthsBase + 8L * Objects.checkIndex(i, count));
    }

    @Override
    public int mode(int i) {
        return b.getInt(modesBase + 4L * Objects.checkIndex(i, count));
    }

    @Override
    public BlobId hash(int i) {
        byte[] d = new byte[HASH];
        b.get(hashesBase + (long) HASH * Objects.checkIndex(i, count), d, 0, HASH);
        return BlobId.fromDigest(d);
    }

    @Override
    public boolean hashEquals(int i, byte[] digest, int off) {
        Objects.checkFromIndexSize(off, HASH, digest.length);
        long at = hashesBase + (long) HASH * Objects.checkIndex(i, count);
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
