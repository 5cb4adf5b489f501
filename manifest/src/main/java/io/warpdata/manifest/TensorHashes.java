package io.warpdata.manifest;

import io.warpdata.manifest.formats.SafetensorsHeader;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The SHA-256 of every tensor of an artifact's safetensors members, and of each member's header,
 * by which the mount fetches one tensor ({@code F.tensors/KEY.npy}) as a range of its own rather
 * than through the 1 MiB blocks around it (issue 26: 1,000 random tensors of 1 KiB fetched the
 * whole 21 MiB dataset). An artifact names it as {@code tensor_hashes} (manifest format 4).
 *
 * <p>Layout, big-endian: the magic {@code WTH1}; the entry count (int32); the entries, each
 * {@link #ENTRY_BYTES} bytes, sorted by the member's SHA-256 with no two alike; then the hash
 * arrays the entries point at. An entry: the member's SHA-256 (32 bytes, as its member index
 * says), its header's length N (int64: the JSON after the first 8 bytes), the header's SHA-256
 * (32), where its hash array starts in this blob (int64), its tensor count (int32) and the
 * array's SHA-256 (32). An array holds one SHA-256 per tensor, in the order of the tensors' data
 * offsets (begin, end, then name), so that a member is found by its own hash whichever index,
 * view or version holds it.
 *
 * <p>The blob is read through the verified block cache like any other; an entry names hashes
 * for ranges the reader then fetches and checks on their own. An entry whose numbers do not fit
 * the blob or the member is {@link ManifestCorruptedException}.
 */
public final class TensorHashes {
    /** The first 4 bytes. */
    public static final byte[] MAGIC = "WTH1".getBytes(StandardCharsets.US_ASCII);
    /** Magic and entry count. */
    public static final int HEAD_BYTES = 8;
    /** One entry. */
    public static final int ENTRY_BYTES = 32 + 8 + 32 + 8 + 4 + 32;
    /** Bytes of one tensor's hash in an array. */
    public static final int HASH_BYTES = 32;

    /** The order of a file's tensors in its hash array: by data offset, then end, then name. */
    public static final java.util.Comparator<SafetensorsHeader.Tensor> BY_OFFSET = java.util.Comparator
            .comparingLong(SafetensorsHeader.Tensor::begin).thenComparingLong(SafetensorsHeader.Tensor::end)
            .thenComparing(SafetensorsHeader.Tensor::name);

    private TensorHashes() {
    }

    /**
     * One safetensors member's entry.
     *
     * @param member       the member's SHA-256
     * @param headerLength N, the header's length after its first 8 bytes
     * @param header       the SHA-256 of those N bytes
     * @param hashesAt     where its hash array starts in the blob
     * @param tensors      how many tensors (hashes in the array)
     * @param hashes       the SHA-256 of its hash array
     */
    public record Entry(BlobId member, long headerLength, BlobId header, long hashesAt, int tensors, BlobId hashes) {
        public Entry {
            Objects.requireNonNull(member, "member");
            Objects.requireNonNull(header, "header");
            Objects.requireNonNull(hashes, "hashes");
        }

        /** Bytes of its hash array. */
        public long hashesLength() {
            return (long) tensors * HASH_BYTES;
        }
    }

    /**
     * The entry count from a blob's first {@link #HEAD_BYTES} bytes.
     *
     * @throws ManifestCorruptedException if they are not a tensor hash blob's, or the entries
     *         would not fit a blob of {@code blobSize} bytes
     */
    public static int count(byte[] head, long blobSize, String source) {
        return count(head, blobSize, source, MAGIC, ENTRY_BYTES, "tensor hash blob");
    }

    /**
     * The entry count of a blob of 4 bytes of {@code magic}, an int32 count and that many entries
     * of {@code entryBytes} (this layout and {@link TensorHeaders}'), checked against its size.
     */
    static int count(byte[] head, long blobSize, String source, byte[] magic, int entryBytes, String kind) {
        if (head.length < HEAD_BYTES || !Arrays.equals(head, 0, 4, magic, 0, 4)) {
            throw new ManifestCorruptedException(source, "magic", "is not a " + kind + " (no "
                    + new String(magic, StandardCharsets.US_ASCII) + " magic)");
        }
        int n = ByteBuffer.wrap(head, 4, 4).getInt();
        if (n < 0 || HEAD_BYTES + (long) n * entryBytes > blobSize) {
            throw new ManifestCorruptedException(source, "count", n + " entries do not fit a blob of " + blobSize + " bytes");
        }
        return n;
    }

    /** Where entry {@code i} starts in the blob. */
    public static long entryAt(int i) {
        return HEAD_BYTES + (long) i * ENTRY_BYTES;
    }

