package io.warpdata.daemon.control.protocol;

/**
 * Reads and bytes the cache served from one source, as {@code cache stats} shows them: the
 * sources of the read plan in the order they are tried ({@code member_cached}, {@code located},
 * {@code own_blocks}, {@code await_member}, {@code member_get}, {@code blocks},
 * {@code whole_index}), then {@code mirror} (fetched bytes a mirror served instead of the store).
 * Each read counts once and each byte once, so the bytes of all sources add up to the cache's hit
 * and miss bytes (docs/cache.md).
 *
 * @param source the source's name, as Prometheus' {@code source} label shows it
 * @param reads  reads served from it since warpd started
 * @param bytes  bytes served from it since warpd started
 */
public record ReadSourceCount(String source, long reads, long bytes) {
}
