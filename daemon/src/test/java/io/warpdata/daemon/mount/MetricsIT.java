package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.expositionformats.generated.com_google_protobuf_4_36_2.Metrics;
import io.warpdata.manifest.DatasetId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * warpd --metrics-listen: a real warpd serves /metrics over HTTP on a free loopback port; after a
 * file is read through the mount, the scrape is parsed with the Prometheus Java client library's
 * own parser (its protobuf exposition format, {@code Metrics.MetricFamily}; the 1.x library has
 * no text-format parser) and its counters must add up to the bytes read. The text format, and
 * {@code warpctl metrics} over the control socket, carry the same metric families.
 */
class MetricsIT {
    private static final DatasetId DATASET = new DatasetId("ops", "metered");
    private static final String PROTOBUF = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;"
            + " encoding=delimited";

    private static MountedStore m;
    private static Path src;

    @BeforeAll
    static void publish() throws IOException {
        m = MountedStore.serve("it-metrics");
        src = m.writeSample("src", 20_000, 3, 0);
        m.publish(DATASET, src);
    }

    @AfterAll
    static void cleanUp() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    @Test
    void scrapeCountsTheBytesReadThroughTheMount() throws Exception {
        int port = freeLoopbackPort();
        Path mount = m.mount;
        Path cache = m.cache;
        try {
            WarpdProcess warpd = m.mount("--metrics-listen", Integer.toString(port)).warpd();
            assertThat(warpd.output()).contains("warpd: metrics at http://127.0.0.1:" + port + "/metrics");
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            URI uri = URI.create("http://127.0.0.1:" + port + "/metrics");

            Map<String, Metrics.MetricFamily> before = scrape(http, uri);
            assertThat(value(before, "warp_mounted", Map.of())).isEqualTo(1);
            assertThat(value(before, "warp_store_reachable", Map.of())).isEqualTo(1);
            assertThat(before.getOrDefault("warp_dataset_read_bytes_total", Metrics.MetricFamily.getDefaultInstance())
                    .getMetricCount()).as("nothing read yet").isZero();

            byte[] shard = Files.readAllBytes(mount.resolve("ops/metered/main/part-0.parquet"));
            byte[] image = Files.readAllBytes(mount.resolve("ops/metered/images/cat/img0.png"));
            assertThat(shard).isEqualTo(Files.readAllBytes(src.resolve("main/part-0.parquet")));

            Map<String, Metrics.MetricFamily> after = settledScrape(http, uri);
            assertThat(value(after, "warp_dataset_read_bytes_total", Map.of("dataset", "ops/metered")))
                    .as("every byte read through the mount, counted once").isEqualTo(shard.length + image.length);
            long reads = (long) value(after, "warp_fuse_requests_total", Map.of("op", "read"));
            Metrics.Histogram readLatency = histogram(after, "warp_fuse_read_seconds");
            assertThat(readLatency.getSampleCount()).as("one latency sample per FUSE read").isEqualTo(reads)
                    .isGreaterThanOrEqualTo(2);
            assertThat(histogram(after, "warp_fuse_first_read_seconds").getSampleCount())
                    .as("each file's read at offset 0").isEqualTo(2);
            assertThat(value(after, "warp_cache_spare_members", Map.of()))
                    .as("exported; none here: the cache index holds far fewer than 32,768 members").isZero();
            assertThat(value(after, "warp_cache_spare_member_memory_bytes", Map.of())).isZero();
            double gets = value(after, "warp_store_gets_total", Map.of());
            Metrics.Histogram getBytes = histogram(after, "warp_store_get_bytes");
            assertThat(gets).isGreaterThanOrEqualTo(1);
            assertThat(getBytes.getSampleCount()).as("no GET failed: one size sample per GET").isEqualTo((long) gets);
            assertThat(histogram(after, "warp_store_get_seconds").getSampleCount()).isEqualTo((long) gets);
            assertThat(getBytes.getSampleSum()).isEqualTo(value(after, "warp_store_fetched_bytes_total", Map.of()))
                    .isGreaterThanOrEqualTo(shard.length);
            assertThat(value(after, "warp_cache_miss_bytes_total", Map.of())
                    + value(after, "warp_cache_hit_bytes_total", Map.of()))
                    .as("the cache served every byte the mount read, and the images' member index")
                    .isGreaterThanOrEqualTo(shard.length + image.length);
            assertThat(sum(after, "warp_read_source_bytes_total"))
                    .as("each byte the cache served counted under exactly one source")
                    .isEqualTo(value(after, "warp_cache_miss_bytes_total", Map.of())
                            + value(after, "warp_cache_hit_bytes_total", Map.of()));
            assertThat(value(after, "warp_read_source_bytes_total", Map.of("source", "blocks")))
                    .as("the Parquet file, read through its blocks").isGreaterThanOrEqualTo(shard.length);
            assertThat(value(after, "warp_read_source_reads_total", Map.of("source", "whole_index")))
                    .as("the images' member index, read whole at first touch").isEqualTo(1);
            assertThat(metric(after, "warp_read_source_reads_total", Map.of("source", "mirror")).getCounter().getValue())
                    .as("no mirror configured").isZero();
            long served = (long) (value(after, "warp_cache_miss_bytes_total", Map.of())
                    + value(after, "warp_cache_hit_bytes_total", Map.of()));
            JsonNode json = statsJsonServing(cache.resolve("stats.json"), served);
            assertThat(json.path("reads_by_source").findValuesAsText("source"))
                    .as("stats.json: reads by source, in the plan's order").containsExactly("member_cached", "located",
                            "own_blocks", "await_member", "member_get", "blocks", "whole_index", "mirror");
            assertThat(sourceBytes(json)).as("stats.json: each byte served counted under exactly one source")
                    .isEqualTo(json.path("read").path("hit_bytes").asLong() + json.path("read").path("miss_bytes").asLong())
                    .isEqualTo(served);
            assertThat(json.path("reads_by_source").get(6).path("reads").asLong()).as("stats.json: whole_index reads")
                    .isEqualTo(1);
            assertThat(value(after, "warp_store_gets_in_flight", Map.of())).isZero();
            assertThat(value(after, "warp_cache_size_bytes", Map.of())).isPositive();
            long free = java.nio.file.Files.getFileStore(cache).getUsableSpace();
            assertThat(value(after, "warp_cache_disk_free_bytes", Map.of())).as("the cache disk's free space")
                    .isBetween(free * 0.9, free * 1.1);
            assertThat(value(after, "warp_cache_free_floor_bytes", Map.of())).isPositive();

            HttpResponse<String> text = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(text.statusCode()).isEqualTo(200);
            assertThat(text.headers().firstValue("Content-Type")).hasValueSatisfying(
                    v -> assertThat(v).startsWith("text/plain").contains("version=0.0.4"));
            assertThat(text.body()).contains("# TYPE warp_store_gets_total counter\n",
                    "# TYPE warp_store_client_retries_total counter\n",
                    "# TYPE warp_mount_log_lines_suppressed_total counter\n",
                    "# TYPE warp_fuse_read_seconds histogram\n",
                    "warp_dataset_read_bytes_total{dataset=\"ops/metered\"} ");

            Shell.Result warpctl = Shell.run(null, Map.of(), 60, List.of(
                    ProcessHandle.current().info().command().orElse("java"), "--enable-native-access=ALL-UNNAMED",
                    "-jar", WarpdProcess.JAR.toString(), "warpctl", "metrics", "--socket",
                    cache.resolve("warpd.sock").toString()));
            warpctl.requireSuccess();
            assertThat(families(warpctl.out())).as("warpctl metrics prints what /metrics serves")
                    .isEqualTo(families(text.body())).contains("warp_dataset_read_bytes_total", "warp_store_get_seconds");

            Shell.Result stats = Shell.run(null, Map.of(), 60, List.of(
                    ProcessHandle.current().info().command().orElse("java"), "--enable-native-access=ALL-UNNAMED",
                    "-jar", WarpdProcess.JAR.toString(), "warpctl", "cache", "stats", "--socket",
                    cache.resolve("warpd.sock").toString()));
            stats.requireSuccess();
            assertThat(stats.out()).as("warpctl cache stats: reads by source, in the plan's order").containsSubsequence(
                    "reads by source:", "member_cached", "located", "own_blocks", "await_member", "member_get",
                    "\n  blocks ", "whole_index", "mirror");
            assertThat(stats.out()).containsPattern("\\n  whole_index +1  ");
        } finally {
            m.stopWarpds();
        }
    }

