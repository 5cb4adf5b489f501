package io.warpdata.vfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.blobcache.cache.BlobMember;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.store.StoreException;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.TensorHashes;
import io.warpdata.manifest.formats.SafetensorsException;
import io.warpdata.manifest.formats.SafetensorsHeader;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The {@link TensorFolder}s of safetensors members, made from their headers, which are read
 * through the verified block cache like any member bytes (the first read of a file's header is
 * one ranged GET of the block that holds it, usually the file's first), and kept per member:
 * a folder is looked up many times while a loader opens its tensors.
 */
final class TensorFolders {
    /** Folders kept; each holds one file's tensor list (tens of bytes a tensor). */
    private static final int FOLDERS_HELD = 256;

    private final BlobReader reader;
    private final Cache<Key, TensorFolder> folders = Caffeine.newBuilder().maximumSize(FOLDERS_HELD).build();

    private record Key(BlobId shard, long offset) {
    }

    TensorFolders(BlobReader reader) {
        this.reader = reader;
    }

    /**
     * The tensor folder of member {@code i} of {@code d} (a {@code .safetensors} file).
     *
     * @throws StoreException if its header cannot be read, or breaks the format (the store
     *         holds something other than what was checked at publish)
     */
    TensorFolder folder(Node.MemberDir d, int i) {
        BlobRef shard = d.artifact().shards().get(d.index().shard(i));
        long offset = d.index().offset(i);
        long size = d.index().length(i);
        return folders.get(new Key(shard.id(), offset), k -> {
            String name = d.version().describe() + "/" + d.artifactName() + "/" + d.index().path(i);
            try {
                BlobRef hashes = d.artifact().tensorHashes();
                // A shard under 64 MiB is read through its blocks whatever its tensors' hashes say
                // (BlobMember.LOOKUP_MIN_BLOB_BYTES): its header too, whose blocks hold the first
                // tensors, and the hashes are not fetched for it.
                TensorHashes.Entry entry = hashes == null || shard.size() < BlobMember.LOOKUP_MIN_BLOB_BYTES ? null
                        : entry(hashes, d.index().hash(i), name);
                if (entry == null) {
                    byte[] first8 = read(shard, offset, 8);
                    long n = SafetensorsHeader.headerLength(first8, size, name);
                    SafetensorsHeader header = SafetensorsHeader.parse(read(shard, offset + 8, (int) n), size, name);
                    return TensorFolder.of(shard, offset, header);
                }
                // In a large shard, the header and the tensors' hashes as ranges of their own, each
                // checked against its hash: about their bytes, not the blocks around them (and the
                // blocks read ahead of them).
                if (entry.headerLength() > size - 8 || entry.headerLength() > SafetensorsHeader.MAX_HEADER_BYTES) {
                    throw new StoreException("The tensor hashes of " + name + " give it a header of " + entry.headerLength()
                            + " bytes, in a file of " + size, "Publish the dataset again.", null);
                }
                byte[] json = readLookup(BlobMember.lookup(shard, offset + 8, entry.headerLength(), entry.header()));
                SafetensorsHeader header = SafetensorsHeader.parse(json, size, name);
                List<BlobId> tensorHashes = TensorHashes.hashes(
                        readLookup(BlobMember.lookup(hashes, entry.hashesAt(), entry.hashesLength(), entry.hashes())));
                if (tensorHashes.size() != header.tensors().size()) {
                    throw new StoreException("The tensor hashes of " + name + " name " + tensorHashes.size()
                            + " tensors; its header has " + header.tensors().size(), "Publish the dataset again.", null);
                }
                return TensorFolder.of(shard, offset, header, tensorHashes);
            } catch (SafetensorsException e) {
                throw new StoreException(e.getMessage() + " (it passed the check at publish: the store's copy differs)",
                        "Publish the dataset again; the file itself reads as it is.", e);
            }
        });
    }

    /**
     * The entry of the member whose SHA-256 is {@code member} in an artifact's tensor hashes
     * (entries sorted by it: a binary search, each step one entry read through the blob's
     * blocks), or null if it has none (a file publish could not parse is read as before).
     */
    private TensorHashes.Entry entry(BlobRef hashes, BlobId member, String name) {
        String source = "tensor hashes " + hashes.id() + " (of " + name + ")";
        int count = TensorHashes.count(read(hashes, 0, TensorHashes.HEAD_BYTES), hashes.size(), source);
        byte[] want = member.digest();
        int lo = 0;
        int hi = count - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            byte[] e = read(hashes, TensorHashes.entryAt(mid), TensorHashes.ENTRY_BYTES);
            int c = java.util.Arrays.compareUnsigned(e, 0, 32, want, 0, 32);
            if (c == 0) {
                return TensorHashes.entry(e, count, hashes.size(), source);
            }
            if (c < 0) {
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return null;
    }

    private byte[] readLookup(BlobMember range) {
        byte[] out = new byte[Math.toIntExact(range.length())];
        int got = reader.readMember(range, 0, ByteBuffer.wrap(out));
        if (got != out.length) {
            throw WarpTree.shortRead("bytes [" + range.offset() + ", +" + range.length() + ") of blob " + range.blob().id(),
                    got, out.length);
        }
        return out;
    }

    private byte[] read(BlobRef blob, long offset, int len) {
        byte[] out = new byte[len];
        int got = reader.read(blob, offset, ByteBuffer.wrap(out));
        if (got != len) {
            throw WarpTree.shortRead("blob " + blob.id() + " at " + offset, got, len);
        }
        return out;
    }
}
