package io.warpdata.blobcache.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.IntPredicate;

/**
 * Hit rates of the disk cache's eviction policy (Caffeine W-TinyLFU) against plain LRU on block
 * access traces typical of ML training, with a cache of N blocks (not a test; prints a table).
 *
 * <p>Run: {@code java -cp <test classpath> io.warpdata.blobcache.cache.EvictionPolicySim}
 */
public final class EvictionPolicySim {
    private static final int N = 2000;

    private EvictionPolicySim() {
    }

    public static void main(String[] args) {
        Random rnd = new Random(7);
        row("sequential epochs, dataset 1.5x cache (10 epochs)", epochs(3 * N / 2, 10, false, rnd));
        row("shuffled epochs, dataset 1.5x cache (10 epochs)", epochs(3 * N / 2, 10, true, rnd));
        row("shuffled epochs, dataset 0.8x cache (10 epochs)", epochs(4 * N / 5, 10, true, rnd));
        row("hot dataset 0.5x cache read each epoch + one-off 4x scan", hotPlusScan(rnd));
        row("zipf(0.9) over 10x cache", zipf(10 * N, 0.9, 20 * N, rnd));
    }

    private static void row(String name, List<Integer> trace) {
        Cache<Integer, Boolean> tiny = Caffeine.newBuilder().maximumSize(N).executor(Runnable::run).build();
        Map<Integer, Boolean> lru = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> e) {
                return size() > N;
            }
        };
        double t = hitRate(trace, k -> {
            boolean hit = tiny.getIfPresent(k) != null;
            if (!hit) {
                tiny.put(k, true);
            }
            return hit;
        });
        double l = hitRate(trace, k -> {
            boolean hit = lru.get(k) != null;
            if (!hit) {
                lru.put(k, true);
            }
            return hit;
        });
        System.out.printf("%-62s W-TinyLFU %5.1f%%   LRU %5.1f%%%n", name, 100 * t, 100 * l);
    }

    private static double hitRate(List<Integer> trace, IntPredicate access) {
        long hits = 0;
        for (int k : trace) {
            if (access.test(k)) {
                hits++;
            }
        }
        return (double) hits / trace.size();
    }

    private static List<Integer> epochs(int blocks, int epochs, boolean shuffle, Random rnd) {
        List<Integer> out = new ArrayList<>();
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < blocks; i++) {
            order.add(i);
        }
        for (int e = 0; e < epochs; e++) {
            if (shuffle) {
                Collections.shuffle(order, rnd);
            }
            out.addAll(order);
        }
        return out;
    }

    private static List<Integer> hotPlusScan(Random rnd) {
        List<Integer> out = new ArrayList<>();
        int hot = N / 2;
        int scanNext = 1_000_000;
        for (int e = 0; e < 10; e++) {
            for (int i = 0; i < hot; i++) {
                out.add(i);
                if (e >= 2 && e < 6) {
                    // A one-off scan of a big dataset interleaved with epochs 2-5.
                    for (int j = 0; j < 2; j++) {
                        out.add(scanNext++);
                    }
                }
            }
        }
        return out;
    }

    private static List<Integer> zipf(int keys, double s, int length, Random rnd) {
        double[] cdf = new double[keys];
        double sum = 0;
        for (int i = 0; i < keys; i++) {
            sum += 1 / Math.pow(i + 1, s);
            cdf[i] = sum;
        }
        List<Integer> out = new ArrayList<>(length);
        for (int i = 0; i < length; i++) {
            double u = rnd.nextDouble() * sum;
            int lo = 0;
            int hi = keys - 1;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (cdf[mid] < u) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            out.add(lo);
        }
        return out;
    }
}
