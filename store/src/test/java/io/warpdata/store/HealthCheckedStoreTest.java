package io.warpdata.store;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HealthCheckedStoreTest {
    private final InMemoryBlobStore backing = new InMemoryBlobStore();
    private final FaultStore outage = new FaultStore(backing);
    private final AtomicLong nanos = new AtomicLong();
    private final StoreHealth health = StoreHealth.of("memory://test", Clock.systemUTC(), nanos::get);
    private final HealthCheckedStore store = new HealthCheckedStore(outage, health);

    @Test
    void anUnreachableStoreIsTriedOncePerProbeIntervalAndFailsFastMeanwhile() {
        backing.put("k", new byte[] {1});
        outage.down();
        assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreUnreachableException.class);
        assertThat(health.snapshot().reachable()).isFalse();
        long reached = outage.calls();

        for (int i = 0; i < 50; i++) {
            assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreUnreachableException.class)
                    .satisfies(e -> assertThat(((StoreException) e).type()).isEqualTo("StoreUnreachable"));
        }
        assertThat(outage.calls()).as("not tried while known unreachable").isEqualTo(reached);
        assertThat(health.snapshot().fastFailures()).isEqualTo(50);

        nanos.addAndGet(StoreHealth.PROBE_INTERVAL.toNanos());
        outage.up();
        assertThat(store.get("k")).containsExactly(1);
        assertThat(health.snapshot().reachable()).isTrue();
        assertThat(health.snapshot().outages()).isEqualTo(1);
    }

    @Test
    void aStoreThatAnswersNobodyIsTreatedAsUnreachableAndSaidToBeNotAnswering() {
        backing.put("k", new byte[] {1});
        outage.silent();
        assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreNotAnsweringException.class);
        StoreHealth.Snapshot down = health.snapshot();
        assertThat(down.reachable()).isFalse();
        assertThat(down.outage().orElseThrow().notAnswering()).isTrue();
        assertThat(down.outage().orElseThrow().state()).isEqualTo("unreachable (not answering)");
        long reached = outage.calls();
        assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreUnreachableException.class)
                .hasMessageContaining("not answering")
                // the failure quoted may be another object's read: said as the call that found it so
                .hasMessageContaining("the call that found it so: ")
                // typed as the hung store it is (EIO counters, warpctl, Python), failed at once all the same
                .satisfies(e -> assertThat(((StoreException) e).type()).isEqualTo("StoreNotAnswering"))
                .satisfies(e -> assertThat(((StoreException) e).nextStep()).contains("accepts connections but does not answer"));
        assertThat(outage.calls()).as("not tried again before the probe").isEqualTo(reached);

        nanos.addAndGet(StoreHealth.PROBE_INTERVAL.toNanos());
        outage.up();
        assertThat(store.get("k")).containsExactly(1);
        assertThat(health.snapshot().reachable()).isTrue();
    }

    @Test
    void oneSilentCallWhileOthersAreAnsweredIsAStuckConnectionNotAnOutage() {
        backing.put("k", new byte[] {1});
        long started = health.now();
        nanos.addAndGet(1_000);
        assertThat(store.get("k")).containsExactly(1); // another call is answered meanwhile
        health.failed(new StoreNotAnsweringException("one stuck connection", null), started);
        assertThat(health.snapshot().reachable()).isTrue();
        assertThat(health.snapshot().failures()).isEqualTo(1);
        assertThat(store.get("k")).containsExactly(1);
    }

    @Test
    void aServerErrorMarksTheStoreDownButNeverStopsCallsFromTrying() {
        backing.put("k", new byte[] {1});
        outage.failWith5xx();
        for (int i = 1; i < StoreHealth.FAILING_AFTER; i++) {
            assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreUnavailableException.class);
            assertThat(health.snapshot().outage()).as("one 5xx the caller may ride out is no outage").isEmpty();
        }
        assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreUnavailableException.class);
        assertThat(health.snapshot().outage()).isPresent();
        long reached = outage.calls();
        assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreUnavailableException.class)
                .isNotInstanceOf(StoreUnreachableException.class);
        assertThat(outage.calls()).isEqualTo(reached + 1);
        assertThat(health.snapshot().outages()).as("one outage, however many failures").isEqualTo(1);
        assertThat(health.snapshot().failures()).isEqualTo(StoreHealth.FAILING_AFTER + 1);
    }

    @Test
    void notFoundIsAnAnswerAndEndsAnOutage() {
        outage.failWith5xx();
        for (int i = 0; i < StoreHealth.FAILING_AFTER; i++) {
            assertThatThrownBy(() -> store.get("missing")).isInstanceOf(StoreUnavailableException.class);
        }
        assertThat(health.snapshot().reachable()).isFalse();
        outage.up();
        nanos.addAndGet(StoreHealth.FAILING_QUIET.toNanos());
        assertThatThrownBy(() -> store.get("missing")).isInstanceOf(BlobNotFoundException.class);
        assertThat(health.snapshot().reachable()).isTrue();
    }

    /**
     * Audit 38: a store failing its ranged GETs while answering pointers and LISTs was "reachable
     * again" at each answer, so the outage flapped (16 in 80 s) and an alert on it never fired.
     */
    @Test
    void aStoreThatFailsSomeCallsAndAnswersOthersStaysDownUntilItAnswersForAWhileWithoutFailing() {
        backing.put("k", new byte[] {1});
        backing.put("pointer", new byte[] {2});
        outage.on(FaultStore.Call.GET).keys("k").fail(FaultStore.Fault.UNAVAILABLE).always();
        for (int i = 1; i < StoreHealth.FAILING_AFTER; i++) {
            assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreUnavailableException.class);
        }
        for (int i = 0; i < 5; i++) {
            assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreUnavailableException.class);
            nanos.addAndGet(2_000_000_000L);
            assertThat(store.get("pointer")).containsExactly(2);
            assertThat(health.snapshot().reachable()).as("answering some calls, failing others").isFalse();
            nanos.addAndGet(2_000_000_000L);
        }
        assertThat(health.snapshot().outages()).as("one outage, not one per answer").isEqualTo(1);
        assertThat(health.snapshot().outage().orElseThrow().state()).isEqualTo("failing");
        outage.clear();
        assertThat(store.get("k")).containsExactly(1);
        assertThat(health.snapshot().reachable()).as("answered moments after failing").isFalse();
        nanos.addAndGet(StoreHealth.FAILING_QUIET.toNanos());
        assertThat(health.snapshot().reachable()).as("an idle store is back once quiet").isTrue();
        outage.on(FaultStore.Call.GET).keys("k").fail(FaultStore.Fault.UNAVAILABLE).once();
        assertThatThrownBy(() -> store.get("k")).isInstanceOf(StoreUnavailableException.class);
        nanos.addAndGet(StoreHealth.FAILING_QUIET.toNanos());
        assertThat(store.get("k")).containsExactly(1);
        assertThat(health.snapshot().reachable()).as("back after answering without a failure").isTrue();
    }

    @Test
    void anOfflineStoreIsNeverReachableAndNeverAnOutage() {
        StoreHealth offline = StoreHealth.offline("s3://b/p");
        assertThat(offline.snapshot().reachable()).isFalse();
        assertThat(offline.snapshot().offline()).isTrue();
        assertThat(offline.snapshot().outage()).isEmpty();
        OfflineStore store = new OfflineStore("s3://b/p");
        assertThatThrownBy(() -> store.get("x")).isInstanceOf(StoreUnreachableException.class)
                .hasMessageContaining("--mode local");
    }
}
