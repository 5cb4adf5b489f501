package io.warpdata.vfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.blobcache.cache.BlobMember;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.blobcache.cache.BlockVerificationException;
import io.warpdata.blobcache.cache.MemberVerificationException;
import io.warpdata.store.StoreException;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.TensorHashes;
import io.warpdata.manifest.formats.SafetensorsException;
import io.warpdata.manifest.formats.SafetensorsHeader;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The {@link TensorFolder}s of safetensors members, made from their headers, which are read
 * through the verified block cache like any member bytes (the first read of a file's header is
 * one ranged GET of the block that holds it, usually the file's first), and kept per member:
 * a folder is looked up many times while a loader opens its tensors.
 */
final class TensorFolders {
    private static final Logger LOG = LoggerFactory.getLogger(TensorFolders.class);
    /**
     * Heap a listed tensor takes, rounded up: its path, its NPY header (shared by tensors of one
     * dtype and shape), its content and its entry in the folder's listing. Audit 36 measured
     * 0.88 KB a tensor (two folders of 100,000 F32 [4] tensors: 205 MB live against 29 MB).
     */
    static final int BYTES_PER_TENSOR = 900;
    /**
     * Heap a header byte may cost: read, parsed and made a folder (a tensor of a short key is
     * about 66 bytes of JSON and {@link #BYTES_PER_TENSOR} of folder). A header longer than the
     * folders' budget over this is refused before it is read (audit 36: a file of 450,000 tensors,
     * 35 MB of header, took 4 minutes of collections to list, and warpd's heap was full after).
     */
    static final int HEAP_PER_HEADER_BYTE = 8;
    /** Share of the heap the folders held may take, together: 3/10 (115 MiB, about 128,000 tensors at 384m). */
    private static final int HEAP_SHARE_TENTHS = 3;

    private final BlobReader reader;
    private final long budgetBytes;
    /**
     * Folders kept, weighed by their tensors: bounded by count (256) they filled the heap when
     * files of many tensors were listed in turn (audit 36: warpd died of OutOfMemoryError at the
     * sixth of six files of 100,000 tensors).
     */
    private final Cache<Key, TensorFolder> folders;

    private record Key(BlobId shard, long offset) {
    }

    TensorFolders(BlobReader reader) {
        this(reader, Runtime.getRuntime().maxMemory() / 10 * HEAP_SHARE_TENTHS);
    }

    /** @param budgetBytes heap the folders held may take together, at {@link #BYTES_PER_TENSOR} a tensor */
    TensorFolders(BlobReader reader, long budgetBytes) {
        this.reader = reader;
        this.budgetBytes = budgetBytes;
        // Softly held too: what else needs the heap (a publish checking a file of 200,000 tensors'
        // header ran out of it beside a folder of 100,000, in TensorFoldersIT) gets it first.
        this.folders = Caffeine.newBuilder().maximumWeight(budgetBytes).softValues()
                .weigher((Key k, TensorFolder f) -> (int) Math.min(Integer.MAX_VALUE, weight(f.fileCount())))
                .build();
    }

    private static long weight(int tensors) {
        return 4096L + (long) tensors * BYTES_PER_TENSOR;
    }

    /** Refuses a header too long to read and parse within the budget, before it is read. */
    private void headerFits(long headerBytes, String name) {
        if (headerBytes * HEAP_PER_HEADER_BYTE > budgetBytes) {
            throw new TensorFolderTooLargeException(name, headerBytes, Runtime.getRuntime().maxMemory());
        }
    }

    /** Refuses a file whose folder would not fit the budget alone, before the folder is made. */
    private SafetensorsHeader fits(SafetensorsHeader header, String name) {
        int tensors = header.tensors().size();
        if (weight(tensors) > budgetBytes) {
            throw new TensorFolderTooLargeException(name, tensors, (int) Math.max(0, (budgetBytes - 4096) / BYTES_PER_TENSOR),
                    Runtime.getRuntime().maxMemory());
        }
        return header;
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
                    return throughBlocks(shard, offset, size, name);
                }
                // In a large shard, the header and the tensors' hashes as ranges of their own, each
                // checked against its hash: about their bytes, not the blocks around them (and the
                // blocks read ahead of them).
                if (entry.headerLength() > size - 8 || entry.headerLength() > SafetensorsHeader.MAX_HEADER_BYTES) {
                    throw new StoreException("The tensor hashes of " + name + " give it a header of " + entry.headerLength()
                            + " bytes, in a file of " + size, "Publish the dataset again.", null);
                }
                headerFits(entry.headerLength(), name);
                byte[] json = readLookup(BlobMember.lookup(shard, offset + 8, entry.headerLength(), entry.header()));
                SafetensorsHeader header = fits(SafetensorsHeader.parse(json, size, name), name);
                List<BlobId> tensorHashes = TensorHashes.hashes(
                        readLookup(BlobMember.lookup(hashes, entry.hashesAt(), entry.hashesLength(), entry.hashes())));
                if (tensorHashes.size() != header.tensors().size()) {
                    throw new StoreException("The tensor hashes of " + name + " name " + tensorHashes.size()
                            + " tensors; its header has " + header.tensors().size(), "Publish the dataset again.", null);
                }
                return TensorFolder.of(shard, offset, header, tensorHashes);
            } catch (BlockVerificationException | MemberVerificationException e) {
                // The tensor hashes (or the header read by its hash) came wrong from the store: the
                // shard's own blocks, with their own hashes, still vouch for its tensors (audit 36:
                // one bad byte in the hash blob made all 4,103 tensors of an intact shard EIO).
                LOG.warn("The tensor hashes of {} cannot be read ({}): its tensors are read through the blocks of"
                        + " their file instead", name, e.getMessage());
                return throughBlocks(shard, offset, size, name);
            } catch (SafetensorsException e) {
                throw new StoreException(e.getMessage() + " (it passed the check at publish: the store's copy differs)",
                        "Publish the dataset again; the file itself reads as it is.", e);
            }
        });
    }

    /** The folder read through the shard's blocks: its header, and each tensor as a slice of them. */
    private TensorFolder throughBlocks(BlobRef shard, long offset, long size, String name) {
        try {
            byte[] first8 = read(shard, offset, 8);
            long n = SafetensorsHeader.headerLength(first8, size, name);
            headerFits(n, name);
            SafetensorsHeader header = fits(SafetensorsHeader.parse(read(shard, offset + 8, (int) n), size, name), name);
            return TensorFolder.of(shard, offset, header);
        } catch (SafetensorsException e) {
            throw new StoreException(e.getMessage() + " (it passed the check at publish: the store's copy differs)",
                    "Publish the dataset again; the file itself reads as it is.", e);
        }
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
