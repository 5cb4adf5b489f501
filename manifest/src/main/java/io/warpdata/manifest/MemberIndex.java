package io.warpdata.manifest;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.IntUnaryOperator;

/**
 * An artifact's member index: member path -> (shard, data offset, length, mode, content hash),
 * for up to hundreds of millions of members. Read by position from its stored bytes
 * ({@link IndexBytes}: a heap array, or a file in the cache read through a bounded page cache),
 * never materialised as objects per member, so the heap does not bound its size.
 *
 * <p>Members are sorted by path in <em>component order</em>: paths compare as if '/' sorted
 * before every other byte, so that all members under a directory form one contiguous run,
 * which makes directory listing a range scan ({@link #range}, {@link #forEachChild}), and the
 * children of a directory come out sorted by name.
 *
 * <p>No path is both a member and a directory of other members ({@code a} and {@code a/b}).
 *
 * <p>Two stored forms (docs/manifest.md):
 * <ul>
 * <li><b>flat</b> ({@code "WMIX"}), one blob, big-endian: magic, u32 format version (1), u32
 *     count {@code n}, then {@code n} u32 cumulative path end offsets, the concatenated UTF-8
 *     paths, {@code n} i32 shard indexes, {@code n} i64 data offsets, {@code n} i64 lengths,
 *     {@code n} u32 modes and {@code n} 32-byte SHA-256 hashes. Every field is at a computable
 *     position, so it is read in place.</li>
 * <li><b>parted</b> ({@code "WMIP"}, {@link PartedMemberIndex}): a small top blob naming, by
 *     hash, flat parts of at most a bounded number of consecutive members, with the first path
 *     of each part and the table of directories (path, member range); a lookup or a listing
 *     loads only the parts it touches.</li>
 * </ul>
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public abstract class MemberIndex {
    public static final int FORMAT_VERSION = 1;
    /**
     * Members per part, at most, of the indexes Warp publishes in parts: an index of more members
     * is parted (parts are also cut at 1 MiB, which binds first for paths of more than about 4
     * bytes: 12,000 members of 26-byte paths), so that the first listing of a folder of a
     * 10M-member version fetches about 0.25% of its index. Before 2026-11-28, 8,192.
     */
    public static final int PART_MEMBERS = 16384;
    /** Permission bits a member may carry (including setuid/setgid/sticky, which vfs masks). */
    public static final int MAX_MODE = 07777;

    static final int MAGIC = 0x574D4958; // "WMIX"
    static final int HEADER = 12;
    /** Fixed bytes per member on disk: end offset, shard, offset, length, mode, hash. */
    static final int PER_MEMBER = 4 + 4 + 8 + 8 + 4 + 32;
    static final int HASH = 32;

    MemberIndex() {
    }

    /** Loads a part of a parted index: its verified bytes (from the cache or the store). */
    @FunctionalInterface
    public interface PartLoader {
        /**
         * @throws RuntimeException whatever fetching it threw (store errors, verification)
         */
        IndexBytes load(BlobRef part);
    }

    /** A loader for indexes known to be flat: a parted one fails, naming the problem. */
    public static final PartLoader NO_PARTS = part -> {
        throw new ManifestCorruptedException("member index", "parts", "a parted index was read where a flat one was"
                + " expected (part " + part.id() + ")");
    };

    /** Number of members. */
    public abstract int size();

    /** Length of member {@code i}'s path in UTF-8 bytes. */
    public abstract int pathLength(int i);

    /** Member {@code i}'s UTF-8 path, in a new array. */
    public abstract byte[] pathBytes(int i);

    /** Index into {@link Artifact#shards()}. */
    public abstract int shard(int i);

    /** Offset of the member's first data byte within its shard. */
    public abstract long offset(int i);

    public abstract long length(int i);

    /** Permission bits (e.g. 0644, 0755). */
    public abstract int mode(int i);

    /** SHA-256 of the member's bytes. */
    public abstract BlobId hash(int i);

    /** Whether member {@code i}'s hash is {@code digest[off, off + 32)}; allocates nothing. */
    public abstract boolean hashEquals(int i, byte[] digest, int off);

    /**
     * Heap retained by this index (for cache accounting and the footprint test): the bytes it
     * holds on the heap, not those it reads from a file.
     */
    public abstract long retainedBytes();

    /**
     * Whether the stored bytes are a parted index's top ({@code "WMIP"}) rather than a flat index.
     */
    public static boolean isParted(IndexBytes bytes) {
        return bytes.length() >= 4 && bytes.getInt(0) == PartedIndexTop.MAGIC;
    }

    /**
     * Opens a stored index, flat or parted, after checking all of it that is at hand (a flat
     * index whole; a parted one's top, and each part when it is first loaded).
     *
     * @param parts loads a parted index's parts when they are first needed
     * @throws ManifestCorruptedException if the bytes are not a valid index (bad magic, version,
     *         truncation, unsorted or duplicate paths, invalid member paths)
     */
    public static MemberIndex open(IndexBytes bytes, String source, PartLoader parts) {
        return open(bytes, source, parts, PartReadAhead.NONE);
    }

    /**
     * As {@link #open(IndexBytes, String, PartLoader)}, reading a parted index's parts ahead of a
     * walk through {@code ahead} (ignored for a flat index).
     */
    public static MemberIndex open(IndexBytes bytes, String source, PartLoader parts, PartReadAhead ahead) {
        if (isParted(bytes)) {
            return PartedMemberIndex.openTop(bytes, source, parts, ahead);
        }
        return FlatMemberIndex.openFlat(bytes, source);
    }

    /**
     * A flat index from its bytes, checked whole.
     *
     * @throws ManifestCorruptedException if the bytes are not a valid flat index
     */
    public static MemberIndex parse(byte[] bytes, String source) {
        return open(IndexBytes.of(bytes), source, NO_PARTS);
    }

    /** Position of {@code path} in the index, or -1. */
    public int find(String path) {
        return path == null ? -1 : find(path.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Position of the member a user's spelling of a path names, or -1: {@code path} without its
     * leading {@code /} and {@code ./} and with {@code a//b} and {@code a/./b} folded
     * ({@link #memberPath}), as the mount resolves such a path. Bound column values,
     * {@code warpctl cat} and views find members this way.
     */
    public int findSpelled(String path) {
        // No member's name has a leading '/', '//' or '/./' (Names.memberPathProblem): only the folded path can match.
        return path == null ? -1 : find(memberPath(path));
    }

    /**
     * {@code path} as a member is named: no leading {@code /} or {@code ./}, no {@code //} or
     * {@code /./} inside. {@code ..} is left as it is (no member is named through it).
     */
    public static String memberPath(String path) {
        String p = path;
        while (p.startsWith("./") || p.startsWith("/")) {
            p = p.substring(p.startsWith("./") ? 2 : 1);
        }
        while (p.contains("/./") || p.contains("//")) {
            p = p.replace("/./", "/").replace("//", "/");
        }
        return p;
    }

    /** Position of the member whose UTF-8 path is {@code utf8}, or -1. */
    public int find(byte[] utf8) {
        return find(utf8, 0, size());
    }

    /** Position in {@code [lo, hi)} of the member whose UTF-8 path is {@code utf8}, or -1. */
    int find(byte[] utf8, int lo, int hiExclusive) {
        return search(lo, hiExclusive, mid -> comparePath(mid, utf8));
    }

    /**
     * Binary search of the sorted positions {@code [lo, hi)}: {@code order} compares position
     * {@code mid} with the key (negative, zero or positive as it sorts before, at or after it).
     * Returns the position where it is zero, or -1.
     */
    static int search(int lo, int hiExclusive, IntUnaryOperator order) {
        int hi = hiExclusive - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = order.applyAsInt(mid);
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
        return new String(pathBytes(i), StandardCharsets.UTF_8);
    }

    /** Byte {@code k} of member {@code i}'s UTF-8 path. */
    public byte pathByte(int i, int k) {
        byte[] p = pathBytes(i);
        return p[Objects.checkIndex(k, p.length)];
    }

    /** Decodes bytes {@code [from, to)} of member {@code i}'s UTF-8 path, e.g. one component. */
    public String pathSlice(int i, int from, int to) {
        byte[] p = pathBytes(i);
        Objects.checkFromToIndex(from, to, p.length);
        return new String(p, from, to - from, StandardCharsets.UTF_8);
    }

    /** Position of the first '/' at or after byte {@code from} of member {@code i}'s path, or -1. */
    public int slashAfter(int i, int from) {
        return slashAfter(pathBytes(i), from);
    }

    static int slashAfter(byte[] p, int from) {
        for (int k = Math.max(0, from); k < p.length; k++) {
            if (p[k] == '/') {
                return k;
            }
        }
        return -1;
    }

    /** Compares member {@code i}'s path with UTF-8 {@code other} in component order. */
    public int comparePath(int i, byte[] other) {
        byte[] p = pathBytes(i);
        return ComponentOrder.compare(p, 0, p.length, other, 0, other.length);
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
            return new int[] {0, size()};
        }
        return rangeOfPrefix(dirPrefix(dir), 0, size());
    }

    static byte[] dirPrefix(String dir) {
        byte[] d = dir.getBytes(StandardCharsets.UTF_8);
        byte[] prefix = Arrays.copyOf(d, d.length + 1);
        prefix[d.length] = '/';
        return prefix;
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
            byte[] path = pathBytes(i);
            int slash = slashAfter(path, p);
            if (slash < 0) {
                if (sink.child(new String(path, p, path.length - p, StandardCharsets.UTF_8), false, i, i + 1)) {
                    return;
                }
                i++;
            } else {
                int end = rangeOfPrefix(path, 0, slash + 1, i, r[1])[1];
                if (sink.child(new String(path, p, slash - p, StandardCharsets.UTF_8), true, i, end)) {
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
            byte[] path = pathBytes(i);
            int slash = slashAfter(path, p);
            if (slash < 0) {
                i++;
            } else {
                i = rangeOfPrefix(path, 0, slash + 1, i, r[1])[1];
                n++;
            }
        }
        return n;
    }

    int[] rangeOfPrefix(byte[] prefix, int lo, int hi) {
        return rangeOfPrefix(prefix, 0, prefix.length, lo, hi);
    }

    /** Members in {@code [lo, hi)} whose path starts with {@code p[pFrom, pTo)}. */
    int[] rangeOfPrefix(byte[] p, int pFrom, int pTo, int lo, int hi) {
        int a = lo;
        int b = hi;
        while (a < b) { // first with comparePrefix >= 0
            int mid = (a + b) >>> 1;
            if (ComponentOrder.comparePrefix(pathBytes(mid), p, pFrom, pTo) < 0) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        int from = a;
        b = hi;
        while (a < b) { // first with comparePrefix > 0
            int mid = (a + b) >>> 1;
            if (ComponentOrder.comparePrefix(pathBytes(mid), p, pFrom, pTo) <= 0) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        return new int[] {from, a};
    }

    /** Component order of two UTF-8 paths ('/' before every other byte). */
    public static int compare(byte[] a, byte[] b) {
        return ComponentOrder.compare(a, b);
    }

    /**
     * This index in the flat form, one blob (the bytes it is read from, when it is flat).
     *
     * @throws ManifestValidationException if it does not fit one array (use {@link #writeParts})
     */
    public abstract byte[] serialize();

    /** A parted form: the top blob and its parts, in order. */
    public record Parts(byte[] top, List<byte[]> parts) {
    }

    /**
     * This index in the parted form, parts of at most {@code partMembers} consecutive members
     * (see {@link PartedMemberIndex}).
     */
    public Parts writeParts(int partMembers) {
        return MemberIndexWriter.parts(this, partMembers);
    }

    /**
     * As {@link #writeParts(int)}, handing each part's bytes to {@code sink} as soon as it is
     * written (so that they need not all be held), and returning the top.
     */
    public byte[] writeParts(int partMembers, java.util.function.Consumer<byte[]> sink) {
        return MemberIndexWriter.parts(this, partMembers, sink);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + size() + " members]";
    }
}
