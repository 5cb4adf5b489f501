package io.warpdata.manifest;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A member index stored in parts: a small top blob that names, by hash, flat parts of at most a
 * bounded number of consecutive members (members are in component order, so each directory's
 * members are one run, split over as few parts as its size needs), and that holds the first path
 * of each part and the table of all directories with their member runs. A lookup loads the one
 * part that can hold its path; listing a directory loads only the parts holding its direct
 * members (a directory of subdirectories loads none); nothing else is fetched.
 *
 * <p>The top blob's layout and its checks are {@link PartedIndexTop}'s; each part is checked as a
 * flat index when it loads, and against the top (its member count, its first path, its last
 * path before the next part's first). A listing that meets a member outside the directory table
 * fails with {@link ManifestCorruptedException}.
 *
 * <p>A walk over the parts in order ({@code find}) is detected and read ahead of
 * ({@link PartReadAhead}): the part a lookup or listing needs is then usually loaded already.
 */
final class PartedMemberIndex extends MemberIndex {
    private final PartedIndexTop top;
    private final String source;
    private final PartLoader loader;
    private final int members;
    private final int partCount;
    private final int dirCount;
    /** partBase[k]: position of part k's first member; {@code partCount + 1} entries. */
    private final int[] partBase;
    private final BlobRef[] refs;
    /**
     * Parts loaded so far, held softly: a part read from a file is a few fields, but one held on
     * the heap (no cache directory) is its bytes, and a walk of a huge index must not pile them
     * all up; a part dropped under memory pressure is loaded again when next needed.
     */
    private final AtomicReferenceArray<java.lang.ref.SoftReference<FlatMemberIndex>> parts;
    private final Object[] partLocks;
    private final PartReadAhead ahead;
    /** pending[k] is 1 while part k is handed to a read-ahead. */
    private final AtomicIntegerArray pending;
    private final Object walkLock = new Object();
    /** The part touched last, and how many parts in order the walk ending there has touched. */
    private volatile int lastTouched = -1;
    private volatile int run;

    private PartedMemberIndex(PartedIndexTop top, PartLoader loader, PartReadAhead ahead) {
        this.top = top;
        this.source = top.source;
        this.loader = loader;
        this.members = top.members;
        this.partCount = top.parts;
        this.dirCount = top.dirs;
        this.partBase = top.partBase;
        this.refs = top.refs;
        this.parts = new AtomicReferenceArray<>(partCount);
        this.partLocks = new Object[partCount];
        for (int k = 0; k < partCount; k++) {
            partLocks[k] = new Object();
        }
        this.ahead = ahead;
        this.pending = new AtomicIntegerArray(partCount);
    }

    // ---------------------------------------------------------------- reading

    /** The index whose top blob is {@code b} ({@link PartedIndexTop#open}: read and checked whole), loading parts through {@code loader}. */
    static PartedMemberIndex openTop(IndexBytes b, String source, PartLoader loader, PartReadAhead ahead) {
        return new PartedMemberIndex(PartedIndexTop.open(b, source), loader, ahead);
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
        if (k != lastTouched) {
            touched(k);
        }
        FlatMemberIndex part = held(k);
        return part != null ? part : loadOnce(k, NOTHING);
    }

    private static final Runnable NOTHING = () -> { };

    /**
     * Part {@code k} as held, or loaded and kept under its lock, so that a demand and a read-ahead
     * of one part make one load; {@code loaded} runs when this call did the loading.
     */
    private FlatMemberIndex loadOnce(int k, Runnable loaded) {
        synchronized (partLocks[k]) {
            FlatMemberIndex part = held(k);
            if (part == null) {
                part = load(k);
                parts.set(k, new java.lang.ref.SoftReference<>(part));
                loaded.run();
            }
            return part;
        }
    }

    /** Follows the walk: part {@code k} is touched after another; reads ahead once it is a walk. */
    private void touched(int k) {
        synchronized (walkLock) {
            int last = lastTouched;
            if (k == last) {
                return;
            }
            run = k == last + 1 ? run + 1 : 1;
            lastTouched = k;
        }
        readAhead();
    }

    /** While a walk is on, hands the parts of the window after it that are neither held nor pending to read-aheads, as slots allow. */
    private void readAhead() {
        if (run < PartReadAhead.WALK) {
            return;
        }
        int last = lastTouched;
        int end = Math.min(partCount - 1, last + ahead.window());
        for (int j = last + 1; j <= end; j++) {
            if (held(j) != null || pending.get(j) != 0) {
                continue;
            }
            if (!ahead.tryAcquire()) {
                return;
            }
            if (!pending.compareAndSet(j, 0, 1)) {
                ahead.release();
                continue;
            }
            int k = j;
            if (!ahead.submit(() -> readAhead(k))) {
                pending.set(j, 0);
                return;
            }
        }
    }

    /** Loads part {@code k} ahead of the walk, as a demand would (same loader, same lock), and tops up the window. */
    private void readAhead(int k) {
        boolean ok = false;
        try {
            loadOnce(k, ahead::loaded);
            ok = true;
        } catch (RuntimeException e) { // dropped: the demand load of this part reports its own error
            ahead.failed();
            synchronized (walkLock) {
                run = 0; // and no more reading ahead until a walk is seen again
            }
        } finally {
            pending.set(k, 0);
            ahead.release();
        }
        if (ok) {
            readAhead(); // the slot is free: top up the window
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
        if (!Arrays.equals(part.pathBytes(0), top.firstPath(k))) {
            throw new ManifestCorruptedException(where, "members[0].path", "first path '" + part.path(0)
                    + "' is not the one the top names, '" + IndexChecks.str(top.firstPath(k)) + "'");
        }
        if (k + 1 < partCount) {
            byte[] last = part.pathBytes(count - 1);
            byte[] next = top.firstPath(k + 1);
            if (ComponentOrder.compare(last, 0, last.length, next, 0, next.length) >= 0 || ComponentOrder.isDirectoryOf(last, 0, last.length, next, 0, next.length)) {
                throw new ManifestCorruptedException(where, "members[" + (count - 1) + "].path", "last path '"
                        + IndexChecks.str(last) + "' does not come before the next part's first, '" + IndexChecks.str(next) + "'");
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
            byte[] first = top.firstPath(mid);
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
        return search(0, dirCount, mid -> {
            byte[] p = top.dirPath(mid);
            return ComponentOrder.compare(p, 0, p.length, d, 0, d.length);
        });
    }

    @Override
    public int[] range(String dir) {
        if (dir.isEmpty()) {
            return new int[] {0, members};
        }
        int j = findDir(dir.getBytes(StandardCharsets.UTF_8));
        return j < 0 ? new int[] {0, 0} : new int[] {top.dirFrom(j), top.dirTo(j)};
    }

    @Override
    public boolean isDirectory(String dir) {
        return dir.isEmpty() || findDir(dir.getBytes(StandardCharsets.UTF_8)) >= 0;
    }

    /** The table position after directory {@code j}'s subtree. */
    private int subtreeEnd(int j) {
        byte[] p = top.dirPath(j);
        byte[] prefix = Arrays.copyOf(p, p.length + 1);
        prefix[p.length] = '/';
        int a = j + 1;
        int e = dirCount;
        while (a < e) {
            int mid = (a + e) >>> 1;
            if (ComponentOrder.comparePrefix(top.dirPath(mid), prefix, 0, prefix.length) <= 0) {
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
        return ComponentOrder.comparePrefix(top.dirPath(j), prefix, 0, prefix.length) == 0 ? j : -1;
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
        return new int[] {top.dirFrom(j), top.dirTo(j), childAt(j + 1, prefix)};
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
        while (k >= 0 && top.dirTo(k) <= i) {
            k = childAt(subtreeEnd(k), prefix);
        }
        while (i < to) {
            if (k >= 0 && top.dirFrom(k) <= i) {
                byte[] path = top.dirPath(k);
                int f = top.dirFrom(k);
                int t = top.dirTo(k);
                if (sink.child(new String(path, p, path.length - p, StandardCharsets.UTF_8), true, f, t)) {
                    return;
                }
                i = t;
                k = childAt(subtreeEnd(k), prefix);
            } else {
                byte[] path = pathBytes(i);
                if (ComponentOrder.comparePrefix(path, prefix, 0, p) != 0 || slashAfter(path, p) >= 0) {
                    throw new ManifestCorruptedException(source, "directories", "member " + i + " '" + IndexChecks.str(path)
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
        return 128 + 4L * partBase.length + 120L * partCount + 24L * partCount + top.retainedBytes() + loaded;
    }

    @Override
    public byte[] serialize() {
        return MemberIndexWriter.flat(this, 0, members);
    }
}
