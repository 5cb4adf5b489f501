package io.warpdata.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.FaultStore.Fault;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The test store itself: each rule does what its javadoc says, and nothing when it does not match. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FaultStoreTest {
    private final FaultStore store = new FaultStore();
    private final byte[] data = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

    FaultStoreTest() {
        store.inner().put("blobs/a", data);
        store.inner().put("blobs/b", data);
        store.inner().put("datasets/p", data);
    }

    @Test
    void passesCallsThroughAndCountsThemByKindKeyAndBytes() {
        byte[] dst = new byte[4];
        store.read("blobs/a", 2, dst, 0, 4);
        assertThat(dst).containsExactly(2, 3, 4, 5);
        assertThat(store.get("blobs/b")).isEqualTo(data);
        assertThat(store.get("blobs/b", 100)).isEqualTo(data);
        String tag = store.getIfChanged("datasets/p", null, 100).tag();
        assertThat(store.getIfChanged("datasets/p", tag, 100)).isNull();
        assertThat(store.putIfAbsent("blobs/c", new byte[3])).isTrue();
        assertThat(store.putIfAbsent("blobs/c", new byte[3])).isFalse();
        assertThat(store.list("blobs/")).containsExactly("a", "b", "c");
        assertThat(store.length("blobs/a")).hasValue(10);

        assertThat(store.calls()).isEqualTo(9);
        assertThat(store.calls(Call.READ)).isEqualTo(1);
        assertThat(store.calls(Call.GET)).isEqualTo(3);
        assertThat(store.calls(Call.GET, "blobs/b")).isEqualTo(2);
        assertThat(store.calls(Call.GET_IF_CHANGED)).isEqualTo(1);
        assertThat(store.notModified()).isEqualTo(1);
        assertThat(store.calls(Call.PUT)).isEqualTo(2);
        assertThat(store.bytes(Call.PUT)).as("only the write that happened").isEqualTo(3);
        assertThat(store.bytes(Call.READ, "blobs/a")).isEqualTo(4);
        assertThat(store.bytes(Call.GET)).isEqualTo(30);
        assertThat(store.requests(Call.READ)).singleElement()
                .satisfies(r -> assertThat(r.what()).isEqualTo("RANGE blobs/a 2+4"))
                .satisfies(r -> assertThat(r.offset()).isEqualTo(2));
        store.reset();
        assertThat(store.calls()).isZero();
        assertThat(store.requests()).isEmpty();
    }

    @Test
    void eachFaultThrowsItsTypedException() {
        assertThatThrownBy(() -> failOnce(Fault.UNREACHABLE)).isInstanceOf(StoreUnreachableException.class);
        assertThatThrownBy(() -> failOnce(Fault.UNAVAILABLE)).isInstanceOf(StoreUnavailableException.class);
        assertThatThrownBy(() -> failOnce(Fault.SILENT)).isInstanceOf(StoreNotAnsweringException.class);
        assertThatThrownBy(() -> failOnce(Fault.NOT_FOUND)).isInstanceOf(BlobNotFoundException.class);
        assertThatThrownBy(() -> failOnce(Fault.DENIED)).isInstanceOf(PermissionDeniedException.class);
        assertThatThrownBy(() -> failOnce(Fault.UNAUTHENTICATED)).isInstanceOf(AuthenticationException.class);
        assertThatThrownBy(() -> failOnce(Fault.OTHER)).isExactlyInstanceOf(StoreException.class);
        assertThat(store.injected()).isEqualTo(Fault.values().length);
        assertThat(store.get("blobs/a")).as("each rule acted once").isEqualTo(data);
    }

    private void failOnce(Fault f) {
        store.on(Call.GET).once().fail(f);
        store.get("blobs/a");
    }

    @Test
    void rulesMatchByKindKeyAndCountSkippingThenActingTimes() {
        store.on(Call.READ).under("blobs/b").skip(1).times(2).fail(Fault.UNAVAILABLE);
        byte[] dst = new byte[1];
        List<Boolean> failed = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            store.read("blobs/a", 0, dst, 0, 1);
            store.get("blobs/b");
            try {
                store.read("blobs/b", 0, dst, 0, 1);
                failed.add(false);
            } catch (StoreUnavailableException e) {
                failed.add(true);
            }
        }
        assertThat(failed).containsExactly(false, true, true, false, false);
        assertThat(store.calls(Call.READ, "blobs/b")).as("failed calls are counted too").isEqualTo(5);
    }

    @Test
    void outagesLastUntilUp() {
        store.down();
        assertThatThrownBy(() -> store.list("")).isInstanceOf(StoreUnreachableException.class);
        store.failWith5xx();
        assertThatThrownBy(() -> store.length("blobs/a")).isInstanceOf(StoreUnavailableException.class);
        store.silent();
        assertThatThrownBy(() -> store.put("x", data)).isInstanceOf(StoreNotAnsweringException.class);
        store.up();
        assertThat(store.get("blobs/a")).isEqualTo(data);
    }

    @Test
    void aGateHoldsMatchingCallsUntilReleasedAndLetsOthersBy() throws Exception {
        FaultStore.Rule gate = store.on(Call.GET).keys("blobs/a").gate();
        CompletableFuture<byte[]> held = CompletableFuture.supplyAsync(() -> store.get("blobs/a"));
        assertThat(gate.awaitArrived(java.time.Duration.ofSeconds(30))).isTrue();
        assertThat(store.get("blobs/b")).isEqualTo(data);
        assertThat(held).isNotDone();
        assertThat(store.inFlight(Call.GET)).isEqualTo(1);
        gate.release();
        assertThat(held.get(30, TimeUnit.SECONDS)).isEqualTo(data);
        assertThat(store.peakInFlight(Call.GET)).as("the held GET and the one beside it").isEqualTo(2);
    }

    @Test
    void hangAllHoldsEveryCallUntilAnswered() throws Exception {
        store.hangAll();
        CompletableFuture<List<String>> held = CompletableFuture.supplyAsync(() -> store.list("blobs/"));
        while (store.calls(Call.LIST) == 0) {
            Thread.sleep(5);
        }
        assertThat(held).isNotDone();
        store.answer();
        assertThat(held.get(30, TimeUnit.SECONDS)).containsExactly("a", "b");
    }

    @Test
    void corruptFlipsOneByteOfWhatIsDeliveredAndNotTheStoredObject() {
        store.on(Call.READ, Call.GET).once().corrupt();
        byte[] dst = new byte[10];
        store.read("blobs/a", 0, dst, 0, 10);
        assertThat(dst).isNotEqualTo(data);
        assertThat(diff(dst, data)).containsExactly(5);
        assertThat(store.get("blobs/a")).isEqualTo(data);
        store.on(Call.GET).once().corruptAt(0);
        assertThat(diff(store.get("blobs/a"), data)).containsExactly(0);
        assertThat(store.objects().get("blobs/a")).isEqualTo(data);
    }

    @Test
    void corruptBytesAreInPlaceBeforeTheCallerIsToldTheyArrived() {
        store.on(Call.READ).once().pieces(4).corruptAt(6);
        byte[] dst = new byte[10];
        List<String> told = new ArrayList<>();
        store.read("blobs/a", 0, dst, 0, 10, n -> told.add(n + (dst[6] == (byte) (data[6] ^ 0x5a) ? " corrupt" : " clean")));
        assertThat(told).containsExactly("4 clean", "8 corrupt", "10 corrupt");

        store.on(Call.READ).once().corrupt();
        byte[] whole = new byte[10];
        told.clear();
        store.read("blobs/a", 0, whole, 0, 10, n -> told.add(n + (whole[5] == (byte) (data[5] ^ 0x5a) ? " corrupt" : " clean")));
        assertThat(told).containsExactly("10 corrupt");
    }

    private static List<Integer> diff(byte[] a, byte[] b) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                out.add(i);
            }
        }
        return out;
    }

    @Test
    void aClaimedLengthIsAnsweredAndRefusedAsS3Would() {
        store.on().keys("datasets/p").claimLength(5L << 30);
        assertThat(store.length("datasets/p")).hasValue(5L << 30);
        assertThatThrownBy(() -> store.get("datasets/p", 1000)).isInstanceOf(ObjectTooLargeException.class);
        assertThatThrownBy(() -> store.getIfChanged("datasets/p", null, 1000)).isInstanceOf(ObjectTooLargeException.class);
        assertThat(store.oversizedWholeReads()).isEmpty();
        assertThatThrownBy(() -> store.get("datasets/p")).isInstanceOf(AssertionError.class);
        assertThat(store.oversizedWholeReads()).containsExactly("datasets/p");
    }

    @Test
    void aReadStreamsInPiecesAndFailsPartWay() {
        store.on(Call.READ).once().pieces(3).afterBytes(5).fail(Fault.UNAVAILABLE);
        List<Integer> arrived = new ArrayList<>();
        byte[] dst = new byte[10];
        assertThatThrownBy(() -> store.read("blobs/a", 0, dst, 0, 10, arrived::add))
                .isInstanceOf(StoreUnavailableException.class);
        assertThat(arrived).containsExactly(3, 5);
        assertThat(dst).startsWith(0, 1, 2, 3, 4, 0);
        assertThat(store.bytes(Call.READ)).as("the bytes delivered before the failure").isEqualTo(5);
        arrived.clear();
        store.read("blobs/a", 0, dst, 0, 10, arrived::add);
        assertThat(arrived).as("the next read is whole").containsExactly(10);
    }

    @Test
    void aPacedReadTellsEachPieceAsItArrives() {
        store.on(Call.READ).under("blobs/").pace(1e9).pieces(4);
        List<String> arrived = new ArrayList<>();
        byte[] dst = new byte[10];
        store.read("blobs/a", 0, dst, 0, 10, n -> arrived.add(n + ":" + store.bytes(Call.READ)));
        assertThat(arrived).as("each piece counted before it is told").containsExactly("4:4", "8:8", "10:10");
        assertThat(dst).isEqualTo(data);
        assertThat(store.peakBytesInFlight()).isEqualTo(10);
    }

    @Test
    void actionsRunBeforeOrAfterTheCallIsAnswered() {
        List<String> seen = new ArrayList<>();
        store.on(Call.LENGTH).once().then(() -> seen.add("before " + store.objects().containsKey("x")))
                .afterwards(() -> store.inner().put("x", data));
        assertThat(store.length("x")).isEmpty();
        assertThat(store.length("x")).hasValue(10);
        assertThat(seen).containsExactly("before false");
    }

    @Test
    void theChainCountsOnlyRequestsThatWaitedForOneAnother() {
        List<FaultStore.Request> rs = List.of(
                new FaultStore.Request(Call.GET, "GET a", "a", 0, -1, 0, 10),
                new FaultStore.Request(Call.GET, "GET b", "b", 5, -1, 5, 15),
                new FaultStore.Request(Call.GET, "GET c", "c", 0, -1, 12, 20),
                new FaultStore.Request(Call.GET, "GET d", "d", 0, -1, 21, 30));
        assertThat(FaultStore.chain(rs, 30)).extracting(FaultStore.Request::key).containsExactly("a", "c", "d");
        assertThat(FaultStore.chain(rs, 20)).hasSize(2);
    }
}
