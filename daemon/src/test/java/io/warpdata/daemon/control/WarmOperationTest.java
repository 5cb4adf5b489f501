package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.ops.ShardRange;
import io.warpdata.daemon.control.ops.WarmOperation;
import org.junit.jupiter.api.Test;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.AfterEach;

import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** warm over the real block cache and catalog (ControlWorld): what it fetches, skips and reports. */
class WarmOperationTest {
    @TempDir
    Path tmp;

    private ControlWorld world;
    private WarmOperation warm;
    private final List<ObjectNode> events = new CopyOnWriteArrayList<>();
    private final Cancellation cancel = new Cancellation();

    @BeforeEach
    void setUp() {
        world = new ControlWorld(tmp);
        warm = new WarmOperation(world.catalog, world.cache, Clock.systemUTC());
    }

    @AfterEach
    void tearDown() {
        world.close();
    }

    private JsonNode run(String argsJson) throws Exception {
        ObjectNode args = (ObjectNode) ControlProtocol.json().readTree(argsJson);
        return warm.run(new OperationContext(new Args("warm", args), new Peer(1000, 1000, "alice", Set.of(1000)),
                events::add, cancel));
    }

    @Test
    void warmsEverythingWhenNothingIsNamed() throws Exception {
        JsonNode r = run("{\"dataset\":\"ws/name\"}");
        // 3 table shards + artifact index + 2 artifact shards
        assertThat(world.cachedBlocks()).isEqualTo(6);
        assertThat(r.get("bytes_done").asLong()).isEqualTo(300 + 50 + 2000);
        assertThat(r.get("bytes_total").asLong()).isEqualTo(2350);
        assertThat(r.get("bytes_fetched").asLong()).isEqualTo(2350);
        assertThat(r.get("version").asText()).isEqualTo(world.version.hex());
        assertThat(events).isNotEmpty();
        assertThat(events.getLast().get("bytes_done").asLong()).isEqualTo(2350);
    }

    @Test
    void selectsTablesAndShardRange() throws Exception {
        JsonNode r = run("{\"dataset\":\"ws/name\",\"tables\":[\"main\"],\"shards\":\"1:\"}");
        assertThat(r.get("bytes_done").asLong()).isEqualTo(200);
        assertThat(world.cachedBlocks()).isEqualTo(2);
        // Shards 1 and 2 are cached now; shard 0 is not: warming it fetches exactly its 100 bytes.
        assertThat(run("{\"dataset\":\"ws/name\",\"tables\":[\"main\"]}").get("bytes_fetched").asLong())
                .isEqualTo(100);
    }

    @Test
    void alreadyCachedBlobsAreNotFetchedAgain() throws Exception {
        run("{\"dataset\":\"ws/name\",\"tables\":\"main\"}");
        long reads = world.store.calls(io.warpdata.store.FaultStore.Call.READ);
        JsonNode second = run("{\"dataset\":\"ws/name\",\"tables\":\"main\"}");
        assertThat(second.get("bytes_fetched").asLong()).isZero();
        assertThat(second.get("bytes_done").asLong()).isEqualTo(300);
        assertThat(world.store.calls(io.warpdata.store.FaultStore.Call.READ)).isEqualTo(reads);
    }

    @Test
    void maxBytesBoundsTheWork() throws Exception {
        JsonNode r = run("{\"dataset\":\"ws/name\",\"artifacts\":[\"images\"],\"max_bytes\":\"1kB\"}");
        assertThat(r.get("bytes_done").asLong()).isEqualTo(1000);
        assertThat(r.get("truncated").asBoolean()).isTrue();
        // The index (50 bytes) and the first shard's one block; the second shard is not touched.
        assertThat(world.cachedBlocks()).isEqualTo(2);
    }

    @Test
    void shardsPastTheLastAreRefusedSayingHowManyThereAre() {
        // main has 3 shards (audit 22: 0:100 of 10 warmed all ten and said nothing).
        for (String range : List.of("0:4", "3:", "5:9")) {
            assertThatThrownBy(() -> run("{\"dataset\":\"ws/name\",\"tables\":[\"main\"],\"shards\":\"" + range + "\"}"))
                    .as(range).isInstanceOfSatisfying(ControlException.class, e -> {
                        assertThat(e.type()).isEqualTo("BadRequest");
                        assertThat(e.getMessage()).contains("passes the last shard", "at most 3 shard(s)", "warpctl inspect");
                    });
        }
    }

    @Test
    void unknownTableIsBadRequestListingTables() {
        assertThatThrownBy(() -> run("{\"dataset\":\"ws/name\",\"tables\":[\"nope\"]}"))
                .isInstanceOfSatisfying(ControlException.class, e -> {
                    assertThat(e.type()).isEqualTo("BadRequest");
                    assertThat(e.getMessage()).contains("nope", "main");
                });
    }

    @Test
    void cancelledWarmStopsWithCancelledError() {
        cancel.cancel();
        assertThatThrownBy(() -> run("{\"dataset\":\"ws/name\"}"))
                .isInstanceOfSatisfying(ControlException.class, e -> assertThat(e.type()).isEqualTo("Cancelled"));
        assertThat(world.cachedBlocks()).isZero();
        assertThat(world.store.calls(io.warpdata.store.FaultStore.Call.READ)).isZero();
    }

    @Test
    void shardRangesParseLikePythonSlices() {
        assertThat(ShardRange.parse("0:50")).isEqualTo(new ShardRange(0, 50));
        assertThat(ShardRange.parse("7")).isEqualTo(new ShardRange(7, 8));
        assertThat(ShardRange.parse(":5")).isEqualTo(new ShardRange(0, 5));
        assertThat(ShardRange.parse("10:").select(List.of(1, 2, 3))).isEmpty();
        assertThatThrownBy(() -> ShardRange.parse("5:2")).hasMessageContaining("5:2");
        assertThatThrownBy(() -> ShardRange.parse(":")).hasMessageContaining("':'");
    }
}
