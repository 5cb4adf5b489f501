package io.warpdata.blobcache.mirror;

import io.warpdata.blobcache.cache.RemoteTier;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link Mirror} as a remote tier of the read plan ({@link RemoteTier}): the cache's
 * {@code Remotes} verifies its bytes, keeps its counters and decides its backoff; this only
 * translates calls. A mirror client's own bug is a failure of that mirror, never of a read.
 */
public final class MirrorTier implements RemoteTier {
    private final Mirror mirror;
    private final Duration timeout;

    /** @param timeout the mirror's silence timeout ({@code --mirror-timeout}) */
    public MirrorTier(Mirror mirror, Duration timeout) {
        this.mirror = Objects.requireNonNull(mirror, "mirror");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    /** The mirror this tier reads (tests, and waiting for an S3 tier's fill queue). */
    public Mirror mirror() {
        return mirror;
    }

    @Override
    public String describe() {
        return mirror.name();
    }

    @Override
    public Duration timeout() {
        return timeout;
    }

    @Override
    public boolean read(String key, long offset, byte[] dst, int dstOff, int len, int blockSize) {
        try {
            return mirror.read(new MirrorRange(key, offset, len, blockSize), dst, dstOff);
        } catch (MirrorException e) {
            throw new Failure(e.getMessage(), e.kind() == MirrorException.Kind.TIMEOUT, e);
        }
    }

    @Override
    public Optional<byte[]> get(String key, int maxBytes) {
        try {
            return mirror.get(key, maxBytes);
        } catch (MirrorException e) {
            throw new Failure(e.getMessage(), e.kind() == MirrorException.Kind.TIMEOUT, e);
        }
    }

    @Override
    public void fillObject(String key, byte[] verified) {
        mirror.fillObject(key, verified);
    }

    @Override
    public void rejected(String key, long offset, int len, int blockSize) {
        mirror.rejected(key, offset, len, blockSize);
    }

    @Override
    public boolean fillable() {
        return mirror.fillable();
    }

    @Override
    public void fill(String key, long offset, byte[] verified, int off, int len, int blockSize) {
        mirror.fill(new MirrorRange(key, offset, len, blockSize), verified, off);
    }

    @Override
    public long[] fillCounts() {
        Mirror.FillCounts c = mirror.fillCounts();
        return new long[] {c.written(), c.failed(), c.dropped()};
    }

    @Override
    public void close() {
        mirror.close();
    }
}
