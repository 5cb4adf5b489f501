/**
 * Mirrors: caches in front of the store that any engine can be (nginx, Squid, a CDN, an
 * S3-compatible bucket), read by warpd without being trusted (DESIGN.md section 12, issue 25).
 *
 * <p>A {@link io.warpdata.blobcache.mirror.Mirror} answers a ranged read of a store key, or
 * a whole small object, with <b>unverified</b> bytes, "not here", or a
 * {@link io.warpdata.blobcache.mirror.MirrorException}. Each configured mirror is opened as a
 * {@link io.warpdata.blobcache.mirror.MirrorTier}, a remote tier of the block cache's read plan
 * ({@link io.warpdata.blobcache.cache.RemoteTier}). The read plan's {@code Remotes} is the one
 * place that tries them in order, checks every byte against the publisher's hash, skips a failing
 * one for a backoff (one log line when it goes, one when it is back) and keeps per-mirror counters
 * ({@link io.warpdata.blobcache.cache.RemoteTierStats}); after a verified fetch from the store it
 * offers the bytes to {@link io.warpdata.blobcache.mirror.Mirror#fill} so that an
 * {@link io.warpdata.blobcache.mirror.S3Mirror} shares them with the other nodes.
 *
 * <p>Only keys named by the SHA-256 of all their bytes go through mirrors (blobs and block hash
 * lists). Version manifests, pointers and listings always come from the store (a manifest's
 * {@code metadata} is not covered by its version hash). A mirror is never sent a credential, an Authorization
 * header or a signed query string.
 */
package io.warpdata.blobcache.mirror;
