package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import io.warpdata.daemon.control.ControlException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every record of the control protocol goes to JSON and back unchanged, under the field names the
 * Python package (python/warpdata) and the generated loaders send and read; an answer from an
 * older or newer warpd (fields missing or added) reads, unless it lacks what a record requires,
 * which is a typed error saying what to do.
 */
class ProtocolRecordsTest {
    /** Parsed by a plain mapper, not {@link Wire}'s: what any other client sees. */
    private static final ObjectMapper PLAIN = new ObjectMapper();

    private static final StoreStatus STORE = new StoreStatus(false, false, "not answering", true,
            "2026-11-24T01:00:00Z", "timeout", 3, 2, 1, 5, 30);

    private static final List<MirrorStatus> MIRRORS = List.of(new MirrorStatus("http://cache:8080/warp", "down", 4096, 0.75,
            3, 1, 1, 2, 1, 5, 0, 0, 0));

    /** One sample of each request, reply and event record, by call. */
    private static Map<Call<?, ?, ?>, List<Object>> samples() {
        Map<Call<?, ?, ?>, List<Object>> m = new LinkedHashMap<>();
        m.put(Calls.STATUS, List.of(Empty.INSTANCE, new StatusCall.Reply("0.1.0", "/warp", "s3://b/p", "auto",
                "2026-01-01T00:00:00Z", 75, 3L, null, List.of("an error"), STORE, MIRRORS,
                new StatusCall.Asker(1000, "alice", true),
                new PassthroughStatus("unavailable", "no CAP_SYS_ADMIN", 2, 1, 4096), "http://127.0.0.1:9000")));
        m.put(Calls.STATS, List.of(Empty.INSTANCE, new StatsCall.Reply(42, "/warp", "s3://b/p", "auto", true, 75,
                new StatsCall.Counters(Map.of("hit_bytes", 3L, "miss_bytes", 1L, "some_new_counter", 9L)),
                List.of(new ReadSourceCount("member_cached", 2, 3), new ReadSourceCount("blocks", 1, 1)),
                Map.of("ws/a", 100L),
                List.of(new StatsCall.OrderPlanState("default", "ws/a@1234", "active", 10, 2, 3, 4096, 2, 1, 1, 0, "blocks")),
                STORE, MIRRORS, new StatsCall.MountErrors(1, 2, Map.of("StoreUnavailable", 2L)),
                new StatsCall.LatestLinks(true, 5, 1), Map.of("read", 7L), new StatsCall.Gauges(1, 2, 3, 4, 5, 6, 7))));
        m.put(Calls.METRICS, List.of(Empty.INSTANCE, new MetricsCall.Reply("warp_reads_total 1\n")));
        m.put(Calls.INFO, List.of(new DatasetArg("ws/name@abcdef12"), new InfoCall.Reply("ws/name", "ab".repeat(32),
                Map.of("main", new InfoCall.TableInfo(10, 2048, List.of(new InfoCall.ShardInfo("part-0.parquet", 10, 2048)),
                        List.of(new InfoCall.ColumnInfo("label", "VARCHAR")))),
                Map.of("images", new InfoCall.ArtifactInfo("files", 1, 10, 4096)),
                List.of(new InfoCall.BindingInfo("main", "path", "images", "file")), 10, 6144, List.of("latest", "tag v1"),
                new InfoCall.DerivedFromInfo("ws/parent", "cd".repeat(32), "main", Map.of("where", "label = 'cat'")))));
        m.put(Calls.CACHE_STATS, List.of(Empty.INSTANCE, new CacheCalls.Stats("disk", "/var/cache/warp", 10, 100, 5,
                null, 2, 0.5, 0.25, Map.of("gets_issued", 4L),
                List.of(new ReadSourceCount("member_get", 3, 90_000), new ReadSourceCount("blocks", 2, 1 << 20)), MIRRORS, 7, 4096)));
        m.put(Calls.CACHE_GC, List.of(new CacheCalls.GcRequest(new ByteCount(1000)), new CacheCalls.GcReply(10, 5, 1, 5)));
        m.put(Calls.CACHE_VERIFY, List.of(Empty.INSTANCE, new CacheCalls.VerifyReply(4, 400, 1, 100, 0, 2),
                new CacheCalls.VerifyProgress(200, 400)));
        m.put(Calls.WARM, List.of(new WarmCall.Request("ws/name", new Names(List.of("main")), Names.NONE, "0-3",
                        new ByteCount(1 << 20)),
                new WarmCall.Reply(new WarmCall.Progress(10, 20, 5, 1, 2, 100), "ws/name", "ab".repeat(32), true, 1.5, true),
                new WarmCall.Progress(10, 20, 5, 1, 2, 100)));
        m.put(Calls.TABLE_BATCHES, List.of(new TableBatchesCall.Request("ws/name", "main", new Names(List.of("a", "b")),
                        "a > 1", 5L, 64, 0, 2, 1, 4),
                new TableBatchesCall.Reply("ws/name", "ab".repeat(32), "main", 5, 1, 1000,
                        new TableBatchesCall.RowRange(0, 5, "row groups"))));
        m.put(Calls.REFRESH, List.of(new RefreshCall.Request("ws/name"), new RefreshCall.Reply("ws/name")));
        m.put(Calls.PUBLISH, List.of(new PublishCall.Request("ws/name", Map.of("main", new PathList(List.of("/d/a.parquet"))),
                        Map.of("images", new PathList(List.of("/d/images", "/d/more,images"))),
                        new Names(List.of("main.path=images:file")), true, new ByteCount(64 << 20), "dev", false, true),
                new PublishCall.Reply("ws/name", "ab".repeat(32), 1, 1, 10, 1, 10, 2, 0, 4096, 0, true, true,
                        List.of("latest -> abab"), List.of(), "published ws/name@abab", 4),
                new PublishCall.Progress("uploading (4096 bytes)")));
        m.put(Calls.PREFETCH_ORDER, List.of(new PrefetchOrderCall.Request("p", "ws/name@abcdef12", List.of("a.jpg", "b.jpg"), 0,
                        false),
                PrefetchOrderCall.Reply.started("p", "ws/name@abcdef12", 2, 1, 4096, 1, 1 << 20, 0, false, "files")));
        return m;
    }

