package io.warpdata.blobcache.cache;

import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Warm-read micro-benchmark (not a test): reads a blob that is fully in the disk cache through
 * {@link BlockCache#read} in 128 KiB requests (FUSE's usual size), and the same bytes straight from
 * the cache's block files with FileChannel reads of the same size, alternating, several rounds.
 * Both run with the page cache warm (dropping it needs privileges this harness does not assume),
 * so the ratio isolates the cache's own overhead: lookup, CRC32C of touched chunks, one copy.
 *
 * <p>Run: {@code java -cp <test classpath> io.warpdata.blobcache.cache.CacheReadBench [MiB] [rounds]}
 */
public final class CacheReadBench {
    private CacheReadBench() {
    }

    public static void main(String[] args) throws Exception {
        int mib = args.length > 0 ? Integer.parseInt(args[0]) : 256;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int req = 128 * 1024;
        Path dir = Files.createTempDirectory("warp-bench");
        InMemoryBlobStore store = new InMemoryBlobStore();
        byte[] data = TestBlobs.bytes(mib << 20, 42);
        BlobRef ref = TestBlobs.put(store, data, BlockHashList.DEFAULT_BLOCK_SIZE);
        data = null;
        CacheConfig cfg = CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(4L << 30);
        try (BlockCache cache = BlockCache.open(store, cfg)) {
            byte[] buf = new byte[req];
            long t0 = System.nanoTime();
            for (long off = 0; off < ref.size(); off += req) {
                cache.read(ref, off, buf, 0, req);
            }
            double cold = mbps(ref.size(), System.nanoTime() - t0);
            cache.awaitIdle(java.time.Duration.ofSeconds(60));
            List<Path> files = blockFiles(dir);
            System.out.printf("blob %d MiB, %d block files; fill from in-memory store %.0f MB/s%n", mib, files.size(), cold);
            ByteBuffer direct = ByteBuffer.allocateDirect(req);
            byte[] heap = new byte[req];
            double bestCache = 0;
            double bestFiles = 0;
            double bestRandomCache = 0;
            double bestRandomFiles = 0;
            java.util.Random rnd = new java.util.Random(1);
            for (int r = 0; r < rounds; r++) {
                t0 = System.nanoTime();
                for (long off = 0; off < ref.size(); off += req) {
                    cache.read(ref, off, buf, 0, req);
                }
                bestCache = Math.max(bestCache, mbps(ref.size(), System.nanoTime() - t0));

                t0 = System.nanoTime();
                long total = 0;
                for (Path p : files) {
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                        long size = ch.size();
                        for (long pos = BlockFile.ALIGN; pos < size; pos += req) {
                            direct.clear();
                            total += ch.read(direct, pos);
                            direct.flip();
                            direct.get(heap, 0, direct.remaining());
                        }
                    }
                }
                bestFiles = Math.max(bestFiles, mbps(total, System.nanoTime() - t0));

                int n = 20_000;
                byte[] small = new byte[4096];
                t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    long off = (long) rnd.nextInt((int) (ref.size() / 4096)) * 4096;
                    cache.read(ref, off, small, 0, 4096);
                }
                bestRandomCache = Math.max(bestRandomCache, n / ((System.nanoTime() - t0) / 1e9));
                ByteBuffer d4 = ByteBuffer.allocateDirect(4096);
                t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    long off = (long) rnd.nextInt((int) (ref.size() / 4096)) * 4096;
                    Path p = files.get((int) (off >> 20));
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                        d4.clear();
                        ch.read(d4, BlockFile.ALIGN + (off & ((1 << 20) - 1)));
                        d4.flip();
                        d4.get(small);
                    }
                }
                bestRandomFiles = Math.max(bestRandomFiles, n / ((System.nanoTime() - t0) / 1e9));
            }
            System.out.printf("sequential 128 KiB reads, page cache warm: cache %.0f MB/s, block files direct %.0f MB/s,"
                    + " ratio %.2f%n", bestCache, bestFiles, bestCache / bestFiles);
            System.out.printf("random 4 KiB reads: cache %.0f reads/s, open+read+close of block file %.0f reads/s,"
                    + " ratio %.2f%n", bestRandomCache, bestRandomFiles, bestRandomCache / bestRandomFiles);
            System.out.println("counters " + cache.stats().counters());
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static double mbps(long bytes, long nanos) {
        return bytes / 1e6 / (nanos / 1e9);
    }

    private static List<Path> blockFiles(Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> shards = Files.newDirectoryStream(dir.resolve("v1/blocks"))) {
            for (Path shard : shards) {
                try (DirectoryStream<Path> files = Files.newDirectoryStream(shard)) {
                    files.forEach(out::add);
                }
            }
        }
        out.sort(Comparator.comparingInt(p -> Integer.parseInt(p.getFileName().toString()
                .substring(p.getFileName().toString().lastIndexOf('.') + 1))));
        return out;
    }
}
