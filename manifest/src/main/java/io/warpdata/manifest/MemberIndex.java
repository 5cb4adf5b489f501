package io.warpdata.manifest;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * An artifact's member index: member path -> (shard, data offset, length, mode, content hash),
 * for up to tens of millions of members. Compact on disk and in memory (target: under 200 bytes
 * of heap per member; loads 1,000,000 members in under 2 s): parallel primitive arrays and one
 * UTF-8 byte array of paths, no object per member.
 *
 * <p>Members are sorted by path in <em>component order</em>: paths compare as if '/' sorted
 * before every other byte, so that all members under a directory form one contiguous run,
 * which makes directory listing a range scan ({@link #range}, {@link #forEachChild}), and the
 * children of a directory come out sorted by name.
 *
 * <p>No path is both a member and a directory of other members ({@code a} and {@code a/b}).
 *
 * <p>Binary form, big-endian: magic {@code "WMIX"}, u32 format version (1), u32 count {@code n},
 * then {@code n} u32 cumulative path end offsets, the concatenated UTF-8 paths, {@code n} i32
 * shard indexes, {@code n} i64 data offsets, {@code n} i64 lengths, {@code n} u32 modes and
 * {@code n} 32-byte SHA-256 hashes.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public final class MemberIndex {
    public static final int FORMAT_VERSION = 1;
    /** Permission bits a member may carry (including setuid/setgid/sticky, which vfs masks). */
    public static final int MAX_MODE = 07777;

    private static final int MAGIC = 0x574D4958; // "WMIX"
    private static final int HEADER = 12;
    /** Fixed bytes per member on disk: end offset, shard, offset, length, mode, hash. */
    private static final int PER_MEMBER = 4 + 4 + 8 + 8 + 4 + 32;
    private static final int HASH = 32;

    private final int count;
    /** All paths, UTF-8, concatenated in order. */
    private final byte[] paths;
    /** Path i is {@code paths[starts[i], starts[i + 1])}; {@code count + 1} entries. */
    private final int[] starts;
    private final int[] shards;
    private final long[] offsets;
    private final long[] lengths;
    private final int[] modes;
    /** 32 bytes per member. */
    private final byte[] hashes;

    private MemberIndex(int count, byte[] paths, int[] starts, int[] shards, long[] offsets, long[] lengths,
                        int[] modes, byte[] hashes) {
        this.count = count;
        this.paths = paths;
        this.starts = starts;
        this.shards = shards;
        this.offsets = offsets;
        this.lengths = lengths;
        this.modes = modes;
        this.hashes = hashes;
    }

    /** Number of members. */
    public int size() {
        return count;
    }

    /** Position of {@code path} in the index, or -1. */
    public int find(String path) {
        return path == null ? -1 : find(path.getBytes(StandardCharsets.UTF_8));
    }

    /** Position of the member whose UTF-8 path is {@code utf8}, or -1. */
    public int find(byte[] utf8) {
        int lo = 0;
        int hi = count - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = compare(paths, starts[mid], starts[mid + 1], utf8, 0, utf8.length);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    public String path(int i) {
        Objects.checkIndex(i, count);
        return new String(paths, starts[i], starts[i + 1] - starts[i], StandardCharsets.UTF_8);
    }

    /** Length of member {@code i}'s path in UTF-8 bytes. */
    public int pathLength(int i) {
        Objects.checkIndex(i, count);
        return starts[i + 1] - starts[i];
    }

    /** Byte {@code k} of member {@code i}'s UTF-8 path. */
    public byte pathByte(int i, int k) {
        Objects.checkIndex(k, pathLength(i));
        return paths[starts[i] + k];
    }

    /** Decodes bytes {@code [from, to)} of member {@code i}'s UTF-8 path, e.g. one component. */
    public String pathSlice(int i, int from, int to) {
        Objects.checkFromToIndex(from, to, pathLength(i));
        return new String(paths, starts[i] + from, to - from, StandardCharsets.UTF_8);
    }

    /** Position of the first '/' at or after byte {@code from} of member {@code i}'s path, or -1. */
    public int slashAfter(int i, int from) {
        Objects.checkIndex(i, count);
        int start = starts[i];
        int end = starts[i + 1];
        for (int k = start + Math.max(0, from); k < end; k++) {
            if (paths[k] == '/') {
                return k - start;
            }
        }
        return -1;
    }

    /** Compares member {@code i}'s path with UTF-8 {@code other} in component order. */
    public int comparePath(int i, byte[] other) {
        Objects.checkIndex(i, count);
        return compare(paths, starts[i], starts[i + 1], other, 0, other.length);
    }

    /** Index into {@link Artifact#shards()}. */
    public int shard(int i) {
        return shards[Objects.checkIndex(i, count)];
    }

    /** Offset of the member's first data byte within its shard. */
    public long offset(int i) {
        return offsets[Objects.checkIndex(i, count)];
    }

    public long length(int i) {
        return lengths[Objects.checkIndex(i, count)];
    }

    /** Permission bits (e.g. 0644, 0755). */
    public int mode(int i) {
        return modes[Objects.checkIndex(i, count)];
    }

    /** SHA-256 of the member's bytes. */
    public BlobId hash(int i) {
        Objects.checkIndex(i, count);
        return BlobId.fromDigest(Arrays.copyOfRange(hashes, i * HASH, i * HASH + HASH));
    }

    /** Whether member {@code i}'s hash is {@code digest[off, off + 32)}; allocates nothing. */
    public boolean hashEquals(int i, byte[] digest, int off) {
        Objects.checkIndex(i, count);
        Objects.checkFromIndexSize(off, HASH, digest.length);
        return Arrays.equals(hashes, i * HASH, i * HASH + HASH, digest, off, off + HASH);
    }

    /**
     * The run {@code [from, to)} of members strictly under directory {@code dir}: all members
     * for {@code ""}, else those whose path starts with {@code dir + "/"}. Empty ({@code from ==
     * to}) if there are none, e.g. if {@code dir} is a member or does not exist. {@code dir} is
     * taken literally (no normalisation, no trailing '/').
     *
     * @return {@code {from, to}}
     */
    public int[] range(String dir) {
        if (dir.isEmpty()) {
            return new int[] {0, count};
        }
        byte[] d = dir.getBytes(StandardCharsets.UTF_8);
        byte[] prefix = Arrays.copyOf(d, d.length + 1);
        prefix[d.length] = '/';
        return rangeOfPrefix(prefix, 0, count);
    }

    /** Whether {@code dir} is a directory: some member lies under it ({@code ""} is the root). */
    public boolean isDirectory(String dir) {
        int[] r = range(dir);
        return dir.isEmpty() || r[0] < r[1];
    }

    /** Receives the entries of one directory, in name order. */
    @FunctionalInterface
    public interface ChildVisitor {
        /**
         * @param name the entry's name (one path component)
         * @param directory whether the entry is a directory (then members {@code [from, to)}
         *        are everything under it) or a member (then {@code from} is its index and
         *        {@code to == from + 1})
         */
        void child(String name, boolean directory, int from, int to);
    }

    /** Receives the entries of one directory, in name order, and may stop the walk. */
    @FunctionalInterface
    public interface ChildSink {
        /**
         * As {@link ChildVisitor#child}.
         *
         * @return true to stop the walk after this entry
         */
        boolean child(String name, boolean directory, int from, int to);
    }

    /**
     * Lists the immediate children of directory {@code dir} ({@code ""} = the root): one call
     * per member directly in it and per subdirectory, in name order. Cost is one binary search
     * per subdirectory plus one step per direct member, not per member below.
     */
    public void forEachChild(String dir, ChildVisitor visitor) {
        forEachChild(dir, 0, (name, directory, from, to) -> {
            visitor.child(name, directory, from, to);
            return false;
        });
    }

    /**
     * As {@link #forEachChild(String, ChildVisitor)}, starting at index position {@code start}
     * (clamped into the directory's run; a position where an earlier walk stopped, i.e. the
     * {@code to} of the last entry it took, resumes right after that entry) until the sink says
     * stop. A directory listed in many chunks thus costs one binary search per chunk, not a
     * rescan.
     */
    public void forEachChild(String dir, int start, ChildSink sink) {
        int[] r = range(dir);
        int p = dir.isEmpty() ? 0 : dir.getBytes(StandardCharsets.UTF_8).length + 1;
        int i = Math.max(r[0], start);
        while (i < r[1]) {
            int slash = slashAfter(i, p);
            if (slash < 0) {
                if (sink.child(pathSlice(i, p, pathLength(i)), false, i, i + 1)) {
                    return;
                }
                i++;
            } else {
                int end = rangeOfPrefix(paths, starts[i], starts[i] + slash + 1, i, r[1])[1];
                if (sink.child(pathSlice(i, p, slash), true, i, end)) {
                    return;
                }
                i = end;
            }
        }
    }

    /**
     * Number of immediate subdirectories of directory {@code dir} ({@code ""} = the root), as
     * {@link #forEachChild} would report them, without building a name per child: one step per
     * direct member, one binary search per subdirectory.
     */
    public int childDirectoryCount(String dir) {
        int[] r = range(dir);
        int p = dir.isEmpty() ? 0 : dir.getBytes(StandardCharsets.UTF_8).length + 1;
        int n = 0;
        int i = r[0];
        while (i < r[1]) {
            int slash = slashAfter(i, p);
            if (slash < 0) {
                i++;
            } else {
                i = rangeOfPrefix(paths, starts[i], starts[i] + slash + 1, i, r[1])[1];
                n++;
            }
        }
        return n;
    }

    private int[] rangeOfPrefix(byte[] prefix, int lo, int hi) {
        return rangeOfPrefix(prefix, 0, prefix.length, lo, hi);
    }

    /** Members in {@code [lo, hi)} whose path starts with {@code p[pFrom, pTo)}. */
    private int[] rangeOfPrefix(byte[] p, int pFrom, int pTo, int lo, int hi) {
        int a = lo;
        int b = hi;
        while (a < b) { // first with comparePrefix >= 0
            int mid = (a + b) >>> 1;
            if (comparePrefix(mid, p, pFrom, pTo) < 0) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        int from = a;
        b = hi;
        while (a < b) { // first with comparePrefix > 0
            int mid = (a + b) >>> 1;
            if (comparePrefix(mid, p, pFrom, pTo) <= 0) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        return new int[] {from, a};
    }

    /** 0 if path i starts with the prefix, else the sign of (path i) - (prefix) in component order. */
    private int comparePrefix(int i, byte[] p, int pFrom, int pTo) {
        int s = starts[i];
        int len = starts[i + 1] - s;
        int plen = pTo - pFrom;
        int n = Math.min(len, plen);
        int m = Arrays.mismatch(paths, s, s + n, p, pFrom, pFrom + n);
        if (m < 0) {
            return len >= plen ? 0 : -1;
        }
        return key(paths[s + m]) - key(p[pFrom + m]);
    }

    /** Component order: unsigned bytes, except that '/' sorts before every other byte. */
    static int compare(byte[] a, int aFrom, int aTo, byte[] b, int bFrom, int bTo) {
        int la = aTo - aFrom;
        int lb = bTo - bFrom;
        int n = Math.min(la, lb);
        int m = Arrays.mismatch(a, aFrom, aFrom + n, b, bFrom, bFrom + n);
        if (m < 0) {
            return Integer.compare(la, lb);
        }
        return key(a[aFrom + m]) - key(b[bFrom + m]);
    }

    /** Component order of two UTF-8 paths. */
    public static int compare(byte[] a, byte[] b) {
        return compare(a, 0, a.length, b, 0, b.length);
    }

    private static int key(byte b) {
        return b == '/' ? -1 : b & 0xFF;
    }

    /** Whether {@code b} starts with {@code a + "/"}: a is then a directory of b. */
    private static boolean isDirectoryOf(byte[] pa, int aFrom, int aTo, byte[] pb, int bFrom, int bTo) {
        int la = aTo - aFrom;
        return bTo - bFrom > la && pb[bFrom + la] == '/' && Arrays.equals(pa, aFrom, aTo, pb, bFrom, bFrom + la);
    }

    /**
     * Heap retained by this index, from its array lengths (compressed-oops object layout: 16-byte
     * array headers, 8-byte alignment). For cache accounting and the footprint test.
     */
    public long retainedBytes() {
        return align(12 + 4 + 7 * 4) + array(paths.length, 1) + array(starts.length, 4) + array(shards.length, 4)
                + array(offsets.length, 8) + array(lengths.length, 8) + array(modes.length, 4)
                + array(hashes.length, 1);
    }

    private static long array(long n, int size) {
        return align(16 + n * size);
    }

    private static long align(long n) {
        return (n + 7) & ~7L;
    }

    public byte[] serialize() {
        int pathBytes = starts[count];
        ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(HEADER + (long) PER_MEMBER * count + pathBytes));
        b.putInt(MAGIC).putInt(FORMAT_VERSION).putInt(count);
        b.asIntBuffer().put(starts, 1, count);
        b.position(b.position() + 4 * count);
        b.put(paths, 0, pathBytes);
        b.asIntBuffer().put(shards, 0, count);
        b.position(b.position() + 4 * count);
        b.asLongBuffer().put(offsets, 0, count);
        b.position(b.position() + 8 * count);
        b.asLongBuffer().put(lengths, 0, count);
        b.position(b.position() + 8 * count);
        b.asIntBuffer().put(modes, 0, count);
        b.position(b.position() + 4 * count);
        b.put(hashes, 0, HASH * count);
        return b.array();
    }

    /**
     * @throws ManifestCorruptedException if the bytes are not a valid index (bad magic, version,
     *         truncation, unsorted or duplicate paths, invalid member paths)
     */
    public static MemberIndex parse(byte[] bytes, String source) {
        if (bytes.length < HEADER) {
            throw new ManifestCorruptedException(source, "header", "truncated: " + bytes.length
                    + " bytes, a member index has at least " + HEADER);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int magic = b.getInt();
        if (magic != MAGIC) {
            throw new ManifestCorruptedException(source, "magic", String.format("not a member index (magic 0x%08x)", magic));
        }
        int version = b.getInt();
        if (version != FORMAT_VERSION) {
            throw new ManifestCorruptedException(source, "version", "unknown member index version "
                    + Integer.toUnsignedString(version) + " (this Warp reads version " + FORMAT_VERSION + ")");
        }
        int count = b.getInt();
        // checked before allocating anything sized by count
        if (count < 0 || HEADER + (long) PER_MEMBER * count > bytes.length) {
            throw new ManifestCorruptedException(source, "count", Integer.toUnsignedString(count)
                    + " members need more than the " + bytes.length + " bytes present");
        }
        int[] starts = new int[count + 1];
        b.asIntBuffer().get(starts, 1, count);
        b.position(b.position() + 4 * count);
        for (int i = 0; i < count; i++) {
            if (starts[i + 1] <= starts[i]) { // also catches offsets past 2^31 (negative)
                throw new ManifestCorruptedException(source, "members[" + i + "].path",
                        "path end offset " + Integer.toUnsignedString(starts[i + 1]) + " is not after " + starts[i]);
            }
        }
        int pathBytes = starts[count];
        long expected = HEADER + (long) PER_MEMBER * count + pathBytes;
        if (expected != bytes.length) {
            throw new ManifestCorruptedException(source, "length", count + " members with " + pathBytes
                    + " bytes of paths take " + expected + " bytes, found " + bytes.length);
        }
        byte[] paths = new byte[pathBytes];
        b.get(paths);
        int[] shards = new int[count];
        b.asIntBuffer().get(shards);
        b.position(b.position() + 4 * count);
        long[] offsets = new long[count];
        b.asLongBuffer().get(offsets);
        b.position(b.position() + 8 * count);
        long[] lengths = new long[count];
        b.asLongBuffer().get(lengths);
        b.position(b.position() + 8 * count);
        int[] modes = new int[count];
        b.asIntBuffer().get(modes);
        b.position(b.position() + 4 * count);
        byte[] hashes = new byte[HASH * count];
        b.get(hashes);

        for (int i = 0; i < count; i++) {
            String problem = Names.memberPathProblem(paths, starts[i], starts[i + 1]);
            if (problem != null) {
                throw new ManifestCorruptedException(source, member(i, "path"), problem + " '"
                        + new String(paths, starts[i], starts[i + 1] - starts[i], StandardCharsets.UTF_8) + "'");
            }
            if (i > 0) {
                int c = compare(paths, starts[i - 1], starts[i], paths, starts[i], starts[i + 1]);
                if (c >= 0) {
                    throw new ManifestCorruptedException(source, member(i, "path"), (c == 0 ? "duplicate path '" : "path '")
                            + str(paths, starts, i) + (c == 0 ? "'" : "' is out of order after '" + str(paths, starts, i - 1) + "'"));
                }
                if (isDirectoryOf(paths, starts[i - 1], starts[i], paths, starts[i], starts[i + 1])) {
                    throw new ManifestCorruptedException(source, member(i, "path"), "'" + str(paths, starts, i - 1)
                            + "' is both a member and a directory of '" + str(paths, starts, i) + "'");
                }
            }
            if (shards[i] < 0) {
                throw new ManifestCorruptedException(source, member(i, "shard"), "negative shard index " + shards[i]);
            }
            if (offsets[i] < 0) {
                throw new ManifestCorruptedException(source, member(i, "offset"), "negative offset " + offsets[i]);
            }
            if (lengths[i] < 0) {
                throw new ManifestCorruptedException(source, member(i, "length"), "negative length " + lengths[i]);
            }
            if (modes[i] < 0 || modes[i] > MAX_MODE) {
                throw new ManifestCorruptedException(source, member(i, "mode"), "mode 0" + Integer.toOctalString(modes[i])
                        + " is not permission bits (at most 07777)");
            }
        }
        return new MemberIndex(count, paths, starts, shards, offsets, lengths, modes, hashes);
    }

    /** Field name for errors; only built when one is reported. */
    private static String member(int i, String field) {
        return "members[" + i + "]." + field;
    }

    private static String str(byte[] paths, int[] starts, int i) {
        return new String(paths, starts[i], starts[i + 1] - starts[i], StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MemberIndex m && count == m.count && Arrays.equals(paths, m.paths)
                && Arrays.equals(starts, m.starts) && Arrays.equals(shards, m.shards)
                && Arrays.equals(offsets, m.offsets) && Arrays.equals(lengths, m.lengths)
                && Arrays.equals(modes, m.modes) && Arrays.equals(hashes, m.hashes);
    }

    @Override
    public int hashCode() {
        return 31 * count + Arrays.hashCode(paths) + 17 * Arrays.hashCode(hashes);
    }

    @Override
    public String toString() {
        return "MemberIndex[" + count + " members, " + starts[count] + " path bytes]";
    }

    /** Collects members in any order; {@link #build()} sorts and validates. Not thread-safe. */
    public static final class Builder {
        private byte[] paths = new byte[256];
        private int pathBytes;
        /** ends[i]: end of path i in {@link #paths}. */
        private int[] ends = new int[16];
        private int[] shards = new int[16];
        private long[] offsets = new long[16];
        private long[] lengths = new long[16];
        private int[] modes = new int[16];
        private byte[] hashes = new byte[16 * HASH];
        private int count;

        /**
         * @throws ManifestValidationException if the path is not a valid member path, or shard,
         *         offset or length is negative, or mode is not permission bits
         */
        public Builder add(String path, int shard, long offset, long length, int mode, BlobId hash) {
            byte[] p = Names.memberPathBytes("path", path);
            if (shard < 0) {
                throw new ManifestValidationException("shard", "negative shard index " + shard + " for '" + path + "'");
            }
            Names.requireNonNegative("offset", offset);
            Names.requireNonNegative("length", length);
            if (mode < 0 || mode > MAX_MODE) {
                throw new ManifestValidationException("mode", "mode 0" + Integer.toOctalString(mode)
                        + " of '" + path + "' is not permission bits (at most 07777)");
            }
            Objects.requireNonNull(hash, "hash");
            if ((long) pathBytes + p.length > Integer.MAX_VALUE - 64) {
                throw new ManifestValidationException("path", "member paths exceed 2 GiB in total");
            }
            if (count == ends.length) {
                int n = count * 2;
                ends = Arrays.copyOf(ends, n);
                shards = Arrays.copyOf(shards, n);
                offsets = Arrays.copyOf(offsets, n);
                lengths = Arrays.copyOf(lengths, n);
                modes = Arrays.copyOf(modes, n);
                hashes = Arrays.copyOf(hashes, n * HASH);
            }
            if (pathBytes + p.length > paths.length) {
                paths = Arrays.copyOf(paths, (int) Math.min(Integer.MAX_VALUE - 64L,
                        Math.max(pathBytes + (long) p.length, paths.length * 2L)));
            }
            System.arraycopy(p, 0, paths, pathBytes, p.length);
            pathBytes += p.length;
            ends[count] = pathBytes;
            shards[count] = shard;
            offsets[count] = offset;
            lengths[count] = length;
            modes[count] = mode;
            System.arraycopy(hash.digest(), 0, hashes, count * HASH, HASH);
            count++;
            return this;
        }

        /**
         * @throws ManifestValidationException on an invalid or duplicate path (naming it), or a
         *         path that is both a member and a directory of another member (naming both)
         */
        public MemberIndex build() {
            int[] order = new int[count];
            for (int i = 0; i < count; i++) {
                order[i] = i;
            }
            if (!sorted()) {
                mergeSort(order, new int[count], 0, count);
            }
            byte[] p = new byte[pathBytes];
            int[] st = new int[count + 1];
            int[] sh = new int[count];
            long[] off = new long[count];
            long[] len = new long[count];
            int[] md = new int[count];
            byte[] h = new byte[count * HASH];
            int at = 0;
            for (int k = 0; k < count; k++) {
                int i = order[k];
                int s = start(i);
                int l = ends[i] - s;
                System.arraycopy(paths, s, p, at, l);
                st[k] = at;
                at += l;
                sh[k] = shards[i];
                off[k] = offsets[i];
                len[k] = lengths[i];
                md[k] = modes[i];
                System.arraycopy(hashes, i * HASH, h, k * HASH, HASH);
                if (k > 0) {
                    int prev = st[k - 1];
                    if (compare(p, prev, st[k], p, st[k], at) == 0) {
                        throw new ManifestValidationException("path", "duplicate member path '" + str(p, prev, st[k]) + "'");
                    }
                    if (isDirectoryOf(p, prev, st[k], p, st[k], at)) {
                        throw new ManifestValidationException("path", "'" + str(p, prev, st[k])
                                + "' is both a member and a directory of '" + str(p, st[k], at) + "'");
                    }
                }
            }
            st[count] = at;
            return new MemberIndex(count, p, st, sh, off, len, md, h);
        }

        private int start(int i) {
            return i == 0 ? 0 : ends[i - 1];
        }

        private int cmp(int i, int j) {
            return compare(paths, start(i), ends[i], paths, start(j), ends[j]);
        }

        private boolean sorted() {
            for (int i = 1; i < count; i++) {
                if (cmp(i - 1, i) > 0) {
                    return false;
                }
            }
            return true;
        }

        /** Stable merge sort of member numbers by path, without boxing. */
        private void mergeSort(int[] a, int[] tmp, int from, int to) {
            if (to - from < 2) {
                return;
            }
            int mid = (from + to) >>> 1;
            mergeSort(a, tmp, from, mid);
            mergeSort(a, tmp, mid, to);
            if (cmp(a[mid - 1], a[mid]) <= 0) {
                return;
            }
            System.arraycopy(a, from, tmp, from, to - from);
            int i = from;
            int j = mid;
            for (int k = from; k < to; k++) {
                if (j >= to || (i < mid && cmp(tmp[i], tmp[j]) <= 0)) {
                    a[k] = tmp[i++];
                } else {
                    a[k] = tmp[j++];
                }
            }
        }

        private static String str(byte[] p, int from, int to) {
            return new String(p, from, to - from, StandardCharsets.UTF_8);
        }
    }
}
