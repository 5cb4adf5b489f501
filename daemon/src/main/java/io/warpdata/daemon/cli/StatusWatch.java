package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.ByteSize;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One frame of {@code warpctl status --watch}: what warpd did between two {@code stats}
 * samples, as rates, for someone watching a training run warm up. Pure: it only turns two
 * samples and the time between them into text.
 */
final class StatusWatch {
    /** Datasets shown, busiest first: a screen's worth, the rest summed up in one line. */
    static final int BUSIEST = 5;

    private StatusWatch() {
    }

    /**
     * The frame for sample {@code now} after {@code previous}, {@code seconds} apart; the first
     * frame ({@code previous} null) shows totals since start, not rates.
     */
    static String frame(JsonNode previous, JsonNode now, double seconds, String when) {
        JsonNode read = now.path("read");
        JsonNode prevRead = previous == null ? null : previous.path("read");
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "warpd %s  mode %s  up %s  %s%n", now.path("mount").asText(),
                now.path("mode").asText(), StatusCommand.uptime(now.path("uptime_seconds").asLong()), when));
        sb.append(String.format(Locale.ROOT, "store: %s%n", StatusCommand.storeLine(now.path("store"))));
        sb.append('\n');
        if (previous == null) {
            sb.append("(rates from the next sample on; totals since start below)\n");
        }
        double dt = previous == null ? 0 : Math.max(seconds, 1e-3);
        Map<String, Long> byDataset = longs(now.path("read_bytes_by_dataset"));
        Map<String, Long> prevByDataset = previous == null ? Map.of() : longs(previous.path("read_bytes_by_dataset"));
        long readBytes = byDataset.values().stream().mapToLong(Long::longValue).sum();
        long prevReadBytes = prevByDataset.values().stream().mapToLong(Long::longValue).sum();
        long hit = read.path("hit_bytes").asLong();
        long miss = read.path("miss_bytes").asLong();
        long dHit = hit - (prevRead == null ? 0 : prevRead.path("hit_bytes").asLong());
        long dMiss = miss - (prevRead == null ? 0 : prevRead.path("miss_bytes").asLong());
        sb.append(String.format(Locale.ROOT, "  read through the mount  %s%n",
                rateOrTotal(readBytes - prevReadBytes, dt, readBytes)));
        sb.append(String.format(Locale.ROOT, "  fetched from the store  %s%n", rateOrTotal(
                read.path("bytes_fetched").asLong() - (prevRead == null ? 0 : prevRead.path("bytes_fetched").asLong()),
                dt, read.path("bytes_fetched").asLong())));
        sb.append(String.format(Locale.ROOT, "  cache hit rate          %s (since start %s)%n",
                previous == null || dHit + dMiss == 0 ? "-" : percent(dHit, dHit + dMiss), hit + miss == 0 ? "-" : percent(hit, hit + miss)));
        long gets = read.path("gets_issued").asLong();
        long dGets = gets - (prevRead == null ? 0 : prevRead.path("gets_issued").asLong());
        sb.append(String.format(Locale.ROOT, "  GETs in flight          %d   (%s)%n",
                now.path("gauges").path("gets_in_flight").asLong(),
                previous == null ? gets + " GETs since start" : String.format(Locale.ROOT, "%.1f GETs/s", dGets / dt)));
        long errors = read.path("read_errors").asLong();
        sb.append(String.format(Locale.ROOT, "  read errors             %d%s%n", errors,
                prevRead != null && errors > prevRead.path("read_errors").asLong() ? "  (new: see warpctl status)" : ""));
        sb.append('\n');
        sb.append(String.format(Locale.ROOT, "  %-40s %14s %12s%n", "BUSIEST DATASETS", previous == null ? "" : "READ/S",
                "READ TOTAL"));
        List<Map.Entry<String, Long>> busiest = new ArrayList<>();
        byDataset.forEach((d, total) -> busiest.add(Map.entry(d, total - prevByDataset.getOrDefault(d, 0L))));
        busiest.sort(Comparator.comparing((Map.Entry<String, Long> e) -> e.getValue()).reversed()
                .thenComparing(e -> -byDataset.get(e.getKey())).thenComparing(Map.Entry::getKey));
        if (busiest.isEmpty()) {
            sb.append("  (nothing read through the mount yet)\n");
        }
        for (int i = 0; i < Math.min(BUSIEST, busiest.size()); i++) {
            Map.Entry<String, Long> e = busiest.get(i);
            sb.append(String.format(Locale.ROOT, "  %-40s %14s %12s%n", e.getKey(),
                    previous == null ? "" : ByteSize.format((long) (e.getValue() / dt)) + "/s",
                    ByteSize.format(byDataset.get(e.getKey()))));
        }
        if (busiest.size() > BUSIEST) {
            sb.append(String.format(Locale.ROOT, "  ... and %d more%n", busiest.size() - BUSIEST));
        }
        sb.append("\nCtrl-C to stop.\n");
        return sb.toString();
    }

    private static String rateOrTotal(long delta, double dt, long total) {
        return dt == 0 ? ByteSize.format(total) + " since start"
                : String.format(Locale.ROOT, "%s/s   (%s since start)", ByteSize.format((long) (delta / dt)),
                        ByteSize.format(total));
    }

    private static String percent(long part, long whole) {
        return String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }

    private static Map<String, Long> longs(JsonNode object) {
        Map<String, Long> m = new java.util.TreeMap<>();
        object.fields().forEachRemaining(f -> m.put(f.getKey(), f.getValue().asLong()));
        return m;
    }
}
