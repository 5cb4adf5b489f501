package io.warpdata.manifest;

import java.util.Arrays;

/**
 * Component order of UTF-8 paths, the order a member index keeps its members in: unsigned
 * bytes, except that '/' sorts before every other byte, so that each directory's members are one
 * run ("a/b" and "a/b/c" before "a/b.txt").
 */
final class ComponentOrder {
    private ComponentOrder() {
    }

    /** 0 if {@code path} starts with the prefix, else the sign of (path) - (prefix) in component order. */
    static int comparePrefix(byte[] path, byte[] p, int pFrom, int pTo) {
        int len = path.length;
        int plen = pTo - pFrom;
        int n = Math.min(len, plen);
        int m = Arrays.mismatch(path, 0, n, p, pFrom, pFrom + n);
        if (m < 0) {
            return len >= plen ? 0 : -1;
        }
        return key(path[m]) - key(p[pFrom + m]);
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
    static int compare(byte[] a, byte[] b) {
        return compare(a, 0, a.length, b, 0, b.length);
    }

    private static int key(byte b) {
        return b == '/' ? -1 : b & 0xFF;
    }

    /** Whether {@code b} starts with {@code a + "/"}: a is then a directory of b. */
    static boolean isDirectoryOf(byte[] pa, int aFrom, int aTo, byte[] pb, int bFrom, int bTo) {
        int la = aTo - aFrom;
        return bTo - bFrom > la && pb[bFrom + la] == '/' && Arrays.equals(pa, aFrom, aTo, pb, bFrom, bFrom + la);
    }
}
