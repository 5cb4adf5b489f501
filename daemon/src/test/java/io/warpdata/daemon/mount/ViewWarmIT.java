package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code warpctl warm} and {@code info} of a view count the view's members, not its parent's
 * shards (issue 23): a parent of 400 files of 100 KB in 16 MiB shards, a view of 3 of them.
 * Warming the view fetches about the blocks those 3 files lie in; afterwards reading them
 * through the mount costs the store nothing; info reports the view's bytes.
 */
class ViewWarmIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int FILES = 400;
    private static final int FILE_BYTES = 100_000;

    private static MountedStore store;
    private static Path src;

    @BeforeAll
    static void publishTheParentAndAView() throws Exception {
        store = MountedStore.start("it-view-warm", "--pointer-ttl", "1s");
        src = Files.createDirectories(store.work.resolve("src"));
        Random random = new Random(23);
        for (int i = 0; i < FILES; i++) {
            Path f = src.resolve("files/c" + i % 4 + "/f" + i + ".bin");
            Files.createDirectories(f.getParent());
            byte[] data = new byte[FILE_BYTES];
            random.nextBytes(data);
            Files.write(f, data);
        }
        Files.createDirectories(src.resolve("main"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("COPY (SELECT printf('c%d/f%d.bin', i % 4, i) AS path, i AS id FROM range(" + FILES + ") t(i)"
                    + " ORDER BY id) TO '" + src.resolve("main/files.parquet") + "' (FORMAT PARQUET)");
        }
        json(store.warpctl("publish", "big/parent", "--table", "main=" + src.resolve("main") + "/*.parquet",
                "--artifact", "files=" + src.resolve("files"), "--bind", "main.path=files:file", "--shard-size", "16MiB",
                "--set-latest", "--json"));
        json(store.warpctl("view", "big/parent", "--as", "big/three", "--where", "id IN (5, 150, 390)", "--json"));
    }

    @AfterAll
    static void stopEverything() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    private static JsonNode json(Shell.Result r) {
        r.requireSuccess();
        try {
            String out = r.out().trim();
            return JSON.readTree(out.substring(out.lastIndexOf("\n{") + 1));
        } catch (IOException e) {
            throw new UncheckedIOException("not JSON: " + r.out(), e);
        }
    }

    @Test
    void warmingAViewFetchesTheBlocksOfItsMembersNotItsParentsShards() throws Exception {
        long parentBytes = json(store.warpctl("info", "big/parent", "--json")).get("stats").get("total_bytes").asLong();
        assertThat(parentBytes).isGreaterThan((long) FILES * FILE_BYTES);

        JsonNode info = json(store.warpctl("info", "big/three", "--json"));
        assertThat(info.get("stats").get("total_bytes").asLong()).as("the view's own bytes: its table and 3 members")
                .isBetween(3L * FILE_BYTES, 3L * FILE_BYTES + 100_000);
        assertThat(store.warpctl("info", "big/three").requireSuccess().out()).contains("the parent's shards");

        store.s3.resetCounters();
        JsonNode warm = json(store.warpctl("warm", "big/three", "--json"));
        long served = store.s3.counters().bytesServed();
        System.out.printf("ViewWarmIT: parent %d bytes; warm of the view %s; the store served %d bytes%n", parentBytes, warm,
                served);
        // 3 members of 100 KB lie in at most 2 blocks of 1 MiB each; the index, table and hash
        // lists are small. The parent's shards hold 40 MB.
        assertThat(warm.get("bytes_fetched").asLong()).as("warm: %s", warm).isLessThanOrEqualTo(6L << 20);
        assertThat(served).as("bytes the store served for the warm").isLessThan(8L << 20).isLessThan(parentBytes / 5);

        store.s3.resetCounters();
        for (String member : List.of("c1/f5.bin", "c2/f150.bin", "c2/f390.bin")) {
            assertThat(Files.readAllBytes(store.mount.resolve("big/three/files/" + member)))
                    .isEqualTo(Files.readAllBytes(src.resolve("files/" + member)));
        }
        assertThat(store.s3.counters().gets() - store.s3.counters().conditionalGets.sum())
                .as("GETs to read the warmed members: %s", store.s3.counters()).isZero();

        JsonNode again = json(store.warpctl("warm", "big/three", "--json"));
        assertThat(again.get("bytes_fetched").asLong()).as("a second warm fetches nothing").isZero();
    }
}
