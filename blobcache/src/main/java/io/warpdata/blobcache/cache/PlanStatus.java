package io.warpdata.blobcache.cache;

/**
 * One order plan as the prefetcher sees it now (for {@code stats} and tests).
 *
 * @param name             the plan's name (a new plan of the same name replaces it)
 * @param description      what it is for, e.g. {@code ws/name@3fa1c09e2b7d}
 * @param members          members in the plan
 * @param blobs            blobs (shards) it reads
 * @param plannedBytes     bytes of the 1 MiB grains it reads: what may be fetched for it
 * @param reached          the furthest position the reader has been seen at (-1: not yet)
 * @param grainsScheduled  grains, in order of need, that are fetched, in flight or were found cached
 *                         (by file: files, in order, that are fetched, in flight, found cached or skipped)
 * @param grains           grains needed in all (by file: the files)
 * @param fetchedBlocks    blocks fetched for the plan so far (by file: files)
 * @param heldBytes        memory the plan holds
 * @param state            {@code active}, {@code waiting for the reader}, {@code done} (everything
 *                         fetched or found cached), {@code replaced}, {@code stopped} or
 *                         {@code pushed out} (room was needed for newer plans)
 * @param byFile           whether the plan fetches its files, each on its own, rather than its
 *                         blocks (a plan over more than the cache keeps: docs/cache.md, "Order plans")
 * @param aheadBytes       how far past its reader it fetches
 */
public record PlanStatus(String name, String description, int members, int blobs, long plannedBytes, int reached,
                         int grainsScheduled, int grains, long fetchedBlocks, long heldBytes, String state,
                         boolean byFile, long aheadBytes) {
}
