package io.warpdata.manifest;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * The headers of an artifact's safetensors members, each deflated, by which the mount finds a
 * tensor ({@code F.tensors/KEY.npy}) without reading its file's header from the shard (issue 26):
 * a header's JSON takes about 80 bytes a tensor and deflates to about 9, and a reader of 1,000
 * random 1 KiB tensors out of 20,000 otherwise fetched 1.6x what it read in headers alone. An
 * artifact names it as {@code tensor_headers} (manifest format 5), always beside its
 * {@link TensorHashes}.
 *
 * <p>Layout, big-endian: the magic {@code WTZ1}; the entry count (int32), the same as the tensor
 * hashes'; the entries, each {@link #ENTRY_BYTES} bytes, in the tensor hashes' order (entry
 * {@code i} is the same member's as their entry {@code i}); then the deflated headers. An entry:
 * the member's SHA-256 (32 bytes), where its deflated header starts in this blob (int64), its
 * length (int32) and its SHA-256 (32). A header inflates (zlib, {@link Deflater}) to exactly the
 * length the member's tensor hash entry gives, and its bytes hash to that entry's header hash:
 * the reader checks both, so these bytes vouch for nothing on their own.
 */
public final class TensorHeaders {
    /** The first 4 bytes. */
    public static final byte[] MAGIC = "WTZ1".getBytes(StandardCharsets.US_ASCII);
    /** Magic and entry count. */
    public static final int HEAD_BYTES = 8;
    /** One entry. */
    public static final int ENTRY_BYTES = 32 + 8 + 4 + 32;

    private TensorHeaders() {
    }

    /**
     * One member's deflated header.
     *
     * @param member the member's SHA-256
     * @param at     where its deflated header starts in the blob
     * @param length the deflated header's length
     * @param hash   the deflated header's SHA-256
     */
    public record Entry(BlobId member, long at, int length, BlobId hash) {
        public Entry {
            Objects.requireNonNull(member, "member");
            Objects.requireNonNull(hash, "hash");
        }
    }

    /**
     * The entry count from a blob's first {@link #HEAD_BYTES} bytes.
     *
     * @throws ManifestCorruptedException if they are not a tensor header blob's, or the entries
     *         would not fit a blob of {@code blobSize} bytes
     */
    public static int count(byte[] head, long blobSize, String source) {
        return TensorHashes.count(head, blobSize, source, MAGIC, ENTRY_BYTES, "tensor header blob");
    }

    /** Where entry {@code i} starts in the blob. */
    public static long entryAt(int i) {
        return HEAD_BYTES + (long) i * ENTRY_BYTES;
    }

    /**
     * Entry {@code i} from its {@link #ENTRY_BYTES} bytes, checked against the blob's size.
     *
     * @throws ManifestCorruptedException if its header does not lie in the blob after the entries
     */
    public static Entry entry(byte[] b, int count, long blobSize, String source) {
        ByteBuffer in = ByteBuffer.wrap(b);
        BlobId member = TensorHashes.id(in);
        long at = in.getLong();
        int length = in.getInt();
        BlobId hash = TensorHashes.id(in);
        if (length < 1 || at < entryAt(count) || at > blobSize || length > blobSize - at) {
            throw new ManifestCorruptedException(source, "entry of member " + member,
                    "a deflated header of " + length + " bytes at " + at + ": does not fit a blob of " + blobSize + " bytes");
        }
        return new Entry(member, at, length, hash);
    }

    /**
     * The header {@code deflated} inflates to, which must be exactly {@code length} bytes whose
     * SHA-256 is {@code hash} (the member's tensor hash entry): never more is inflated.
     *
     * @throws ManifestCorruptedException if it does not inflate to exactly those bytes
     */
    public static byte[] inflate(byte[] deflated, long length, BlobId hash, String source) {
        if (length < 0 || length > Integer.MAX_VALUE - 16) {
            throw new ManifestCorruptedException(source, "header", "a header of " + length + " bytes");
        }
        byte[] out = new byte[(int) length];
        Inflater inflater = new Inflater();
        try {
            inflater.setInput(deflated);
            int n = 0;
            while (n < out.length && !inflater.finished()) {
                int got = inflater.inflate(out, n, out.length - n);
                if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
                    break;
                }
                n += got;
            }
            // Exactly: the stream ends here, with nothing after it (one more byte would be a longer header).
            byte[] more = new byte[1];
            boolean longer = !inflater.finished() && inflater.inflate(more) > 0;
            if (n != out.length || longer || !inflater.finished() || inflater.getRemaining() != 0) {
                throw new ManifestCorruptedException(source, "header", "does not inflate to the " + length
                        + " bytes its tensor hashes give (" + n + (longer ? " and more" : "") + ")");
            }
        } catch (DataFormatException e) {
            throw new ManifestCorruptedException(source, "header", "does not inflate: " + e.getMessage());
        } finally {
            inflater.end();
        }
        if (!BlobId.of(out).equals(hash)) {
            throw new ManifestCorruptedException(source, "header", "inflates to bytes whose SHA-256 is not the one its"
                    + " tensor hashes give");
        }
        return out;
    }

    /** {@code json} deflated, as the blob holds it. */
    public static byte[] deflate(byte[] json) {
        Deflater d = new Deflater(Deflater.BEST_COMPRESSION);
        try {
            d.setInput(json);
            d.finish();
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(json.length / 6 + 64);
            byte[] buf = new byte[64 << 10];
            while (!d.finished()) {
                out.write(buf, 0, d.deflate(buf));
            }
            return out.toByteArray();
        } finally {
            d.end();
        }
    }

    /**
     * The blob of {@code deflated} headers, one per member in {@code members}' order (the tensor
     * hashes' order: sorted by member hash).
     */
    public static byte[] build(List<BlobId> members, List<byte[]> deflated) {
        if (members.size() != deflated.size()) {
            throw new IllegalArgumentException(members.size() + " members, " + deflated.size() + " headers");
        }
        long size = entryAt(members.size());
        for (byte[] d : deflated) {
            size += d.length;
        }
        if (size > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException("tensor headers of " + size + " bytes: more than one array holds");
        }
        ByteBuffer out = ByteBuffer.allocate((int) size);
        out.put(MAGIC).putInt(members.size());
        long at = entryAt(members.size());
        for (int i = 0; i < members.size(); i++) {
            byte[] d = deflated.get(i);
            out.put(members.get(i).digest()).putLong(at).putInt(d.length).put(BlobId.of(d).digest());
            at += d.length;
        }
        for (byte[] d : deflated) {
            out.put(d);
        }
        return out.array();
    }

    /** The members of a built blob's entries, in order (tests). */
    static List<BlobId> members(byte[] blob) {
        int n = count(blob, blob.length, "blob");
        List<BlobId> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(entry(Arrays.copyOfRange(blob, (int) entryAt(i), (int) entryAt(i) + ENTRY_BYTES), n, blob.length,
                    "blob").member());
        }
        return out;
    }
}
