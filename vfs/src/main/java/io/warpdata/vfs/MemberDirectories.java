package io.warpdata.vfs;

import io.warpdata.manifest.MemberIndex;

import java.nio.charset.StandardCharsets;

/**
 * Directory structure over a {@link MemberIndex}. Members are sorted in component order ('/'
 * before every other byte), so the members under a directory form one contiguous run of
 * positions: a directory is found by binary search and listed by a scan that skips each
 * subdirectory's run in one jump. Nothing is materialised per directory, and a listing can
 * resume at any position, which is what readdir offsets are.
 */
final class MemberDirectories {
    private MemberDirectories() {
    }

    /** The index's name for a directory: {@code ""} for the root, else without the trailing '/'. */
    static String dirOf(String prefix) {
        return prefix.isEmpty() ? "" : prefix.substring(0, prefix.length() - 1);
    }

    /** The run {@code {from, to}} of members under {@code prefix} ("" or ending with '/'). */
    static int[] run(MemberIndex index, String prefix) {
        return index.range(dirOf(prefix));
    }

    /** Number of immediate subdirectories of {@code prefix}, for nlink. */
    static long subdirectoryCount(MemberIndex index, String prefix) {
        return index.childDirectoryCount(dirOf(prefix));
    }

    /** Receives one entry of a listing and the position where the listing continues after it. */
    interface EntrySink {
        /** @return true to stop */
        boolean add(String name, boolean directory, int next);
    }

    /**
     * Lists the immediate children of {@code prefix}, starting at index position {@code from}
     * (clamped into the directory's run), until the sink says stop.
     */
    static void list(MemberIndex index, String prefix, int from, EntrySink sink) {
        int[] run = run(index, prefix);
        int p = prefix.getBytes(StandardCharsets.UTF_8).length;
        int pos = Math.max(run[0], from);
        while (pos < run[1]) {
            int slash = index.slashAfter(pos, p);
            if (slash < 0) {
                if (sink.add(index.pathSlice(pos, p, index.pathLength(pos)), false, pos + 1)) {
                    return;
                }
                pos++;
            } else {
                String name = index.pathSlice(pos, p, slash);
                int next = index.range(prefix + name)[1];
                if (sink.add(name, true, next)) {
                    return;
                }
                pos = next;
            }
        }
    }
}
