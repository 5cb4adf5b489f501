package io.warpdata.blobcache.cache;

/**
 * What one GET delivers per second, learned from the GETs the cache makes, and the size of a
 * read-ahead run that follows from it.
 *
 * <p>An object store gives each connection a fixed pace (S3: about 85-90 MB/s) and many
 * connections together much more; on loopback one connection gives more than the machine can
 * use. A run of {@link FetchScheduler#MAX_RUN_BYTES} (32 MiB) is right for the second: few GETs,
 * each cheap in CPU. On the first it is 1.3 s on one connection at 25 MB/s, and a 64 MiB window
 * is then two GETs at a time: read-ahead runs at twice the pace of one connection, however many
 * the store would serve. So a run is sized to what one connection delivers in
 * {@link #RUN_SECONDS}: at 25 MB/s 4 MiB (a 64 MiB window is 16 GETs at once), at S3's
 * 85 MB/s 16 MiB (AWS's guidance is 8-16 MB ranges), on loopback the 32 MiB cap.
 *
 * <p>The rate is a moving average over GETs of at least {@link #MIN_SAMPLE_BYTES}, each timed
 * from its request to its last byte (so a GET's first-byte latency counts against it: small
 * runs on a far store are not mistaken for a slow link, they are one). Until the first such GET
 * has completed the runs are the smallest: a first window sent as one 32 MiB GET takes 1.3 s at
 * 25 MB/s before the reader gets past it, where 4 MiB GETs side by side take 0.2 s; on a fast
 * link the first few GETs are merely smaller than they could be. Thread-safe, lock-free: a race
 * between two updates loses one sample.
 */
final class ConnectionRate {
    /** What one run should take on one connection: long against the first-byte latency (10-50 ms), short against the window. */
    static final double RUN_SECONDS = 0.25;
    /** Smallest run read-ahead makes: 4 MiB, below which a GET's latency and CPU dominate its bytes. */
    static final int MIN_RUN_BYTES = 4 << 20;
    /** GETs smaller than this say more about latency than about the link; not sampled. */
    static final int MIN_SAMPLE_BYTES = 1 << 20;
    /** Weight of a new sample in the moving average. */
    private static final double ALPHA = 0.25;

    private final int maxRunBytes;
    /** Bytes per second; 0 until the first sample. */
    private volatile double rate;

    ConnectionRate(int maxRunBytes) {
        this.maxRunBytes = maxRunBytes;
    }

    /** One GET of {@code bytes} took {@code nanos} from its request to its last byte. */
    void record(long bytes, long nanos) {
        if (bytes < MIN_SAMPLE_BYTES || nanos <= 0) {
            return;
        }
        double sample = bytes * 1e9 / nanos;
        double r = rate;
        rate = r == 0 ? sample : r + ALPHA * (sample - r);
    }

    /** Bytes per second one GET delivers, 0 before the first sample. */
    double bytesPerSecond() {
        return rate;
    }

    /**
     * The length of a read-ahead run: what one connection delivers in {@link #RUN_SECONDS},
     * rounded down to a power of two, between {@link #MIN_RUN_BYTES} and the cap (the smallest
     * when nothing is known yet).
     */
    int runBytes() {
        double r = rate;
        int floor = Math.min(MIN_RUN_BYTES, maxRunBytes);
        if (r == 0) {
            return floor;
        }
        long want = (long) (r * RUN_SECONDS);
        if (want >= maxRunBytes) {
            return maxRunBytes;
        }
        if (want <= floor) {
            return floor;
        }
        return Integer.highestOneBit((int) want);
    }
}
