/**
 * Warp's read path: where every byte a reader gets comes from. A map of the package; docs/cache.md
 * tells the user's side, each class its own reasons and constants.
 *
 * <h2>The read</h2>
 * <ul>
 * <li>{@link io.warpdata.blobcache.cache.BlockCache}: the entry ({@link io.warpdata.blobcache.cache.BlobReader}),
 *     builds the path bottom up, and the operations (warm, verify, gc, stats, order plans).</li>
 * <li>{@code ReadPlan}: the one place that decides where a read's bytes come from, a pure function
 *     of the read and of what the tiers hold; {@code Source}: its answers, in the order they are
 *     tried (member cached, located in another shard, own blocks, await the member's fetch,
 *     member GET, blocks, whole index).</li>
 * <li>{@code ReadExecutor}: runs plans, tells the planners of each read and hands their ranges to
 *     the scheduler; the one place that counts reads by source ({@link io.warpdata.blobcache.cache.ReadMetrics}).</li>
 * </ul>
 *
 * <h2>Tiers (tried in this order)</h2>
 * <ul>
 * <li>{@code Tier} (get, put, contains), composed by {@code Tiers}: {@code MemoryBlocks} (memory;
 *     alone in remote mode, else the fallback for blocks the disk could not write), then
 *     {@code DiskBlocks} (disk: {@code BlockFile}, {@code CacheDirectory}, {@code DiskEntry},
 *     {@code DiskScratch}, {@code DiskVerify}, {@code FreeSpaceFloor}).</li>
 * <li>{@link io.warpdata.blobcache.cache.RemoteTier} via {@code Remotes}: untrusted remote tiers
 *     (mirrors), every byte verified in one place, a failure falling through to the next tier and
 *     the store. None are configured yet.</li>
 * <li>The store ({@link io.warpdata.store.BlobStore}), through {@code BlockFetcher} (ranged GETs,
 *     retries, block verification).</li>
 * </ul>
 *
 * <h2>Fetching</h2>
 * {@code FetchScheduler} (single flight per block, demand before read-ahead, runs, budgets, workers)
 * -> {@code RunFetcher} (one run: buffer from {@code RunBuffers}, one GET, verify and hand over each
 * block as it streams in, then cache) -> {@code BlockFetcher}. Beside it: {@code MemberReads}
 * (members by their own hash: cached, located via {@code MemberLocator}, fetched on their own),
 * {@code WholeBlobReads} (an index in one GET at first touch), {@code WholeBlobFetches} (whole
 * blobs in the background: hybrid mode, dense random blobs), {@code HashLists} and
 * {@code HashListPrefetcher} (block hash lists), {@code Warmer} ({@code warpctl warm}),
 * {@code ConnectionRate} (run size), {@code Suspects} (blobs whose bytes failed verification).
 *
 * <h2>Prefetch (plans only)</h2>
 * {@code ReadAhead} (sequential streams per blob, dense random blobs; in a Parquet file only up to
 * the end of the column chunk being read, its layout learned from the footer in the tiers by
 * {@code ParquetLayouts}, {@code ParquetFooter} and {@code ColumnChunks}) and {@code OrderPrefetcher}
 * with {@code FollowedPlan} and {@link io.warpdata.blobcache.cache.OrderPlan} (an order a reader
 * announced) decide which blocks to fetch ahead; the scheduler fetches them.
 *
 * <h2>Elsewhere</h2>
 * {@link io.warpdata.blobcache.cache.DirectBlobReader}: a verified reader without a cache.
 * {@link io.warpdata.blobcache.cache.CacheMode}: auto, remote, hybrid, local.
 */
package io.warpdata.blobcache.cache;
