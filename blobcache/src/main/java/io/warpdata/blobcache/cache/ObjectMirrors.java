package io.warpdata.blobcache.cache;

import java.util.Optional;
import java.util.function.Predicate;

/**
 * Whole objects named by the hash of all their bytes (block hash lists) read through the remote
 * tiers ({@link RemoteTier}): the same tiers, order, verification, backoff and counters as the
 * block cache's reads. Never a version manifest (its {@code metadata} is not hashed) nor a
 * pointer or a listing.
 */
interface ObjectMirrors {
    /** No mirror: every object comes from the store. */
    ObjectMirrors NONE = new ObjectMirrors() {
        @Override
        public Optional<byte[]> get(String key, int maxBytes, Predicate<byte[]> check) {
            return Optional.empty();
        }

        @Override
        public void offer(String key, byte[] verified) {
        }
    };

    /**
     * The object from the first tier whose bytes pass {@code check}; never throws for a tier's sake.
     *
     * @param key a content-addressed store key (a block hash list)
     * @param maxBytes a larger object is a failure of that tier
     * @param check whether the bytes are the object named by {@code key} (hashes them, never changes them)
     * @return the verified bytes, or empty: read the store
     */
    Optional<byte[]> get(String key, int maxBytes, Predicate<byte[]> check);

    /** Offers an object verified from the store to the tiers warpd fills (S3 tiers); never blocks or throws. */
    void offer(String key, byte[] verified);
}
