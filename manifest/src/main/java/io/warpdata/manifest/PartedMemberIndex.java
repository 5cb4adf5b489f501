package io.warpdata.manifest;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A member index stored in parts: a small top blob that names, by hash, flat parts of at most a
 * bounded number of consecutive members (members are in component order, so each directory's
 * members are one run, split over as few parts as its size needs), and that holds the first path
 * of each part and the table of all directories with their member runs. A lookup loads the one
 * part that can hold its path; listing a directory loads only the parts holding its direct
 * members (a directory of subdirectories loads none); nothing else is fetched.
 *
 * <p>Top blob, big-endian ({@code docs/manifest.md}):
 * <pre>
 * "WMIP"  u32 version (1)  u32 parts P  u32 directories D  u32 members N
 * P x { u32 members, 32-byte part id, u64 part size, 32-byte id of the part's block hash list }
 * P x u32 cumulative end offsets of the parts' first paths, then those UTF-8 paths
 * D x u32 cumulative end offsets of the directory paths, then those UTF-8 paths (component order)
 * D x { u32 first member, u32 end member } (the directory's run, as {@link #range})
 * </pre>
 * The top is checked whole when opened (sizes, sorted first paths, a directory table whose
 * every directory's parent is listed before it and whose runs nest); each part is checked as a
 * flat index when it loads, and against the top (its member count, its first path, its last
 * path before the next part's first). A listing that meets a member outside the directory table
 * fails with {@link ManifestCorruptedException}.
 */
final class PartedMemberIndex extends MemberIndex {
    static final int MAGIC = 0x574D4950; // "WMIP"
    static final int VERSION = 1;
    private static final int TOP_HEADER = 20;
    private static final int PART_ENTRY = 4 + 32 + 8 + 32;

    private final IndexBytes b;
    private final String source;
    private final PartLoader loader;
    private final int members;
    private final int partCount;
    private final int dirCount;
    /** partBase[k]: position of part k's first member; {@code partCount + 1} entries. */
    private final int[] partBase;
    private final BlobRef[] refs;
    private final long firstEndsBase;
    private final long firstPathsBase;
    private final long dirEndsBase;
    private final long dirPathsBase;
    private final long dirRangesBase;
    /**
     * Parts loaded so far, held softly: a part read from a file is a few fields, but one held on
     * the heap (no cache directory) is its bytes, and a walk of a huge index must not pile them
     * all up; a part dropped under memory pressure is loaded again when next needed.
     */
    private final AtomicReferenceArray<java.lang.ref.SoftReference<FlatMemberIndex>> parts;
    private final Object[] partLocks;

    private PartedMemberIndex(IndexBytes b, String source, PartLoader loader, int members, int[] partBase,
                              BlobRef[] refs, int dirCount, long firstEndsBase, long firstPathsBase, long dirEndsBase,
                              long dirPathsBase, long dirRangesBase) {
        this.b = b;
        this.source = source;
        this.loader = loader;
        this.members = members;
        this.partCount = refs.length;
        this.dirCount = dirCount;
        this.partBase = partBase;
        this.refs = refs;
        this.firstEndsBase = firstEndsBase;
        this.firstPathsBase = firstPathsBase;
        this.dirEndsBase = dirEndsBase;
        this.dirPathsBase = dirPathsBase;
        this.dirRangesBase = dirRangesBase;
        this.parts = new AtomicReferenceArray<>(partCount);
        this.partLocks = new Object[partCount];
        for (int k = 0; k < partCount; k++) {
            partLocks[k] = new Object();
        }
    }

    // ---------------------------------------------------------------- reading

    static PartedMemberIndex openTop(IndexBytes b, String source, PartLoader loader) {
        long size = b.length();
        if (size < TOP_HEADER) {
            throw new ManifestCorruptedException(source, "header", "truncated: " + size
                    + " bytes, a parted member index has at least " + TOP_HEADER);
        }
        int version = b.getInt(4);
        if (version != VERSION) {
            throw new ManifestCorruptedException(source, "version", "unknown parted member index version "
                    + Integer.toUnsignedString(version) + " (this Warp reads version " + VERSION + ")");
        }
        int p = b.getInt(8);
        int d = b.getInt(12);
        int n = b.getInt(16);
        if (p < 0 || d < 0 || n < 0 || TOP_HEADER + (long) PART_ENTRY * p + 4L * p + 12L * d > size) {
            throw new ManifestCorruptedException(source, "count", Integer.toUnsignedString(p) + " parts and "
                    + Integer.toUnsignedString(d) + " directories need more than the " + size + " bytes present");
        }
        int[] base = new int[p + 1];
        BlobRef[] refs = new BlobRef[p];
        byte[] digest = new byte[32];
        for (int k = 0; k < p; k++) {
            long at = TOP_HEADER + (long) PART_ENTRY * k;
            int count = b.getInt(at);
            if (count <= 0 || base[k] + (long) count > n) {
                throw new ManifestCorruptedException(source, "parts[" + k + "].members", "part of "
                        + Integer.toUnsignedString(count) + " members does not fit the index's " + n + " members");
            }
            base[k + 1] = base[k] + count;
            b.get(at + 4, digest, 0, 32);
            BlobId id = BlobId.fromDigest(digest);
            long partSize = b.getLong(at + 36);
            if (partSize < HEADER) {
                throw new ManifestCorruptedException(source, "parts[" + k + "].size", "part size " + partSize
                        + " is smaller than a member index");
            }
            b.get(at + 44, digest, 0, 32);
            refs[k] = new BlobRef(id, partSize, BlobId.fromDigest(digest));
        }
        if (base[p] != n) {
            throw new ManifestCorruptedException(source, "members", "the parts hold " + base[p]
                    + " members, the index says " + n);
        }
        long firstEndsBase = TOP_HEADER + (long) PART_ENTRY * p;
        long firstPathsBase = firstEndsBase + 4L * p;
        long firstBytes = checkEnds(b, source, "parts", firstEndsBase, p, size);
        long dirEndsBase = firstPathsBase + firstBytes;
        long dirPathsBase = dirEndsBase + 4L * d;
        if (dirPathsBase > size) {
            throw new ManifestCorruptedException(source, "directories", "truncated before its directory table");
        }
        long dirBytes = checkEnds(b, source, "directories", dirEndsBase, d, size);
        long dirRangesBase = dirPathsBase + dirBytes;
        long expected = dirRangesBase + 8L * d;
        if (expected != size) {
            throw new ManifestCorruptedException(source, "length", p + " parts and " + d + " directories take "
                    + expected + " bytes, found " + size);
        }
        PartedMemberIndex index = new PartedMemberIndex(b, source, loader, n, base, refs, d, firstEndsBase,
                firstPathsBase, dirEndsBase, dirPathsBase, dirRangesBase);
        index.check();
        return index;
    }

    /** Checks {@code count} cumulative u32 end offsets at {@code at}; returns the bytes they span. */
    private static long checkEnds(IndexBytes b, String source, String what, long at, int count, long size) {
        int prev = 0;
        for (int k = 0; k < count; k++) {
            int end = b.getInt(at + 4L * k);
            if (end <= prev) {
                throw new ManifestCorruptedException(source, what + "[" + k + "].path", "path end offset "
                        + Integer.toUnsignedString(end) + " is not after " + prev);
            }
            prev = end;
        }
        if (at + 4L * count + prev > size) {
            throw new ManifestCorruptedException(source, what, "paths of " + prev + " bytes run past the "
                    + size + " bytes present");
        }
        return prev;
    }

    private void check() {
        byte[] prev = null;
        for (int k = 0; k < partCount; k++) {
            byte[] first = firstPath(k);
            String problem = Names.memberPathProblem(first, 0, first.length);
            if (problem != null) {
                throw new ManifestCorruptedException(source, "parts[" + k + "].first", problem);
            }
            if (prev != null && ComponentOrder.compare(prev, 0, prev.length, first, 0, first.length) >= 0) {
                throw new ManifestCorruptedException(source, "parts[" + k + "].first", "first path '" + str(first)
                        + "' is not after the previous part's '" + str(prev) + "'");
            }
            prev = first;
        }
        // Directories: sorted, each one's parent listed (as the innermost open one), runs nested.
        int[] stack = new int[64];
        int depth = 0;
        int floor = 0;
        prev = null;
        for (int j = 0; j < dirCount; j++) {
            byte[] path = dirPath(j);
            String problem = Names.memberPathProblem(path, 0, path.length);
            if (problem != null) {
                throw new ManifestCorruptedException(source, "directories[" + j + "].path", problem);
            }
            if (prev != null && ComponentOrder.compare(prev, 0, prev.length, path, 0, path.length) >= 0) {
                throw new ManifestCorruptedException(source, "directories[" + j + "].path", "'" + str(path)
                        + "' is not after '" + str(prev) + "'");
            }
            prev = path;
            while (depth > 0) {
                byte[] top = dirPath(stack[depth - 1]);
                if (ComponentOrder.isDirectoryOf(top, 0, top.length, path, 0, path.length)) {
                    break;
                }
                floor = Math.max(floor, dirTo(stack[--depth]));
            }
            int parentLength = depth == 0 ? 0 : dirPath(stack[depth - 1]).length + 1;
            if (slashAfter(path, parentLength) >= 0) {
                throw new ManifestCorruptedException(source, "directories[" + j + "].path", "the parent of '"
                        + str(path) + "' is not in the directory table");
            }
            int from = dirFrom(j);
            int to = dirTo(j);
            boolean inParent = depth == 0 || (from >= dirFrom(stack[depth - 1]) && to <= dirTo(stack[depth - 1]));
            if (from < floor || from >= to || to > members || !inParent) {
                throw new ManifestCorruptedException(source, "directories[" + j + "].members", "run [" + from + ", "
                        + to + ") of '" + str(path) + "' does not nest in its parent's or follow its siblings'");
            }
            if (depth == stack.length) {
                stack = Arrays.copyOf(stack, depth * 2);
            }
            stack[depth++] = j;
        }
    }

    private static String str(byte[] p) {
        return new String(p, StandardCharsets.UTF_8);
    }

    private byte[] firstPath(int k) {
        return slice(firstEndsBase, firstPathsBase, k);
    }

    private byte[] dirPath(int j) {
        return slice(dirEndsBase, dirPathsBase, j);
    }

    private byte[] slice(long endsBase, long pathsBase, int k) {
        int s = k == 0 ? 0 : b.getInt(endsBase + 4L * (k - 1));
        int e = b.getInt(endsBase + 4L * k);
        byte[] p = new byte[e - s];
        b.get(pathsBase + s, p, 0, p.length);
        return p;
    }

    private int dirFrom(int j) {
        return b.getInt(dirRangesBase + 8L * j);
    }

    private int dirTo(int j) {
        return b.getInt(dirRangesBase + 8L * j + 4);
    }

    /** Number of parts (for tests and gauges). */
    int partCount() {
        return partCount;
    }

    /** Number of parts loaded so far (for tests). */
    int loadedParts() {
        int n = 0;
        for (int k = 0; k < partCount; k++) {
            n += held(k) == null ? 0 : 1;
        }
        return n;
    }

    private FlatMemberIndex held(int k) {
        java.lang.ref.SoftReference<FlatMemberIndex> ref = parts.get(k);
        return ref == null ? null : ref.get();
    }

    /** Part {@code k}, loaded and checked on first use. */
    private FlatMemberIndex part(int k) {
        FlatMemberIndex part = held(k);
        if (part != null) {
            return part;
        }
        synchronized (partLocks[k]) {
            part = held(k);
            if (part == null) {
                part = load(k);
                parts.set(k, new java.lang.ref.SoftReference<>(part));
            }
            return part;
        }
    }

    private FlatMemberIndex load(int k) {
        String where = source + " part " + k + " (" + refs[k].id() + ")";
        IndexBytes bytes = loader.load(refs[k]);
        if (bytes.length() != refs[k].size()) {
            throw new ManifestCorruptedException(where, "size", bytes.length() + " bytes, the top says " + refs[k].size());
        }
        FlatMemberIndex part = FlatMemberIndex.openFlat(bytes, where);
        int count = partBase[k + 1] - partBase[k];
        if (part.size() != count) {
            throw new ManifestCorruptedException(where, "members", part.size() + " members, the top says " + count);
        }
        if (!Arrays.equals(part.pathBytes(0), firstPath(k))) {
            throw new ManifestCorruptedException(where, "members[0].path", "first path '" + part.path(0)
                    + "' is not the one the top names, '" + str(firstPath(k)) + "'");
        }
        if (k + 1 < partCount) {
            byte[] last = part.pathBytes(count - 1);
            byte[] next = firstPath(k + 1);
            if (ComponentOrder.compare(last, 0, last.length, next, 0, next.length) >= 0 || ComponentOrder.isDirectoryOf(last, 0, last.length, next, 0, next.length)) {
                throw new ManifestCorruptedException(where, "members[" + (count - 1) + "].path", "last path '"
                        + str(last) + "' does not come before the next part's first, '" + str(next) + "'");
            }
        }
        return part;
    }

    /** The part holding member {@code i}. */
    private int partOf(int i) {
        Objects.checkIndex(i, members);
        int k = Arrays.binarySearch(partBase, 0, partCount, i);
        return k >= 0 ? k : -k - 2;
    }

    @Override
    public int size() {
        return members;
    }

    @Override
    public int pathLength(int i) {
        int k = partOf(i);
        return part(k).pathLength(i - partBase[k]);
    }

    @Override
    public byte[] pathBytes(int i) {
        int k = partOf(i);
        return part(k).pathBytes(i - partBase[k]);
    }

    @Override
    public int shard(int i) {
        int k = partOf(i);
        return part(k).shard(i - partBase[k]);
    }

    @Override
    public long offset(int i) {
        int k = partOf(i);
        return part(k).offset(i - partBase[k]);
    }

    @Override
    public long length(int i) {
        int k = partOf(i);
        return part(k).length(i - partBase[k]);
    }

    @Override
    public int mode(int i) {
        int k = partOf(i);
        return part(k).mode(i - partBase[k]);
    }

    @Override
    public BlobId hash(int i) {
        int k = partOf(i);
        return part(k).hash(i - partBase[k]);
    }

    @Override
    public boolean hashEquals(int i, byte[] digest, int off) {
        int k = partOf(i);
        return part(k).hashEquals(i - partBase[k], digest, off);
    }

    @Override
    public int find(byte[] utf8) {
        int lo = 0;
        int hi = partCount - 1;
        int k = -1;
        while (lo <= hi) { // last part whose first path <= utf8
            int mid = (lo + hi) >>> 1;
            byte[] first = firstPath(mid);
            if (ComponentOrder.compare(first, 0, first.length, utf8, 0, utf8.length) <= 0) {
                k = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        if (k < 0) {
            return -1;
        }
        int local = part(k).find(utf8);
        return local < 0 ? -1 : partBase[k] + local;
    }

    /** Position of directory {@code d} (UTF-8, no trailing '/') in the directory table, or -1. */
    private int findDir(byte[] d) {
        int lo = 0;
        int hi = dirCount - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            byte[] p = dirPath(mid);
            int c = ComponentOrder.compare(p, 0, p.length, d, 0, d.length);
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

    @Override
    public int[] range(String dir) {
        if (dir.isEmpty()) {
            return new int[] {0, members};
        }
        int j = findDir(dir.getBytes(StandardCharsets.UTF_8));
        return j < 0 ? new int[] {0, 0} : new int[] {dirFrom(j), dirTo(j)};
    }

    @Override
    public boolean isDirectory(String dir) {
        return dir.isEmpty() || findDir(dir.getBytes(StandardCharsets.UTF_8)) >= 0;
    }

    /** The table position after directory {@code j}'s subtree. */
    private int subtreeEnd(int j) {
        byte[] p = dirPath(j);
        byte[] prefix = Arrays.copyOf(p, p.length + 1);
        prefix[p.length] = '/';
        int a = j + 1;
        int e = dirCount;
        while (a < e) {
            int mid = (a + e) >>> 1;
            if (ComponentOrder.comparePrefix(dirPath(mid), prefix, 0, prefix.length) <= 0) {
                a = mid + 1;
            } else {
                e = mid;
            }
        }
        return a;
    }

    /** Table position {@code j} if it is under {@code prefix} (a direct child, in a valid table), else -1. */
    private int childAt(int j, byte[] prefix) {
        if (j >= dirCount) {
            return -1;
        }
        return ComponentOrder.comparePrefix(dirPath(j), prefix, 0, prefix.length) == 0 ? j : -1;
    }

    /** First child directory of {@code dir} in the table, or -1; {@code null} if {@code dir} is no directory. */
    private int[] dirAndFirstChild(String dir, byte[] prefix) {
        if (dir.isEmpty()) {
            return new int[] {0, members, dirCount > 0 ? 0 : -1};
        }
        int j = findDir(dir.getBytes(StandardCharsets.UTF_8));
        if (j < 0) {
            return null;
        }
        return new int[] {dirFrom(j), dirTo(j), childAt(j + 1, prefix)};
    }

    @Override
    public void forEachChild(String dir, int start, ChildSink sink) {
        byte[] prefix = dir.isEmpty() ? new byte[0] : dirPrefix(dir);
        int[] d = dirAndFirstChild(dir, prefix);
        if (d == null) {
            return;
        }
        int p = prefix.length;
        int to = d[1];
        int k = d[2];
        int i = Math.max(d[0], start);
        while (k >= 0 && dirTo(k) <= i) {
            k = childAt(subtreeEnd(k), prefix);
        }
        while (i < to) {
            if (k >= 0 && dirFrom(k) <= i) {
                byte[] path = dirPath(k);
                int f = dirFrom(k);
                int t = dirTo(k);
                if (sink.child(new String(path, p, path.length - p, StandardCharsets.UTF_8), true, f, t)) {
                    return;
                }
                i = t;
                k = childAt(subtreeEnd(k), prefix);
            } else {
                byte[] path = pathBytes(i);
                if (ComponentOrder.comparePrefix(path, prefix, 0, p) != 0 || slashAfter(path, p) >= 0) {
                    throw new ManifestCorruptedException(source, "directories", "member " + i + " '" + str(path)
                            + "' is not directly in '" + dir + "' as the directory table says");
                }
                if (sink.child(new String(path, p, path.length - p, StandardCharsets.UTF_8), false, i, i + 1)) {
                    return;
                }
                i++;
            }
        }
    }

    @Override
    public int childDirectoryCount(String dir) {
        byte[] prefix = dir.isEmpty() ? new byte[0] : dirPrefix(dir);
        int[] d = dirAndFirstChild(dir, prefix);
        if (d == null) {
            return 0;
        }
        int n = 0;
        for (int k = d[2]; k >= 0; k = childAt(subtreeEnd(k), prefix)) {
            n++;
        }
        return n;
    }

    @Override
    public long retainedBytes() {
        long loaded = 0;
        for (int k = 0; k < partCount; k++) {
            FlatMemberIndex part = held(k);
            loaded += part == null ? 0 : part.retainedBytes();
        }
        return 128 + 4L * partBase.length + 120L * partCount + 24L * partCount + b.retainedBytes() + loaded;
    }

    @Override
    public byte[] serialize() {
        return MemberIndexWriter.flat(this, 0, members);
    }
}
