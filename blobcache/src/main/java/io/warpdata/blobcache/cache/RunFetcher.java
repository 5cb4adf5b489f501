package io.warpdata.blobcache.cache;

import io.warpdata.store.StoreLayout;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * How one run of consecutive blocks is fetched, once the {@link FetchScheduler} has decided to:
 * a buffer within the in-flight memory bound, one ranged GET, each block verified against its
 * SHA-256 (refetched once if it fails) and handed to its waiters as soon as its bytes have
 * streamed in, then every block written to the cache, and the fetch retired.
 *
 * <h2>Cold-read CPU (what a miss costs, and why)</h2>
 * On a cold sequential read the machine's CPU, not the network, is the limit on a small host,
 * so every fetched byte's path is kept short. Measured with {@code FetchBench} (test scope) and
 * async-profiler on the fetch threads, a miss costs, per byte: the socket read (the kernel's copy
 * into the JDK's temporary direct buffer, then one copy into the run buffer: Java's socket API
 * and the SDK's InputStream allow no fewer), SHA-256 (the SHA-NI intrinsic: near the hardware
 * cost), CRC32C of the 64 KiB chunks, and the block file's write (one copy into a direct buffer,
 * the kernel's copy into the page cache, ext4's per-page delayed allocation), plus per GET the
 * SDK's request handling and per block a file create and rename.
 * <ul>
 * <li>Fetch buffers are pooled ({@code RunBuffers}, {@code FetchScheduler.POOLED_BUFFER_BYTES} =
 *     64 MiB of idle buffers at most; a run takes the smallest idle one that fits it, whatever
 *     its size): a fresh 8 MiB array per GET was zeroed by the JVM,
 *     page-faulted in by the kernel 4 KiB at a time (zeroed again) and, being a G1 humongous
 *     object, collected by collections of its own: about 16% of the fetch threads' CPU and
 *     1 GiB of allocation per GiB read. A buffer returns to the pool only when the fetch and
 *     every reader copying out of it have let go (a count per run); a reader that comes later
 *     reads the block from the cache instead.</li>
 * <li>A block file is assembled (header encoded in place, then the data) in one per-thread
 *     direct buffer and written with one {@code write}: from a heap array the JDK copies into a
 *     temporary direct buffer anyway (two of them, and a 4 KiB header allocation, for the old
 *     gathering write), so this is the only copy on the JVM side. Temp file + rename is kept
 *     (crash safety); no fsync (see {@code DiskBlocks}).</li>
 * <li>Measured but left as they are: the kernel's side of the block write (page-cache copy and
 *     ext4's per-4-KiB-page delayed allocation, about a fifth of the fetch threads' CPU) could
 *     only go with O_DIRECT, which would make every write wait for the device and send the
 *     reads that follow a cold read to disk instead of the page cache; runs of 16 MiB would halve
 *     the SDK's per-GET cost (about 3 ms of CPU per GET before its code is fully compiled) but
 *     also halve the GETs one sequential reader keeps in flight on real S3; writing blocks on
 *     other threads than the GET's would not lower the CPU per byte, which is the limit here.</li>
 * </ul>
 *
 */
final class RunFetcher {
    private static final Logger LOG = LoggerFactory.getLogger(RunFetcher.class);

    private final BlockFetcher fetcher;
    private final BlockStorage storage;
    private final RunBuffers buffers;
    private final Semaphore memory;
    private final int memoryPermits;
    private final ConnectionRate rate;
    private final Suspects suspects;
    private final BooleanSupplier closed;
    /** Takes a fetch out of the in-flight map (only if it is still the one there). */
    private final Consumer<Fetch> retire;

    /**
     * @param maxInFlightBytes bound on the bytes of all runs being fetched or written at once
     * @param rate             told how long each GET took, for the size of later runs
     * @param suspects         told of clean runs and verification failures
     * @param closed           whether the cache is closing (then nothing new is fetched)
     * @param retire           takes a settled fetch out of the in-flight map
     */
    RunFetcher(BlockFetcher fetcher, BlockStorage storage, long maxInFlightBytes, long pooledBufferBytes,
               ConnectionRate rate, Suspects suspects, BooleanSupplier closed, Consumer<Fetch> retire) {
        this.fetcher = fetcher;
        this.rate = rate;
        this.storage = storage;
        this.memoryPermits = FetchScheduler.kib(maxInFlightBytes);
        this.memory = new Semaphore(memoryPermits);
        this.buffers = new RunBuffers(FetchScheduler.MAX_RUN_BYTES, pooledBufferBytes);
        this.suspects = suspects;
        this.closed = closed;
        this.retire = retire;
    }

