package io.warpdata.daemon.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.warpdata.daemon.control.protocol.StatsCall;
import io.warpdata.daemon.control.protocol.Wire;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StatusWatchTest {
    /** A stats answer as warpd writes it; partial (no pid, plans, errors), as from an older warpd. */
    private static StatsCall.Reply sample(long hit, long miss, long fetched, long gets, long inFlight, String byDataset)
            throws Exception {
        return Wire.reply("stats", new ObjectMapper().readTree("""
                {"mount": "/warp", "mode": "auto", "uptime_seconds": 75,
                 "store": {"reachable": true, "offline": false, "outages": 0},
                 "read": {"hit_bytes": %d, "miss_bytes": %d, "bytes_fetched": %d, "gets_issued": %d, "read_errors": 0},
                 "read_bytes_by_dataset": %s,
                 "gauges": {"gets_in_flight": %d}}
                """.formatted(hit, miss, fetched, gets, byDataset, inFlight)), StatsCall.Reply.class);
    }

    @Test
    void firstFrameShowsTotalsSinceStart() throws Exception {
        String frame = StatusWatch.frame(null, sample(3_000_000, 1_000_000, 1_200_000, 12, 2,
                "{\"vision/pets\": 4000000}"), 0, "12:00:00");
        assertThat(frame).contains("warpd /warp  mode auto  up 1m 15s  12:00:00", "store: reachable",
                "read through the mount  4.0 MB since start", "(30.0% of what was read)",
                "cache hit rate          - (since start 75.0%)",
                "GETs in flight          2   (12 GETs since start)", "vision/pets");
    }

    @Test
    void laterFramesShowRatesOverTheIntervalAndTheBusiestDatasetsFirst() throws Exception {
        StatsCall.Reply before = sample(3_000_000, 1_000_000, 1_200_000, 12, 2,
                "{\"a/quiet\": 9000000, \"vision/pets\": 4000000}");
        StatsCall.Reply after = sample(3_000_000 + 1_800_000, 1_000_000 + 200_000, 1_200_000 + 400_000, 16, 3,
                "{\"a/quiet\": 9000000, \"vision/pets\": 6000000, \"new/one\": 10}");
        String frame = StatusWatch.frame(before, after, 2.0, "12:00:02");
        assertThat(frame).contains("read through the mount  1.0 MB/s   (15.0 MB since start)",
                "fetched from the store  200.0 KB/s   (1.6 MB since start)   (20.0% of what was read)",
                "cache hit rate          90.0% (since start 80.0%)",
                "GETs in flight          3   (2.0 GETs/s)");
        assertThat(frame.indexOf("vision/pets")).as("busiest first").isLessThan(frame.indexOf("new/one"))
                .isLessThan(frame.indexOf("a/quiet"));
        assertThat(frame).containsPattern("vision/pets\\s+1\\.0 MB/s\\s+6\\.0 MB");
    }

    @Test
    void onlyTheBusiestFewDatasetsAreListed() throws Exception {
        StringBuilder many = new StringBuilder("{");
        for (int i = 0; i < StatusWatch.BUSIEST + 3; i++) {
            many.append(i == 0 ? "" : ",").append("\"ws/d").append(i).append("\": ").append(1000 * (i + 1));
        }
        String frame = StatusWatch.frame(null, sample(0, 0, 0, 0, 0, many.append('}').toString()), 0, "t");
        assertThat(frame).contains("ws/d7", "... and 3 more").doesNotContain("ws/d0 ");
    }
}
