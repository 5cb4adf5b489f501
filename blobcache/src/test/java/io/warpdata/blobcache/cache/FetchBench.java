package io.warpdata.blobcache.cache;

import io.warpdata.store.BenchS3Server;
import io.warpdata.store.BlobStore;
import io.warpdata.store.S3ProxyFixture;
import io.warpdata.store.StoreLayout;
import io.warpdata.store.s3.S3BlobStore;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Cold-read CPU benchmark of everything below {@link BlockCache#read} on a miss (not a test):
 * the loopback S3 server runs in a child JVM (so this process's CPU time is the client's alone,
 * as warpd's would be), a blob is put once, then each round does one raw single-stream GET of
 * the whole object, a cold pass (empty cache directory) and a warm pass through the cache in
 * 128 KiB reads taken in order by {@code threads} reader threads, as FUSE's reader threads take
 * the kernel's read-ahead requests. Reports MB/s and CPU seconds per GiB of this process (the
 * machine is shared and has 2 cores: CPU per GiB is the steadier figure), split by thread group.
 *
 * <p>Run: {@code java -XX:+UseG1GC -cp <test classpath> io.warpdata.blobcache.cache.FetchBench
 * [MiB=512] [rounds=3] [threads=2] [warm-up rounds=2] [server data dir (kept; default a temp dir, deleted)]}
 * {@code -Dwarp.bench.fetches=N} sets maxConcurrentFetches. Warm-up rounds run first and are left out of the medians: with only a few hundred GETs per
 * round, the SDK's request path is still interpreted in the first rounds (a long-running warpd's
 * is compiled).
 */
public final class FetchBench {
    private static final int REQ = 128 * 1024;

    private FetchBench() {
    }

    public static void main(String[] args) throws Exception {
        int mib = args.length > 0 ? Integer.parseInt(args[0]) : 512;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        int warmup = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        boolean keepData = args.length > 4;
        Path work = Files.createTempDirectory("warp-fetchbench");
        Path data = keepData ? Path.of(args[4]) : work.resolve("s3");
        Process server = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseG1GC", "-cp", System.getProperty("java.class.path"), BenchS3Server.class.getName(),
                data.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String endpoint = endpoint(server);
            S3BlobStore.Config cfg = S3BlobStore.Config.defaults()
                    .withCredentials(S3ProxyFixture.ACCESS_KEY, S3ProxyFixture.SECRET_KEY);
            System.setProperty("aws.region", S3ProxyFixture.REGION);
            try (BlobStore store = S3BlobStore.open("s3://" + S3ProxyFixture.BUCKET + "/bench",
                    Optional.of(endpoint), cfg)) {
                BlobRef ref = putBlob(store, mib);
                run(store, ref, mib, warmup, rounds, threads, work);
            }
        } finally {
            server.getOutputStream().close();
            server.waitFor();
            try (Stream<Path> s = Files.walk(work)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static String endpoint(Process server) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null) {
            if (line.startsWith("ENDPOINT ")) {
                return line.substring("ENDPOINT ".length());
            }
        }
        throw new IllegalStateException("the S3 server exited without an endpoint");
    }

    private static BlobRef putBlob(BlobStore store, int mib) {
        byte[] bytes = TestBlobs.bytes(mib << 20, 5);
        BlockHashList list = BlockHashList.of(bytes, BlockHashList.DEFAULT_BLOCK_SIZE);
        BlobRef ref = new BlobRef(io.warpdata.manifest.BlobId.of(bytes), bytes.length,
                io.warpdata.manifest.BlobId.of(list.serialize()));
        if (store.length(StoreLayout.blob(ref.id())).isEmpty()) {
            TestBlobs.put(store, bytes, BlockHashList.DEFAULT_BLOCK_SIZE);
        }
        return ref;
    }

