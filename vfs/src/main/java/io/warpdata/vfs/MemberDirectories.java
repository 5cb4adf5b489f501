package io.warpdata.vfs;

import io.warpdata.manifest.MemberIndex;

/**
 * Directory structure over a {@link MemberIndex}. Members are sorted in component order ('/'
 * before every other character), so the members under a directory form one contiguous run of
 * positions and a directory is found by binary search and listed by a scan that skips each
 * subdirectory's run in one jump. Nothing is materialised per directory.
 */
final class MemberDirectories {
    private MemberDirectories() {
    }

    /** Compares paths as the index sorts them: by code point, with '/' before everything. */
    static int compare(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                if (ca == '/') {
                    return -1;
                }
                if (cb == '/') {
                    return 1;
                }
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    /** First position in [from, size) whose path is >= {@code prefix}. */
    static int lowerBound(MemberIndex index, String prefix, int from) {
        int lo = from;
        int hi = index.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (compare(index.path(mid), prefix) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** First position in [from, size) at or after which no path starts with {@code prefix}. */
    static int endOfRun(MemberIndex index, String prefix, int from) {
        int lo = from;
        int hi = index.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            String p = index.path(mid);
            if (p.startsWith(prefix) || compare(p, prefix) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * The run [start, end) of members under directory {@code prefix} ("" for the artifact root,
     * else ending with '/'), packed as {@code start << 32 | end}; start == end if there is none.
     */
    static long run(MemberIndex index, String prefix) {
        if (prefix.isEmpty()) {
            return index.size();
        }
        int start = lowerBound(index, prefix, 0);
        int end = endOfRun(index, prefix, start);
        return ((long) start << 32) | end;
    }

    static int start(long run) {
        return (int) (run >>> 32);
    }

    static int end(long run) {
        return (int) run;
    }

    /** Number of immediate subdirectories of {@code prefix}, for nlink. */
    static long subdirectoryCount(MemberIndex index, String prefix) {
        long run = run(index, prefix);
        int pos = start(run);
        int end = end(run);
        long dirs = 0;
        while (pos < end) {
            String path = index.path(pos);
            int slash = path.indexOf('/', prefix.length());
            if (slash < 0) {
                pos++;
            } else {
                dirs++;
                pos = endOfRun(index, path.substring(0, slash + 1), pos);
            }
        }
        return dirs;
    }
}
