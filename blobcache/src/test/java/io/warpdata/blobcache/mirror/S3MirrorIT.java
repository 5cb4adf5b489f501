package io.warpdata.blobcache.mirror;

import io.warpdata.manifest.BlobId;
import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreLayout;
import io.warpdata.store.s3.S3BlobStore;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An S3 tier on a real S3 server (S3Proxy): node 1 reads a blob from the store, verifies it (here:
 * it is the published bytes) and fills the tier; node 2, with its own client of the tier, reads the
 * same ranges from the tier and never asks the store.
 */
class S3MirrorIT {
    static final int BLOCK = 1 << 20;

    @Test
    void aTierFilledByNodeOneServesNodeTwoWithoutTheStore() throws Exception {
        try (S3ProxyFixture s3 = S3ProxyFixture.start(); BlobStore store = s3.openStore("store")) {
            byte[] blob = new byte[2 * BLOCK + 777];
            new Random(5).nextBytes(blob);
            String key = StoreLayout.blob(BlobId.of(blob));
            store.put(key, blob);
            byte[] hashList = "a block hash list".getBytes();
            String listKey = StoreLayout.blob(BlobId.of(hashList));
            store.put(listKey, hashList);

            // The tier is its own bucket prefix with its own credentials, as --mirror gives it.
            MirrorSpec spec = MirrorSpec.parse("s3://" + s3.bucket() + "/tier?endpoint=" + s3.endpoint(),
                    Map.of(MirrorSpec.ACCESS_KEY_ENV, S3ProxyFixture.ACCESS_KEY, MirrorSpec.SECRET_KEY_ENV, S3ProxyFixture.SECRET_KEY));
            MirrorRange firstTwo = new MirrorRange(key, 0, 2 * BLOCK, BLOCK);
            MirrorRange last = new MirrorRange(key, 2 * BLOCK, 777, BLOCK);

            // Node 1: misses in the tier, reads the store, fills the tier with verified bytes.
            try (Mirror node1 = spec.open(Duration.ofSeconds(5))) {
                byte[] dst = new byte[2 * BLOCK];
                assertFalse(node1.read(firstTwo, dst, 0), "a miss");
                store.read(key, 0, dst, 0, dst.length);
                node1.fill(firstTwo, dst, 0);
                byte[] tail = new byte[777];
                store.read(key, 2 * BLOCK, tail, 0, tail.length);
                node1.fill(last, tail, 0);
                node1.fillObject(listKey, store.get(listKey));
                assertEquals(0, node1.fillCounts().failed());
            }
            // Closing node 1 wrote what was queued.

            long storeReadsBefore = s3.counters().gets.sum();
            try (Mirror node2 = spec.open(Duration.ofSeconds(5))) {
                byte[] got = new byte[blob.length];
                assertTrue(node2.read(firstTwo, got, 0));
                assertTrue(node2.read(last, got, 2 * BLOCK));
                assertArrayEquals(blob, got);
                assertArrayEquals(hashList, node2.get(listKey, 64 << 10).orElseThrow());
            }
            // Node 2's GETs were all of the tier's objects: 3 blocks and the hash list.
            assertEquals(4, s3.counters().gets.sum() - storeReadsBefore);
            try (S3BlobStore tierView = s3.openStore("tier", S3BlobStore.Config.defaults())) {
                for (int block = 0; block < 3; block++) {
                    assertTrue(tierView.length(S3Mirror.blockKey(key, BLOCK, block)).isPresent(), "block " + block + " in the tier");
                }
                assertTrue(tierView.length(listKey).isPresent());
                assertTrue(tierView.length(key).isEmpty(), "blocks are their own objects; the blob's key is not written");
                assertArrayEquals(Arrays.copyOfRange(blob, BLOCK, 2 * BLOCK), tierView.get(S3Mirror.blockKey(key, BLOCK, 1)));
            }
        }
    }

    @Test
    void mirrorSpecsRefuseCredentialsInUrls() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> MirrorSpec.parse("s3://key:secret@bucket/tier", Map.of()));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> MirrorSpec.parse("s3://bucket/tier?secret=abc", Map.of()));
        assertEquals(new MirrorSpec.S3("bucket", "a/b", Optional.of(URI.create("http://minio:9000")), Optional.empty()),
                MirrorSpec.parse("s3://bucket/a/b/?endpoint=http://minio:9000", Map.of()));
    }
}
