package io.warpdata.blobcache.cache;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The remote tiers in the order they are tried, and the one place their bytes are verified:
 * a range a tier returns is handed on only if it passes the caller's {@link Check} (the SHA-256
 * of each block, of the member, or of the whole blob). A tier that fails or returns a wrong byte
 * is counted and the next one is asked; when none serves, the caller reads the store, as with no
 * remote tier at all. Never throws for a tier's sake.
 */
final class Remotes {
    private static final Logger LOG = LoggerFactory.getLogger(Remotes.class);

    /** What the bytes of a range must be; hashes them, never changes them. */
    @FunctionalInterface
    interface Check {
        boolean ok(byte[] data, int off, int len);
    }

    /** Counters of one remote tier. */
    static final class Counters {
        final LongAdder servedBytes = new LongAdder();
        final LongAdder misses = new LongAdder();
        final LongAdder verificationFailures = new LongAdder();
        final LongAdder errors = new LongAdder();

        Map<String, Long> snapshot() {
            Map<String, Long> m = new LinkedHashMap<>();
            m.put("served_bytes", servedBytes.sum());
            m.put("misses", misses.sum());
            m.put("verification_failures", verificationFailures.sum());
            m.put("errors", errors.sum());
            return m;
        }
    }

    static final Remotes NONE = new Remotes(List.of(), new ReadMetrics());

    private final List<RemoteTier> tiers;
    private final Counters[] counters;
    private final ReadMetrics metrics;

    Remotes(List<RemoteTier> tiers, ReadMetrics metrics) {
        this.tiers = List.copyOf(tiers);
        this.metrics = metrics;
        this.counters = new Counters[this.tiers.size()];
        for (int i = 0; i < counters.length; i++) {
            counters[i] = new Counters();
        }
    }

    boolean isEmpty() {
        return tiers.isEmpty();
    }

    /**
     * Fills {@code dst[off, off + len)} with bytes {@code [offset, offset + len)} of store key
     * {@code key} from the first remote tier whose bytes pass {@code check}.
     *
     * @return true if a tier served them (verified); false if none did: read the store
     */
    boolean read(String key, long offset, byte[] dst, int off, int len, Check check) {
        for (int i = 0; i < counters.length; i++) {
            RemoteTier t = tiers.get(i);
            Counters c = counters[i];
            try {
                t.read(key, offset, dst, off, len);
            } catch (RuntimeException e) {
                c.errors.increment();
                c.misses.increment();
                LOG.debug("Remote tier {} failed on {} at {}: {}", t.describe(), key, offset, e.toString());
                continue;
            }
            if (check.ok(dst, off, len)) {
                c.servedBytes.add(len);
                return true;
            }
            c.verificationFailures.increment();
            c.misses.increment();
            metrics.verificationFailures.increment();
            LOG.warn("Remote tier {} served bytes [{}, +{}) of {} that fail SHA-256 verification; reading them from"
                    + " the next tier (check or empty that cache)", t.describe(), offset, len, key);
        }
        return false;
    }

    /** Counters by tier, in the order the tiers are tried. */
    Map<String, Map<String, Long>> snapshot() {
        Map<String, Map<String, Long>> m = new LinkedHashMap<>();
        for (int i = 0; i < counters.length; i++) {
            m.put(tiers.get(i).describe(), counters[i].snapshot());
        }
        return m;
    }
}
