package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cache directory's writes: closing refuses new ones and waits for those under way. */
class WriteGateTest {
    @TempDir
    Path dir;
    /** A thread per task: the common pool may have one worker (2 cores), which the waiting close would hold. */
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    @Test
    void closingRefusesNewWritesAndWaitsForThoseUnderWay() throws Exception {
        WriteGate gate = new WriteGate();
        assertThat(gate.begin()).isTrue();
        CompletableFuture<Boolean> closed = CompletableFuture.supplyAsync(gate::close, threads);
        awaitClosing(gate);
        assertThat(closed).as("a write is still under way").isNotDone();
        gate.end();
        assertThat(closed.get(10, TimeUnit.SECONDS)).as("every write ended in time").isTrue();
        assertThat(gate.begin()).isFalse();
        assertThat(gate.close()).as("closed again: nothing under way").isTrue();
    }

    /**
     * While the directory's close waits for a write, that write can still do what needs the
     * directory's lock (look at the lock file, make a folder again): the close does not hold it
     * while it waits (else the write stalled until the close gave up after 5 s).
     */
    @Test
    void aWriteUnderWayCanUseTheDirectoryWhileItsCloseWaits() throws Exception {
        CacheDirectory cache = new CacheDirectory(dir);
        WriteGate gate = cache.writes();
        assertThat(gate.begin()).isTrue();
        CompletableFuture<Void> closing = CompletableFuture.runAsync(cache::close, threads);
        awaitClosing(gate);
        CompletableFuture<Boolean> looked = CompletableFuture.supplyAsync(cache::stillLocked, threads);
        assertThat(looked.get(3, TimeUnit.SECONDS)).as("still ours until the close is done").isTrue();
        assertThat(closing).isNotDone();
        gate.end();
        closing.get(10, TimeUnit.SECONDS);
    }

    /** Waits until {@code gate} refuses writes: its close has begun. */
    private static void awaitClosing(WriteGate gate) throws InterruptedException {
        for (int i = 0; i < 10_000; i++) {
            if (!gate.begin()) {
                return;
            }
            gate.end();
            Thread.sleep(1);
        }
        throw new AssertionError("the close never began");
    }
}
