package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.blobcache.BlobStore;
import io.warpdata.blobcache.S3ProxyFixture;
import io.warpdata.blobcache.StoreLayout;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Cold-read benchmark on the loopback S3 server (not part of the test suites: its name does not
 * end in Test; run with {@code -Dtest=ColdReadBench -Dwarp.bench.mib=256}). Compares, in the same
 * run: one raw single-stream GET of the whole object, a cold sequential pass through
 * {@link BlockCache} in 128 KiB reads (FUSE's size), and the same pass warm. Prints every round
 * and the medians (the machine is shared: compare ratios from the same run).
 */
class ColdReadBench {
    @Test
    void coldSequentialReadVersusRawGet() throws Exception {
        int mib = Integer.getInteger("warp.bench.mib", 256);
        int rounds = Integer.getInteger("warp.bench.rounds", 3);
        byte[] data = TestBlobs.bytes(mib << 20, 5);
        Path dir = Files.createTempDirectory("warp-coldbench");
        try (S3ProxyFixture s3 = S3ProxyFixture.start(); BlobStore store = s3.openStore("bench")) {
            BlobRef ref = TestBlobs.put(store, data, BlockHashList.DEFAULT_BLOCK_SIZE);
            byte[] whole = new byte[data.length];
            byte[] buf = new byte[128 * 1024];
            double[] raw = new double[rounds];
            double[] cold = new double[rounds];
            double[] warm = new double[rounds];
            double[] ratio = new double[rounds];
            double[] rawCpu = new double[rounds];
            double[] coldCpu = new double[rounds];
            String counters = "";
            com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            for (int r = 0; r < rounds; r++) {
                long c0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                store.read(StoreLayout.blob(ref.id()), 0, whole, 0, whole.length);
                raw[r] = mbps(whole.length, System.nanoTime() - t0);
                rawCpu[r] = (os.getProcessCpuTime() - c0) / 1e6 / mib;
                assertThat(Arrays.equals(whole, data)).isTrue();

                Path cacheDir = dir.resolve("r" + r);
                try (BlockCache cache = BlockCache.open(store,
                        config(cacheDir))) {
                    java.util.Map<String, Long> vm0 = vmCounters();
                    java.util.Map<String, Long> threads0 = threadCpu();
                    c0 = os.getProcessCpuTime();
                    t0 = System.nanoTime();
                    for (long off = 0; off < ref.size(); off += buf.length) {
                        cache.read(ref, off, buf, 0, buf.length);
                    }
                    cold[r] = mbps(ref.size(), System.nanoTime() - t0);
                    cache.awaitIdle(java.time.Duration.ofSeconds(60));
                    long processCpu = os.getProcessCpuTime() - c0;
                    coldCpu[r] = processCpu / 1e6 / mib;
                    System.out.println("BENCH round " + r + " cold CPU ms/MiB by thread group: "
                            + cpuByGroup(threads0, threadCpu(), processCpu, mib) + vmSplit(vm0, vmCounters(), mib));
                    ratio[r] = cold[r] / raw[r];
                    cache.awaitIdle(java.time.Duration.ofSeconds(60));
                    t0 = System.nanoTime();
                    for (long off = 0; off < ref.size(); off += buf.length) {
                        cache.read(ref, off, buf, 0, buf.length);
                    }
                    warm[r] = mbps(ref.size(), System.nanoTime() - t0);
                    counters = cache.stats().counters().toString();
                }
                System.out.printf("BENCH round %d: raw %.0f MB/s %.2f ms/MiB, cold %.0f MB/s %.2f ms/MiB"
                        + " (ratio %.2f), warm %.0f MB/s%n", r, raw[r], rawCpu[r], cold[r], coldCpu[r], ratio[r], warm[r]);
            }
            System.out.printf("BENCH %d MiB object on loopback S3Proxy, medians of %d rounds: raw single GET %.0f MB/s,"
                    + " BlockCache cold sequential 128 KiB reads %.0f MB/s (ratio %.2f, median of per-round ratios),"
                    + " warm %.0f MB/s%n", mib, rounds, median(raw), median(cold), median(ratio), median(warm));
            System.out.println("BENCH counters of the last round: " + counters);
            System.out.printf("BENCH process CPU per MiB (server included), medians: raw GET %.2f ms, cold cached"
                    + " read %.2f ms%n", median(rawCpu), median(coldCpu));
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The defaults, or {@code -Dwarp.bench.fetches=N} concurrent fetches to try another setting. */
    private static CacheConfig config(Path cacheDir) {
        CacheConfig c = CacheConfig.defaults(cacheDir).withMinFreeBytes(0).withMaxBytes(4L << 30);
        Integer fetches = Integer.getInteger("warp.bench.fetches");
        return fetches == null ? c : c.withMaxConcurrentFetches(fetches);
    }

    /** CPU time of every live Java thread, by thread id and name. */
    private static java.util.Map<String, Long> threadCpu() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        java.util.Map<String, Long> out = new java.util.HashMap<>();
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

    /** CPU ms per MiB spent by each group of threads (digits dropped from names); "vm" = GC, JIT, rest. */
    private static String cpuByGroup(java.util.Map<String, Long> before, java.util.Map<String, Long> after,
            long processCpu, int mib) {
        java.util.TreeMap<String, Long> groups = new java.util.TreeMap<>();
        long java = 0;
        for (java.util.Map.Entry<String, Long> e : after.entrySet()) {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            String name = e.getKey().substring(e.getKey().indexOf(' ') + 1).replaceAll("[0-9]+", "N");
            groups.merge(name, d, Long::sum);
            java += d;
        }
        groups.put("vm(gc,jit,..)", processCpu - java);
        StringBuilder sb = new StringBuilder();
        groups.forEach((k, v) -> {
            if (v / 1e6 / mib >= 0.01) {
                sb.append(String.format("%s=%.2f ", k, v / 1e6 / mib));
            }
        });
        return sb.toString();
    }

    /**
     * HotSpot's own CPU counters (GC threads) and JIT time, read with jcmd (another process) when
     * -Dwarp.bench.vmcounters is set; empty otherwise.
     */
    private static java.util.Map<String, Long> vmCounters() {
        java.util.Map<String, Long> out = new java.util.HashMap<>();
        if (!Boolean.getBoolean("warp.bench.vmcounters")) {
            return out;
        }
        try {
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(ProcessHandle.current().pid()), "PerfCounter.print").redirectErrorStream(true).start();
            for (String line : new String(p.getInputStream().readAllBytes()).split("\n")) {
                int eq = line.indexOf('=');
                if (eq > 0 && (line.startsWith("sun.threads.") || line.startsWith("sun.ci.totalTime")
                        || line.startsWith("sun.os.hrt.frequency"))) {
                    try {
                        out.put(line.substring(0, eq), Long.parseLong(line.substring(eq + 1).trim()));
                    } catch (NumberFormatException e) {
                        // not a number: not one of ours
                    }
                }
            }
            p.waitFor();
        } catch (Exception e) {
            out.clear();
        }
        return out;
    }

    private static String vmSplit(java.util.Map<String, Long> a, java.util.Map<String, Long> b, int mib) {
        if (a.isEmpty() || b.isEmpty()) {
            return "";
        }
        long gc = b.getOrDefault("sun.threads.total_gc_cpu_time", 0L) - a.getOrDefault("sun.threads.total_gc_cpu_time", 0L);
        long vm = b.getOrDefault("sun.threads.cpu_time.vm", 0L) - a.getOrDefault("sun.threads.cpu_time.vm", 0L);
        double hz = b.getOrDefault("sun.os.hrt.frequency", 1_000_000_000L);
        double jit = (b.getOrDefault("sun.ci.totalTime", 0L) - a.getOrDefault("sun.ci.totalTime", 0L)) / hz * 1e3;
        return String.format("[of vm: gc=%.2f vmthread=%.2f jit(wall)=%.2f]", gc / 1e6 / mib, vm / 1e6 / mib, jit / mib);
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static double mbps(long bytes, long nanos) {
        return bytes / 1e6 / (nanos / 1e9);
    }
}
