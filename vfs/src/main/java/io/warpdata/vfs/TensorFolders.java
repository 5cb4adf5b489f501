package io.warpdata.vfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.store.StoreException;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.formats.SafetensorsException;
import io.warpdata.manifest.formats.SafetensorsHeader;

import java.nio.ByteBuffer;

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
                byte[] first8 = read(shard, offset, 8);
                long n = SafetensorsHeader.headerLength(first8, size, name);
                SafetensorsHeader header = SafetensorsHeader.parse(read(shard, offset + 8, (int) n), size, name);
                return TensorFolder.of(shard, offset, header);
            } catch (SafetensorsException e) {
                throw new StoreException(e.getMessage() + " (it passed the check at publish: the store's copy differs)",
                        "Publish the dataset again; the file itself reads as it is.", e);
            }
        });
    }

    private byte[] read(BlobRef blob, long offset, int len) {
        byte[] out = new byte[len];
        int got = reader.read(blob, offset, ByteBuffer.wrap(out));
        if (got != len) {
            throw new StoreException("Short read of blob " + blob.id() + " at " + offset + ": " + got + " of " + len,
                    "This is a bug in the blob reader; report it.", null);
        }
        return out;
    }
}