    /** One ranged GET for consecutive blocks, verification of each, then hand-over and caching. */
    void fetch(List<Fetch> group) {
        Fetch first = group.get(0);
        BlobRef blob = first.blob;
        BlockHashList list = first.list;
        int b0 = first.key.index();
        int len = BlockFetcher.runLength(list, b0, group.size());
        int kib = Math.min(FetchScheduler.kib(buffers.capacityFor(len)), memoryPermits);
        long deadline = fetcher.deadlineFromNow();
        boolean acquired = false;
        RunBuffers.Run run = null;
        try {
            if (closed.getAsBoolean()) {
                throw new StoreUnavailableException("The block cache is closed", null);
            }
            acquired = memory.tryAcquire(kib, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (!acquired) {
                throw new StoreUnavailableException("No memory for in-flight fetches of blob " + blob.id()
                        + " within the read deadline", null);
            }
            run = buffers.acquire(len);
            byte[] buf = run.array;
            // Each block goes to its readers as soon as its bytes are in and verified, while the
            // rest of the run still streams in: a reader never waits for a whole run.
            HandOff handOff = new HandOff(group, run, deadline);
            String key = StoreLayout.blob(blob.id());
            long offset = (long) b0 * list.blockSize();
            boolean fromStore = false;
            if (fetcher.fromRemotes(key, offset, buf, 0, len, list.blockSize(), blob.size(),
                    (d, o, l) -> verifies(list, b0, d, o, l), deadline)) {
                handOff.verifiedAll();
            } else {
                long started = System.nanoTime();
                fetcher.readStreaming(key, offset, buf, len, handOff::arrived, handOff::handedBytes, deadline);
                handOff.arrived(len);
                rate.record(len, System.nanoTime() - started);
                fromStore = true;
            }
            if (fromStore && handOff.clean) {
                // Every block of the run verified: share them with the tiers warpd fills (queued, copied).
                fetcher.fillRemotes(key, offset, buf, 0, len, list.blockSize());
            }
            if (handOff.clean) {
                suspects.verified(blob.id());
            }
            // Only then write them to the cache, so that the GET's stream is never held up by disk
            // writes and a reader of the run's last block does not wait for the others' writes.
            int pos = 0;
            for (Fetch f : group) {
                int bl = list.blockLength(f.key.index());
                if (!f.settled.isDone()) {
                    store(f, buf, pos, bl);
                }
                pos += bl;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failAll(group, new StoreUnavailableException("Interrupted fetching blob " + blob.id(), e));
        } catch (RuntimeException | Error e) {
            failAll(group, e);
        } finally {
            if (run != null) {
                // Every block is cached or failed by now; readers still copying hold the run.
                run.release();
            }
            if (acquired) {
                memory.release(kib);
            }
        }
    }

    /** Verifies and hands over the blocks of one run in order, as the run's bytes arrive. */
    private final class HandOff {
        private final List<Fetch> group;
        private final RunBuffers.Run run;
        private final byte[] buf;
        private final long deadline;
        private int next;
        private int nextStart;
        /** No block of the run has failed verification, not even once. */
        boolean clean = true;

        HandOff(List<Fetch> group, RunBuffers.Run run, long deadline) {
            this.group = group;
            this.run = run;
            this.buf = run.array;
            this.deadline = deadline;
        }

        /** Bytes [0, upTo) of the run are in place. */
        void arrived(int upTo) {
            while (next < group.size()) {
                Fetch f = group.get(next);
                int bl = f.list.blockLength(f.key.index());
                if (nextStart + bl > upTo) {
                    return;
                }
                try {
                    if (!fetcher.verifyOrRefetch(f.blob, f.list, f.key.index(), buf, nextStart, deadline)) {
                        suspect(f.blob);
                    }
                    f.done.complete(new Fetch.BlockBytes(run, nextStart, bl, false));
                } catch (BlockVerificationException e) {
                    // Before the readers hear of it, so that a reader going on sequentially
                    // finds read-ahead already held back, and the members around the block are
                    // fetched on their own.
                    suspect(f.blob);
                    suspects.failedTwice(f.blob.id(), f.key.index());
                    fail(f, e);
                } catch (RuntimeException e) {
                    fail(f, e);
                }
                next++;
                nextStart += bl;
            }
        }

        /** All the run's bytes are in place and already verified (a remote tier's, {@link Remotes}). */
        void verifiedAll() {
            while (next < group.size()) {
                Fetch f = group.get(next);
                int bl = f.list.blockLength(f.key.index());
                f.done.complete(new Fetch.BlockBytes(run, nextStart, bl, true));
                next++;
                nextStart += bl;
            }
        }

        private void suspect(BlobRef blob) {
            clean = false;
            suspects.failed(blob.id());
        }

        /** Bytes of the run already handed over (a retried GET starts there). */
        int handedBytes() {
            return nextStart;
        }
    }

    /** Whether every block of the run starting at block {@code b0}, held at {@code data[off, off + len)}, hashes right. */
    private static boolean verifies(BlockHashList list, int b0, byte[] data, int off, int len) {
        int pos = off;
        for (int b = b0; pos < off + len; b++) {
            int bl = list.blockLength(b);
            if (!list.verify(b, data, pos, bl)) {
                return false;
            }
            pos += bl;
        }
        return true;
    }

    /** Writes a fetched block to the cache, then retires its fetch. */
    private void store(Fetch f, byte[] buf, int pos, int len) {
        try {
            storage.put(f.key, f.blob.blocks(), buf, pos, len, f.prefetch ? f.prefetchCredit : null);
        } catch (RuntimeException e) {
            LOG.warn("Could not cache {}: {}", f.key, e.toString());
        } finally {
            retire.accept(f);
            f.settled.complete(null);
        }
    }

    void fail(Fetch f, Throwable e) {
        // Out of the map first, so a reader that sees this failure and retries starts afresh.
        retire.accept(f);
        f.done.completeExceptionally(e);
        f.settled.complete(null);
    }

    private void failAll(List<Fetch> group, Throwable e) {
        for (Fetch f : group) {
            if (!f.done.isDone()) {
                fail(f, e);
            } else if (!f.settled.isDone()) {
                retire.accept(f);
                f.settled.complete(null);
            }
        }
    }

}
