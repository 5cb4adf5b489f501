package io.warpdata.vfs;

/**
 * What the mount's {@code F.tensors/} folders cost warpd (stats.json's counters, Prometheus).
 *
 * @param made folders made from their file's header since warpd started (one per safetensors
 *             file whose folder was listed or read, and again each time one let go is needed)
 * @param letGoForRoom folders let go because the folders kept did not fit their budget together;
 *             a count that grows with {@code made} says the folders a reader goes between do not
 *             fit, and each of their lookups may read a header again (WARP_HEAP)
 * @param collected folders the collector took (they are held softly) when the heap ran short: a
 *             count that grows with {@code made} says the heap is short for them and the rest of
 *             warpd (audit 43: made grew by 29 while letGoForRoom stayed)
 * @param kept folders kept now (about: the cache's estimate)
 * @param keptBytes heap the folders kept weigh now
 * @param budgetBytes the most they may weigh together (3/10 of the heap)
 */
public record TensorFolderStats(long made, long letGoForRoom, long collected, long kept, long keptBytes, long budgetBytes) {
}
