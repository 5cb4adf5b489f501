package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.ops.ShardRange;
import io.warpdata.daemon.control.ops.WarmOperation;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WarmOperationTest {
    private final ControlFakes.CatalogFake catalog = new ControlFakes.CatalogFake();
    private final ControlFakes.Cache cache = new ControlFakes.Cache();
    private final WarmOperation warm = new WarmOperation(catalog, cache, Clock.systemUTC());
    private final List<ObjectNode> events = new CopyOnWriteArrayList<>();
    private final Cancellation cancel = new Cancellation();

    private JsonNode run(String argsJson) throws Exception {
        ObjectNode args = (ObjectNode) ControlProtocol.json().readTree(argsJson);
        return warm.run(new OperationContext(new Args("warm", args), new Peer(1000, 1000, "alice", Set.of(1000)),
                events::add, cancel));
    }

    @Test
    void warmsEverythingWhenNothingIsNamed() throws Exception {
        JsonNode r = run("{\"dataset\":\"ws/name\"}");
        // 3 table shards + artifact index + 2 artifact shards
        assertThat(cache.warmed).hasSize(6);
        assertThat(r.get("bytes_done").asLong()).isEqualTo(300 + 50 + 2000);
        assertThat(r.get("bytes_total").asLong()).isEqualTo(2350);
        assertThat(r.get("version").asText()).isEqualTo(ControlFakes.VERSION.hex());
        assertThat(events).isNotEmpty();
        assertThat(events.getLast().get("bytes_done").asLong()).isEqualTo(2350);
    }

    @Test
    void selectsTablesAndShardRange() throws Exception {
        run("{\"dataset\":\"ws/name\",\"tables\":[\"main\"],\"shards\":\"1:\"}");
        assertThat(cache.warmed).containsExactly(ControlFakes.blob("main-1", 100).id(), ControlFakes.blob("main-2", 100).id());
    }

    @Test
    void alreadyCachedBlobsAreNotFetchedAgain() throws Exception {
        run("{\"dataset\":\"ws/name\",\"tables\":\"main\"}");
        JsonNode second = run("{\"dataset\":\"ws/name\",\"tables\":\"main\"}");
        assertThat(second.get("bytes_fetched").asLong()).isZero();
        assertThat(second.get("bytes_done").asLong()).isEqualTo(300);
    }

    @Test
    void maxBytesBoundsTheWork() throws Exception {
        JsonNode r = run("{\"dataset\":\"ws/name\",\"artifacts\":[\"images\"],\"max_bytes\":\"1kB\"}");
        assertThat(r.get("bytes_done").asLong()).isEqualTo(1000);
        assertThat(r.get("truncated").asBoolean()).isTrue();
        assertThat(cache.size()).isEqualTo(1000);
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
        assertThat(cache.warmed).isEmpty();
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
