package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reading a parted index's parts ahead of a walk: only after {@link PartReadAhead#WALK} parts in
 * order, bounded in flight and in window, stopping at the last part, through the loader (single
 * flight with a demand for the same part), and with its errors dropped while the demand path
 * reports its own.
 */
class PartReadAheadTest {
    static final int FOLDERS = 20;
    static final int PER_FOLDER = 10;

    /** 20 folders of 10 members, one folder a part: part k is folder dKK. */
    private static MemberIndex.Parts folders() {
        Random r = new Random(3);
        MemberIndexBuilder b = new MemberIndexBuilder();
        for (int d = 0; d < FOLDERS; d++) {
            for (int f = 0; f < PER_FOLDER; f++) {
                b.add(String.format("d%02d/f%02d", d, f), 0, 1000L * (d * PER_FOLDER + f), 10, 0644, Manifests.hash(r));
            }
        }
        return b.build().writeParts(PER_FOLDER);
    }

    /** Loads parts by id, counting loads per part number; a part can be made to fail or wait. */
    static final class Loader implements MemberIndex.PartLoader {
        final Map<BlobId, Integer> number = new ConcurrentHashMap<>();
        final Map<BlobId, byte[]> bytes = new ConcurrentHashMap<>();
        final Map<Integer, AtomicInteger> loads = new ConcurrentHashMap<>();
        final Set<Integer> failOnce = ConcurrentHashMap.newKeySet();
        final Set<Integer> failAlways = ConcurrentHashMap.newKeySet();
        volatile int gated = -1;
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch gate = new CountDownLatch(1);

        Loader(MemberIndex.Parts parts) {
            for (int k = 0; k < parts.parts().size(); k++) {
                byte[] p = parts.parts().get(k);
                number.put(BlobId.of(p), k);
                bytes.put(BlobId.of(p), p);
            }
        }

        @Override
        public IndexBytes load(BlobRef part) {
            int k = number.get(part.id());
            loads.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
            if (failAlways.contains(k) || failOnce.remove(k)) {
                throw new IllegalStateException("store down for part " + k);
            }
            if (k == gated) {
                entered.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            return IndexBytes.of(bytes.get(part.id()));
        }

        int loads(int k) {
            AtomicInteger n = loads.get(k);
            return n == null ? 0 : n.get();
        }

        List<Integer> loaded() {
            List<Integer> out = new ArrayList<>(loads.keySet());
            out.sort(null);
            return out;
        }
    }

    /** Runs tasks when told, and remembers the most it ever held queued. */
    static final class Manual implements Executor {
        final ArrayDeque<Runnable> queue = new ArrayDeque<>();
        int most;

        @Override
        public void execute(Runnable task) {
            queue.add(task);
            most = Math.max(most, queue.size());
        }

        void drain() {
            for (Runnable t = queue.poll(); t != null; t = queue.poll()) {
                t.run();
            }
        }
    }

    private static void ls(MemberIndex index, int folder) {
        List<String> names = new ArrayList<>();
        index.forEachChild(String.format("d%02d", folder), 0, (name, dir, from, to) -> {
            names.add(name);
            return false;
        });
        assertThat(names).hasSize(PER_FOLDER);
    }

    @Test
    void readsAheadOnlyOnceAWalkIsSeenAndWithinTheBounds() {
        MemberIndex.Parts parts = folders();
        Loader loader = new Loader(parts);
        Manual exec = new Manual();
        PartReadAhead ahead = new PartReadAhead(exec, 2, 4);
        MemberIndex index = MemberIndex.open(IndexBytes.of(parts.top()), "top", loader, ahead);

        ls(index, 7); // a first ls, and the next folder: two parts, no walk yet
        ls(index, 8);
        exec.drain();
        assertThat(ahead.started()).isZero();
        assertThat(loader.loaded()).containsExactly(7, 8);

        ls(index, 2); // out of order: the count starts again
        ls(index, 3);
        exec.drain();
        assertThat(ahead.started()).isZero();

        ls(index, 4); // 2, 3, 4: a walk; at most 2 in flight, then topped up to 4 ahead
        assertThat(exec.queue).hasSize(2);
        exec.drain();
        assertThat(exec.most).isEqualTo(2);
        assertThat(loader.loaded()).containsExactly(2, 3, 4, 5, 6, 7, 8);
        assertThat(ahead.loadedParts()).isEqualTo(2); // 5, 6 (7, 8 were held already)
        assertThat(ahead.running()).isZero();

        for (int f = 5; f < FOLDERS; f++) { // the walk goes on to the end: each part is loaded once
            ls(index, f);
            exec.drain();
        }
        assertThat(exec.most).isEqualTo(2);
        assertThat(loader.loaded()).hasSize(FOLDERS - 2).doesNotContain(0, 1);
        for (int k = 2; k < FOLDERS; k++) {
            assertThat(loader.loads(k)).as("loads of part %d", k).isEqualTo(1);
        }
        assertThat(ahead.failures()).isZero();
    }

    @Test
    void noReadAheadWithNone() {
        MemberIndex.Parts parts = folders();
        Loader loader = new Loader(parts);
        MemberIndex index = MemberIndex.open(IndexBytes.of(parts.top()), "top", loader);
        for (int f = 0; f < 6; f++) {
            ls(index, f);
        }
        assertThat(loader.loaded()).containsExactly(0, 1, 2, 3, 4, 5);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS) // a demand waiting on a read-ahead it did not ask for would hang here
    void aDemandWaitsOnlyForTheReadAheadOfItsOwnPart() throws Exception {
        MemberIndex.Parts parts = folders();
        Loader loader = new Loader(parts);
        loader.gated = 5;
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
        try {
            PartReadAhead ahead = new PartReadAhead(pool, 2, 4);
            MemberIndex index = MemberIndex.open(IndexBytes.of(parts.top()), "top", loader, ahead);
            ls(index, 2);
            ls(index, 3);
            ls(index, 4); // reads 5 (held at the gate) and 6 ahead
            assertThat(loader.entered.await(20, TimeUnit.SECONDS)).isTrue();

            ls(index, 0); // another part: does not wait for part 5
            ls(index, 1);
            Future<?> demand = pool.submit(() -> ls(index, 5)); // part 5: waits for its read-ahead
            loader.gate.countDown();
            demand.get(20, TimeUnit.SECONDS);
            assertThat(loader.loads(5)).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void readAheadErrorsAreDroppedAndTheDemandReportsItsOwn() {
        MemberIndex.Parts parts = folders();
        Loader loader = new Loader(parts);
        loader.failOnce.add(5);
        loader.failAlways.add(9);
        Manual exec = new Manual();
        PartReadAhead ahead = new PartReadAhead(exec, 2, 4);
        MemberIndex index = MemberIndex.open(IndexBytes.of(parts.top()), "top", loader, ahead);
        ls(index, 2);
        ls(index, 3);
        ls(index, 4);
        exec.drain(); // 5 fails (dropped), 6 loads; the failure stops reading ahead
        assertThat(ahead.failures()).isEqualTo(1);
        assertThat(ahead.running()).isZero();
        assertThat(loader.loaded()).containsExactly(2, 3, 4, 5, 6);

        ls(index, 5); // the demand loads it again, and gets it
        assertThat(loader.loads(5)).isEqualTo(2);
        ls(index, 6);
        ls(index, 7); // a walk again (5, 6, 7): 8 loads, 9 fails (dropped)
        exec.drain();
        assertThat(ahead.failures()).isEqualTo(2);
        ls(index, 8);
        assertThatThrownBy(() -> ls(index, 9)).hasMessageContaining("store down for part 9");
    }
}
