package io.warpdata.store;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;

/**
 * A store far away: every request waits one round trip ({@link #rtt}) before the wrapped store
 * answers it, as a real object store answers each request after 10-50 ms, and is recorded with
 * the times it started and ended. {@link #serialRoundTrips} then tells how many round trips
 * stood one after another on the way to a moment: the depth of the longest chain of requests
 * each of which started only after the one before it had ended. Requests that overlap add no
 * depth, so the count is of waits, not of requests; with a round trip far longer than any local
 * work between requests (100 ms and more) it does not depend on the machine's speed.
 */
public final class RoundTripStore extends ForwardingBlobStore {
    /** One request: what was asked ({@code GET key}, {@code RANGE key}, ...) and when, in System.nanoTime. */
    public record Request(String what, long startNanos, long endNanos) {
        @Override
        public String toString() {
            return what;
        }
    }

    private volatile Duration rtt = Duration.ZERO;
    private final ConcurrentLinkedQueue<Request> requests = new ConcurrentLinkedQueue<>();

    public RoundTripStore(BlobStore inner) {
        super(inner);
    }

    /** From now on every request waits {@code rtt} before it is answered ({@link Duration#ZERO}: none). */
    public RoundTripStore rtt(Duration rtt) {
        this.rtt = rtt;
        return this;
    }

    /** Forgets the requests recorded so far. */
    public void clear() {
        requests.clear();
    }

    /** The requests recorded since the last {@link #clear()}, in the order they started. */
    public List<Request> requests() {
        List<Request> out = new ArrayList<>(requests);
        out.sort(Comparator.comparingLong(Request::startNanos));
        return out;
    }

    /**
     * The round trips that stood one after another before {@code untilNanos}: the longest chain
     * of requests that had all ended by then, each started after the previous one ended.
     */
    public int serialRoundTrips(long untilNanos) {
        return chain(untilNanos).size();
    }

    /** One longest chain counted by {@link #serialRoundTrips}, first request first. */
    public List<Request> chain(long untilNanos) {
        return chain(requests, untilNanos);
    }

    /**
     * One longest chain of {@code requests} that had all ended by {@code untilNanos}, each
     * started after the one before it ended, first request first: the round trips that waited
     * for one another (for requests recorded elsewhere, e.g. at an S3 server's side).
     */
    public static List<Request> chain(Collection<Request> requests, long untilNanos) {
        List<Request> done = requests.stream().filter(r -> r.endNanos() <= untilNanos)
                .sorted(Comparator.comparingLong(Request::startNanos)).toList();
        int[] depth = new int[done.size()];
        int[] before = new int[done.size()];
        int deepest = -1;
        for (int i = 0; i < done.size(); i++) {
            depth[i] = 1;
            before[i] = -1;
            for (int j = 0; j < i; j++) {
                if (done.get(j).endNanos() <= done.get(i).startNanos() && depth[j] + 1 > depth[i]) {
                    depth[i] = depth[j] + 1;
                    before[i] = j;
                }
            }
            if (deepest < 0 || depth[i] > depth[deepest]) {
                deepest = i;
            }
        }
        List<Request> chain = new ArrayList<>();
        for (int i = deepest; i >= 0; i = before[i]) {
            chain.add(0, done.get(i));
        }
        return chain;
    }

    private <T> T roundTrip(String what, Supplier<T> call) {
        long start = System.nanoTime();
        try {
            Duration wait = rtt;
            if (!wait.isZero()) {
                Thread.sleep(wait);
            }
            return call.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while waiting for " + what, e);
        } finally {
            requests.add(new Request(what, start, System.nanoTime()));
        }
    }

    private void roundTrip(String what, Runnable call) {
        roundTrip(what, () -> {
            call.run();
            return null;
        });
    }

    @Override
    public OptionalLong length(String key) {
        return roundTrip("HEAD " + key, () -> super.length(key));
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        roundTrip("RANGE " + key + " " + offset + "+" + len, () -> super.read(key, offset, dst, dstOff, len));
    }

    @Override
    public byte[] get(String key) {
        return roundTrip("GET " + key, () -> super.get(key));
    }

    @Override
    public byte[] get(String key, int maxBytes) {
        return roundTrip("GET " + key, () -> super.get(key, maxBytes));
    }

    @Override
    public Versioned getIfChanged(String key, String ifNoneMatch, int maxBytes) {
        return roundTrip("GET " + key + (ifNoneMatch == null ? "" : " (if-none-match)"),
                () -> super.getIfChanged(key, ifNoneMatch, maxBytes));
    }

    @Override
    public String putIfUnchanged(String key, byte[] data, String expectedTag) {
        return roundTrip("PUT " + key + " (if-match)", () -> super.putIfUnchanged(key, data, expectedTag));
    }

    @Override
    public void deleteIfUnchanged(String key, String expectedTag) {
        roundTrip("DELETE " + key + " (if-match)", () -> super.deleteIfUnchanged(key, expectedTag));
    }

    @Override
    public void delete(String key) {
        roundTrip("DELETE " + key, () -> super.delete(key));
    }

    @Override
    public void put(String key, byte[] data) {
        roundTrip("PUT " + key, () -> super.put(key, data));
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        return roundTrip("PUT " + key + " (if-absent)", () -> super.putIfAbsent(key, data));
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        return roundTrip("PUT " + key + " (if-absent)", () -> super.putIfAbsent(key, source));
    }

    @Override
    public List<String> list(String prefix) {
        return roundTrip("LIST " + prefix, () -> super.list(prefix));
    }
}
