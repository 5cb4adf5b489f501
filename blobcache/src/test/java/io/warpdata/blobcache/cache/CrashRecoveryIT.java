package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.store.local.LocalBlobStore;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlobId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 during heavy reads: a child JVM reads blobs through a small disk cache with several
 * threads (so blocks are being fetched, written, renamed and evicted all the time) and is killed
 * with SIGKILL; a new cache over the same directory must then serve every byte right.
 */
class CrashRecoveryIT {
    private static final int BS = 64 * 1024;
    private static final int BLOBS = 6;

    @TempDir
    Path dir;

    /** The child: reads the blobs named in args forever, with 4 threads. */
    public static void main(String[] args) throws Exception {
        Path storeDir = Path.of(args[0]);
        Path cacheDir = Path.of(args[1]);
        List<BlobRef> refs = new ArrayList<>();
        for (int i = 2; i + 2 < args.length + 1; i += 3) {
            refs.add(new BlobRef(new BlobId(args[i]), Long.parseLong(args[i + 1]), new BlobId(args[i + 2])));
        }
        LocalBlobStore store = new LocalBlobStore(storeDir);
        BlockCache cache = BlockCache.open(store, CacheConfig.defaults(cacheDir).withMinFreeBytes(0)
                .withMaxBytes(40L * (BlockFile.headerLength(BS) + BS)));
        for (int t = 0; t < 4; t++) {
            int seed = t;
            Thread th = new Thread(() -> {
                Random rnd = new Random(seed);
                byte[] buf = new byte[3 * BS];
                while (true) {
                    BlobRef r = refs.get(rnd.nextInt(refs.size()));
                    cache.read(r, rnd.nextInt((int) r.size()), buf, 0, 1 + rnd.nextInt(buf.length));
                }
            });
            th.start();
        }
        System.out.println("READING");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    @Test
    void killDashNineDuringHeavyReadsThenEveryByteMatches() throws Exception {
        Path storeDir = dir.resolve("store");
        Path cacheDir = dir.resolve("cache");
        LocalBlobStore store = new LocalBlobStore(storeDir);
        List<byte[]> contents = new ArrayList<>();
        List<BlobRef> refs = new ArrayList<>();
        List<String> args = new ArrayList<>(List.of(storeDir.toString(), cacheDir.toString()));
        for (int i = 0; i < BLOBS; i++) {
            byte[] d = TestBlobs.bytes(24 * BS + 777 * i, 300 + i);
            BlobRef r = TestBlobs.put(store, d, BS);
            contents.add(d);
            refs.add(r);
            args.addAll(List.of(r.id().hex(), Long.toString(r.size()), r.blocks().hex()));
        }
        for (int round = 0; round < 3; round++) {
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), CrashRecoveryIT.class.getName()));
            cmd.addAll(args);
            Process child = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("child-" + round + ".log").toFile()).start();
            try {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!Files.readString(dir.resolve("child-" + round + ".log")).contains("READING")
                        && System.nanoTime() < until && child.isAlive()) {
                    Thread.sleep(50);
                }
                Thread.sleep(1500 + 500 * round);
                assertThat(child.isAlive()).as("child still reading").isTrue();
            } finally {
                child.destroyForcibly(); // SIGKILL
                child.waitFor(30, TimeUnit.SECONDS);
            }
            long blockFiles;
            try (Stream<Path> s = Files.walk(cacheDir.resolve("v1/blocks"))) {
                blockFiles = s.filter(Files::isRegularFile).count();
            }
            assertThat(blockFiles).as("the child cached something before it was killed").isPositive();

            try (BlockCache cache = BlockCache.open(store, CacheConfig.defaults(cacheDir).withMinFreeBytes(0)
                    .withMaxBytes(40L * (BlockFile.headerLength(BS) + BS)))) {
                try (Stream<Path> s = Files.list(cacheDir.resolve("v1/tmp"))) {
                    assertThat(s.count()).as("temp files removed at start").isZero();
                }
                for (int i = 0; i < BLOBS; i++) {
                    assertThat(cache.readAll(refs.get(i))).as("blob " + i + " after kill -9 round " + round)
                            .isEqualTo(contents.get(i));
                }
                assertThat(cache.awaitIdle(Duration.ofSeconds(30))).isTrue();
            }
        }
    }
}
