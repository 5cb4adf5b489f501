package io.warpdata.blobcache;

import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.ManifestCodec;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The catalog through outages and restarts: stale-if-error, kept state, conditional re-reads. */
class CatalogOutageTest {
    private static final DatasetId MNIST = DatasetId.parse("vision/mnist");

    @TempDir
    Path dir;

    private final InMemoryBlobStore backing = new InMemoryBlobStore();
    private final OutageStore store = new OutageStore(backing);
    private final CatalogTest.FakeTicker ticker = new CatalogTest.FakeTicker();
    private final Catalog publisher = new Catalog(backing);

    private Catalog catalog(LastKnownGood known) {
        return new Catalog(store, Catalog.Config.defaults(), ticker, known, Clock.systemUTC());
    }

    private VersionHash publishLatest(long rows) {
        VersionHash v = publisher.putVersion(CatalogTest.manifest(MNIST, rows));
        publisher.setLatest(MNIST, v);
        return v;
    }

    @Test
    void whileTheStoreIsDownListingsPointersAndManifestsComeFromTheLastKnownState() {
        VersionHash v = publishLatest(1);
        Catalog catalog = catalog(LastKnownGood.inMemory());
        assertThat(catalog.workspaces()).containsExactly("vision");
        assertThat(catalog.datasets("vision")).containsExactly(MNIST);
        assertThat(catalog.resolve(DatasetRef.parse("vision/mnist")).version()).isEqualTo(v);
        assertThat(catalog.versions(MNIST)).containsExactly(v);

        store.down();
        ticker.advance(Duration.ofMinutes(5));

        assertThat(catalog.workspaces()).containsExactly("vision");
        assertThat(catalog.datasets("vision")).containsExactly(MNIST);
        assertThat(catalog.latest(MNIST)).hasValue(v);
        assertThat(catalog.resolve(DatasetRef.parse("vision/mnist@" + v.shortHex(8))).version()).isEqualTo(v);
        assertThat(catalog.staleAnswers()).isGreaterThanOrEqualTo(3);
        // Never seen: nothing to fall back on, so the outage is the answer.
        assertThatThrownBy(() -> catalog.datasets("audio")).isInstanceOf(StoreUnreachableException.class);
    }

    @Test
    void aStaleAnswerIsTrustedForOneTtlSoAnOutageCostsOneRequestPerTtl() {
        publishLatest(1);
        Catalog catalog = catalog(LastKnownGood.inMemory());
        catalog.workspaces();
        store.down();
        ticker.advance(Duration.ofSeconds(3));
        long before = store.calls.sum();
        for (int i = 0; i < 100; i++) {
            catalog.workspaces();
        }
        assertThat(store.calls.sum() - before).isEqualTo(1);
    }

    @Test
    void afterAnOutageNewPublishesShowWithinTheTtl() {
        VersionHash v1 = publishLatest(1);
        Catalog catalog = catalog(LastKnownGood.inMemory());
        assertThat(catalog.latest(MNIST)).hasValue(v1);
        store.failWith5xx();
        ticker.advance(Duration.ofSeconds(3));
        assertThat(catalog.latest(MNIST)).hasValue(v1);

        store.up();
        VersionHash v2 = publishLatest(2);
        ticker.advance(Duration.ofSeconds(3));
        assertThat(catalog.latest(MNIST)).hasValue(v2);
    }

    @Test
    void aRestartWithTheStoreDownServesWhatTheLastRunKnew() {
        VersionHash v = publishLatest(1);
        Catalog first = catalog(LastKnownGood.onDisk(dir));
        first.resolve(DatasetRef.parse("vision/mnist"));
        first.versions(MNIST);
        first.workspaces();
        first.datasets("vision");

        store.down();
        Catalog second = catalog(LastKnownGood.onDisk(dir));

        assertThat(second.workspaces()).containsExactly("vision");
        assertThat(second.datasets("vision")).containsExactly(MNIST);
        Catalog.Resolved r = second.resolve(DatasetRef.parse("vision/mnist"));
        assertThat(r.version()).isEqualTo(v);
        assertThat(r.manifest().stats().totalRows()).isEqualTo(1);
        assertThat(second.resolve(DatasetRef.parse("vision/mnist@" + v.hex())).version()).isEqualTo(v);
    }

