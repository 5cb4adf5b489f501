package io.warpdata.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A damaged kept file is deleted only while it still holds the damage: two readers may find it,
 * and the first may have written a good copy in its place before the second deletes (CI, session
 * 25: a saved pointer, read again from the store and written, then deleted by the other reader).
 */
class LastKnownGoodDamageTest {
    private static final String KEY = "datasets/ws/a/versions/abc.json";

    @TempDir
    Path dir;

    @Test
    void aGoodCopyWrittenAfterTheDamageWasReadIsNotDeleted() throws IOException {
        LastKnownGood first = LastKnownGood.onDisk(dir);
        first.keepManifest(KEY, "{\"damaged\":1}".getBytes(StandardCharsets.UTF_8), 1);
        byte[] damaged = first.manifest(KEY).orElseThrow();
        byte[] good = "{\"good\":1}".getBytes(StandardCharsets.UTF_8);

        // The other reader found the same damage, deleted it and kept the store's copy.
        LastKnownGood other = LastKnownGood.onDisk(dir);
        other.forgetManifest(KEY, other.manifest(KEY).orElseThrow());
        assertThat(other.manifest(KEY)).isEmpty();
        other.keepManifest(KEY, good, 1);

        first.forgetManifest(KEY, damaged);
        assertThat(first.manifest(KEY)).hasValueSatisfying(b -> assertThat(b).isEqualTo(good));
    }

    /**
     * The catalog's folder deleted under a running warpd (audit 31): the next write makes it
     * again, its owner's only, instead of failing every write for the rest of the run; the whole
     * cache directory deleted (on purpose) is not made again.
     */
    @Test
    void aDeletedCatalogFolderIsMadeAgainButADeletedCacheDirectoryIsNot() throws IOException {
        Path cache = dir.resolve("cache");
        LastKnownGood known = LastKnownGood.onDisk(cache.resolve("catalog"));
        deleteTree(cache.resolve("catalog"));
        byte[] json = "{\"m\":1}".getBytes(StandardCharsets.UTF_8);
        known.keepManifest(KEY, json, 1);
        assertThat(known.manifest(KEY)).hasValueSatisfying(b -> assertThat(b).isEqualTo(json));
        for (Path p : List.of(cache.resolve("catalog"), cache.resolve("catalog/v1"), cache.resolve("catalog/v1/tmp"))) {
            assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(p)))
                    .as(p.toString()).isEqualTo("rwx------");
        }
        deleteTree(cache);
        known.keepManifest(KEY, json, 1);
        assertThat(known.manifest(KEY)).isEmpty();
        assertThat(cache).doesNotExist();
    }

    private static void deleteTree(Path root) throws IOException {
        try (java.util.stream.Stream<Path> all = Files.walk(root)) {
            all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void damageStillInPlaceIsDeleted() {
        LastKnownGood known = LastKnownGood.onDisk(dir);
        known.keepManifest(KEY, "{\"damaged\":1}".getBytes(StandardCharsets.UTF_8), 1);
        known.forgetManifest(KEY, known.manifest(KEY).orElseThrow());
        assertThat(known.manifest(KEY)).isEmpty();
        assertThat(Files.exists(dir.resolve("v1/manifests/datasets/ws/a/abc.json"))).isFalse();
    }
}
