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
 * @param blocksMissing     blocks whose files were gone (deleted by something else), now forgotten:
 *                          no damage, and not counted as such
 */
public record VerifyResult(long blocksChecked, long bytesChecked, long blocksRemoved, long bytesRemoved, long blocksWithoutList,
        boolean cancelled, long blocksMissing) {
    public VerifyResult(long blocksChecked, long bytesChecked, long blocksRemoved, long bytesRemoved, long blocksWithoutList,
                        boolean cancelled) {
        this(blocksChecked, bytesChecked, blocksRemoved, bytesRemoved, blocksWithoutList, cancelled, 0);
    }
}