    @Test
    void everyCallHasSamplesOfItsRecords() {
        assertThat(samples().keySet()).containsExactlyInAnyOrderElementsOf(Calls.ALL);
        Set<String> ops = new TreeSet<>();
        Calls.ALL.forEach(c -> assertThat(ops.add(c.op())).as("op %s named once", c.op()).isTrue());
    }

    @Test
    void everyRequestReplyAndEventRoundTripsThroughJson() throws Exception {
        for (Map.Entry<Call<?, ?, ?>, List<Object>> e : samples().entrySet()) {
            Call<?, ?, ?> call = e.getKey();
            List<Class<?>> types = new ArrayList<>(List.of(call.request(), call.reply()));
            if (e.getValue().size() > 2) {
                types.add(call.events());
            }
            for (int i = 0; i < e.getValue().size(); i++) {
                Object value = e.getValue().get(i);
                assertThat(value).as("%s sample %d", call.op(), i).isInstanceOf(types.get(i));
                // Through the bytes, as the socket carries it.
                JsonNode wire = PLAIN.readTree(Wire.json().writeValueAsBytes(value));
                Object back = i == 0 ? Wire.request(call.op(), wire, types.get(i))
                        : Wire.reply(call.op(), wire, types.get(i));
                assertThat(back).as("%s %s", call.op(), types.get(i).getSimpleName()).isEqualTo(value);
            }
        }
    }

