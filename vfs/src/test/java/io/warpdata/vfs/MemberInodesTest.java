package io.warpdata.vfs;

import io.warpdata.blobcache.cache.DirectBlobReader;
import io.warpdata.catalog.Catalog;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.store.InMemoryBlobStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Computed member inodes, on the tree alone: numbering, decoding, and what never decodes. */
class MemberInodesTest {
    private static final DatasetId DS = new DatasetId("vision", "pets");

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final Catalog catalog = new Catalog(store);
    private final TestVersions versions = new TestVersions(store, catalog);
    private final DirectBlobReader reader = new DirectBlobReader(store);
    private final ExecutorService loader = Executors.newVirtualThreadPerTaskExecutor();
    private final WarpTree tree = new WarpTree(catalog, reader, 1_000_000, loader);

    @AfterEach
    void close() {
        loader.shutdownNow();
        reader.close();
    }

    private static Map<String, byte[]> members(String tag) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("a/1.txt", (tag + " one").getBytes(StandardCharsets.UTF_8));
        m.put("a/2.txt", (tag + " two").getBytes(StandardCharsets.UTF_8));
        m.put("b.sh", (tag + " three").getBytes(StandardCharsets.UTF_8));
        return m;
    }

    private String publish(String tag) {
        VersionHash v = versions.publish(DS, Map.of(), Map.of("cats", versions.artifact(members(tag), Map.of("b.sh", 0755), 2),
                "dogs", versions.artifact(members(tag + " dog"), Map.of(), 2)), null, false);
        return "/vision/pets@" + v.hex();
    }

    private byte[] read(Node n) {
        byte[] out = new byte[(int) tree.attributes(n).size()];
        assertThat(tree.read(n, 0, ByteBuffer.wrap(out))).isEqualTo(out.length);
        return out;
    }

    @Test
    void aMemberInodeDecodesToTheSameMemberAndStaysTheSameAcrossLookups() {
        String v = publish("first");
        Node two = tree.lookup(v + "/cats/a/2.txt");
        long ino = tree.computedInode(two);
        assertThat(WarpTree.isComputedInode(ino)).isTrue();
        assertThat(ino).isEqualTo(MemberInodes.inode(0, 1)); // the first artifact reached, index position 1
        assertThat(tree.computedInode(tree.lookup(v + "/cats/a/2.txt"))).isEqualTo(ino);

        Node decoded = tree.nodeOfComputedInode(ino);
        assertThat(read(decoded)).isEqualTo("first two".getBytes(StandardCharsets.UTF_8));
        assertThat(tree.attributes(decoded)).isEqualTo(tree.attributes(two));
        assertThat(tree.computedInode(decoded)).isEqualTo(ino);
        assertThat(tree.describeComputedInode(ino)).isEqualTo(v.substring(1) + "/cats/a/2.txt");

        Node script = tree.nodeOfComputedInode(tree.computedInode(tree.lookup(v + "/cats/b.sh")));
        assertThat(tree.attributes(script).permissions()).isEqualTo(0555);
    }

    @Test
    void directoriesAndOtherFilesAreNotComputed() {
        String v = publish("first");
        assertThat(tree.computedInode(tree.lookup(v))).isZero();
        assertThat(tree.computedInode(tree.lookup(v + "/cats"))).isZero();
        assertThat(tree.computedInode(tree.lookup(v + "/cats/a"))).isZero();
        assertThat(tree.computedInode(tree.lookup(v + "/.warp/manifest.json"))).isZero();
        assertThat(WarpTree.isComputedInode(2)).isFalse();
        assertThat(WarpTree.isComputedInode(Long.MAX_VALUE)).as("the table's ids never reach bit 63").isFalse();
    }

    @Test
    void eachArtifactOfEachVersionHasItsOwnSlotNumberedOnce() {
        String v1 = publish("first");
        String v2 = publish("second");
        long cats1 = tree.computedInode(tree.lookup(v1 + "/cats/a/1.txt"));
        long dogs1 = tree.computedInode(tree.lookup(v1 + "/dogs/a/1.txt"));
        long cats2 = tree.computedInode(tree.lookup(v2 + "/cats/a/1.txt"));
        assertThat(java.util.Set.of(cats1, dogs1, cats2)).hasSize(3);
        for (int k = 0; k < 3; k++) { // listing and looking up again numbers nothing new
            tree.list(tree.lookup(v1), 0, (name, type, next, child) -> false);
            tree.list(tree.lookup(v1 + "/cats/a"), 0, (name, type, next, child) -> false);
        }
        assertThat(tree.numberedArtifacts()).isEqualTo(3);
        assertThat(read(tree.nodeOfComputedInode(cats2))).isEqualTo("second one".getBytes(StandardCharsets.UTF_8));
        assertThat(read(tree.nodeOfComputedInode(dogs1))).isEqualTo("first dog one".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aNumberNeverHandedOutIsStale() {
        String v = publish("first");
        long ino = tree.computedInode(tree.lookup(v + "/cats/a/1.txt"));
        long slot0 = MemberInodes.inode(0, 0);
        for (long bad : new long[] {MemberInodes.inode(0, 3), MemberInodes.inode(0, Integer.MAX_VALUE),
                MemberInodes.inode(7, 0), MemberInodes.inode(Integer.MAX_VALUE, 1), ino | 1L << 62, 5, slot0 ^ 1L << 63}) {
            assertThatThrownBy(() -> tree.nodeOfComputedInode(bad)).as("%x", bad).isInstanceOf(StaleNodeException.class);
            assertThat(tree.describeComputedInode(bad)).startsWith("(node ");
        }
    }
}
