package io.warpdata.store;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The one programmable {@link BlobStore} for tests: it wraps a store (by default a new
 * {@link InMemoryBlobStore}), passes every call on to it, counts and records what its callers
 * asked, and injects the faults its {@link Rule rules} say: latency, gates that hold calls until
 * released, typed errors, corrupt bytes, silence, hangs, lies about sizes, paced streaming.
 *
 * <h2>Calls</h2>
 * Every {@link BlobStore} method is one {@link Call} kind: {@code length} is {@link Call#LENGTH};
 * both {@code read}s are {@link Call#READ} (a ranged GET); {@code get(key)}, {@code get(key, max)}
 * and {@code getIfChanged(key, null, max)} are {@link Call#GET} (a whole-object GET);
 * {@code getIfChanged} with a tag is {@link Call#GET_IF_CHANGED}; {@code put}, both
 * {@code putIfAbsent}s and {@code putIfUnchanged} are {@link Call#PUT}; {@code delete} and
 * {@code deleteIfUnchanged} are {@link Call#DELETE}; {@code list} is {@link Call#LIST} (its key is
 * the prefix). {@code describe} and {@code close} are not counted.
 *
 * <h2>Counters</h2>
 * <ul>
 *   <li>{@link #calls()}, {@link #calls(Call...)}, {@link #calls(Call, String)}: calls that reached
 *       this store (failed or not), in all, by kind, by kind and key;</li>
 *   <li>{@link #bytes(Call...)}, {@link #bytes(Call, String)}: bytes delivered (READ, GET,
 *       GET_IF_CHANGED; a READ's as they arrive, before its caller is told, and those of a READ
 *       that fails part way) or written (PUT, counting only writes that happened);</li>
 *   <li>{@link #notModified()}: conditional GETs answered "not modified"; {@link #injected()}:
 *       faults thrown; {@link #inFlight(Call...)} and {@link #peakInFlight(Call...)}: calls under
 *       way now and at most at once, {@link #peakBytesInFlight()}: READ bytes under way at most;</li>
 *   <li>{@link #requests()}: every call with what it asked ({@code "GET key"},
 *       {@code "RANGE key offset+len"}, {@code "HEAD key"}, {@code "LIST prefix"},
 *       {@code "PUT key (if-absent)"} ...), its range, and when it started and ended;
 *       {@link #serialRoundTrips(long)} and {@link #chain(Collection, long)} tell how many of them
 *       waited for one another;</li>
 *   <li>{@link #reset()} forgets all of them.</li>
 * </ul>
 *
 * <h2>Rules</h2>
 * {@link #on(Call...)} (no kinds: every call) adds a {@link Rule}; narrow it to keys with
 * {@link Rule#key}, {@link Rule#keys} or {@link Rule#under}, to calls with {@link Rule#skip} (let
 * the first n through), {@link Rule#times} / {@link Rule#once} (then act on n; by default on all),
 * and say what it does. A call meets the rules in the order they were added; each that matches
 * acts, in this order:
 * <ol>
 *   <li>{@link Rule#then(Runnable)} runs an action (before the call is answered, or with
 *       {@link Rule#afterwards(Runnable)} right after it);</li>
 *   <li>{@link Rule#gate()} holds the call until {@link Rule#release()} ({@link Rule#hang()}: a
 *       gate only {@link #clear()} or {@link #close()} opens); {@link Rule#arrived()} opens at the
 *       first call held, {@link Rule#matched()} counts the calls the rule acted on;</li>
 *   <li>{@link Rule#delay(Duration)} waits that long (a round trip: {@link #latency(Duration)});</li>
 *   <li>{@link Rule#fail(Fault)} throws the typed {@link StoreException} of that {@link Fault}
 *       (unreachable, 5xx, silent, not found, denied, refused credentials, any other);</li>
 *   <li>{@link Rule#claimLength(long)} lies about the object's size: {@code length} answers it, a
 *       size-limited GET refuses it as S3 does ({@link ObjectTooLargeException}) and an unlimited
 *       {@code get} of it fails the test (it would not fit a byte[]);</li>
 *   <li>{@link Rule#pace(double)} streams a READ at that many bytes a second, in
 *       {@link Rule#pieces(int)} (64 KiB by default), telling {@code arrived} piece by piece; with
 *       {@link Rule#afterBytes(int)} the gate or the failure strikes only after that many bytes of
 *       the READ have arrived (a stall or a reset mid-stream);</li>
 *   <li>{@link Rule#corrupt()} flips a byte of what the call delivers (the middle one;
 *       {@link Rule#corruptAt(int)} chooses), the length unchanged.</li>
 * </ol>
 * {@link Rule#remove()} ends one rule, {@link #clear()} all of them and opens every gate. The
 * outage shorthands: {@link #down()}, {@link #failWith5xx()}, {@link #silent()} (every call
 * fails as a dead, throttling or mute server's would) and {@link #up()}; {@link #hangAll()} and
 * {@link #answer()}.
 *
 * <h2>Recipes, as the cache tests use them</h2>
 * <pre>{@code
 * // failures, corrupt bytes, a hang, a delay; ranged GETs and their bytes, the most at once
 * store.on(READ).times(2).fail(Fault.UNAVAILABLE);      store.on(READ).once().corrupt();
 * Rule bad = store.on(READ).corrupt(); ... bad.remove();
 * Rule hang = store.on(READ, GET).hang(); ... hang.release();
 * store.on(READ).delay(Duration.ofMillis(100));         store.calls(READ); store.bytes(READ);
 * store.peakInFlight(READ);
 * // hold whole-object GETs of some keys (or all); count per key; unreachable
 * Rule gate = store.on(GET).keys(k1, k2).gate(); gate.awaitArrived(timeout); gate.release();
 * store.calls(GET, key); store.calls(READ, key); store.inFlight(GET); store.peakInFlight(GET);
 * store.on(GET).fail(Fault.UNREACHABLE);
 * // data GETs at a rate; their lengths; peaks of GETs and bytes under way
 * store.on(READ).under("blobs/").pace(rate);
 * store.requests(READ) (each with its len); store.peakInFlight(READ); store.peakBytesInFlight();
 * // reads a block at a time; the first stalls after a block, or fails part way
 * store.on(READ).pieces(BS);
 * Rule stall = store.on(READ).once().afterBytes(BS).gate();
 * store.on(READ).once().afterBytes(n).fail(Fault.UNAVAILABLE);
 * // offsets of data GETs in the order they started; hold some
 * store.requests(READ) (each with its offset); store.on(READ).when(r -> r.offset() == 0).gate();
 * }</pre>
 * A caller served from a streaming READ may go on before that READ has returned and is in
 * {@link #requests()}; wait for the caller to be idle (the block cache's {@code awaitIdle})
 * before reading them. Its bytes are counted before the caller is told they arrived.
 *
 * <p>Thread-safe.
 */
public final class FaultStore implements BlobStore {
    /** The kinds of call, one per {@link BlobStore} method family. */
    public enum Call { LENGTH, READ, GET, GET_IF_CHANGED, PUT, DELETE, LIST }

    /** The typed failures a {@link Rule} injects, as the S3 store's error translation yields them. */
    public enum Fault {
        /** Nothing listened: {@link StoreUnreachableException}. */
        UNREACHABLE,
        /** The server answered 5xx (throttled or broken) after the retries: {@link StoreUnavailableException}. */
        UNAVAILABLE,
        /** The server took the connection and sent nothing until the answer timeout: {@link StoreNotAnsweringException}. */
        SILENT,
        /** No such object: {@link BlobNotFoundException}. */
        NOT_FOUND,
        /** 403: {@link PermissionDeniedException}. */
        DENIED,
        /** Credentials refused: {@link AuthenticationException}. */
        UNAUTHENTICATED,
        /** Any other store failure: a plain {@link StoreException}. */
        OTHER;

        StoreException exception(String what) {
            String m = what + " (injected)";
            return switch (this) {
                case UNREACHABLE -> new StoreUnreachableException("cannot connect: " + m, null);
                case UNAVAILABLE -> new StoreUnavailableException("503 SlowDown: " + m, null);
                case SILENT -> new StoreNotAnsweringException("not answering: " + m, null);
                case NOT_FOUND -> new BlobNotFoundException("fault://test", m);
                case DENIED -> new PermissionDeniedException("403 AccessDenied: " + m, null);
                case UNAUTHENTICATED -> new AuthenticationException("403 InvalidAccessKeyId: " + m, null);
                case OTHER -> new StoreException("failed: " + m, "Retry; this failure was injected by a test.", null);
            };
        }
    }

    /** One call as asked: its kind, key (a LIST's prefix), range (READ) and times in System.nanoTime. */
    public record Request(Call call, String what, String key, long offset, int len, long startNanos, long endNanos) {
        @Override
        public String toString() {
            return what;
        }
    }

    /** What a call is, as the rules see it before it is answered. */
    private record Asked(Call call, String key, long offset, int len, String what) {
    }

    private final BlobStore inner;
    private final List<Rule> rules = new CopyOnWriteArrayList<>();
    private final LongAdder calls = new LongAdder();
    private final Map<Call, Map<String, LongAdder>> callsByKey = new ConcurrentHashMap<>();
    private final Map<Call, Map<String, LongAdder>> bytesByKey = new ConcurrentHashMap<>();
    private final LongAdder notModified = new LongAdder();
    private final LongAdder injected = new LongAdder();
    private final Map<Call, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final Map<Call, AtomicInteger> peakInFlight = new ConcurrentHashMap<>();
    private final AtomicLong bytesInFlight = new AtomicLong();
    private final AtomicLong peakBytesInFlight = new AtomicLong();
    private final ConcurrentLinkedQueue<Request> requests = new ConcurrentLinkedQueue<>();
    private final Set<String> oversizedWholeReads = ConcurrentHashMap.newKeySet();

    /** Over a new, empty {@link InMemoryBlobStore}. */
    public FaultStore() {
        this(new InMemoryBlobStore());
    }

    /** Over {@code inner}, which answers every call the rules let through. */
    public FaultStore(BlobStore inner) {
        this.inner = inner;
        for (Call c : Call.values()) {
            callsByKey.put(c, new ConcurrentHashMap<>());
            bytesByKey.put(c, new ConcurrentHashMap<>());
            inFlight.put(c, new AtomicInteger());
            peakInFlight.put(c, new AtomicInteger());
        }
    }

    /** The wrapped store (writes to it bypass the rules and counters: how tests set up). */
    public BlobStore inner() {
        return inner;
    }

    /** The wrapped store's objects, to seed, inspect or corrupt at rest; only over an {@link InMemoryBlobStore}. */
    public Map<String, byte[]> objects() {
        if (inner instanceof InMemoryBlobStore m) {
            return m.objects();
        }
        throw new IllegalStateException("FaultStore over " + inner.describe() + " has no in-memory objects; "
                + "construct it over an InMemoryBlobStore (new FaultStore()) to reach them");
    }

    // ---- rules

    /** A new rule for calls of these kinds (none: all kinds), acting on every matching call until narrowed. */
    public Rule on(Call... kinds) {
        Rule r = new Rule(kinds.length == 0 ? EnumSet.allOf(Call.class) : EnumSet.copyOf(Arrays.asList(kinds)));
        rules.add(r);
        return r;
    }

    /** Every call waits {@code rtt} before it is answered, as from a store far away; ZERO ends it. */
    public FaultStore latency(Duration rtt) {
        rules.removeIf(r -> r.latency);
        if (!rtt.isZero()) {
            Rule r = on().delay(rtt);
            r.latency = true;
        }
        return this;
    }

    /** Every call fails as if nothing listened ({@link Fault#UNREACHABLE}) until {@link #up()}. */
    public FaultStore down() {
        return outage(Fault.UNREACHABLE);
    }

    /** Every call fails as after a 5xx and the retries ({@link Fault#UNAVAILABLE}) until {@link #up()}. */
    public FaultStore failWith5xx() {
        return outage(Fault.UNAVAILABLE);
    }

    /** Every call fails as one that waited out a mute server's answer timeout ({@link Fault#SILENT}) until {@link #up()}. */
    public FaultStore silent() {
        return outage(Fault.SILENT);
    }

    private FaultStore outage(Fault fault) {
        rules.removeIf(r -> r.outage);
        on().fail(fault).outage = true;
        return this;
    }

    /** Ends {@link #down()}, {@link #failWith5xx()} and {@link #silent()}. */
    public FaultStore up() {
        rules.removeIf(r -> r.outage);
        return this;
    }

    /** Every call blocks until {@link #answer()}, then goes on as usual: a server that takes requests and does not answer yet. */
    public FaultStore hangAll() {
        answer();
        on().hang().hangAll = true;
        return this;
    }

    /** Lets the calls held by {@link #hangAll()} through. */
    public FaultStore answer() {
        for (Rule r : rules) {
            if (r.hangAll) {
                r.remove();
            }
        }
        return this;
    }

    /** Removes every rule and opens every gate. Counters stay. */
    public FaultStore clear() {
        for (Rule r : rules) {
            r.remove();
        }
        return this;
    }

    // ---- counters

    /** Calls that reached this store, of every kind. */
    public long calls() {
        return calls.sum();
    }

    /** Calls of these kinds. */
    public long calls(Call... kinds) {
        long n = 0;
        for (Call c : kinds) {
            n += callsByKey.get(c).values().stream().mapToLong(LongAdder::sum).sum();
        }
        return n;
    }

    /** Calls of this kind for this key. */
    public long calls(Call kind, String key) {
        LongAdder a = callsByKey.get(kind).get(key);
        return a == null ? 0 : a.sum();
    }

    /** Calls of this kind, by key. */
    public Map<String, Long> callsByKey(Call kind) {
        Map<String, Long> out = new java.util.TreeMap<>();
        callsByKey.get(kind).forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /** Bytes delivered (READ, GET, GET_IF_CHANGED) or written (PUT) by calls of these kinds. */
    public long bytes(Call... kinds) {
        long n = 0;
        for (Call c : kinds) {
            n += bytesByKey.get(c).values().stream().mapToLong(LongAdder::sum).sum();
        }
        return n;
    }

    /** Bytes of calls of this kind for this key. */
    public long bytes(Call kind, String key) {
        LongAdder a = bytesByKey.get(kind).get(key);
        return a == null ? 0 : a.sum();
    }

    /** Conditional GETs answered "not modified". */
    public long notModified() {
        return notModified.sum();
    }

    /** Failures the rules threw. */
    public long injected() {
        return injected.sum();
    }

    /** Keys read whole, without a size limit, while a rule claimed a length for them (a bug in the caller: see {@link Rule#claimLength}). */
    public Set<String> oversizedWholeReads() {
        return Set.copyOf(oversizedWholeReads);
    }

    /** Calls of these kinds under way now. */
    public int inFlight(Call... kinds) {
        int n = 0;
        for (Call c : kinds) {
            n += inFlight.get(c).get();
        }
        return n;
    }

    /** The most calls of this kind under way at once. */
    public int peakInFlight(Call kind) {
        return peakInFlight.get(kind).get();
    }

    /** The most READ bytes under way at once. */
    public long peakBytesInFlight() {
        return peakBytesInFlight.get();
    }

    /** Every call since the last {@link #reset()}, in the order they started. */
    public List<Request> requests() {
        List<Request> out = new ArrayList<>(requests);
        out.sort(Comparator.comparingLong(Request::startNanos));
        return out;
    }

    /** The calls of these kinds since the last {@link #reset()}, in the order they started. */
    public List<Request> requests(Call... kinds) {
        Set<Call> want = EnumSet.copyOf(Arrays.asList(kinds));
        return requests().stream().filter(r -> want.contains(r.call())).toList();
    }

    /** Forgets every count and request (the rules stay). */
    public FaultStore reset() {
        calls.reset();
        callsByKey.values().forEach(Map::clear);
        bytesByKey.values().forEach(Map::clear);
        notModified.reset();
        injected.reset();
        peakInFlight.values().forEach(a -> a.set(0));
        peakBytesInFlight.set(0);
        requests.clear();
        return this;
    }

    /**
     * The round trips that stood one after another before {@code untilNanos}: the depth of the
     * longest chain of calls that had all ended by then, each started only after the one before
     * it ended. Calls that overlap add no depth, so with a {@link #latency} far longer than the
     * local work between calls this counts waits, whatever the machine's speed.
     */
    public int serialRoundTrips(long untilNanos) {
        return chain(untilNanos).size();
    }

    /** One longest chain counted by {@link #serialRoundTrips}, first call first. */
    public List<Request> chain(long untilNanos) {
        return chain(requests, untilNanos);
    }

    /**
     * One longest chain of {@code requests} that had all ended by {@code untilNanos}, each
     * started after the one before it ended, first first: the round trips that waited for one
     * another (also for requests recorded elsewhere, e.g. at an S3 server's side).
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

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("FaultStore(");
        for (Call c : Call.values()) {
            s.append(c).append('=').append(calls(c)).append(' ');
        }
        return s.append("injected=").append(injected()).append(')').toString();
    }

    // ---- the store

    @Override
    public OptionalLong length(String key) {
        return call(new Asked(Call.LENGTH, key, 0, 0, "HEAD " + key), (rs) -> {
            for (Rule r : rs) {
                if (r.claimedLength >= 0) {
                    return OptionalLong.of(r.claimedLength);
                }
            }
            return inner.length(key);
        }, v -> 0);
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        read(key, offset, dst, dstOff, len, n -> { });
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len, IntConsumer arrived) {
        Asked a = new Asked(Call.READ, key, offset, len, "RANGE " + key + " " + offset + "+" + len);
        peakBytesInFlight.accumulateAndGet(bytesInFlight.addAndGet(len), Math::max);
        // Bytes count as delivered before the caller is told they arrived: a reader served from
        // the stream may return before this call does, and must find them counted.
        int[] counted = {0};
        IntConsumer counting = n -> {
            if (n > counted[0]) {
                bytesByKey.get(Call.READ).computeIfAbsent(key, k -> new LongAdder()).add(n - counted[0]);
                counted[0] = n;
            }
            arrived.accept(n);
        };
        try {
            call(a, rs -> {
                streamRead(a, rs, dst, dstOff, counting);
                return null;
            }, v -> 0);
        } finally {
            bytesInFlight.addAndGet(-len);
        }
    }

    /**
     * Reads the range in pieces when a rule paces it or strikes part way, else in one call to the
     * inner store; corrupts what a rule says before the caller is told the bytes arrived.
     */
    private void streamRead(Asked a, List<Rule> rs, byte[] dst, int dstOff, IntConsumer arrived) {
        double rate = 0;
        int piece = 0;
        Rule midway = null;
        List<Integer> flips = new ArrayList<>();
        int len = a.len();
        for (Rule r : rs) {
            rate = r.rate > 0 ? r.rate : rate;
            piece = r.piece > 0 ? r.piece : piece;
            if (r.afterBytes >= 0 && midway == null) {
                midway = r;
            }
            if (r.corrupt && len > 0) {
                flips.add(r.corruptAt < 0 ? len / 2 : Math.min(r.corruptAt, len - 1));
            }
        }
        if (rate <= 0 && midway == null && piece <= 0) {
            if (flips.isEmpty()) {
                inner.read(a.key(), a.offset(), dst, dstOff, len, arrived);
            } else {
                inner.read(a.key(), a.offset(), dst, dstOff, len);
                flips.forEach(at -> dst[dstOff + at] ^= (byte) 0x5a);
                arrived.accept(len);
            }
            return;
        }
        int step = piece > 0 ? piece : 64 << 10;
        long start = System.nanoTime();
        int pos = 0;
        while (true) {
            if (midway != null && pos >= midway.afterBytes) {
                Rule strikes = midway;
                midway = null;
                strikes.strike(a);
            }
            if (pos >= len) {
                break;
            }
            int n = Math.min(step, len - pos);
            if (midway != null) {
                n = Math.min(n, midway.afterBytes - pos);
            }
            inner.read(a.key(), a.offset() + pos, dst, dstOff + pos, n);
            for (int at : flips) {
                if (at >= pos && at < pos + n) {
                    dst[dstOff + at] ^= (byte) 0x5a;
                }
            }
            pos += n;
            if (rate > 0) {
                long wait = start + (long) (pos / rate * 1e9) - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
            }
            arrived.accept(pos);
        }
        if (len == 0) {
            arrived.accept(0);
        }
    }

    @Override
    public byte[] get(String key) {
        return call(new Asked(Call.GET, key, 0, -1, "GET " + key), rs -> {
            for (Rule r : rs) {
                if (r.claimedLength >= 0) {
                    oversizedWholeReads.add(key);
                    throw new AssertionError("read " + key + " (" + r.claimedLength + " bytes) whole, without a limit");
                }
            }
            return corrupt(rs, inner.get(key));
        }, b -> b.length);
    }

    @Override
    public byte[] get(String key, int maxBytes) {
        return call(new Asked(Call.GET, key, 0, -1, "GET " + key), rs -> {
            refuseClaimed(rs, key, maxBytes);
            return corrupt(rs, inner.get(key, maxBytes));
        }, b -> b.length);
    }

    @Override
    public Versioned getIfChanged(String key, String ifNoneMatch, int maxBytes) {
        Call kind = ifNoneMatch == null ? Call.GET : Call.GET_IF_CHANGED;
        return call(new Asked(kind, key, 0, -1, "GET " + key + (ifNoneMatch == null ? "" : " (if-none-match)")), rs -> {
            refuseClaimed(rs, key, maxBytes);
            Versioned v = inner.getIfChanged(key, ifNoneMatch, maxBytes);
            if (v == null) {
                notModified.increment();
                return null;
            }
            byte[] data = corrupt(rs, v.data());
            return data == v.data() ? v : new Versioned(data, v.tag());
        }, v -> v == null ? 0 : v.data().length);
    }

    private void refuseClaimed(List<Rule> rs, String key, int maxBytes) {
        for (Rule r : rs) {
            if (r.claimedLength > maxBytes) {
                throw new ObjectTooLargeException(describe() + "/" + key, r.claimedLength, maxBytes);
            }
        }
    }

    private static byte[] corrupt(List<Rule> rs, byte[] data) {
        for (Rule r : rs) {
            if (r.corrupt && data.length > 0) {
                data = data.clone();
                int at = r.corruptAt < 0 ? data.length / 2 : Math.min(r.corruptAt, data.length - 1);
                data[at] ^= (byte) 0x5a;
            }
        }
        return data;
    }

    @Override
    public String putIfUnchanged(String key, byte[] data, String expectedTag) {
        return call(new Asked(Call.PUT, key, 0, data.length, "PUT " + key + " (if-match)"),
                rs -> inner.putIfUnchanged(key, data, expectedTag), t -> data.length);
    }

    @Override
    public void deleteIfUnchanged(String key, String expectedTag) {
        call(new Asked(Call.DELETE, key, 0, 0, "DELETE " + key + " (if-match)"), rs -> {
            inner.deleteIfUnchanged(key, expectedTag);
            return null;
        }, v -> 0);
    }

    @Override
    public void delete(String key) {
        call(new Asked(Call.DELETE, key, 0, 0, "DELETE " + key), rs -> {
            inner.delete(key);
            return null;
        }, v -> 0);
    }

    @Override
    public void put(String key, byte[] data) {
        call(new Asked(Call.PUT, key, 0, data.length, "PUT " + key), rs -> {
            inner.put(key, data);
            return null;
        }, v -> data.length);
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        return call(new Asked(Call.PUT, key, 0, data.length, "PUT " + key + " (if-absent)"),
                rs -> inner.putIfAbsent(key, data), wrote -> wrote ? data.length : 0);
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        return call(new Asked(Call.PUT, key, 0, -1, "PUT " + key + " (if-absent)"),
                rs -> inner.putIfAbsent(key, source), wrote -> wrote ? source.toFile().length() : 0);
    }

    @Override
    public List<String> list(String prefix) {
        return call(new Asked(Call.LIST, prefix, 0, 0, "LIST " + prefix), rs -> inner.list(prefix), v -> 0);
    }

    @Override
    public String describe() {
        return inner.describe();
    }

    /** Opens every gate (no call stays held past a test) and closes the wrapped store. */
    @Override
    public void close() {
        clear();
        inner.close();
    }

    // ---- the one path every call takes

    private interface Body<T> {
        T answer(List<Rule> acting);
    }

    private interface Size<T> {
        long of(T result);
    }

    private <T> T call(Asked a, Body<T> body, Size<T> size) {
        long start = System.nanoTime();
        calls.increment();
        callsByKey.get(a.call()).computeIfAbsent(a.key(), k -> new LongAdder()).increment();
        peakInFlight.get(a.call()).accumulateAndGet(inFlight.get(a.call()).incrementAndGet(), Math::max);
        try {
            List<Rule> acting = new ArrayList<>();
            for (Rule r : rules) {
                if (r.claims(a)) {
                    acting.add(r);
                }
            }
            for (Rule r : acting) {
                if (r.before != null) {
                    r.before.run();
                }
            }
            for (Rule r : acting) {
                if (r.afterBytes < 0 || a.call() != Call.READ) {
                    r.strike(a);
                }
            }
            T result = body.answer(acting);
            long n = size.of(result);
            if (n > 0) {
                bytesByKey.get(a.call()).computeIfAbsent(a.key(), k -> new LongAdder()).add(n);
            }
            for (Rule r : acting) {
                if (r.after != null) {
                    r.after.run();
                }
            }
            return result;
        } finally {
            inFlight.get(a.call()).decrementAndGet();
            requests.add(new Request(a.call(), a.what(), a.key(), a.offset(), a.len(), start, System.nanoTime()));
        }
    }

    /**
     * What a store does to the calls it matches: made by {@link FaultStore#on}, narrowed and armed
     * fluently, in effect at once. See {@link FaultStore} for the order in which rules act.
     */
    public final class Rule {
        private final Set<Call> kinds;
        private volatile Predicate<String> keys = k -> true;
        private volatile Predicate<Request> when = r -> true;
        private volatile long skip;
        private volatile long times = Long.MAX_VALUE;
        private final AtomicLong seen = new AtomicLong();
        private final AtomicLong matched = new AtomicLong();
        private volatile Fault fault;
        private volatile Duration delay = Duration.ZERO;
        private volatile CountDownLatch gate;
        private final CountDownLatch arrived = new CountDownLatch(1);
        private volatile boolean corrupt;
        private volatile int corruptAt = -1;
        private volatile long claimedLength = -1;
        private volatile double rate;
        private volatile int piece;
        private volatile int afterBytes = -1;
        private volatile Runnable before;
        private volatile Runnable after;
        private boolean outage;
        private boolean hangAll;
        private boolean latency;

        private Rule(Set<Call> kinds) {
            this.kinds = kinds;
        }

        /** Only calls whose key (a LIST's prefix) passes {@code test}. */
        public Rule key(Predicate<String> test) {
            this.keys = test;
            return this;
        }

        /** Only calls for exactly these keys. */
        public Rule keys(String... exact) {
            Set<String> set = Set.of(exact);
            return key(set::contains);
        }

        /** Only calls for keys that contain {@code part} (e.g. {@code "blobs/"}). */
        public Rule under(String part) {
            return key(k -> k.contains(part));
        }

        /** Only calls whose request (kind, key, offset, len) passes {@code test}; its times are not yet known. */
        public Rule when(Predicate<Request> test) {
            this.when = test;
            return this;
        }

        /** Lets the first {@code n} matching calls through untouched. */
        public Rule skip(long n) {
            this.skip = n;
            return this;
        }

        /** Acts on {@code n} matching calls (after any {@link #skip}), then on none. */
        public Rule times(long n) {
            this.times = n;
            return this;
        }

        /** Acts on the next matching call only. */
        public Rule once() {
            return times(1);
        }

        /** Acts on every matching call (the default). */
        public Rule always() {
            return times(Long.MAX_VALUE);
        }

        /** Fails the call with {@code kind}'s typed exception. */
        public Rule fail(Fault kind) {
            this.fault = kind;
            return this;
        }

        /** Waits {@code d} before answering. */
        public Rule delay(Duration d) {
            this.delay = d;
            return this;
        }

        /** Holds each call until {@link #release()}; {@link #arrived()} opens when the first one is held. */
        public Rule gate() {
            this.gate = new CountDownLatch(1);
            return this;
        }

        /** A gate that stays shut until {@link FaultStore#clear()}, {@link FaultStore#close()} or {@link #release()}. */
        public Rule hang() {
            return gate();
        }

        /** Lets the held calls, and all later ones, through the gate. */
        public Rule release() {
            CountDownLatch g = gate;
            if (g != null) {
                g.countDown();
            }
            return this;
        }

        /** Flips the middle byte of what the call delivers (length unchanged). */
        public Rule corrupt() {
            this.corrupt = true;
            return this;
        }

        /** Flips the byte at {@code at} of what the call delivers (clamped to its end). */
        public Rule corruptAt(int at) {
            this.corrupt = true;
            this.corruptAt = at;
            return this;
        }

        /** Claims the object has {@code size} bytes (see {@link FaultStore}). */
        public Rule claimLength(long size) {
            this.claimedLength = size;
            return this;
        }

        /** Streams a READ at {@code bytesPerSecond}, in {@link #pieces} (64 KiB unless set). */
        public Rule pace(double bytesPerSecond) {
            this.rate = bytesPerSecond;
            return this;
        }

        /** Streams a READ in pieces of {@code bytes}, telling the caller's {@code arrived} after each. */
        public Rule pieces(int bytes) {
            this.piece = bytes;
            return this;
        }

        /** The gate, delay or failure strikes a READ once {@code bytes} of it have arrived, not before it starts. */
        public Rule afterBytes(int bytes) {
            this.afterBytes = bytes;
            return this;
        }

        /** Runs {@code action} on each matching call before it is answered (before any gate). */
        public Rule then(Runnable action) {
            this.before = action;
            return this;
        }

        /** Runs {@code action} on each matching call right after the inner store answered it. */
        public Rule afterwards(Runnable action) {
            this.after = action;
            return this;
        }

        /** Opens when the first call this rule acts on arrives (for a gate: is held). */
        public CountDownLatch arrived() {
            return arrived;
        }

        /** Waits, at most {@code timeout} (a safety net, not a measure), for a call to arrive; false if none did. */
        public boolean awaitArrived(Duration timeout) throws InterruptedException {
            return arrived.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        /** The calls this rule acted on. */
        public long matched() {
            return matched.get();
        }

        /** Ends this rule and opens its gate. */
        public void remove() {
            rules.remove(this);
            release();
        }

        private boolean claims(Asked a) {
            if (!kinds.contains(a.call()) || !keys.test(a.key())
                    || !when.test(new Request(a.call(), a.what(), a.key(), a.offset(), a.len(), 0, 0))) {
                return false;
            }
            long n = seen.incrementAndGet();
            if (n <= skip || n - skip > times) {
                return false;
            }
            matched.incrementAndGet();
            return true;
        }

        /** The gate, the delay and the failure, in that order. */
        private void strike(Asked a) {
            arrived.countDown();
            CountDownLatch g = gate;
            try {
                if (g != null) {
                    g.await();
                }
                if (!delay.isZero()) {
                    Thread.sleep(delay);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreUnavailableException("interrupted while held (injected) for " + a.what(), e);
            }
            Fault f = fault;
            if (f != null) {
                injected.increment();
                throw f.exception(a.what());
            }
        }
    }
}