    @Test
    void fieldNamesAreTheOnesThePythonPackageAndTheLoaderUse() throws Exception {
        // python/warpdata/dataset.py: info (dataset, version, tables.rows/shards[].name/schema[].name,type,
        // artifacts, bindings[].table/column/artifact/ref_type), status.mount, warm progress.
        JsonNode info = Wire.tree(samples().get(Calls.INFO).get(1));
        assertThat(info.path("tables").path("main").path("shards").get(0).path("name").asText()).isEqualTo("part-0.parquet");
        assertThat(info.path("tables").path("main").path("schema").get(0).path("type").asText()).isEqualTo("VARCHAR");
        assertThat(info.path("bindings").get(0).path("ref_type").asText()).isEqualTo("file");
        assertThat(info.path("artifacts").path("images").path("member_bytes").asLong()).isEqualTo(4096);
        assertThat(info.path("derived_from").path("query").path("where").asText()).isEqualTo("label = 'cat'");
        assertThat(info.path("names").get(1).asText()).isEqualTo("tag v1");
        assertThat(fieldNames(info)).containsExactlyInAnyOrder("dataset", "version", "tables", "artifacts", "bindings",
                "total_rows", "total_bytes", "names", "derived_from");
        JsonNode status = Wire.tree(samples().get(Calls.STATUS).get(1));
        assertThat(fieldNames(status)).containsExactlyInAnyOrder("version", "mount", "remote", "mode", "started_at",
                "uptime_seconds", "open_files", "open_directories", "recent_errors", "store", "mirrors", "peer",
                "passthrough", "endpoint");
        JsonNode cache = Wire.tree(samples().get(Calls.CACHE_STATS).get(1));
        assertThat(cache.path("spare_members").asLong()).as("docs/control.md names these").isEqualTo(7);
        assertThat(cache.path("spare_member_memory_bytes").asLong()).isEqualTo(4096);
        assertThat(fieldNames(status.path("passthrough"))).as("docs/control.md names these")
                .containsExactlyInAnyOrder("state", "reason", "opens", "local_copies", "local_copy_bytes");
        assertThat(fieldNames(status.path("mirrors").get(0))).as("what status, cache stats and stats.json show of a mirror")
                .containsExactlyInAnyOrder("mirror", "state", "served_bytes", "hit_rate", "hits", "misses",
                        "verification_failures", "errors", "timeouts", "skipped", "fills_written", "fills_failed",
                        "fills_dropped");
        assertThat(status.path("open_directories").isNull()).as("unknown counts are explicit nulls").isTrue();
        assertThat(fieldNames(status.path("store"))).contains("reachable", "offline", "not_answering",
                "unreachable_since", "last_error", "stale_answers", "fast_failures", "outages", "pointer_ttl_seconds");
        assertThat(fieldNames(Wire.tree(new WarmCall.Progress(1, 2, 3, 4, 5, 6)))).containsExactlyInAnyOrder(
                "bytes_done", "bytes_total", "bytes_fetched", "blobs_done", "blobs_total", "rate_bps");
        JsonNode stats = Wire.tree(samples().get(Calls.STATS).get(1));
        assertThat(stats.path("read").path("some_new_counter").asLong()).as("an open set of counters").isEqualTo(9);
        assertThat(stats.path("reads_by_source").get(0).path("source").asText()).isEqualTo("member_cached");
        assertThat(fieldNames(stats.path("reads_by_source").get(1))).as("what cache stats and stats.json show of a source")
                .containsExactlyInAnyOrder("source", "reads", "bytes");
        assertThat(stats.path("reads_by_source").get(1).path("bytes").asLong()).isEqualTo(1);
        assertThat(stats.path("order_plans").get(0).path("for").asText()).isEqualTo("ws/a@1234");
        assertThat(stats.path("gauges").path("gets_in_flight").asLong()).isEqualTo(1);
        // A prefetch part's answer carries only its own fields (python/warpdata/loader.py reads them).
        assertThat(fieldNames(Wire.tree(PrefetchOrderCall.Reply.partTaken("p", 0, 10))))
                .containsExactlyInAnyOrder("plan", "part", "members");
        assertThat(Wire.tree(PrefetchOrderCall.Reply.stopped("p", true)).path("stopped").asBoolean()).isTrue();
        // A batch line: columns as DuckDB wrote them, base64 only when there are BLOB columns.
        JsonNode batch = PLAIN.readTree(Wire.json().writeValueAsString(
                new TableBatchesCall.Batch(2, new RawValue("{\"a\":[1,2]}"), null)));
        assertThat(batch.path("columns").path("a").get(1).asInt()).isEqualTo(2);
        assertThat(batch.has("base64")).isFalse();
    }