    @Test
    void aKeptManifestIsVerifiedAgainstItsVersionAndADamagedOneIsRefetched() throws IOException {
        VersionHash v = publishLatest(1);
        catalog(LastKnownGood.onDisk(dir)).manifest(MNIST, v);
        Path kept;
        try (Stream<Path> files = Files.walk(dir)) {
            kept = files.filter(p -> p.toString().endsWith(v.hex() + ".json")).findFirst().orElseThrow();
        }
        String json = Files.readString(kept);
        Files.writeString(kept, json.replace("\"row_count\":1", "\"row_count\":7"));

        long gets = store.gets.sum();
        Catalog restarted = catalog(LastKnownGood.onDisk(dir));
        assertThat(restarted.manifest(MNIST, v).stats().totalRows()).isEqualTo(1);
        assertThat(store.gets.sum()).isEqualTo(gets + 1);
        assertThat(Files.readString(kept)).isEqualTo(new String(ManifestCodec.toJson(restarted.manifest(MNIST, v)),
                StandardCharsets.UTF_8));
    }

    @Test
    void damagedStateFilesAreMissesNeverErrors() throws IOException {
        publishLatest(1);
        Catalog first = catalog(LastKnownGood.onDisk(dir));
        first.workspaces();
        first.latest(MNIST);
        try (Stream<Path> files = Files.walk(dir.resolve("v1/known"))) {
            for (Path p : files.filter(Files::isRegularFile).toList()) {
                Files.writeString(p, "{\"key\": tru");
            }
        }
        store.down();
        Catalog second = catalog(LastKnownGood.onDisk(dir));
        assertThatThrownBy(second::workspaces).isInstanceOf(StoreUnreachableException.class);
        assertThatThrownBy(() -> second.latest(MNIST)).isInstanceOf(StoreUnreachableException.class);
        try (Stream<Path> files = Files.walk(dir.resolve("v1/known"))) {
            assertThat(files.filter(Files::isRegularFile).toList()).as("damaged entries are deleted").isEmpty();
        }
        store.up();
        assertThat(second.workspaces()).containsExactly("vision");
    }

    @Test
    void rereadingAnUnchangedPointerIsOneConditionalGetAnsweredNotModified() {
        VersionHash v1 = publishLatest(1);
        Catalog catalog = catalog(LastKnownGood.inMemory());
        assertThat(catalog.latest(MNIST)).hasValue(v1);
        for (int i = 0; i < 5; i++) {
            ticker.advance(Duration.ofSeconds(3));
            assertThat(catalog.latest(MNIST)).hasValue(v1);
        }
        assertThat(store.conditionalGets.sum()).isEqualTo(5);
        assertThat(store.notModified.sum()).isEqualTo(5);
        assertThat(store.lists.sum()).as("re-checking a pointer never lists").isZero();

        VersionHash v2 = publishLatest(2);
        ticker.advance(Duration.ofSeconds(3));
        assertThat(catalog.latest(MNIST)).hasValue(v2);
        assertThat(store.notModified.sum()).isEqualTo(5);
    }

    @Test
    void aPointerRemovedFromTheStoreIsForgottenNotServedStale() {
        publishLatest(1);
        Catalog catalog = catalog(LastKnownGood.inMemory());
        catalog.latest(MNIST);
        backing.objects().remove(StoreLayout.latest(MNIST));
        ticker.advance(Duration.ofSeconds(3));
        assertThat(catalog.latest(MNIST)).isEmpty();
        store.down();
        ticker.advance(Duration.ofSeconds(3));
        assertThat(catalog.latest(MNIST)).isEmpty();
    }

    @Test
    void leftoverTempFilesAreRemovedWhenTheStateOpens() throws IOException {
        LastKnownGood.onDisk(dir);
        Path tmp = dir.resolve("v1/tmp/half-written.json.3");
        Files.writeString(tmp, "{\"ke");
        LastKnownGood.onDisk(dir);
        assertThat(tmp).doesNotExist();
        assertThat(List.of(dir.resolve("v1/known"), dir.resolve("v1/manifests"), dir.resolve("v1/blobs")))
                .allMatch(Files::isDirectory);
    }
}
