package io.warpdata.vfs.fuse;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongToIntFunction;

/**
 * Keeps the links the kernel caches (latest, tags, branches) current.
 *
 * <p>With {@code FUSE_CACHE_SYMLINKS} (see {@link WarpFuse#WANTED}) the kernel answers readlink, and
 * every path walk through {@code /<ws>/<name>}, from its page cache, and asks warpd again only
 * once that is invalidated. So every link warpd has answered is remembered by its kernel node
 * with its target and re-resolved every period ({@link MountOptions#linkCheck()}, the catalog's
 * pointer TTL, after which the catalog re-reads the pointer); when the target differs, or the
 * pointer is gone, the node is invalidated and the next walk reads the link again. A pointer
 * moved elsewhere is thus seen within about two periods; a publish or {@code warpctl refresh}
 * through this daemon checks at once ({@link #check()}). While the store cannot be read, links
 * keep their last target (the catalog answers from its last known good state).
 *
 * <p>Cost: one conditional GET per link in use per pointer TTL, in the background; none on the
 * read path. Links are re-resolved
 * from their workspace's node, so no workspace is ever listed for it.
 */
final class LinkWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LinkWatch.class);


    /** What a link resolves to now. */
    @FunctionalInterface
    interface Resolver {
        /**
         * @param node the link's kernel node id
         * @return the link's target now, or null if the link (or the kernel's node) no longer exists
         * @throws RuntimeException if that cannot be known now (the store does not answer)
         */
        String target(long node);
    }

    private final Resolver resolver;
    /** Invalidates a kernel node: 0, or minus errno. */
    private final LongToIntFunction invalidate;
    /** Node id -> the target the kernel was given. */
    private final Map<Long, String> links = new ConcurrentHashMap<>();
    private final AtomicLong invalidations = new AtomicLong();
    private ScheduledExecutorService timer;
    /** Set by {@link #close()}: the session may be gone, so nothing is invalidated any more. */
    private boolean closed;

    LinkWatch(Resolver resolver, LongToIntFunction invalidate) {
        this.resolver = resolver;
        this.invalidate = invalidate;
    }

    /** Re-resolves the links every {@code period} on a daemon thread until {@link #close()}. */
    synchronized void start(Duration period) {
        if (timer == null && !closed) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "warp-link-watch");
                t.setDaemon(true);
                return t;
            });
            long ms = period.toMillis();
            timer.scheduleWithFixedDelay(this::checkQuietly, ms, ms, TimeUnit.MILLISECONDS);
        }
    }

    /** The kernel asked for the link of node {@code node} and was given {@code target}. */
    void answered(long node, String target) {
        if (node != 0) {
            links.put(node, target);
        }
    }

    /**
     * Re-resolves every cached link now and invalidates those whose target changed.
     *
     * @return how many were invalidated
     */
    synchronized int check() {
        if (closed) {
            return 0;
        }
        int n = 0;
        for (Map.Entry<Long, String> e : links.entrySet()) {
            long node = e.getKey();
            String now;
            try {
                now = resolver.target(node);
            } catch (RuntimeException unknown) {
                LOG.debug("cannot re-read link node {} now ({}); the kernel keeps its target", node, unknown.toString());
                continue;
            }
            if (!e.getValue().equals(now) && links.remove(node, e.getValue())) {
                // Minus ENOENT when the kernel has already forgotten the node: nothing cached then,
                // and nothing to count (a node forgotten under memory pressure counted as a moved
                // pointer, though none had moved).
                int res = invalidate.applyAsInt(node);
                if (res == 0) {
                    invalidations.incrementAndGet();
                    n++;
                }
                LOG.debug("link node {} now -> {}; invalidated ({})", node, now, res);
            }
        }
        return n;
    }

    private void checkQuietly() {
        try {
            check();
        } catch (RuntimeException e) {
            LOG.warn("checking latest links failed: {}", e.toString());
        }
    }

    /** Links the kernel holds a target of. */
    int size() {
        return links.size();
    }

    /** Links invalidated since the mount. */
    long invalidations() {
        return invalidations.get();
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
    }
}
