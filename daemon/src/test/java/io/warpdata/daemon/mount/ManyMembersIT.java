package io.warpdata.daemon.mount;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 26 at a size CI affords: 200,000 members in 4 WebDataset-style tar shards written by
 * Python's tarfile (200 class folders of 1,000), published through a real S3Proxy, and mounted by
 * warpd with its default heap (scripts/lib/common.sh). The member index is published in parts;
 * the first listing of one class folder fetches the top and only the parts holding that folder
 * (they are kept in the catalog state, one file each, so their count is what was fetched); every
 * member is listed by a full walk; sampled members read back byte-exact. {@code find} lists
 * exactly the published paths, each member with its own computed inode (bit 63 set: no node
 * table entry), and members read back byte-exact through the inodes its listing handed out.
 */
class ManyMembersIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int CLASSES = 200;
    private static final int PER_CLASS = 1000;
    private static final int SHARDS = 4;
    private static final int MEMBERS = CLASSES * PER_CLASS;

    private static MountedStore store;
    private static String version;

    /** warpd's default heap, as scripts/warpd gives it. */
    static String defaultHeap() throws IOException {
        Path common = Path.of("").toAbsolutePath().getParent().resolve("scripts/lib/common.sh");
        Matcher m = Pattern.compile("(?m)^WARP_DEFAULT_HEAP=(\\S+)").matcher(Files.readString(common));
        assertThat(m.find()).as("WARP_DEFAULT_HEAP in " + common).isTrue();
        return m.group(1);
    }

    /** Member (c, i)'s bytes, as the generator writes them. */
    static byte[] payload(int c, int i) {
        String unit = c + ":" + i + ";";
        return unit.repeat(1 + (i % 7)).getBytes(StandardCharsets.US_ASCII);
    }

    /** The parts the publisher cuts these members into (by count and by bytes), from the writer itself. */
    static int publishedParts() {
        io.warpdata.manifest.MemberIndexBuilder b = new io.warpdata.manifest.MemberIndexBuilder();
        io.warpdata.manifest.BlobId h = io.warpdata.manifest.BlobId.of(new byte[] {0});
        for (int c = 0; c < CLASSES; c++) {
            for (int i = 0; i < PER_CLASS; i++) {
                b.add(name(c, i), 0, 0, 1, 0644, h);
            }
        }
        return b.build().writeParts(io.warpdata.daemon.publish.StagedIndex.PART_MEMBERS).parts().size();
    }

    static String name(int c, int i) {
        return String.format("train/n%05d/%07d.cls", c, c * PER_CLASS + i);
    }

    @BeforeAll
    static void publishAndMount() throws Exception {
        store = MountedStore.startWithHeap(defaultHeap(), "it-many");
        Files.writeString(store.work.resolve("gen.py"), """
                import io, sys, tarfile
                out, classes, per, shards = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
                tars = [tarfile.open('%s/shard-%d.tar' % (out, s), 'w', format=tarfile.USTAR_FORMAT) for s in range(shards)]
                for c in range(classes):
                    t = tars[c * shards // classes]
                    for i in range(per):
                        data = (('%d:%d;' % (c, i)) * (1 + i % 7)).encode('ascii')
                        info = tarfile.TarInfo('train/n%05d/%07d.cls' % (c, c * per + i))
                        info.size = len(data)
                        t.addfile(info, io.BytesIO(data))
                for t in tars:
                    t.close()
                """);
        Path shards = Files.createDirectories(store.work.resolve("shards"));
        store.python("gen.py", shards.toString(), "" + CLASSES, "" + PER_CLASS, "" + SHARDS).requireSuccess();
        Shell.Result r = store.warpctl("publish", "big/imagenetish", "--artifact", "train=" + shards.resolve("shard-*.tar"),
                "--set-latest", "--json");
        r.requireSuccess();
        JsonNode out = JSON.readTree(r.out());
        assertThat(out.get("members").asLong()).isEqualTo(MEMBERS);
        version = out.get("version").asText();
    }

    @AfterAll
    static void stop() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    private static long keptIndexBlobs() throws IOException {
        Path blobs = store.cache.resolve("catalog/v1/blobs");
        if (!Files.isDirectory(blobs)) {
            return 0;
        }
        try (Stream<Path> s = Files.list(blobs)) {
            return s.count();
        }
    }

    /** stats.json's read counters once {@code ready} holds of them (it is rewritten every few seconds). */
    private static JsonNode statsJsonRead(java.util.function.Predicate<JsonNode> ready) throws Exception {
        Path file = store.cache.resolve("stats.json");
        JsonNode read = null;
        for (int i = 0; i < 150 && (read == null || !ready.test(read)); i++) {
            try {
                read = Files.exists(file) ? JSON.readTree(file.toFile()).path("read") : null;
            } catch (IOException torn) {
                read = null; // replaced while read: try again
            }
            Thread.sleep(100);
        }
        assertThat(read).as("stats.json was written").isNotNull();
        return read;
    }

    private static List<String> ls(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /**
     * {@code find -type f -printf '%i %P'} over the artifact: every published path once, no
     * other, each with a distinct inode that has bit 63 set (computed from the artifact's slot and
     * the member's index position); then sampled members, read by path while the kernel holds
     * those inodes, give their own bytes.
     */
    private static void assertFindListsEveryMemberWithItsOwnComputedInodeAndTheBytesReadBack(Path artifact)
            throws Exception {
        Path listing = store.work.resolve("find.txt");
        Process find = new ProcessBuilder("find", artifact.toString(), "-type", "f", "-printf", "%i %P\\n")
                .redirectErrorStream(true).redirectOutput(listing.toFile()).start();
        assertThat(find.waitFor()).as("find's exit status").isZero();
        java.util.Set<String> paths = new java.util.HashSet<>();
        java.util.Set<java.math.BigInteger> inodes = new java.util.HashSet<>();
        java.math.BigInteger bit63 = java.math.BigInteger.ONE.shiftLeft(63);
        try (Stream<String> lines = Files.lines(listing)) {
            lines.forEach(line -> {
                int space = line.indexOf(' ');
                java.math.BigInteger ino = new java.math.BigInteger(line.substring(0, space));
                assertThat(ino.testBit(63)).as("inode of %s is computed", line).isTrue();
                assertThat(ino.compareTo(bit63.shiftLeft(1))).isNegative();
                assertThat(inodes.add(ino)).as("inode of %s given once", line).isTrue();
                assertThat(paths.add(line.substring(space + 1))).as("%s listed once", line).isTrue();
            });
        }
        assertThat(paths).hasSize(MEMBERS);
        for (int c = 0; c < CLASSES; c += 37) {
            for (int i = 0; i < PER_CLASS; i += 101) {
                assertThat(paths).contains(name(c, i));
            }
        }
        assertThat(paths).allMatch(p -> p.matches("train/n\\d{5}/\\d{7}\\.cls"));
        Random r = new Random(126);
        for (int k = 0; k < 200; k++) {
            int c = r.nextInt(CLASSES);
            int i = r.nextInt(PER_CLASS);
            Path member = artifact.resolve(name(c, i));
            assertThat(Files.readAllBytes(member)).as(name(c, i)).isEqualTo(payload(c, i));
            long ino = (Long) Files.getAttribute(member, "unix:ino");
            assertThat(inodes).as("%s's stat inode is the one find listed", member)
                    .contains(new java.math.BigInteger(Long.toUnsignedString(ino)));
        }
        Files.delete(listing);
    }

    @Test
    void listsEveryMemberAndReadsThemBackWithTheDefaultHeapFetchingOnlyThePartsItTouches() throws Exception {
        Path artifact = store.mount.resolve("big/imagenetish@" + version + "/train");
        assertThat(keptIndexBlobs()).as("index blobs before the first listing").isZero();
        assertThat(ls(artifact)).containsExactly("train");
        List<String> classes = ls(artifact.resolve("train"));
        assertThat(classes).hasSize(CLASSES).startsWith("n00000", "n00001").endsWith("n00199");
        // The top alone answers for the root and the class folders.
        assertThat(keptIndexBlobs()).as("index blobs after listing the class folders").isEqualTo(1);

        List<String> one = ls(artifact.resolve("train/n00123"));
        assertThat(one).hasSize(PER_CLASS).first().isEqualTo("0123000.cls");
        // 1,000 members span at most two parts (5,851 members of 24-byte paths fit in 480 KiB):
        // the top and one or two parts, of 35.
        long afterOne = keptIndexBlobs();
        assertThat(afterOne).as("index blobs after listing one class folder").isBetween(2L, 3L);

        // Members read at random before their parts are loaded: in the first fifth of the classes
        // (parts 0-4 of 25), so that the walk below meets the rest of the parts for the first time.
        Random r = new Random(26);
        for (int k = 0; k < 200; k++) {
            int c = r.nextInt(CLASSES / 5);
            int i = r.nextInt(PER_CLASS);
            assertThat(Files.readAllBytes(store.mount.resolve("big/imagenetish@" + version + "/train/" + name(c, i))))
                    .as(name(c, i)).isEqualTo(payload(c, i));
        }

        long files;
        try (Stream<Path> all = Files.walk(artifact)) {
            files = all.filter(Files::isRegularFile).count();
        }
        assertThat(files).isEqualTo(MEMBERS);
        int parts = publishedParts();
        assertThat(keptIndexBlobs()).as("the top and all parts").isEqualTo(1 + parts);
        assertFindListsEveryMemberWithItsOwnComputedInodeAndTheBytesReadBack(artifact);
        // The walk met the parts after the first few in order for the first time: they were read
        // ahead of it (at most all but those the earlier reads loaded), none failed.
        JsonNode read = statsJsonRead(n -> n.path("index_parts_read_ahead").asLong() > 0);
        assertThat(read.path("index_parts_read_ahead").asLong()).as("parts read ahead").isBetween(1L, (long) parts - 5);
        assertThat(read.path("index_parts_read_ahead_loaded").asLong()).as("of them, loaded by the read-ahead")
                .isBetween(0L, read.path("index_parts_read_ahead").asLong());
        assertThat(read.path("index_parts_read_ahead_failed").asLong()).as("read-aheads failed").isZero();
        String status = Files.readString(Path.of("/proc/" + store.warpd().pid() + "/status"));
        Matcher hwm = Pattern.compile("VmHWM:\\s+(\\d+) kB").matcher(status);
        if (hwm.find()) {
            System.out.printf("ManyMembersIT: warpd -Xmx%s peak RSS %d MiB after a walk of %d members%n",
                    defaultHeap(), Long.parseLong(hwm.group(1)) / 1024, MEMBERS);
        }
    }
}
