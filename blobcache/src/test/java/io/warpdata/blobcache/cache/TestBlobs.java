package io.warpdata.blobcache.cache;

import io.warpdata.store.BlobStore;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Random;

/** Builds test blobs (content + block hash list) in a store. */
final class TestBlobs {
    private TestBlobs() {
    }

    /** Deterministic pseudo-random bytes. */
    static byte[] bytes(int len, long seed) {
        byte[] b = new byte[len];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Stores {@code data} and its block hash list; returns the reference a manifest would hold. */
    static BlobRef put(BlobStore store, byte[] data, int blockSize) {
        try {
            BlockHashList list = BlockHashList.compute(new ByteArrayInputStream(data), blockSize);
            byte[] listBytes = list.serialize();
            BlobId id = BlobId.of(data);
            BlobId listId = BlobId.of(listBytes);
            store.putIfAbsent(StoreLayout.blob(id), data);
            store.putIfAbsent(StoreLayout.blob(listId), listBytes);
            return new BlobRef(id, data.length, listId);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A block hash list of {@code blocks} blocks in its binary form with dummy hashes: for code that only looks at sizes. */
    static BlockHashList sizesOnly(int blocks, int blockSize) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(20 + 32 * blocks);
        b.put("WBHL".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).putInt(1).putInt(blockSize)
                .putLong((long) blocks * blockSize);
        return BlockHashList.parse(b.array(), "test");
    }

    /** A reference to a blob of {@code list}'s size whose id's first byte is {@code seed} (its bytes are nowhere). */
    static BlobRef ref(BlockHashList list, int seed) {
        byte[] id = new byte[32];
        id[0] = (byte) seed;
        return new BlobRef(BlobId.fromDigest(id), list.blobSize(), list.id());
    }
}
