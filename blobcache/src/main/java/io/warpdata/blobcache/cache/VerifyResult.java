package io.warpdata.blobcache.cache;

/**
 * Outcome of {@link BlockCache#verify()}.
 *
 * @param blocksChecked     cached blocks re-hashed
 * @param bytesChecked      their data bytes
 * @param blocksRemoved     blocks whose bytes did not match their SHA-256 or CRC32C, now deleted
 * @param bytesRemoved      their size on disk
 * @param blocksWithoutList blocks whose hash list is not cached on disk: checked by CRC32C only
 * @param cancelled         whether the caller stopped it before the end
 */
public record VerifyResult(long blocksChecked, long bytesChecked, long blocksRemoved, long bytesRemoved, long blocksWithoutList,
        boolean cancelled) {
}