    private static void run(BlobStore store, BlobRef ref, int mib, int warmup, int rounds, int threads, Path work)
            throws Exception {
        double gib = ref.size() / (double) (1 << 30);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        List<double[]> rows = new ArrayList<>();
        byte[] whole = new byte[(int) ref.size()];
        // Reader threads live across passes, so that their CPU time can be read after a pass.
        AtomicInteger n = new AtomicInteger();
        ExecutorService readers = Executors.newFixedThreadPool(threads, r -> new Thread(r, "reader-" + n.incrementAndGet()));
        // One cache for all rounds, emptied before each cold pass (as the bench empties a running
        // warpd's cache with warpctl cache gc): steady state, not a fresh process.
        Path dir = work.resolve("cache");
        CacheConfig cc = CacheConfig.defaults(dir).withMinFreeBytes(0).withMaxBytes(4L << 30);
        Integer fetches = Integer.getInteger("warp.bench.fetches");
        if (fetches != null) {
            cc = cc.withMaxConcurrentFetches(fetches);
        }
        try (BlockCache cache = BlockCache.open(store, cc)) {
            for (int r = -warmup; r < rounds; r++) {
                long c0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                store.read(StoreLayout.blob(ref.id()), 0, whole, 0, whole.length);
                double rawMbps = mbps(ref.size(), System.nanoTime() - t0);
                double rawCpu = (os.getProcessCpuTime() - c0) / 1e9 / gib;

                cache.gc(0);
                Map<String, Long> th0 = threadCpu();
                long gc0 = gcMillis();
                long alloc0 = allocated();
                c0 = os.getProcessCpuTime();
                t0 = System.nanoTime();
                pass(cache, ref, readers, threads);
                double coldMbps = mbps(ref.size(), System.nanoTime() - t0);
                cache.awaitIdle(Duration.ofSeconds(120));
                long cpu = os.getProcessCpuTime() - c0;
                double coldCpu = cpu / 1e9 / gib;
                String groups = cpuByGroup(th0, threadCpu(), cpu, gib) + String.format("gc(wall)=%.2f alloc=%.0fMiB/GiB",
                        (gcMillis() - gc0) / 1e3 / gib, (allocated() - alloc0) / 1048576.0 / gib);
                c0 = os.getProcessCpuTime();
                t0 = System.nanoTime();
                pass(cache, ref, readers, threads);
                double warmMbps = mbps(ref.size(), System.nanoTime() - t0);
                double warmCpu = (os.getProcessCpuTime() - c0) / 1e9 / gib;
                String counters = cache.stats().counters().toString();
                if (r >= 0) {
                    rows.add(new double[] {rawMbps, rawCpu, coldMbps, coldCpu, warmMbps, warmCpu});
                }
                System.out.printf("BENCH " + (r < 0 ? "warm-up " : "") + "round %d: raw GET %.0f MB/s %.2f cpu-s/GiB | cold %.0f MB/s %.2f cpu-s/GiB"
                        + " (ratio %.2f) | warm %.0f MB/s %.2f cpu-s/GiB%n", r, rawMbps, rawCpu, coldMbps, coldCpu,
                        coldMbps / rawMbps, warmMbps, warmCpu);
                System.out.println("BENCH   cold cpu-s/GiB by thread: " + groups);
                if (r == rounds - 1) {
                    System.out.println("BENCH   counters: " + counters);
                }
            }
        }
        System.out.printf("BENCH %d MiB, %d reader threads, medians of %d: raw GET %.0f MB/s %.2f cpu-s/GiB,"
                + " cold %.0f MB/s %.2f cpu-s/GiB (min %.2f), warm %.0f MB/s %.2f cpu-s/GiB%n", mib, threads, rounds,
                median(rows, 0), median(rows, 1), median(rows, 2), median(rows, 3), min(rows, 3), median(rows, 4),
                median(rows, 5));
        readers.shutdown();
    }

    /** One sequential pass: {@code threads} readers take the next 128 KiB request in turn. */
    private static void pass(BlockCache cache, BlobRef ref, ExecutorService readers, int threads) throws Exception {
        AtomicLong next = new AtomicLong();
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            done.add(readers.submit(() -> {
                byte[] buf = new byte[REQ];
                long off;
                while ((off = next.getAndAdd(REQ)) < ref.size()) {
                    cache.read(ref, off, buf, 0, REQ);
                }
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
    }

    private static Map<String, Long> threadCpu() {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Map<String, Long> out = new HashMap<>();
        for (java.lang.management.ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (ti != null) {
                long t = mx.getThreadCpuTime(ti.getThreadId());
                if (t > 0) {
                    out.put(ti.getThreadId() + " " + ti.getThreadName(), t);
                }
            }
        }
        return out;
    }

    private static String cpuByGroup(Map<String, Long> before, Map<String, Long> after, long processCpu, double gib) {
        TreeMap<String, Long> groups = new TreeMap<>();
        long java = 0;
        for (Map.Entry<String, Long> e : after.entrySet()) {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            String name = e.getKey().substring(e.getKey().indexOf(' ') + 1).replaceAll("[0-9]+", "N");
            groups.merge(name, d, Long::sum);
            java += d;
        }
        groups.put("vm(gc,jit,..)", processCpu - java);
        StringBuilder sb = new StringBuilder();
        groups.forEach((k, v) -> {
            if (v / 1e9 / gib >= 0.01) {
                sb.append(String.format("%s=%.2f ", k, v / 1e9 / gib));
            }
        });
        return sb.toString();
    }

    private static long gcMillis() {
        long t = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            t += Math.max(0, gc.getCollectionTime());
        }
        return t;
    }

    private static long allocated() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return mx.getTotalThreadAllocatedBytes();
    }

    private static double median(List<double[]> rows, int col) {
        double[] v = rows.stream().mapToDouble(r -> r[col]).toArray();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static double min(List<double[]> rows, int col) {
        return rows.stream().mapToDouble(r -> r[col]).min().orElse(Double.NaN);
    }

    private static double mbps(long bytes, long nanos) {
        return bytes / 1e6 / (nanos / 1e9);
    }
}