    /** Scrapes until two scrapes in a row agree on the read counters (read-ahead may still be landing). */
    private static Map<String, Metrics.MetricFamily> settledScrape(HttpClient http, URI uri) throws Exception {
        Map<String, Metrics.MetricFamily> last = scrape(http, uri);
        for (int i = 0; i < 50; i++) {
            Thread.sleep(100);
            Map<String, Metrics.MetricFamily> next = scrape(http, uri);
            if (value(next, "warp_store_gets_in_flight", Map.of()) == 0
                    && value(next, "warp_store_gets_total", Map.of()) == value(last, "warp_store_gets_total", Map.of())
                    && value(next, "warp_store_fetched_bytes_total", Map.of())
                    == value(last, "warp_store_fetched_bytes_total", Map.of())) {
                return next;
            }
            last = next;
        }
        return last;
    }

    /**
     * stats.json once it shows {@code served} bytes by source (warpd rewrites it each second), or
     * as it last was after 10 s.
     */
    private static JsonNode statsJsonServing(Path file, long served) throws Exception {
        JsonNode json = null;
        for (int i = 0; i < 100; i++) {
            if (Files.exists(file)) {
                try {
                    json = new ObjectMapper().readTree(file.toFile());
                } catch (IOException torn) {
                    json = null; // replaced while read: try again
                }
                if (json != null && sourceBytes(json) == served) {
                    return json;
                }
            }
            Thread.sleep(100);
        }
        assertThat(json).as("stats.json was written").isNotNull();
        return json;
    }