    @Test
    void requestsReadWhatPythonAndUsersSend() throws Exception {
        // python/warpdata/dataset.py Dataset.warm, Table.batches, publish; loader.py prefetch.order.
        WarmCall.Request warm = Wire.request("warm", PLAIN.readTree("""
                {"dataset": "ws/name", "tables": ["main"], "max_bytes": "2MB"}"""), WarmCall.Request.class);
        assertThat(warm.tables().names()).containsExactly("main");
        assertThat(warm.maxBytes().bytes()).isEqualTo(2_000_000);
        assertThat(warm.artifacts()).isNull();
        WarmCall.Request typed = Wire.request("warm", PLAIN.readTree("""
                {"dataset": "ws/name", "tables": "main, extra", "max_bytes": 1024}"""), WarmCall.Request.class);
        assertThat(typed.tables().names()).as("comma-separated, as typed on a command line").containsExactly("main", "extra");
        TableBatchesCall.Request tb = Wire.request("table.batches", PLAIN.readTree("""
                {"dataset": "ws/name", "columns": ["a"], "limit": 5, "where": "a > 1", "rank": 1, "world": 2,
                 "worker": 0, "workers": 1}"""), TableBatchesCall.Request.class);
        assertThat(tb.limit()).isEqualTo(5L);
        assertThat(tb.batchSize()).as("absent: the operation's default").isNull();
        PublishCall.Request pub = Wire.request("publish", PLAIN.readTree("""
                {"dataset": "ws/name", "tables": {"main": ["/d/a.parquet"]}, "artifacts": {"img": "/d/images"},
                 "bindings": [], "set_latest": true, "shard_size": "64MB"}"""), PublishCall.Request.class);
        assertThat(pub.artifacts().get("img").paths()).containsExactly("/d/images");
        assertThat(pub.shardSize().bytes()).isEqualTo(64_000_000);
        PrefetchOrderCall.Request po = Wire.request("prefetch.order", PLAIN.readTree("""
                {"plan": "p", "root": "/warp/ws/name", "paths": ["a.jpg"], "part": 0, "more": false}"""),
                PrefetchOrderCall.Request.class);
        assertThat(po.paths()).containsExactly("a.jpg");
        assertThat(po.fetch()).as("absent: warpd decides").isNull();
        PrefetchOrderCall.Request blocks = Wire.request("prefetch.order", PLAIN.readTree("""
                {"paths": ["a.jpg"], "fetch": "blocks"}"""), PrefetchOrderCall.Request.class);
        assertThat(blocks.fetch()).isEqualTo(PrefetchOrderCall.Fetch.BLOCKS);
        assertThat(Wire.tree(blocks).get("fetch").asText()).as("sent as it is read").isEqualTo("blocks");
        assertThat(Wire.request("prefetch.order", Wire.tree(new PrefetchOrderCall.Request("p", null, List.of("a.npy"), 0,
                false, PrefetchOrderCall.Fetch.FILES)), PrefetchOrderCall.Request.class).fetch())
                .isEqualTo(PrefetchOrderCall.Fetch.FILES);
        // What warpctl sends for a refresh of everything: nothing.
        assertThat(Wire.tree(RefreshCall.Request.ALL).isEmpty()).isTrue();
        assertThat(Wire.request("status", PLAIN.readTree("{\"from_a_newer_client\": 1}"), Empty.class)).isEqualTo(Empty.INSTANCE);
    }

    @Test
    void aReplyFromANewerWarpdWithMoreFieldsReads() throws Exception {
        ObjectNode status = Wire.tree(samples().get(Calls.STATUS).get(1));
        status.put("a_field_of_the_future", "x");
        status.putObject("another").put("nested", 1);
        ((ObjectNode) status.path("store")).put("mirror", "up");
        StatusCall.Reply r = Wire.reply("status", status, StatusCall.Reply.class);
        assertThat(r).isEqualTo(samples().get(Calls.STATUS).get(1));
    }

    @Test
    void aReplyFromAnOlderWarpdWithFewerFieldsReadsWithDefaults() throws Exception {
        StatusCall.Reply r = Wire.reply("status", PLAIN.readTree("""
                {"version": "0.0.9", "mount": "/warp"}"""), StatusCall.Reply.class);
        assertThat(r.mount()).isEqualTo("/warp");
        assertThat(r.recentErrors()).isEmpty();
        assertThat(r.store()).as("a warpd that does not report its store").isNull();
        assertThat(r.openFiles()).isNull();
        StatsCall.Reply stats = Wire.reply("stats", PLAIN.readTree("{}"), StatsCall.Reply.class);
        assertThat(stats.read().hitBytes()).isZero();
        assertThat(stats.gauges().getsInFlight()).isZero();
    }

