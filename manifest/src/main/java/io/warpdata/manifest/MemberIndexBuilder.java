package io.warpdata.manifest;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * Builds a {@link MemberIndex}: collects members in any order; {@link #build()} sorts them in
 * component order, validates them (no duplicate, no path both a member and a directory) and writes
 * the flat form. Reading is {@link MemberIndex}'s; the parted form is written from a built index
 * ({@link MemberIndex#writeParts}). Not thread-safe.
 */
public final class MemberIndexBuilder {
    private byte[] paths = new byte[256];
    private int pathBytes;
    /** ends[i]: end of path i in {@link #paths}. */
    private int[] ends = new int[16];
    private int[] shards = new int[16];
    private long[] offsets = new long[16];
    private long[] lengths = new long[16];
    private int[] modes = new int[16];
    private byte[] hashes = new byte[16 * MemberIndex.HASH];
    private int count;

    /**
     * @throws ManifestValidationException if the path is not a valid member path, or shard,
     *         offset or length is negative, or mode is not permission bits
     */
    public MemberIndexBuilder add(String path, int shard, long offset, long length, int mode, BlobId hash) {
        byte[] p = Names.memberPathBytes("path", path);
        if (shard < 0) {
            throw new ManifestValidationException("shard", "negative shard index " + shard + " for '" + path + "'");
        }
        Names.requireNonNegative("offset", offset);
        Names.requireNonNegative("length", length);
        if (mode < 0 || mode > MemberIndex.MAX_MODE) {
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
            hashes = Arrays.copyOf(hashes, n * MemberIndex.HASH);
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
        System.arraycopy(hash.digest(), 0, hashes, count * MemberIndex.HASH, MemberIndex.HASH);
        count++;
        return this;
    }

    /**
     * Gives every member added so far the shard {@code newShard[old]} instead of its shard
     * {@code old}: the shards put in another order.
     *
     * @throws IllegalArgumentException if {@code newShard} is not a permutation of
     *         {@code 0..newShard.length-1}, or a member's shard is outside it
     */
    public MemberIndexBuilder renumberShards(int[] newShard) {
        boolean[] taken = new boolean[newShard.length];
        for (int n : newShard) {
            if (n < 0 || n >= newShard.length || taken[n]) {
                throw new IllegalArgumentException("not a permutation of the shards: " + Arrays.toString(newShard));
            }
            taken[n] = true;
        }
        for (int i = 0; i < count; i++) {
            if (shards[i] >= newShard.length) {
                throw new IllegalArgumentException("no new number for shard " + shards[i] + " of '"
                        + new String(paths, i == 0 ? 0 : ends[i - 1], ends[i] - (i == 0 ? 0 : ends[i - 1]),
                                StandardCharsets.UTF_8) + "'");
            }
        }
        for (int i = 0; i < count; i++) {
            shards[i] = newShard[shards[i]];
        }
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
        for (int k = 1; k < count; k++) {
            int prev = order[k - 1];
            int i = order[k];
            if (cmp(prev, i) == 0) {
                throw new ManifestValidationException("path", "duplicate member path '" + str(paths, start(prev), ends[prev]) + "'");
            }
            if (ComponentOrder.isDirectoryOf(paths, start(prev), ends[prev], paths, start(i), ends[i])) {
                throw new ManifestValidationException("path", "'" + str(paths, start(prev), ends[prev])
                        + "' is both a member and a directory of '" + str(paths, start(i), ends[i]) + "'");
            }
        }
        ByteBuffer b = MemberIndexWriter.flatBuffer(count, pathBytes,
                "exceed 2 GiB of index; publish them as more than one artifact");
        int at = 0;
        for (int k = 0; k < count; k++) {
            int i = order[k];
            at += ends[i] - start(i);
            b.putInt(at);
        }
        for (int k = 0; k < count; k++) {
            int i = order[k];
            b.put(paths, start(i), ends[i] - start(i));
        }
        for (int k = 0; k < count; k++) {
            b.putInt(shards[order[k]]);
        }
        for (int k = 0; k < count; k++) {
            b.putLong(offsets[order[k]]);
        }
        for (int k = 0; k < count; k++) {
            b.putLong(lengths[order[k]]);
        }
        for (int k = 0; k < count; k++) {
            b.putInt(modes[order[k]]);
        }
        for (int k = 0; k < count; k++) {
            b.put(hashes, order[k] * MemberIndex.HASH, MemberIndex.HASH);
        }
        return new FlatMemberIndex(IndexBytes.of(b.array()), count, pathBytes);
    }

    private int start(int i) {
        return i == 0 ? 0 : ends[i - 1];
    }

    private int cmp(int i, int j) {
        return ComponentOrder.compare(paths, start(i), ends[i], paths, start(j), ends[j]);
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