    private static long sourceBytes(JsonNode stats) {
        long n = 0;
        for (JsonNode s : stats.path("reads_by_source")) {
            n += s.path("bytes").asLong();
        }
        return n;
    }

    /** One scrape in the protobuf format, parsed with the library's generated message classes. */
    private static Map<String, Metrics.MetricFamily> scrape(HttpClient http, URI uri) throws Exception {
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(uri).header("Accept", PROTOBUF)
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).contains("protobuf"));
        Map<String, Metrics.MetricFamily> families = new LinkedHashMap<>();
        try (InputStream in = new ByteArrayInputStream(r.body())) {
            Metrics.MetricFamily f;
            while ((f = Metrics.MetricFamily.parseDelimitedFrom(in)) != null) {
                families.put(f.getName(), f);
            }
        }
        return families;
    }

    /** The value of the counter or gauge {@code name} with exactly {@code labels}. */
    private static double value(Map<String, Metrics.MetricFamily> families, String name, Map<String, String> labels) {
        Metrics.Metric m = metric(families, name, labels);
        return switch (families.get(name).getType()) {
            case COUNTER -> m.getCounter().getValue();
            case GAUGE -> m.getGauge().getValue();
            default -> throw new AssertionError(name + " is a " + families.get(name).getType());
        };
    }

    /** The sum of counter {@code name} over all its label values. */
    private static double sum(Map<String, Metrics.MetricFamily> families, String name) {
        assertThat(families).containsKey(name);
        return families.get(name).getMetricList().stream().mapToDouble(m -> m.getCounter().getValue()).sum();
    }

    private static Metrics.Histogram histogram(Map<String, Metrics.MetricFamily> families, String name) {
        return metric(families, name, Map.of()).getHistogram();
    }

    private static Metrics.Metric metric(Map<String, Metrics.MetricFamily> families, String name, Map<String, String> labels) {
        Metrics.MetricFamily f = families.get(name);
        assertThat(f).as("metric family " + name + " in " + families.keySet()).isNotNull();
        for (Metrics.Metric m : f.getMetricList()) {
            Map<String, String> have = new LinkedHashMap<>();
            m.getLabelList().forEach(l -> have.put(l.getName(), l.getValue()));
            if (have.equals(labels)) {
                return m;
            }
        }
        throw new AssertionError("no " + name + " with labels " + labels + " in " + f);
    }

    /** The metric family names a text exposition declares ({@code # TYPE name type}). */
    private static Set<String> families(String text) {
        Set<String> names = new TreeSet<>();
        text.lines().filter(l -> l.startsWith("# TYPE ")).forEach(l -> names.add(l.split(" ")[2]));
        return names;
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
