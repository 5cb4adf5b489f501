package io.warpdata.blobcache.cache;

/**
 * Where the bytes of a read came from, as counted ({@link ReadMetrics#bySource()}): the kinds of
 * {@link Source} in the order they are tried, then {@link #MIRROR}. Every byte a read returns is
 * counted under exactly one of them, so that they add up to the hit and miss bytes.
 */
public enum ReadSource {
    /** The member cached under its own SHA-256 ({@link Source.MemberCached}). */
    MEMBER_CACHED("member_cached"),
    /** Another blob's cached blocks holding the member's bytes ({@link Source.Located}). */
    LOCATED("located"),
    /** The member's own blocks, all cached when planned ({@link Source.OwnBlocks}). */
    OWN_BLOCKS("own_blocks"),
    /** A fetch of the member already under way, waited for ({@link Source.AwaitMember}). */
    AWAIT_MEMBER("await_member"),
    /** One ranged GET of exactly the member's bytes ({@link Source.MemberGet}). */
    MEMBER_GET("member_get"),
    /** Blocks, each from a local tier or its fetch; every read that is not a member's ({@link Source.Blocks}). */
    BLOCKS("blocks"),
    /** A member index read whole in one GET ({@link Source.WholeBlob}). */
    WHOLE_INDEX("whole_index"),
    /**
     * Fetched bytes (a member GET, a block or run, a whole index) that a mirror served instead of
     * the store. A read is counted here when a mirror served any of its fetched bytes.
     */
    MIRROR("mirror");

    private final String label;

    ReadSource(String label) {
        this.label = label;
    }

    /** The name {@code cache stats} and Prometheus' {@code source} label show. */
    public String label() {
        return label;
    }
}
