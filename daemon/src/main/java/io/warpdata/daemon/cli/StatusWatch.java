package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.StatsCall;
import java.util.TreeMap;
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
    static String frame(StatsCall.Reply previous, StatsCall.Reply now, double seconds, String when) {
        StatsCall.Counters read = now.read();
        StatsCall.Counters prevRead = previous == null ? null : previous.read();
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "warpd %s  mode %s  up %s  %s%n", now.mount(),
                now.mode(), StatusCommand.uptime(now.uptimeSeconds()), when));
        sb.append(String.format(Locale.ROOT, "store: %s%n", StatusCommand.storeLine(now.store())));
        sb.append('\n');
        if (previous == null) {
            sb.append("(rates from the next sample on; totals since start below)\n");
        }
        double dt = previous == null ? 0 : Math.max(seconds, 1e-3);
        Map<String, Long> byDataset = new TreeMap<>(now.readBytesByDataset());
        Map<String, Long> prevByDataset = previous == null ? Map.of() : previous.readBytesByDataset();
        long readBytes = byDataset.values().stream().mapToLong(Long::longValue).sum();
        long prevReadBytes = prevByDataset.values().stream().mapToLong(Long::longValue).sum();
        long hit = read.hitBytes();
        long miss = read.missBytes();
        long dHit = hit - (prevRead == null ? 0 : prevRead.hitBytes());
        long dMiss = miss - (prevRead == null ? 0 : prevRead.missBytes());
        sb.append(String.format(Locale.ROOT, "  read through the mount  %s%n",
                rateOrTotal(readBytes - prevReadBytes, dt, readBytes)));
        long dFetched = read.bytesFetched() - (prevRead == null ? 0 : prevRead.bytesFetched());
        long dRead = readBytes - prevReadBytes;
        // The share of what was read that the store sent: a cache read ahead into and evicted
        // before its reader comes counts hits and still fetches everything (hit rate 89%, 110% here).
        sb.append(String.format(Locale.ROOT, "  fetched from the store  %s%s%n",
                rateOrTotal(dFetched, dt, read.bytesFetched()),
                dRead > 0 ? String.format(Locale.ROOT, "   (%s of what was read)", percent(dFetched, dRead)) : ""));
        sb.append(String.format(Locale.ROOT, "  cache hit rate          %s (since start %s)%n",
                previous == null || dHit + dMiss == 0 ? "-" : percent(dHit, dHit + dMiss), hit + miss == 0 ? "-" : percent(hit, hit + miss)));
        long gets = read.getsIssued();
        long dGets = gets - (prevRead == null ? 0 : prevRead.getsIssued());
        sb.append(String.format(Locale.ROOT, "  GETs in flight          %d   (%s)%n",
                now.gauges().getsInFlight(),
                previous == null ? gets + " GETs since start" : String.format(Locale.ROOT, "%.1f GETs/s", dGets / dt)));
        long errors = read.readErrors();
        sb.append(String.format(Locale.ROOT, "  read errors             %d%s%n", errors,
                prevRead != null && errors > prevRead.readErrors() ? "  (new: see warpctl status)" : ""));
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
}
