package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.blobcache.cache.PlanStatus;
import io.warpdata.daemon.control.ops.PrefetchOrderOperation;
import io.warpdata.manifest.WarpException;
import io.warpdata.vfs.WarpTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * prefetch.order over the real tree, block cache and catalog (ControlWorld, no FUSE): paths
 * resolved as the mount resolves them, parts in order, errors that name the path and say what to
 * do, a plan replaced by the next one of its name and stopped by an empty order.
 */
class PrefetchOrderOperationTest {
    @TempDir
    Path tmp;

    private ControlWorld world;
    private final ExecutorService loader = Executors.newVirtualThreadPerTaskExecutor();
    private final MovingClock clock = new MovingClock();
    private PrefetchOrderOperation op;
    private String versionDir;

    /** A clock the test moves. */
    static final class MovingClock extends Clock {
        volatile long millis = 1_000_000;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis);
        }
    }

    @BeforeEach
    void setUp() {
        world = new ControlWorld(tmp);
        WarpTree tree = new WarpTree(world.catalog, world.cache, 100_000, loader);
        op = new PrefetchOrderOperation(tree, world.cache, "/warp", clock);
        versionDir = "ws/name@" + world.version.hex();
    }

    @AfterEach
    void tearDown() {
        world.close();
        loader.shutdownNow();
    }

    private JsonNode run(String argsJson) throws Exception {
        ObjectNode args = (ObjectNode) ControlProtocol.json().readTree(argsJson);
        return op.run(new OperationContext(new Args("prefetch.order", args), new Peer(1000, 1000, "alice", Set.of(1000)),
                e -> { }, new Cancellation()));
    }

    private PlanStatus plan(String name) {
        return world.cache.plans().stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void filesInOrderBecomeAPlanOfTheirBlobs() throws Exception {
        JsonNode r = run("{\"plan\":\"p\",\"root\":\"" + versionDir + "\",\"paths\":[\"main/part-2.parquet\","
                + "\"main/part-0.parquet\",\"main/part-1.parquet\",\".warp/manifest.json\"]}");
        assertThat(r.get("members").asInt()).isEqualTo(4);
        assertThat(r.get("blobs").asInt()).as("the manifest is held in memory: nothing to fetch").isEqualTo(3);
        assertThat(r.get("planned_bytes").asLong()).isEqualTo(300);
        assertThat(r.get("replaced").asBoolean()).isFalse();
        assertThat(plan("p").description()).isEqualTo(versionDir);
    }

    @Test
    void anAbsoluteRootAndOneThroughTheLatestLinkNameTheSameFiles() throws Exception {
        assertThat(run("{\"plan\":\"a\",\"root\":\"/warp/" + versionDir + "/main\",\"paths\":[\"part-0.parquet\"]}")
                .get("members").asInt()).isEqualTo(1);
        assertThat(run("{\"plan\":\"b\",\"root\":\"ws/name/main\",\"paths\":[\"part-0.parquet\"]}")
                .get("members").asInt()).isEqualTo(1);
        assertThat(run("{\"plan\":\"c\",\"paths\":[\"ws/name/main/part-1.parquet\"]}").get("members").asInt())
                .as("links inside the paths, from the mount's root").isEqualTo(1);
        assertThatThrownBy(() -> run("{\"root\":\"/elsewhere/ws\",\"paths\":[\"x\"]}"))
                .isInstanceOf(ControlException.class).hasMessageContaining("not under the mount /warp");
    }

    @Test
    void partsComeInOrderAndThePlanStartsWithTheLast() throws Exception {
        String root = "\"root\":\"" + versionDir + "/main\"";
        JsonNode first = run("{\"plan\":\"p\"," + root + ",\"paths\":[\"part-0.parquet\"],\"part\":0,\"more\":true}");
        assertThat(first.get("members").asInt()).isEqualTo(1);
        assertThat(world.cache.plans()).as("not started before the last part").isEmpty();
        assertThatThrownBy(() -> run("{\"plan\":\"p\",\"paths\":[\"part-1.parquet\"],\"part\":2,\"more\":true}"))
                .isInstanceOf(ControlException.class).hasMessageContaining("expects part 1");
        // The refused part dropped nothing: part 1 still continues the plan.
        run("{\"plan\":\"p\",\"paths\":[\"part-1.parquet\"],\"part\":1,\"more\":true}");
        JsonNode last = run("{\"plan\":\"p\",\"paths\":[\"part-2.parquet\"],\"part\":2}");
        assertThat(last.get("members").asInt()).isEqualTo(3);
        assertThat(plan("p").members()).isEqualTo(3);
    }

    @Test
    void partsNotContinuedWithinAMinuteAreDropped() throws Exception {
        run("{\"plan\":\"p\",\"root\":\"" + versionDir + "/main\",\"paths\":[\"part-0.parquet\"],\"more\":true}");
        clock.millis += 61_000;
        assertThatThrownBy(() -> run("{\"plan\":\"p\",\"paths\":[\"part-1.parquet\"],\"part\":1}"))
                .isInstanceOf(ControlException.class).hasMessageContaining("expects part 0");
    }

    @Test
    void aPathThatIsNotAFileFailsNamingItAndPlansNothing() throws Exception {
        assertThatThrownBy(() -> run("{\"plan\":\"p\",\"root\":\"" + versionDir + "\",\"paths\":[\"main/part-0.parquet\","
                + "\"main/nope.parquet\"]}"))
                .isInstanceOf(ControlException.class)
                .hasMessageContaining("'main/nope.parquet' (position 1) is not a file under " + versionDir)
                .satisfies(e -> assertThat(((WarpException) e).type()).isEqualTo("NotFound"));
        assertThatThrownBy(() -> run("{\"plan\":\"p\",\"root\":\"" + versionDir + "\",\"paths\":[\"main\"]}"))
                .hasMessageContaining("'main' (position 0) is not a file");
        // Paths from 'find .' in a dataset's folder, sent without --root: the advice names it.
        assertThatThrownBy(() -> run("{\"plan\":\"p\",\"paths\":[\"main/part-0.parquet\"]}"))
                .satisfies(e -> assertThat(((WarpException) e).nextStep()).contains("--root"));
        assertThatThrownBy(() -> run("{\"plan\":\"p\",\"root\":\"ws/nope\",\"paths\":[\"x\"]}"))
                .hasMessageContaining("root 'ws/nope' is not a directory of the mount /warp");
        assertThat(world.cache.plans()).isEmpty();
    }

    @Test
    void theNextOrderOfAPlanReplacesItAndAnEmptyOneStopsIt() throws Exception {
        String root = "\"root\":\"" + versionDir + "/main\"";
        run("{\"plan\":\"rank0\"," + root + ",\"paths\":[\"part-0.parquet\",\"part-1.parquet\"]}");
        JsonNode again = run("{\"plan\":\"rank0\"," + root + ",\"paths\":[\"part-1.parquet\",\"part-0.parquet\"]}");
        assertThat(again.get("replaced").asBoolean()).isTrue();
        JsonNode stop = run("{\"plan\":\"rank0\",\"paths\":[]}");
        assertThat(stop.get("stopped").asBoolean()).isTrue();
        assertThat(run("{\"plan\":\"rank0\",\"paths\":[]}").get("stopped").asBoolean()).isFalse();
    }
}
