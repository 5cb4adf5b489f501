/**
 * Mirrors: caches in front of the store that any engine can be (nginx, Squid, a CDN, an
 * S3-compatible bucket), read by warpd without being trusted (DESIGN.md section 12, issue 25).
 *
 * <p>A {@link io.warpdata.blobcache.mirror.Mirror} answers a ranged read of a store key, or
 * a whole small object, with <b>unverified</b> bytes, "not here", or a
 * {@link io.warpdata.blobcache.mirror.MirrorException}. {@link io.warpdata.blobcache.mirror.Mirrors}
 * tries the configured mirrors in order, skips a failing one for a backoff (one log line when it
 * goes, one when it is back), and keeps per-mirror counters
 * ({@link io.warpdata.blobcache.mirror.MirrorStats}). The caller, the read plan, checks every
 * byte against the publisher's hash and reports a wrong one with
 * {@link io.warpdata.blobcache.mirror.Mirrors#verificationFailed}; after a verified fetch from the
 * store it hands the bytes to {@link io.warpdata.blobcache.mirror.Mirrors#fill} so that an
 * {@link io.warpdata.blobcache.mirror.S3Mirror} shares them with the other nodes.
 *
 * <p>Only content-addressed keys go through mirrors (blobs and version manifests, named by their
 * SHA-256); pointers and listings always come from the store. A mirror is never sent a credential,
 * an Authorization header or a signed query string.
 *
 * <p>This package does not depend on the cache package: the read plan plugs it in as a tier.
 */
package io.warpdata.blobcache.mirror;