    /**
     * Entry {@code i} from its {@link #ENTRY_BYTES} bytes, checked against the blob's size.
     *
     * @throws ManifestCorruptedException if its array does not lie in the blob after the entries
     */
    public static Entry entry(byte[] b, int count, long blobSize, String source) {
        ByteBuffer in = ByteBuffer.wrap(b);
        BlobId member = id(in);
        long headerLength = in.getLong();
        BlobId header = id(in);
        long at = in.getLong();
        int tensors = in.getInt();
        BlobId hashes = id(in);
        long arraysStart = entryAt(count);
        if (headerLength < 2 || tensors < 0 || at < arraysStart || at > blobSize
                || (long) tensors * HASH_BYTES > blobSize - at) {
            throw new ManifestCorruptedException(source, "entry of member " + member,
                    "header of " + headerLength + " bytes, " + tensors + " tensor hashes at " + at
                            + ": does not fit a blob of " + blobSize + " bytes");
        }
        return new Entry(member, headerLength, header, at, tensors, hashes);
    }

    /** A member's hash array (already checked against {@link Entry#hashes}) as ids. */
    public static List<BlobId> hashes(byte[] array) {
        List<BlobId> out = new ArrayList<>(array.length / HASH_BYTES);
        for (int at = 0; at + HASH_BYTES <= array.length; at += HASH_BYTES) {
            out.add(BlobId.fromDigest(Arrays.copyOfRange(array, at, at + HASH_BYTES)));
        }
        return out;
    }

    /** The next 32 bytes of {@code in} as a SHA-256. */
    static BlobId id(ByteBuffer in) {
        byte[] d = new byte[32];
        in.get(d);
        return BlobId.fromDigest(d);
    }

    /** Collects members' hashes and writes the blob. */
    public static final class Builder {
        private record Pending(BlobId member, long headerLength, BlobId header, byte[] array, byte[] deflatedHeader) {
        }

        private final java.util.TreeMap<String, Pending> byMember = new java.util.TreeMap<>();

        /**
         * Adds a member; a member already added (the same bytes twice in one artifact) is kept once.
         *
         * @param tensorHashes one SHA-256 per tensor, in the order of the tensors' data offsets
         */
        public Builder add(BlobId member, long headerLength, BlobId header, List<BlobId> tensorHashes) {
            return add(member, headerLength, header, tensorHashes, null);
        }

        /**
         * As above, with the member's header JSON (its {@code headerLength} bytes), which
         * {@link #buildHeaders} writes deflated.
         */
        public Builder add(BlobId member, long headerLength, BlobId header, List<BlobId> tensorHashes, byte[] json) {
            if (byMember.containsKey(member.hex())) {
                return this;
            }
            ByteArrayOutputStream array = new ByteArrayOutputStream(tensorHashes.size() * HASH_BYTES);
            for (BlobId h : tensorHashes) {
                array.writeBytes(h.digest());
            }
            byMember.put(member.hex(), new Pending(member, headerLength, header, array.toByteArray(),
                    json == null ? null : TensorHeaders.deflate(json)));
            return this;
        }

        /**
         * The {@link TensorHeaders} blob of the members added, in this blob's order, or null if a
         * member was added without its header.
         */
        public byte[] buildHeaders() {
            List<BlobId> members = new ArrayList<>(byMember.size());
            List<byte[]> deflated = new ArrayList<>(byMember.size());
            for (Pending p : byMember.values()) {
                if (p.deflatedHeader == null) {
                    return null;
                }
                members.add(p.member);
                deflated.add(p.deflatedHeader);
            }
            return TensorHeaders.build(members, deflated);
        }

        /** Whether no member was added. */
        public boolean isEmpty() {
            return byMember.isEmpty();
        }

        /** The blob's bytes. */
        public byte[] build() {
            long size = entryAt(byMember.size());
            for (Pending p : byMember.values()) {
                size += p.array.length;
            }
            if (size > Integer.MAX_VALUE - 16) {
                throw new IllegalStateException("tensor hashes of " + size + " bytes: more than one array holds");
            }
            ByteBuffer out = ByteBuffer.allocate((int) size);
            out.put(MAGIC).putInt(byMember.size());
            long at = entryAt(byMember.size());
            for (Pending p : byMember.values()) {
                out.put(p.member.digest()).putLong(p.headerLength).put(p.header.digest()).putLong(at)
                        .putInt(p.array.length / HASH_BYTES).put(BlobId.sha256().digest(p.array));
                at += p.array.length;
            }
            for (Pending p : byMember.values()) {
                out.put(p.array);
            }
            return out.array();
        }
    }
}
