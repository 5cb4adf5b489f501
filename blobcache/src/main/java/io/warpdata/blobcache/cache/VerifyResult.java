package io.warpdata.blobcache.cache;

/**
 * Outcome of {@link BlockCache#verify()}.
 *
 * @param blocksChecked     cached blocks re-hashed
 * @param blocksRemoved     blocks whose bytes did not match their SHA-256 or CRC32C, now deleted
 * @param bytesRemoved      their size on disk
 * @param blocksWithoutList blocks whose hash list is not cached on disk: checked by CRC32C only
 */
public record VerifyResult(long blocksChecked, long blocksRemoved, long bytesRemoved, long blocksWithoutList) {
}
