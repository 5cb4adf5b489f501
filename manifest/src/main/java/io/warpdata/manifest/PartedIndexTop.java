package io.warpdata.manifest;

import java.util.Arrays;

/**
 * The top blob of a parted member index ({@link PartedMemberIndex}): its layout, read and checked
 * whole when opened, and what it tells: the parts (by hash, how many members each, the first path
 * of each) and the table of directories with their member runs. Read in place from its bytes.
 *
 * <p>Layout, big-endian ({@code docs/manifest.md}):
 * <pre>
 * "WMIP"  u32 version (1)  u32 parts P  u32 directories D  u32 members N
 * P x { u32 members, 32-byte part id, u64 part size, 32-byte id of the part's block hash list }
 * P x u32 cumulative end offsets of the parts' first paths, then those UTF-8 paths
 * D x u32 cumulative end offsets of the directory paths, then those UTF-8 paths (component order)
 * D x { u32 first member, u32 end member } (the directory's run, as {@link MemberIndex#range})
 * </pre>
 * Checked whole when opened: sizes, sorted first paths, a directory table whose every directory's
 * parent is listed before it and whose runs nest.
 */
final class PartedIndexTop {
    static final int MAGIC = 0x574D4950; // "WMIP"
    static final int VERSION = 1;
    private static final int TOP_HEADER = 20;
    private static final int PART_ENTRY = 4 + 32 + 8 + 32;

    private final IndexBytes b;
    final String source;
    /** Members of the whole index. */
    final int members;
    /** Parts and directories. */
    final int parts;
    final int dirs;
    /** partBase[k]: position of part k's first member; {@code parts + 1} entries. */
    final int[] partBase;
    /** The parts, by hash (each with the id of its block hash list). */
    final BlobRef[] refs;
    private final long firstEndsBase;
    private final long firstPathsBase;
    private final long dirEndsBase;
    private final long dirPathsBase;
    private final long dirRangesBase;

    private PartedIndexTop(IndexBytes b, String source, int members, int[] partBase, BlobRef[] refs, int dirs,
                           long firstEndsBase, long firstPathsBase, long dirEndsBase, long dirPathsBase,
                           long dirRangesBase) {
        this.b = b;
        this.source = source;
        this.members = members;
        this.parts = refs.length;
        this.dirs = dirs;
        this.partBase = partBase;
        this.refs = refs;
        this.firstEndsBase = firstEndsBase;
        this.firstPathsBase = firstPathsBase;
        this.dirEndsBase = dirEndsBase;
        this.dirPathsBase = dirPathsBase;
        this.dirRangesBase = dirRangesBase;
    }

    /**
     * Reads and checks the top blob {@code b} whole.
     *
     * @throws ManifestCorruptedException naming {@code source} and the field, if it is not a valid top
     */
    static PartedIndexTop open(IndexBytes b, String source) {
        long size = IndexChecks.header(b, source, "parted member index", TOP_HEADER, MAGIC, VERSION);
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
            if (partSize < MemberIndex.HEADER) {
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
        long firstBytes = IndexChecks.ends(b, source, "parts", firstEndsBase, p, size);
        long dirEndsBase = firstPathsBase + firstBytes;
        long dirPathsBase = dirEndsBase + 4L * d;
        if (dirPathsBase > size) {
            throw new ManifestCorruptedException(source, "directories", "truncated before its directory table");
        }
        long dirBytes = IndexChecks.ends(b, source, "directories", dirEndsBase, d, size);
        long dirRangesBase = dirPathsBase + dirBytes;
        long expected = dirRangesBase + 8L * d;
        if (expected != size) {
            throw new ManifestCorruptedException(source, "length", p + " parts and " + d + " directories take "
                    + expected + " bytes, found " + size);
        }
        PartedIndexTop top = new PartedIndexTop(b, source, n, base, refs, d, firstEndsBase, firstPathsBase, dirEndsBase,
                dirPathsBase, dirRangesBase);
        top.check();
        return top;
    }

    /** The first paths sorted; directories sorted, each one's parent listed before it, runs nested. */
    private void check() {
        byte[] prev = null;
        for (int k = 0; k < parts; k++) {
            byte[] first = firstPath(k);
            IndexChecks.sortedPath(source, "parts", k, "first", prev, first);
            prev = first;
        }
        // Directories: sorted, each one's parent listed (as the innermost open one), runs nested.
        int[] stack = new int[64];
        int depth = 0;
        int floor = 0;
        prev = null;
        for (int j = 0; j < dirs; j++) {
            byte[] path = dirPath(j);
            IndexChecks.sortedPath(source, "directories", j, "path", prev, path);
            prev = path;
            while (depth > 0) {
                byte[] top = dirPath(stack[depth - 1]);
                if (ComponentOrder.isDirectoryOf(top, 0, top.length, path, 0, path.length)) {
                    break;
                }
                floor = Math.max(floor, dirTo(stack[--depth]));
            }
            int parentLength = depth == 0 ? 0 : dirPath(stack[depth - 1]).length + 1;
            if (MemberIndex.slashAfter(path, parentLength) >= 0) {
                throw new ManifestCorruptedException(source, "directories[" + j + "].path", "the parent of '"
                        + IndexChecks.str(path) + "' is not in the directory table");
            }
            int from = dirFrom(j);
            int to = dirTo(j);
            boolean inParent = depth == 0 || (from >= dirFrom(stack[depth - 1]) && to <= dirTo(stack[depth - 1]));
            if (from < floor || from >= to || to > members || !inParent) {
                throw new ManifestCorruptedException(source, "directories[" + j + "].members", "run [" + from + ", "
                        + to + ") of '" + IndexChecks.str(path) + "' does not nest in its parent's or follow its siblings'");
            }
            if (depth == stack.length) {
                stack = Arrays.copyOf(stack, depth * 2);
            }
            stack[depth++] = j;
        }
    }

    /** The first path of part {@code k}. */
    byte[] firstPath(int k) {
        return slice(firstEndsBase, firstPathsBase, k);
    }

    /** The path of directory {@code j} (component order). */
    byte[] dirPath(int j) {
        return slice(dirEndsBase, dirPathsBase, j);
    }

    private byte[] slice(long endsBase, long pathsBase, int k) {
        int s = k == 0 ? 0 : b.getInt(endsBase + 4L * (k - 1));
        int e = b.getInt(endsBase + 4L * k);
        byte[] p = new byte[e - s];
        b.get(pathsBase + s, p, 0, p.length);
        return p;
    }

    /** The first member of directory {@code j}'s run. */
    int dirFrom(int j) {
        return b.getInt(dirRangesBase + 8L * j);
    }

    /** The end (exclusive) of directory {@code j}'s run. */
    int dirTo(int j) {
        return b.getInt(dirRangesBase + 8L * j + 4);
    }

    /** Heap held by the top's bytes. */
    long retainedBytes() {
        return b.retainedBytes();
    }
}
