package io.warpdata.blobcache.mirror;

import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * The body of one mirror answer, written as it arrives straight into a region of the reader's
 * buffer (no copy of the whole answer), with the time anything was last heard from the mirror so
 * that the reader can tell a slow answer from a silent one.
 *
 * <p>Once the reader gives up ({@link #abandon}) not one more byte is written: the reader may
 * reuse its buffer the moment {@code read} returns, and the client's threads may still be
 * delivering a late part of the body. Writing and abandoning take the same lock; it is held for
 * the copy of one network buffer, never across a network call.
 *
 * <p>Until {@link #into} names a region (the headers were checked and fit the request) the body is
 * counted and dropped: an error page or a wrong answer never touches the reader's buffer.
 */
final class AnswerBody implements HttpResponse.BodySubscriber<Void> {
    /** A wrong answer's body is dropped up to this much, then the exchange is cut. */
    static final int MAX_DROPPED = 64 << 10;

    private final LongSupplier nanoTime;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final ReentrantLock lock = new ReentrantLock();
    private volatile long lastHeardNanos;
    private volatile Flow.Subscription subscription;
    // Guarded by lock.
    private byte[] dst;
    private int off;
    private int capacity;
    private int written;
    private int dropped;
    private boolean overflowed;
    private boolean abandoned;

    /** @param nanoTime the clock the silence is measured by; the answer starts being awaited now */
    AnswerBody(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.lastHeardNanos = nanoTime.getAsLong();
    }

    /** The headers arrived: the mirror is not silent. */
    void heard() {
        lastHeardNanos = nanoTime.getAsLong();
    }

    /** When anything (connection, headers, a part of the body) last came from the mirror. */
    long lastHeardNanos() {
        return lastHeardNanos;
    }

    /** Writes the body into {@code dst[off, off + capacity)}; more than {@code capacity} bytes is an overflow. */
    void into(byte[] dst, int off, int capacity) {
        lock.lock();
        try {
            this.dst = dst;
            this.off = off;
            this.capacity = capacity;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes written into the region. */
    int written() {
        lock.lock();
        try {
            return written;
        } finally {
            lock.unlock();
        }
    }

    /** Whether the mirror sent more than the region holds (the exchange was cut there). */
    boolean overflowed() {
        lock.lock();
        try {
            return overflowed;
        } finally {
            lock.unlock();
        }
    }

    /** The reader gives up: no byte is written after this returns, and the exchange is cut. */
    void abandon() {
        lock.lock();
        try {
            abandoned = true;
        } finally {
            lock.unlock();
        }
        Flow.Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> parts) {
        lastHeardNanos = nanoTime.getAsLong();
        boolean cut = false;
        lock.lock();
        try {
            if (abandoned) {
                return;
            }
            for (ByteBuffer part : parts) {
                int n = part.remaining();
                if (dst == null) {
                    dropped += n;
                    cut = dropped > MAX_DROPPED;
                } else if (n > capacity - written) {
                    overflowed = true;
                    cut = true;
                } else {
                    part.get(dst, off + written, n);
                    written += n;
                }
                if (cut) {
                    // Parts already queued may still be delivered: none of them is written.
                    abandoned = true;
                    break;
                }
            }
        } finally {
            lock.unlock();
        }
        if (cut) {
            subscription.cancel();
            done.complete(null);
        }
    }

    @Override
    public void onError(Throwable failure) {
        done.completeExceptionally(failure);
    }

    @Override
    public void onComplete() {
        done.complete(null);
    }

    @Override
    public CompletionStage<Void> getBody() {
        return done;
    }
}
