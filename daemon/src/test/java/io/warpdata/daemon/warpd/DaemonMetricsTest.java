package io.warpdata.daemon.warpd;

import io.warpdata.manifest.DatasetId;
import org.junit.jupiter.api.Test;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class DaemonMetricsTest {

    @Test
    void theHttpEndpointServesMetricsAndHealthAndAMistypedPathIsNotFound() throws Exception {
        DaemonMetrics m = new DaemonMetrics();
        try (HTTPServer server = m.serve(new InetSocketAddress("127.0.0.1", 0))) {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            String base = "http://127.0.0.1:" + server.getPort();
            HttpResponse<String> metrics = get(http, base + "/metrics");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.body()).contains("warp_fuse_read_seconds");
            assertThat(get(http, base + "/-/healthy").statusCode()).isEqualTo(200);
            HttpResponse<String> root = get(http, base + "/");
            assertThat(root.statusCode()).isEqualTo(200);
            assertThat(root.body()).contains("/metrics");
            for (String wrong : new String[] {"/metric", "/foo", "/api/v1/metrics"}) {
                HttpResponse<String> r = get(http, base + wrong);
                assertThat(r.statusCode()).as(wrong).isEqualTo(404);
                assertThat(r.body()).as(wrong).contains("/metrics").doesNotContain("warp_fuse_read_seconds");
            }
        }
    }

    private static HttpResponse<String> get(HttpClient http, String uri) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void readsAndGetsFeedTheHistogramsAndThePerDatasetCounter() {
        DaemonMetrics m = new DaemonMetrics();
        DatasetId pets = DatasetId.parse("vision/pets");
        m.onRead(pets, 0, 4096, TimeUnit.MICROSECONDS.toNanos(80));
        m.onRead(pets, 4096, 1000, TimeUnit.MILLISECONDS.toNanos(3));
        m.onRead(null, 0, 10, 1000);
        m.onGet(TimeUnit.MILLISECONDS.toNanos(20), 1 << 20);
        // failures count by their latency: a hung store shows in p99
        m.onReadFailed(0, TimeUnit.SECONDS.toNanos(5));
        m.onGetFailed(TimeUnit.SECONDS.toNanos(5));

        String text = m.text();
        assertThat(text).contains("warp_dataset_read_bytes_total{dataset=\"vision/pets\"} 5096.0\n")
                .contains("warp_fuse_read_seconds_count 4\n")
                .contains("warp_fuse_read_seconds_bucket{le=\"1.0E-4\"} 2\n")
                .contains("warp_fuse_first_read_seconds_count 3\n")
                .contains("warp_store_get_seconds_count 2\n")
                .contains("warp_store_get_bytes_count 1\n")
                .contains("warp_store_get_bytes_sum 1048576.0\n")
                .contains("warp_store_get_bytes_bucket{le=\"1048576.0\"} 1\n");
        assertThat(m.bytesReadByDataset()).containsExactly(java.util.Map.entry("vision/pets", 5096L));
    }

    /** Audit 38: a read that waited out the 60 s deadline landed in +Inf only, past the last bucket (10 s). */
    @Test
    void aReadThatWaitedOutTheReadDeadlineHasABucketOfItsOwn() {
        DaemonMetrics m = new DaemonMetrics();
        m.onReadFailed(0, TimeUnit.SECONDS.toNanos(59));
        m.onGetFailed(TimeUnit.SECONDS.toNanos(45));
        assertThat(m.text()).contains("warp_fuse_read_seconds_bucket{le=\"30.0\"} 0\n")
                .contains("warp_fuse_read_seconds_bucket{le=\"60.0\"} 1\n")
                .contains("warp_store_get_seconds_bucket{le=\"60.0\"} 1\n");
    }

    @Test
    void datasetLabelsAreBoundedAndTheRestCountAsOther() {
        DaemonMetrics m = new DaemonMetrics();
        int datasets = DaemonMetrics.MAX_DATASET_LABELS + 20;
        for (int i = 0; i < datasets; i++) {
            m.onRead(DatasetId.parse("ws/d" + i), 0, 10, 1000);
        }
        m.onRead(DatasetId.parse("ws/d0"), 10, 5, 1000);
        m.onRead(DatasetId.parse("ws/d" + (datasets - 1)), 10, 5, 1000);

        var byDataset = m.bytesReadByDataset();
        assertThat(byDataset).hasSize(DaemonMetrics.MAX_DATASET_LABELS + 1)
                .containsEntry("ws/d0", 15L)
                .containsEntry(DaemonMetrics.OTHER, 20L * 10 + 5);
        assertThat(m.text().lines().filter(l -> l.startsWith("warp_dataset_read_bytes_total{"))).hasSize(
                DaemonMetrics.MAX_DATASET_LABELS + 1);
    }
}
