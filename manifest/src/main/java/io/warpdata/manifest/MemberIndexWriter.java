package io.warpdata.manifest;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * Writes member indexes: the flat form ({@link FlatMemberIndex}, one blob) and the parted form
 * ({@link PartedMemberIndex}: flat parts of consecutive members and a top naming them). Reading
 * lives in those classes; the layouts are in {@code docs/manifest.md}.
 */
final class MemberIndexWriter {
    private MemberIndexWriter() {
    }

    /**
     * A buffer for a flat index of {@code count} members with {@code pathBytes} bytes of paths,
     * its header written.
     *
     * @param tooLarge what to do when it would pass 2 GiB, for the message
     * @throws ManifestValidationException if it would pass 2 GiB
     */
    static ByteBuffer flatBuffer(int count, long pathBytes, String tooLarge) {
        long total = MemberIndex.HEADER + (long) MemberIndex.PER_MEMBER * count + pathBytes;
        if (total > Integer.MAX_VALUE - 64) {
            throw new ManifestValidationException("members", count + " members with " + pathBytes
                    + " bytes of paths " + tooLarge);
        }
        return ByteBuffer.allocate((int) total).putInt(MemberIndex.MAGIC).putInt(MemberIndex.FORMAT_VERSION).putInt(count);
    }

    /** The flat form of members {@code [from, to)} of {@code src}: one part. */
    static byte[] flat(MemberIndex src, int from, int to) {
        int n = to - from;
        long pathBytes = 0;
        for (int i = from; i < to; i++) {
            pathBytes += src.pathLength(i);
        }
        ByteBuffer b = flatBuffer(n, pathBytes, "do not fit one flat index blob; publish it parted");
        int end = 0;
        for (int i = from; i < to; i++) {
            end += src.pathLength(i);
            b.putInt(end);
        }
        for (int i = from; i < to; i++) {
            b.put(src.pathBytes(i));
        }
        for (int i = from; i < to; i++) {
            b.putInt(src.shard(i));
        }
        for (int i = from; i < to; i++) {
            b.putLong(src.offset(i));
        }
        for (int i = from; i < to; i++) {
            b.putLong(src.length(i));
        }
        for (int i = from; i < to; i++) {
            b.putInt(src.mode(i));
        }
        for (int i = from; i < to; i++) {
            b.put(src.hash(i).digest());
        }
        return b.array();
    }

    /**
     * Most bytes in one part, whatever {@code partMembers} allows: one default block (1 MiB), so
     * that a part is one block, whose block hash list a reader derives from the part's own id (one
     * GET a part, not two). A member takes 60 bytes plus its path, so this bound, not {@code
     * partMembers}, sets the size of most parts: about 12,000 members of 26-byte paths.
     * warpd reads a part into a reused buffer, not a new array of its size (a "humongous" object
     * for G1 at this size, which made warpd's heap grow to its bound over a walk of 10M members:
     * docs/bench.md, "Peak RSS at 10M"). Versions published from 95303f3 until this bound have
     * parts of at most 480 KiB; before 95303f3, of 8,192 members. Readers take any of them.
     */
    static final int MAX_PART_BYTES = BlockHashList.DEFAULT_BLOCK_SIZE;

    static MemberIndex.Parts parts(MemberIndex src, int partMembers) {
        List<byte[]> parts = new ArrayList<>();
        byte[] top = parts(src, partMembers, parts::add);
        return new MemberIndex.Parts(top, List.copyOf(parts));
    }

    /** The end of the part starting at {@code from}: at most {@code max}, within {@link #MAX_PART_BYTES} (at least one member). */
    static int partEnd(MemberIndex src, int from, int max) {
        long bytes = MemberIndex.HEADER;
        int to = from;
        while (to < max) {
            bytes += MemberIndex.PER_MEMBER + src.pathLength(to);
            if (bytes > MAX_PART_BYTES && to > from) {
                break;
            }
            to++;
        }
        return to;
    }

    /** Writes the parts, in order, to {@code sink} (one at a time) and returns the top. */
    static byte[] parts(MemberIndex src, int partMembers, Consumer<byte[]> sink) {
        if (partMembers <= 0) {
            throw new IllegalArgumentException("partMembers must be positive: " + partMembers);
        }
        int n = src.size();
        ByteArrayOutputStream table = new ByteArrayOutputStream();
        int partCount = 0;
        ByteArrayOutputStream firsts = new ByteArrayOutputStream();
        List<Integer> firstEnds = new ArrayList<>();
        for (int from = 0, to; from < n; from = to) {
            to = partEnd(src, from, (int) Math.min(n, (long) from + partMembers));
            byte[] part = flat(src, from, to);
            try (DataOutputStream o = new DataOutputStream(table)) {
                o.writeInt(to - from);
                o.write(BlobId.of(part).digest());
                o.writeLong(part.length);
                o.write(BlobId.of(BlockHashList.compute(new ByteArrayInputStream(part),
                        BlockHashList.DEFAULT_BLOCK_SIZE).serialize()).digest());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            sink.accept(part);
            partCount++;
            firsts.writeBytes(src.pathBytes(from));
            firstEnds.add(firsts.size());
        }
        // Directories in component order = order of first appearance in the sorted members.
        List<byte[]> dirs = new ArrayList<>();
        List<int[]> runs = new ArrayList<>();
        int[] open = new int[16];
        int depth = 0;
        for (int i = 0; i < n; i++) {
            byte[] path = src.pathBytes(i);
            while (depth > 0) {
                byte[] top = dirs.get(open[depth - 1]);
                if (ComponentOrder.isDirectoryOf(top, 0, top.length, path, 0, path.length)) {
                    break;
                }
                runs.get(open[--depth])[1] = i;
            }
            int from = depth == 0 ? 0 : dirs.get(open[depth - 1]).length + 1;
            for (int s = MemberIndex.slashAfter(path, from); s >= 0; s = MemberIndex.slashAfter(path, s + 1)) {
                dirs.add(Arrays.copyOf(path, s));
                runs.add(new int[] {i, n});
                if (depth == open.length) {
                    open = Arrays.copyOf(open, depth * 2);
                }
                open[depth++] = dirs.size() - 1;
            }
        }
        while (depth > 0) {
            runs.get(open[--depth])[1] = n;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (DataOutputStream o = new DataOutputStream(out)) {
            o.writeInt(PartedIndexTop.MAGIC);
            o.writeInt(PartedIndexTop.VERSION);
            o.writeInt(partCount);
            o.writeInt(dirs.size());
            o.writeInt(n);
            table.writeTo(o);
            for (int end : firstEnds) {
                o.writeInt(end);
            }
            firsts.writeTo(o);
            int end = 0;
            for (byte[] d : dirs) {
                end += d.length;
                o.writeInt(end);
            }
            for (byte[] d : dirs) {
                o.write(d);
            }
            for (int[] r : runs) {
                o.writeInt(r[0]);
                o.writeInt(r[1]);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
