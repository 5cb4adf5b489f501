/**
 * Warp's read path: where every byte a reader gets comes from. A map; docs/cache.md has the
 * sources in the order tried and a cold read file by file, each class its own reasons.
 *
 * <ul>
 * <li><b>Entry:</b> {@link io.warpdata.blobcache.cache.BlockCache} (the
 *     {@link io.warpdata.blobcache.cache.BlobReader}; builds the path bottom up; warm, verify, gc,
 *     stats, order plans).</li>
 * <li><b>Plan:</b> {@code ReadPlan} decides, a pure function; {@code Source} is its answer.</li>
 * <li><b>Run and count:</b> {@code ReadExecutor} runs plans and counts reads and bytes by
 *     {@link io.warpdata.blobcache.cache.ReadSource} in {@link io.warpdata.blobcache.cache.ReadMetrics}.</li>
 * <li><b>Local tiers</b> ({@code Tier}, composed by {@code Tiers}): {@code MemoryBlocks}, then
 *     {@code DiskBlocks} ({@code DiskWrites}, {@code BlockFile}, {@code CacheDirectory},
 *     {@code DiskEntry}, {@code DiskScratch}, {@code DiskVerify}, {@code FreeSpaceFloor}).</li>
 * <li><b>Members by hash:</b> {@code MemberReads}, {@code MemberLocator}.</li>
 * <li><b>Fetching:</b> {@code FetchScheduler} (queues, workers, budgets, the walk over order
 *     plans), {@code InFlightBlocks} (single flight, what is missing), {@code RunFetcher},
 *     {@code RunBuffers}, {@code ConnectionRate}, {@code WholeBlobReads}, {@code WholeBlobFetches},
 *     {@code HashLists}, {@code HashListPrefetcher}, {@code Warmer}, {@code Suspects}.</li>
 * <li><b>Remote tiers, then the store:</b> {@code Remotes} over
 *     {@link io.warpdata.blobcache.cache.RemoteTier}s (mirrors, every byte verified), then
 *     {@code BlockFetcher} (the bare store, retries, verification, the store's health told of
 *     each attempt).</li>
 * <li><b>Planners (plan only):</b> {@code ReadAhead} (in a Parquet file only up to the end of
 *     the column chunk being read: {@code ParquetLayouts} learns it from the footer in the tiers,
 *     {@code ParquetFooter}, {@code ColumnChunks}); {@code OrderPrefetcher} with
 *     {@code FollowedPlan} and {@link io.warpdata.blobcache.cache.OrderPlan}.</li>
 * <li><b>Elsewhere:</b> {@link io.warpdata.blobcache.cache.DirectBlobReader} (verified, no
 *     cache); {@link io.warpdata.blobcache.cache.CacheMode}.</li>
 * </ul>
 */
package io.warpdata.blobcache.cache;