    @Test
    void aReplyLackingARequiredFieldIsATypedErrorSayingWhatToDo() throws Exception {
        assertThatThrownBy(() -> Wire.reply("status", PLAIN.readTree("{\"version\": \"0.0.9\"}"), StatusCall.Reply.class))
                .isInstanceOfSatisfying(ControlException.class, e -> {
                    assertThat(e.type()).isEqualTo(Wire.INCOMPATIBLE_PEER);
                    assertThat(e.getMessage()).contains("'status'", "'mount'", "is required");
                    assertThat(e.nextStep()).contains("same version", "restart warpd");
                });
        assertThatThrownBy(() -> Wire.reply("info", PLAIN.readTree("{\"dataset\": \"ws/n\", \"version\": 5}"),
                InfoCall.Reply.class))
                .isInstanceOfSatisfying(ControlException.class, e -> {
                    assertThat(e.type()).isEqualTo(Wire.INCOMPATIBLE_PEER);
                    assertThat(e.getMessage()).contains("'version'", "must be a string");
                });
        assertThatThrownBy(() -> Wire.reply("prefetch.order", PLAIN.readTree("{\"members\": 3}"),
                PrefetchOrderCall.Reply.class))
                .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.getMessage()).contains("'plan'"));
    }

    @Test
    void aBadRequestNamesTheArgumentAndTheProblem() throws Exception {
        assertThatThrownBy(() -> Wire.request("warm", PLAIN.readTree("{\"tables\": [\"main\"]}"), WarmCall.Request.class))
                .isInstanceOfSatisfying(ControlException.class, e -> {
                    assertThat(e.type()).isEqualTo(ControlException.BAD_REQUEST);
                    assertThat(e.getMessage()).isEqualTo("warm: argument 'dataset' is required");
                    assertThat(e.nextStep()).contains("docs/control.md", "'warm'");
                });
        assertThatThrownBy(() -> Wire.request("warm", PLAIN.readTree("{\"dataset\": 5}"), WarmCall.Request.class))
                .hasMessage("warm: argument 'dataset' must be a string");
        assertThatThrownBy(() -> Wire.request("warm", PLAIN.readTree("{\"dataset\": \"ws/n\", \"max_bytes\": \"lots\"}"),
                WarmCall.Request.class)).hasMessageStartingWith("warm: argument 'max_bytes' ");
        assertThatThrownBy(() -> Wire.request("warm", PLAIN.readTree("{\"dataset\": \"ws/n\", \"tables\": [1]}"),
                WarmCall.Request.class)).hasMessage("warm: argument 'tables' must be a list of strings");
        assertThatThrownBy(() -> Wire.request("table.batches", PLAIN.readTree("{\"dataset\": \"ws/n\", \"limit\": 1.5}"),
                TableBatchesCall.Request.class)).hasMessage("table.batches: argument 'limit' must be a whole number");
        assertThatThrownBy(() -> Wire.request("prefetch.order", PLAIN.readTree("{\"plan\": \"p\"}"),
                PrefetchOrderCall.Request.class)).hasMessage("prefetch.order: argument 'paths' is required");
        assertThatThrownBy(() -> Wire.request("prefetch.order", PLAIN.readTree("{\"paths\": [], \"fetch\": \"some\"}"),
                PrefetchOrderCall.Request.class))
                .hasMessage("prefetch.order: argument 'fetch' is 'some'; it is auto, blocks or files");
        for (String notAWord : List.of("\"FILES\"", "1", "true", "{}", "[]")) {
            assertThatThrownBy(() -> Wire.request("prefetch.order", PLAIN.readTree("{\"paths\": [], \"fetch\": " + notAWord
                    + "}"), PrefetchOrderCall.Request.class)).as(notAWord)
                    .hasMessageStartingWith("prefetch.order: argument 'fetch' ")
                    .hasMessageEndingWith("auto, blocks or files");
        }
        assertThat(Wire.request("prefetch.order", PLAIN.readTree("{\"paths\": [], \"fetch\": null}"),
                PrefetchOrderCall.Request.class).fetch()).as("null: warpd decides").isNull();
        assertThatThrownBy(() -> Wire.request("publish", PLAIN.readTree("""
                {"dataset": "ws/n", "tables": {"main": [7]}}"""), PublishCall.Request.class))
                .hasMessageStartingWith("publish: argument 'tables.main' must hold paths")
                .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.nextStep())
                        .contains("warpctl's --table NAME=PATH, Python's tables=").doesNotContain("--tables"));
        // audit 30: the hint named "warpctl's --dataset", which no command has.
        assertThatThrownBy(() -> Wire.request("warm", PLAIN.readTree("{\"dataset\": 5}"), WarmCall.Request.class))
                .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.nextStep())
                        .contains("warpctl's DATASET argument").doesNotContain("--dataset"));
        assertThatThrownBy(() -> Wire.request("warm", PLAIN.readTree("{\"dataset\": \"ws/n\", \"max_bytes\": \"lots\"}"),
                WarmCall.Request.class)).isInstanceOfSatisfying(ControlException.class,
                        e -> assertThat(e.nextStep()).contains("warpctl warm's --max-bytes, Python's max_bytes="));
        // audit 33: fields no command spells are named as the operation's argument, with no made-up option.
        assertThatThrownBy(() -> Wire.request("prefetch.order", PLAIN.readTree("{\"paths\": 5}"),
                PrefetchOrderCall.Request.class)).isInstanceOfSatisfying(ControlException.class, e ->
                        assertThat(e.nextStep()).startsWith("fix the value of paths; docs/control.md")
                                .doesNotContain("--paths", "paths="));
        assertThatThrownBy(() -> Wire.request("refresh", PLAIN.readTree("{\"dataset\": true}"), RefreshCall.Request.class))
                .hasMessage("refresh: argument 'dataset' must be a string");
    }

    private static Set<String> fieldNames(JsonNode n) {
        Set<String> out = new TreeSet<>();
        n.fieldNames().forEachRemaining(out::add);
        return out;
    }
}
