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
 * @param grains           grains needed in all
 * @param fetchedBlocks    blocks fetched for the plan so far
 * @param heldBytes        memory the plan holds
 * @param state            {@code active}, {@code waiting for the reader}, {@code done} (everything
 *                         fetched or found cached), {@code replaced}, {@code stopped} or
 *                         {@code pushed out} (room was needed for newer plans)
 */
public record PlanStatus(String name, String description, int members, int blobs, long plannedBytes, int reached,
                         int grainsScheduled, int grains, long fetchedBlocks, long heldBytes, String state) {
}
