package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.store.FaultStore;
import io.warpdata.store.FaultStore.Call;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.manifest.BlobRef;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 64 readers at once over a slow store, half sequential and half random: the bytes of all GETs
 * under way never exceed the in-flight bound, fetch workers never exceed theirs, and every byte
 * is right.
 */
class ManyReadersMemoryTest {
    private static final int MIB = 1 << 20;
    private static final int BS = 256 << 10;
    private static final int READERS = 64;
    private static final long IN_FLIGHT = 8L * MIB;

    @TempDir
    Path dir;

    private final ExecutorService fetchers = Executors.newCachedThreadPool();
    private final ExecutorService readers = Executors.newFixedThreadPool(READERS);
    private BlockCache cache;

    @AfterEach
    void tearDown() throws InterruptedException {
        if (cache != null) {
            cache.close();
        }
        readers.shutdownNow();
        fetchers.shutdownNow();
        readers.awaitTermination(10, TimeUnit.SECONDS);
        fetchers.awaitTermination(10, TimeUnit.SECONDS);
    }

    @Test
    void sixtyFourReadersStayWithinTheInFlightBoundAndReadEveryByteRight() throws Exception {
        InMemoryBlobStore memory = new InMemoryBlobStore();
        List<byte[]> data = new ArrayList<>();
        List<BlobRef> refs = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            byte[] d = TestBlobs.bytes(4 * MIB, 1000 + i);
            data.add(d);
            refs.add(TestBlobs.put(memory, d, BS));
        }
        FaultStore store = new FaultStore(memory);
        store.on(Call.READ).under("blobs/").pace(40e6);
        cache = new BlockCache(store, CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(32L * MIB)
                .withMaxInFlightBytes(IN_FLIGHT).withMaxPrefetchBytes(4L * MIB).withMaxConcurrentFetches(16), fetchers,
                null, null);
        List<Future<Long>> done = new ArrayList<>();
        for (int r = 0; r < READERS; r++) {
            int reader = r;
            done.add(readers.submit(() -> {
                Random rnd = new Random(reader);
                byte[] buf = new byte[64 << 10];
                long checked = 0;
                int blob = reader % refs.size();
                byte[] expected = data.get(blob);
                if (reader % 2 == 0) {
                    // Sequential: the whole blob in 64 KiB reads.
                    for (int off = 0; off < expected.length; off += buf.length) {
                        checked += readAndCheck(refs.get(blob), expected, off, buf);
                    }
                } else {
                    // Random 64 KiB reads anywhere in the blob.
                    for (int i = 0; i < 48; i++) {
                        int off = rnd.nextInt(expected.length - buf.length);
                        checked += readAndCheck(refs.get(blob), expected, off, buf);
                    }
                }
                return checked;
            }));
        }
        long checked = 0;
        for (Future<Long> f : done) {
            checked += f.get(120, TimeUnit.SECONDS);
        }
        assertThat(checked).isEqualTo(32L * 4 * MIB + 32L * 48 * (64 << 10));
        assertThat(store.peakBytesInFlight()).as("bytes of GETs under way at once").isPositive()
                .isLessThanOrEqualTo(IN_FLIGHT);
        assertThat(store.peakInFlight(Call.READ)).as("GETs under way at once").isLessThanOrEqualTo(16);
    }

    /**
     * Control clients (table streams) read on virtual threads that live as long as their client;
     * each kept a 1 MiB direct buffer for its disk reads, so 72 slow streams ran warpd out of
     * direct memory. 200 living virtual threads that each read from cached blocks hold a few MiB.
     */
    @Test
    void twoHundredLivingVirtualThreadsReadingCachedBlocksHoldAFewMegabytesOfDirectMemory() throws Exception {
        InMemoryBlobStore memory = new InMemoryBlobStore();
        byte[] d = TestBlobs.bytes(4 * MIB, 77);
        BlobRef ref = TestBlobs.put(memory, d, MIB);
        cache = new BlockCache(memory, CacheConfig.defaults(dir).withMinFreeBytes(0), fetchers, null, null);
        byte[] all = new byte[d.length];
        assertThat(cache.read(ref, 0, all, 0, all.length)).isEqualTo(d.length); // every block on disk now
        System.gc();
        long before = directBytes();
        int threads = 200;
        CountDownLatch haveRead = new CountDownLatch(threads);
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> started = new ArrayList<>();
        List<Throwable> failed = java.util.Collections.synchronizedList(new ArrayList<>());
        try {
            for (int t = 0; t < threads; t++) {
                int off = (t * 20_011) % (d.length - 4096);
                started.add(Thread.ofVirtual().start(() -> {
                    try {
                        byte[] buf = new byte[4096];
                        readAndCheck(ref, d, off, buf);
                    } catch (Throwable e) {
                        failed.add(e);
                    } finally {
                        haveRead.countDown();
                    }
                    try {
                        release.await(); // alive, like a stream waiting for its client
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
            assertThat(haveRead.await(60, TimeUnit.SECONDS)).isTrue();
            assertThat(failed).isEmpty();
            long held = directBytes() - before;
            assertThat(held).as("direct memory held by %d living readers", threads).isLessThan(16L * MIB);
        } finally {
            release.countDown();
            for (Thread t : started) {
                t.join(10_000);
            }
        }
    }

    private static long directBytes() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
    }

    private int readAndCheck(BlobRef ref, byte[] expected, int off, byte[] buf) {
        int n = cache.read(ref, off, buf, 0, buf.length);
        assertThat(n).isEqualTo(buf.length);
        assertThat(Arrays.equals(buf, 0, n, expected, off, off + n)).as("bytes at " + off).isTrue();
        return n;
    }
}
