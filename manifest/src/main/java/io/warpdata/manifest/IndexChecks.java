package io.warpdata.manifest;

import java.nio.charset.StandardCharsets;

/**
 * The checks the flat ({@link FlatMemberIndex}) and parted ({@link PartedIndexTop}) member index
 * layouts share when opened: the header, a table of cumulative path end offsets, and sorted valid
 * paths. Each failure is a {@link ManifestCorruptedException} naming the source and the field.
 */
final class IndexChecks {
    private IndexChecks() {
    }

    /**
     * Checks that {@code b} holds at least a {@code header}-byte header starting with {@code magic}
     * and {@code version}; returns its size. {@code kind} names the layout in messages.
     */
    static long header(IndexBytes b, String source, String kind, int header, int magic, int version) {
        long size = b.length();
        if (size < header) {
            throw new ManifestCorruptedException(source, "header", "truncated: " + size
                    + " bytes, a " + kind + " has at least " + header);
        }
        int found = b.getInt(0);
        if (found != magic) {
            throw new ManifestCorruptedException(source, "magic", String.format("not a %s (magic 0x%08x)", kind, found));
        }
        int v = b.getInt(4);
        if (v != version) {
            throw new ManifestCorruptedException(source, "version", "unknown " + kind + " version "
                    + Integer.toUnsignedString(v) + " (this Warp reads version " + version + ")");
        }
        return size;
    }

    /**
     * Checks {@code count} cumulative u32 end offsets at {@code at} (each after the one before,
     * the paths they span within {@code size}); returns the bytes they span. {@code what} names
     * the table: an offset's field is {@code what[k].path}.
     */
    static int ends(IndexBytes b, String source, String what, long at, int count, long size) {
        int prev = 0;
        for (int k = 0; k < count; k++) {
            int end = b.getInt(at + 4L * k);
            if (end <= prev) { // also catches offsets past 2^31 (negative)
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

    /**
     * Checks that {@code path} is a valid member path ({@link Names#memberPathProblem}) that comes
     * after {@code prev} in component order ({@code prev} is null for the first).
     */
    static void sortedPath(String source, String array, int index, String field, byte[] prev, byte[] path) {
        String problem = Names.memberPathProblem(path, 0, path.length);
        if (problem != null) {
            throw new ManifestCorruptedException(source, name(array, index, field), problem + " '" + str(path) + "'");
        }
        if (prev != null) {
            int c = ComponentOrder.compare(prev, 0, prev.length, path, 0, path.length);
            if (c >= 0) {
                throw new ManifestCorruptedException(source, name(array, index, field), c == 0 ? "duplicate path '" + str(path) + "'"
                        : "path '" + str(path) + "' is out of order after '" + str(prev) + "'");
            }
        }
    }

    /**
     * "array[index].field", built only for an error: a check of every member of a 1.28M-member
     * index built one per member (about 100 MB of strings in a cold find's parts).
     */
    static String name(String array, int index, String field) {
        return array + "[" + index + "]." + field;
    }

    static String str(byte[] p) {
        return new String(p, StandardCharsets.UTF_8);
    }
}
