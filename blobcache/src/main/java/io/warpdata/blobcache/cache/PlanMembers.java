package io.warpdata.blobcache.cache;

/**
 * Turns the member references of an order plan ({@link OrderPlan.Builder#member}) into the
 * members they name, when the plan fetches files rather than blocks ({@link OrderPrefetcher}: a
 * plan over more than the cache keeps). A plan holds 8 bytes a file this way, not the member's
 * hash: the mount's computed inode of an archive member names it for the life of the tree, and
 * its hash is read from the artifact's member index only when it is about to be fetched.
 */
@FunctionalInterface
public interface PlanMembers {
    /**
     * The member {@code ref} names, or null if it names none that can be fetched on its own.
     *
     * @throws RuntimeException if it cannot be told now (its member index could not be read):
     *         the plan skips the file, and its reader fetches it as it would without a plan
     */
    BlobMember member(long ref);
}
