package io.warpdata.blobcache.cache;

import io.warpdata.manifest.BlockHashList;

/**
 * Where the bytes of one read come from: what {@link ReadPlan} decides and {@link ReadExecutor}
 * runs and counts. Listed in the order they are tried (docs/cache.md has the same list):
 *
 * <ol>
 * <li>{@link MemberCached}: the member cached under its own SHA-256 (a local tier);</li>
 * <li>{@link Located}: another blob's cached blocks that hold the same bytes (dedup);</li>
 * <li>{@link OwnBlocks}: the member's own blocks, all cached;</li>
 * <li>{@link AwaitMember}: a fetch of this member already under way;</li>
 * <li>{@link MemberGet}: one ranged GET of exactly the member's bytes;</li>
 * <li>{@link Blocks}: the blob's blocks, each from the first local tier holding it (memory, then
 *     disk: {@link Tiers}), else from its fetch (one already in flight, or a new block or run
 *     fetch through the remote tiers, then the store: {@link Remotes});</li>
 * <li>{@link WholeBlob}: a member index read whole in one GET, at first touch.</li>
 * </ol>
 * A source that turns out not to hold the bytes after all (evicted, damaged) is skipped and the
 * plan is asked again from the next one ({@link ReadPlan#member}'s {@code after}).
 */
sealed interface Source {
    /** Position in the order of trial (see the list above). */
    int rank();

    /** The member cached under its hash. */
    record MemberCached() implements Source {
        static final MemberCached INSTANCE = new MemberCached();

        @Override
        public int rank() {
            return 1;
        }
    }

    /** Another blob's cached blocks that hold the member's bytes. */
    record Located(MemberLocator.Location location) implements Source {
        @Override
        public int rank() {
            return 2;
        }
    }

    /** The member's own blocks, all cached. */
    record OwnBlocks(BlockHashList list) implements Source {
        @Override
        public int rank() {
            return 3;
        }
    }

    /** A fetch of this very member is under way: wait for it. */
    record AwaitMember(BlockHashList list) implements Source {
        @Override
        public int rank() {
            return 4;
        }
    }

    /** Fetch the member on its own: one ranged GET of its bytes, checked against its hash. */
    record MemberGet(BlockHashList list) implements Source {
        @Override
        public int rank() {
            return 5;
        }
    }

    /** The blob's blocks: the local tiers, else a block or run fetch (or the one in flight). */
    record Blocks(BlockHashList list) implements Source {
        @Override
        public int rank() {
            return 6;
        }
    }

    /** A member index read whole in one GET, verified against its id. */
    record WholeBlob() implements Source {
        static final WholeBlob INSTANCE = new WholeBlob();

        @Override
        public int rank() {
            return 7;
        }
    }
}
