package io.warpdata.store;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** What an {@link S3ProxyFixture} server saw, counted at the server's storage layer. */
public final class ServerCounters {
    /** Objects written: single PUTs plus completed multipart uploads (a refused conditional PUT is not one). */
    public final LongAdder puts = new LongAdder();
    /** Multipart parts received. */
    public final LongAdder parts = new LongAdder();
    /** Object bytes received (PUT bodies and parts). */
    public final LongAdder bytesReceived = new LongAdder();
    /** GETs, whole or ranged. */
    public final LongAdder gets = new LongAdder();
    /**
     * Data GETs that asked for a range (blocks). Pointers and manifests are read with a range too
     * (a size cap: the first limit+1 bytes), but they count as metadata, not here.
     */
    public final LongAdder rangedGets = new LongAdder();
    /** Object bytes served by GETs. */
    public final LongAdder bytesServed = new LongAdder();
    /** HEADs (object metadata). */
    public final LongAdder heads = new LongAdder();
    /** Listings. */
    public final LongAdder lists = new LongAdder();
    /**
     * Metadata requests: every LIST and HEAD, every GET of a pointer or manifest (keys under
     * datasets/), and every whole-object GET (block hash lists): what a fleet pays for besides
     * the data itself.
     */
    public final LongAdder metadata = new LongAdder();
    /** The last metadata requests ("GET key", "HEAD key", "LIST prefix"), at most 1,000. */
    public final java.util.concurrent.ConcurrentLinkedDeque<String> metadataRequests = new java.util.concurrent.ConcurrentLinkedDeque<>();

    void metadata(String request) {
        metadata.increment();
        metadataRequests.addLast(request);
        while (metadataRequests.size() > 1000) {
            metadataRequests.pollFirst();
        }
    }

    /**
     * Every GET, HEAD and LIST with the times the server got it and answered it (after any
     * injected delay; a GET's body streams after), for {@link FaultStore#chain}: which
     * requests waited for one another. At most 10,000, the oldest dropped.
     */
    public final java.util.concurrent.ConcurrentLinkedDeque<FaultStore.Request> timeline =
            new java.util.concurrent.ConcurrentLinkedDeque<>();

    void answered(String request, long startNanos) {
        FaultStore.Call kind = request.startsWith("HEAD ") ? FaultStore.Call.LENGTH
                : request.startsWith("LIST ") ? FaultStore.Call.LIST
                : request.startsWith("GET (range) ") ? FaultStore.Call.READ : FaultStore.Call.GET;
        String key = request.substring(request.lastIndexOf(' ') + 1);
        timeline.addLast(new FaultStore.Request(kind, request, key, 0, -1, startNanos, System.nanoTime()));
        while (timeline.size() > 10_000) {
            timeline.pollFirst();
        }
    }

    /** GETs with If-None-Match (pointer re-checks). */
    public final LongAdder conditionalGets = new LongAdder();
    /** Requests answered with an injected fault. */
    public final LongAdder faultsInjected = new LongAdder();

    public long puts() {
        return puts.sum();
    }

    public long gets() {
        return gets.sum();
    }

    public long rangedGets() {
        return rangedGets.sum();
    }

    public long bytesServed() {
        return bytesServed.sum();
    }

    public long heads() {
        return heads.sum();
    }

    public long lists() {
        return lists.sum();
    }

    public long metadata() {
        return metadata.sum();
    }

    public void reset() {
        for (LongAdder a : new LongAdder[] {puts, parts, bytesReceived, gets, rangedGets, bytesServed, heads, lists,
                metadata, conditionalGets, faultsInjected}) {
            a.reset();
        }
        metadataRequests.clear();
        timeline.clear();
    }

    public Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("puts", puts.sum());
        m.put("parts", parts.sum());
        m.put("bytes_received", bytesReceived.sum());
        m.put("gets", gets.sum());
        m.put("ranged_gets", rangedGets.sum());
        m.put("bytes_served", bytesServed.sum());
        m.put("heads", heads.sum());
        m.put("lists", lists.sum());
        m.put("metadata", metadata.sum());
        m.put("conditional_gets", conditionalGets.sum());
        m.put("faults_injected", faultsInjected.sum());
        return m;
    }

    @Override
    public String toString() {
        return snapshot().toString();
    }
}
