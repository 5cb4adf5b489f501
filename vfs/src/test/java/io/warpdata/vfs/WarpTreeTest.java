package io.warpdata.vfs;

import io.warpdata.blobcache.cache.BlockVerificationException;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.store.StoreLayout;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.CacheConfig;
import io.warpdata.blobcache.cache.DirectBlobReader;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.VersionHash;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WarpTreeTest {
    private static final DatasetId MNIST = new DatasetId("vision", "mnist");
    private static final String CREATED = "2026-11-01T12:00:00Z";

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final AtomicLong ticker = new AtomicLong();
    private final Catalog catalog = new Catalog(store, Catalog.Config.defaults(), ticker::get);
    private final TestVersions versions = new TestVersions(store, catalog);
    private final DirectBlobReader reader = new DirectBlobReader(store);
    private final ExecutorService loader = Executors.newVirtualThreadPerTaskExecutor();
    private final WarpTree tree = new WarpTree(catalog, reader, 1_000_000, loader);
    private final Errno errno = new Errno(System::nanoTime);

    private byte[] shard0;
    private byte[] shard1;
    private Map<String, byte[]> members;
    private VersionHash v1;

    @BeforeEach
    void publishOneVersion() {
        shard0 = TestVersions.bytes(10_000, 1);
        shard1 = TestVersions.bytes(123, 2);
        members = new LinkedHashMap<>();
        members.put("train/cat/1.png", TestVersions.bytes(5000, 3));
        members.put("train/cat/2.png", TestVersions.bytes(0, 4));
        members.put("train/dog/1.png", TestVersions.bytes(9000, 5));
        members.put("README", "hello".getBytes(StandardCharsets.UTF_8));
        members.put("bin/run.sh", "#!/bin/sh\n".getBytes(StandardCharsets.UTF_8));
        Map<String, byte[]> shards = new LinkedHashMap<>();
        shards.put("part-0.parquet", shard0);
        shards.put("part-1.parquet", shard1);
        Table main = versions.table(shards);
        Artifact images = versions.artifact(members, Map.of("bin/run.sh", 0755), 2);
        v1 = versions.publish(MNIST, Map.of("main", main), Map.of("images", images), CREATED, true);
    }

    @AfterEach
    void close() {
        loader.shutdownNow();
        reader.close();
    }

    @Test
    void webDatasetShardsThatNamedTheirFilesAreShownAsThoseFilesBesideTheirMembers() {
        Artifact packed = versions.artifact(members, Map.of(), 2);
        List<String> names = List.of("shard-000.tar", "shard 001 \u00fc=+.tar", "shard-002.tar");
        Artifact web = new Artifact(io.warpdata.manifest.ArtifactKind.WEBDATASET_SHARDS, packed.shards(), packed.index(),
                packed.memberCount(), packed.memberBytes(), new TreeMap<>(), names);
        VersionHash v = versions.publish(MNIST, Map.of("main", versions.table(Map.of("x.parquet", shard1))),
                Map.of("web", web, "plain", packed), CREATED, false);
        String dir = version(v);
        assertThat(list(dir)).containsExactly(".", "..", ".warp", "main", "plain", "web", "web.tars");
        assertThat(tree.attributes(tree.lookup(dir)).nlink()).isEqualTo(3 + 1 + 2 + 1);
        assertThat(list(dir + "/web.tars")).as("any name a member may have").containsExactly(".", "..", "shard-000.tar",
                "shard 001 \u00fc=+.tar", "shard-002.tar");
        for (int i = 0; i < names.size(); i++) {
            BlobRef shard = packed.shards().get(i);
            assertThat(readAll(dir + "/web.tars/" + names.get(i), 100)).as(names.get(i))
                    .isEqualTo(store.get(StoreLayout.blob(shard.id())));
            assertThat(tree.attributes(tree.lookup(dir + "/web.tars/" + names.get(i))).size()).isEqualTo(shard.size());
        }
        assertThat(readAll(dir + "/web/train/dog/1.png", 4096)).isEqualTo(members.get("train/dog/1.png"));
        // Only artifacts that named their shards have such a folder.
        assertNotFound(dir + "/plain.tars");
        assertNotFound(dir + "/web.tars/shard-003.tar");
    }

    private List<String> list(String path) {
        List<String> names = new ArrayList<>();
        tree.list(tree.lookup(path), 0, (name, type, next, node) -> {
            names.add(name);
            return false;
        });
        return names;
    }

    private byte[] readAll(String path, int chunk) {
        Node n = tree.lookup(path);
        long size = tree.attributes(n).size();
        byte[] out = new byte[(int) size];
        byte[] buf = new byte[chunk];
        long off = 0;
        while (true) {
            int got = tree.read(n, off, buf, chunk);
            if (got == 0) {
                break;
            }
            System.arraycopy(buf, 0, out, (int) off, got);
            off += got;
        }
        assertThat(off).isEqualTo(size);
        return out;
    }

    private String version(VersionHash v) {
        return "/vision/mnist@" + v.hex();
    }

    /** A safetensors header of two F32 vectors of 2, emb/0 and emb/1. */
    private static final String TWO_VECTORS = "{\"emb/0\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
            + "\"emb/1\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}";

    /** A safetensors header: {@code json} padded with spaces to a multiple of 8 bytes. */
    private static byte[] header(String json) {
        return (json + " ".repeat((8 - json.length() % 8) % 8)).getBytes(StandardCharsets.US_ASCII);
    }

    /** A safetensors file: the header's length, {@code header}, then {@code values} as little-endian F32. */
    private static byte[] safetensors(byte[] header, float... values) {
        ByteBuffer file = ByteBuffer.allocate(8 + header.length + 4 * values.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        file.putLong(header.length).put(header);
        for (float v : values) {
            file.putFloat(v);
        }
        return file.array();
    }

    /**
     * Session 30's review (M1): a tensor folder's directory node held the folder itself, and the
     * kernel keeps directory inodes as long as it likes, so folders the cache let go stayed on
     * the heap outside its budget. The node holds where the folder comes from.
     */
    @Test
    void aTensorFolderNodeDoesNotKeepItsFolderOnceTheFoldersCacheLetsItGo() {
        byte[] file = safetensors(header(TWO_VECTORS), 1, 2, 3, 4);
        Artifact packed = versions.artifact(Map.of("a.safetensors", file), Map.of(), 1);
        Artifact tensors = new Artifact(io.warpdata.manifest.ArtifactKind.SAFETENSORS, packed.shards(), packed.index(),
                packed.memberCount(), packed.memberBytes());
        VersionHash v = versions.publish(MNIST, Map.of(), Map.of("tensors", tensors), CREATED, false);
        Node.TensorDir dir = (Node.TensorDir) tree.lookup("/vision/mnist@" + v.hex() + "/tensors/a.tensors");
        java.lang.ref.WeakReference<TensorFolder> made = new java.lang.ref.WeakReference<>(dir.folder());

        dir.slot().source().folders().forgetAll();
        for (int i = 0; i < 20 && made.get() != null; i++) {
            System.gc();
        }

        assertThat(made.get()).as("let go while its node is still held").isNull();
        assertThat(dir.folder().children("emb")).extracting(TensorFolder.Child::name).containsExactly("0.npy", "1.npy");
        assertThat(tree.lookup("/vision/mnist@" + v.hex() + "/tensors/a.tensors/emb/1.npy").type())
                .isEqualTo(Node.Type.FILE);
    }

    /**
     * Issue 26: in a shard under 64 MiB a tensor folder is read through the shard's blocks (its
     * random reads are served by them anyway) until an order plan says it reads the folder's
     * tensors; from then on each tensor is a range of its own with its own hash, so that the
     * plan fetches exactly it, and the header comes from the deflated headers: a damaged one is
     * read from the file instead, never trusted.
     */
    @Test
    void aSmallShardsTensorsAreReadByTheirOwnHashesOnceAPlanWantsThem() {
        byte[] header = header(TWO_VECTORS);
        byte[] bytes = safetensors(header, 1, 2, 3, 4);
        byte[] t1 = Arrays.copyOfRange(bytes, 8 + header.length + 8, 8 + header.length + 16);
        List<io.warpdata.manifest.BlobId> hashes = List.of(
                io.warpdata.manifest.BlobId.of(Arrays.copyOfRange(bytes, 8 + header.length, 8 + header.length + 8)),
                io.warpdata.manifest.BlobId.of(t1));
        io.warpdata.manifest.TensorHashes.Builder b = new io.warpdata.manifest.TensorHashes.Builder()
                .add(io.warpdata.manifest.BlobId.of(bytes), header.length, io.warpdata.manifest.BlobId.of(header), hashes, header);
        BlobRef hashBlob = versions.putBlob(b.build());
        Artifact packed = versions.artifact(Map.of("a.safetensors", bytes), Map.of(), 1);
        Artifact good = new Artifact(io.warpdata.manifest.ArtifactKind.SAFETENSORS, packed.shards(), packed.index(),
                packed.memberCount(), packed.memberBytes(), new TreeMap<>(), List.of(), hashBlob, versions.putBlob(b.buildHeaders()));
        // The same file with deflated headers that inflate to another header of the same length.
        byte[] other = header(TWO_VECTORS.replace("emb/1", "emb/9"));
        BlobRef wrongHeaders = versions.putBlob(new io.warpdata.manifest.TensorHashes.Builder()
                .add(io.warpdata.manifest.BlobId.of(bytes), header.length, io.warpdata.manifest.BlobId.of(header), hashes, other)
                .buildHeaders());
        Artifact damaged = new Artifact(io.warpdata.manifest.ArtifactKind.SAFETENSORS, packed.shards(), packed.index(),
                packed.memberCount(), packed.memberBytes(), new TreeMap<>(), List.of(), hashBlob, wrongHeaders);
        VersionHash v = versions.publish(MNIST, Map.of(), Map.of("good", good, "damaged", damaged), CREATED, false);
        String root = "/vision/mnist@" + v.hex();
        io.warpdata.store.FaultStore counted = new io.warpdata.store.FaultStore(store);
        WarpTree tree = new WarpTree(catalog, new DirectBlobReader(counted), 1_000_000, loader);
        String shardKey = StoreLayout.blob(packed.shards().get(0).id());
        java.util.function.Predicate<io.warpdata.store.FaultStore.Request> headerRead = r -> r.key().equals(shardKey)
                && r.offset() < 8 + header.length && r.offset() + r.len() > 8;

        Node.File blocks = (Node.File) tree.lookup(root + "/good/a.tensors/emb/1.npy");
        assertThat(((FileContent.Pieces) blocks.content()).pieces()).as("unplanned: through the blocks")
                .noneMatch(p -> p instanceof FileContent.HashedRange);

        for (String artifact : List.of("good", "damaged")) {
            // The two share the file: each folder made anew, from its own artifact's headers.
            ((Node.TensorDir) tree.lookup(root + "/good/a.tensors")).slot().source().folders().forgetAll();
            counted.reset();
            tree.wantTensorHashes(tree.lookup(root + "/" + artifact), "a.tensors");
            Node.File one = (Node.File) tree.lookup(root + "/" + artifact + "/a.tensors/emb/1.npy");
            assertThat(counted.requests().stream().anyMatch(headerRead))
                    .as("%s: the header read from the file (%s)", artifact, counted.requests())
                    .isEqualTo(artifact.equals("damaged"));
            FileContent.HashedRange range = ((FileContent.Pieces) one.content()).pieces().stream()
                    .filter(p -> p instanceof FileContent.HashedRange).map(p -> (FileContent.HashedRange) p)
                    .findFirst().orElseThrow(() -> new AssertionError(artifact + ": not read by its hash"));
            assertThat(range.range().hash()).as(artifact).isEqualTo(hashes.get(1));
            assertThat(range.range().lookup()).isTrue();
            byte[] npy = readAll(root + "/" + artifact + "/a.tensors/emb/1.npy", 64);
            assertThat(Arrays.copyOfRange(npy, npy.length - 8, npy.length)).as(artifact).isEqualTo(t1);
            assertThat(tree.lookup(root + "/" + artifact + "/a.tensors/emb/0.npy").type()).isEqualTo(Node.Type.FILE);
        }
        assertThatThrownBy(() -> tree.lookup(root + "/damaged/a.tensors/emb/9.npy"))
                .as("the damaged header's key is not believed").isInstanceOf(NoSuchEntryException.class);
    }

    /**
     * Audit 39: tensor files took a table entry and a node each while the kernel held their
     * inodes (600,000 after six folders of 100,000 were listed, about 200 MB outside the
     * folders' budget). Their inodes are computed now, from the folder's slot and the file's
     * position, and decode to the same tensor after the folder was let go and made again.
     */
    @Test
    void aTensorFileHasAComputedInodeThatOutlivesItsFolder() {
        String json = "{\"emb/0\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                + "\"emb/1\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
                + "\"w\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[16,20]}}";
        byte[] header = (json + " ".repeat((8 - json.length() % 8) % 8)).getBytes(StandardCharsets.US_ASCII);
        ByteBuffer file = ByteBuffer.allocate(8 + header.length + 20).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        file.putLong(header.length).put(header).putFloat(1).putFloat(2).putFloat(3).putFloat(4).putInt(0x3f803f80);
        Artifact packed = versions.artifact(Map.of("a.safetensors", file.array(), "b.safetensors", file.array()), Map.of(), 1);
        Artifact tensors = new Artifact(io.warpdata.manifest.ArtifactKind.SAFETENSORS, packed.shards(), packed.index(),
                packed.memberCount(), packed.memberBytes());
        VersionHash v = versions.publish(MNIST, Map.of(), Map.of("tensors", tensors), CREATED, false);
        String a = "/vision/mnist@" + v.hex() + "/tensors/a.tensors";
        Node one = tree.lookup(a + "/emb/1.npy");
        long ino = tree.computedInode(one);

        assertThat(WarpTree.isComputedInode(ino)).isTrue();
        assertThat(TensorInodes.isTensor(ino)).isTrue();
        assertThat(tree.computedInode(tree.lookup(a + "/emb/1.npy"))).as("the same at every lookup").isEqualTo(ino);
        Map<String, Long> listed = new LinkedHashMap<>();
        tree.list(tree.lookup(a + "/emb"), 0, (name, type, next, node) -> {
            listed.put(name, node == null ? null : tree.computedInode(node));
            return false;
        });
        assertThat(listed.get("1.npy")).as("the same in a listing").isEqualTo(ino);
        assertThat(listed.get("0.npy")).isNotEqualTo(ino);
        long w = tree.computedInode(tree.lookup(a + "/w.bf16"));
        long other = tree.computedInode(tree.lookup("/vision/mnist@" + v.hex() + "/tensors/b.tensors/emb/1.npy"));
        assertThat(WarpTree.artifactOfComputedInode(other)).as("another file: another folder slot")
                .isNotEqualTo(WarpTree.artifactOfComputedInode(ino));
        assertThat(WarpTree.artifactOfComputedInode(w)).isEqualTo(WarpTree.artifactOfComputedInode(ino));
        assertThat(tree.computedInode(tree.lookup(a + "/emb"))).as("its folders stay tabled").isZero();
        assertThat(tree.numberedTensorFolders()).isEqualTo(2);

        byte[] npy = readAll(a + "/emb/1.npy", 7);
        ((Node.TensorDir) tree.lookup(a)).slot().source().folders().forgetAll();
        Node decoded = tree.nodeOfComputedInode(ino);
        assertThat(tree.computedInode(decoded)).isEqualTo(ino);
        assertThat(tree.attributes(decoded).size()).isEqualTo(npy.length);
        byte[] again = new byte[npy.length];
        assertThat(tree.read(decoded, 0, again, again.length)).isEqualTo(npy.length);
        assertThat(again).isEqualTo(npy);
        assertThat(Arrays.copyOfRange(again, npy.length - 8, npy.length))
                .isEqualTo(ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putFloat(3).putFloat(4).array());
        assertThat(tree.attributes(tree.nodeOfComputedInode(w)).size()).isEqualTo(4);
        assertThat(tree.describeComputedInode(ino)).endsWith("/tensors/a.tensors/emb/1.npy");
        assertThat(tree.numberedTensorFolders()).as("made again: the same slot").isEqualTo(2);
        // A log line names a file of a folder let go by its position: it never reads the header.
        Node.TensorDir held = (Node.TensorDir) tree.lookup(a);
        held.slot().source().folders().forgetAll();
        assertThat(tree.describeComputedInode(ino)).endsWith("/tensors/a.tensors/(tensor file 1)");
        assertThat(held.slot().source().kept()).as("not made by the line").isNull();

        // A position past the folder's files, or a folder slot never given: stale, never another tensor.
        for (long bad : new long[] {(ino & ~MemberInodes.POSITION_MASK) | 3, (ino & ~MemberInodes.POSITION_MASK) | Integer.MAX_VALUE,
                ino + (5L << MemberInodes.POSITION_BITS)}) {
            assertThatThrownBy(() -> tree.nodeOfComputedInode(bad)).as("%x", bad).isInstanceOf(StaleNodeException.class);
            assertThat(tree.describeComputedInode(bad)).startsWith("(node ");
        }
    }

    /**
     * Audit 40: a tensor folder's listing made all its entries for each chunk (92 s for 120,000).
     * Made as taken now, one chunk of one entry at a time it gives every entry once, in name
     * order, folders among files, each with the node a lookup gives.
     */
    @Test
    void aTensorFolderListsInChunksFromAnyOffset() {
        StringBuilder json = new StringBuilder("{");
        List<String> expected = new ArrayList<>();
        for (int t = 0; t < 50; t++) {
            json.append(t == 0 ? "" : ",").append("\"k").append(t).append("\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[")
                    .append(t).append(',').append(t + 1).append("]}");
            expected.add("k" + t + ".npy");
        }
        json.append(",\"k3/x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[50,51]}}");
        expected.add("k3");
        expected.sort(null);
        while (json.length() % 8 != 0) {
            json.append(' ');
        }
        byte[] header = json.toString().getBytes(StandardCharsets.US_ASCII);
        ByteBuffer file = ByteBuffer.allocate(8 + header.length + 51).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        file.putLong(header.length).put(header);
        Artifact packed = versions.artifact(Map.of("a.safetensors", file.array()), Map.of(), 1);
        Artifact tensors = new Artifact(io.warpdata.manifest.ArtifactKind.SAFETENSORS, packed.shards(), packed.index(),
                packed.memberCount(), packed.memberBytes());
        VersionHash v = versions.publish(MNIST, Map.of(), Map.of("tensors", tensors), CREATED, false);
        String a = "/vision/mnist@" + v.hex() + "/tensors/a.tensors";
        Node folder = tree.lookup(a);

        List<String> names = new ArrayList<>();
        long[] offset = {0};
        while (true) {
            int before = names.size();
            tree.list(folder, offset[0], (name, type, next, node) -> {
                if (names.size() > before) {
                    return true; // full after one entry
                }
                names.add(name);
                offset[0] = next;
                if (node != null) {
                    assertThat(type).isEqualTo(node.type());
                    assertThat(tree.computedInode(node)).as(name).isEqualTo(tree.computedInode(tree.lookup(a + "/" + name)));
                }
                return false;
            });
            if (names.size() == before) {
                break;
            }
        }
        assertThat(names.subList(0, 2)).containsExactly(".", "..");
        assertThat(names.subList(2, names.size())).containsExactlyElementsOf(expected);
        assertThat(tree.attributes(folder).nlink()).as("one subfolder").isEqualTo(3);
    }

    @Test
    void rootListsWorkspacesAndWorkspaceListsLatestLinkAndEveryVersion() {
        VersionHash v2 = versions.publish(MNIST, Map.of("main", versions.table(Map.of("x.parquet", shard1))),
                Map.of(), null, false);
        versions.publish(new DatasetId("audio", "speech"), Map.of("main", versions.table(Map.of("a.parquet", shard1))),
                Map.of(), null, false);
        ticker.addAndGet(TimeUnit.SECONDS.toNanos(5));

        assertThat(list("/")).containsExactly(".", "..", "audio", "vision");
        List<String> expected = new ArrayList<>(List.of("mnist", "mnist@" + v1.hex(), "mnist@" + v2.hex()));
        expected.sort(null);
        assertThat(list("/vision")).containsExactlyElementsOf(concat(List.of(".", ".."), expected));
        assertThat(tree.attributes(tree.lookup("/vision")).nlink()).as("folders that change: not counted").isEqualTo(1);
        assertThat(tree.attributes(tree.lookup("/")).nlink()).isEqualTo(1);
        // No latest pointer: only the version directory is listed.
        assertThat(list("/audio")).hasSize(3).noneMatch(n -> n.equals("speech"));
    }

    @Test
    void latestLinkPointsAtTheFullHashAndHasAFixedSize() {
        Node link = tree.lookup("/vision/mnist");
        assertThat(link.type()).isEqualTo(Node.Type.SYMLINK);
        assertThat(tree.readlink(link)).isEqualTo("mnist@" + v1.hex());
        assertThat(tree.attributes(link).size()).isEqualTo("mnist@".length() + 64);
    }

    @Test
    void latestMovesAfterTheCatalogTtlWhileOldVersionKeepsItsBytes() {
        VersionHash v2 = versions.publish(MNIST, Map.of("main", versions.table(Map.of("part-0.parquet", shard1))),
                Map.of(), null, false);
        new Catalog(store).setLatest(MNIST, v2); // another process moves the pointer
        assertThat(tree.readlink(tree.lookup("/vision/mnist"))).endsWith(v1.hex());
        ticker.addAndGet(TimeUnit.SECONDS.toNanos(3));
        assertThat(tree.readlink(tree.lookup("/vision/mnist"))).endsWith(v2.hex());
        assertThat(readAll(version(v1) + "/main/part-0.parquet", 4096)).isEqualTo(shard0);
        assertThat(readAll(version(v2) + "/main/part-0.parquet", 4096)).isEqualTo(shard1);
    }

    @Test
    void versionPrefixOfEightHexResolvesShorterOrWrongDoesNot() {
        Node byPrefix = tree.lookup("/vision/mnist@" + v1.hex().substring(0, 8));
        assertThat(byPrefix).isInstanceOf(Node.VersionDir.class);
        assertThat(((Node.VersionDir) byPrefix).version().version()).isEqualTo(v1);
        assertThat(list("/vision/mnist@" + v1.hex().substring(0, 12) + "/main")).contains("part-0.parquet");
        assertNotFound("/vision/mnist@" + v1.hex().substring(0, 7));
        assertNotFound("/vision/mnist@" + flip(v1.hex().substring(0, 8)));
        assertNotFound("/vision/mnist@" + flip(v1.hex()));
        assertNotFound("/vision/mnist@" + v1.hex().toUpperCase());
    }

    @Test
    void unknownWorkspaceDatasetVersionAndPathsAreNotFound() {
        assertNotFound("/nope");
        assertNotFound("/vision/nope");
        assertNotFound("/vision/nope@" + v1.hex());
        assertNotFound("/vision/mnist@" + v1.hex() + "/nope");
        assertNotFound("/vision/mnist@" + v1.hex() + "/main/nope.parquet");
        assertNotFound("/vision/mnist@" + v1.hex() + "/images/train/bird");
        assertNotFound("/vision/mnist@" + v1.hex() + "/images/train/ca");
        assertNotFound("/vision/mnist@" + v1.hex() + "/.warp/other.json");
        assertNotFound("/Vision");
        assertNotFound("/vision/../vision");
    }

    @Test
    void emptyDotAndDotDotComponentsAreNotFoundAnywhereInThePath() {
        String v = version(v1);
        for (String bad : List.of("//", "/vision//mnist", "/./vision", v + "//images", v + "/./images",
                v + "/images/../main", v + "/images/train//cat/1.png", v + "/images/train/cat/.",
                v + "/images/train/cat/..", v + "/.warp//manifest.json")) {
            assertNotFound(bad);
        }
    }

    @Test
    void aTrailingSlashNamesTheSameNodeAndRepeatedLookupsUnderAVersionAgree() {
        String v = version(v1);
        assertThat(tree.lookup(v + "/images/train/")).isEqualTo(tree.lookup(v + "/images/train"));
        assertThat(tree.lookup(v + "/main/")).isEqualTo(tree.lookup(v + "/main"));
        for (int i = 0; i < 3; i++) {
            assertThat(tree.attributes(tree.lookup(v + "/images/train/cat/1.png")).size()).isEqualTo(5000);
            assertThat(tree.attributes(tree.lookup(v + "/.warp/manifest.json")).type()).isEqualTo(Node.Type.FILE);
            assertNotFound(v + "/images/train/cat/3.png");
            assertNotFound(v + "/.warp/manifest.jsonx");
        }
        assertThat(tree.lookup(v.substring(0, v.length() - 56) + "/images/README"))
                .isEqualTo(tree.lookup(v + "/images/README"));
    }

    @Test
    void lookupsAlternatingBetweenVersionsResolveEachPathInItsOwnVersion() {
        Map<String, byte[]> other = new LinkedHashMap<>();
        other.put("train/cat/1.png", TestVersions.bytes(77, 8));
        VersionHash v2 = versions.publish(MNIST, Map.of(), Map.of("images", versions.artifact(other, Map.of(), 1)),
                CREATED, false);
        for (int i = 0; i < 3; i++) {
            assertThat(tree.attributes(tree.lookup(version(v1) + "/images/train/cat/1.png")).size()).isEqualTo(5000);
            assertThat(tree.attributes(tree.lookup(version(v2) + "/images/train/cat/1.png")).size()).isEqualTo(77);
            assertThat(tree.attributes(tree.lookup("/vision/mnist@" + v2.hex().substring(0, 12)
                    + "/images/train/cat/1.png")).size()).isEqualTo(77);
            assertNotFound(version(v2) + "/main");
            assertNotFound("/vision/mnist@" + flip(v1.hex()) + "/images");
        }
    }

    @Test
    void aMemberNameWithAnAtSignIsNotTakenForAVersion() {
        Map<String, byte[]> odd = new LinkedHashMap<>();
        odd.put("a@b/c.txt", TestVersions.bytes(7, 9));
        VersionHash v2 = versions.publish(MNIST, Map.of(), Map.of("odd", versions.artifact(odd, Map.of(), 1)),
                CREATED, false);
        assertThat(tree.attributes(tree.lookup(version(v2) + "/odd/a@b/c.txt")).size()).isEqualTo(7);
        assertThatThrownBy(() -> tree.lookup("/vision/mnist/odd/a@b")).isInstanceOf(WrongNodeTypeException.class);
    }

    @Test
    void versionListsMetaTablesAndArtifactsWithEveryIntermediateDirectory() {
        String v = version(v1);
        assertThat(list(v)).containsExactly(".", "..", ".warp", "main", "images");
        assertThat(list(v + "/main")).containsExactly(".", "..", "part-0.parquet", "part-1.parquet");
        assertThat(list(v + "/.warp")).containsExactly(".", "..", "manifest.json");
        assertThat(list(v + "/images")).containsExactlyInAnyOrder(".", "..", "README", "bin", "train");
        assertThat(list(v + "/images/train")).containsExactly(".", "..", "cat", "dog");
        assertThat(list(v + "/images/train/cat")).containsExactly(".", "..", "1.png", "2.png");
        assertThat(tree.lookup(v + "/images/train").type()).isEqualTo(Node.Type.DIRECTORY);
        assertThat(tree.lookup(v + "/images/train/dog/1.png").type()).isEqualTo(Node.Type.FILE);
    }

    @Test
    void statReportsManifestSizesModesLinkCountsAndCreatedAt() {
        String v = version(v1);
        long created = Instant.parse(CREATED).getEpochSecond();
        assertThat(tree.attributes(tree.lookup(v + "/main/part-0.parquet")))
                .isEqualTo(new NodeAttributes(Node.Type.FILE, 0444, 10_000, 1, created));
        assertThat(tree.attributes(tree.lookup(v + "/images/train/dog/1.png")))
                .isEqualTo(new NodeAttributes(Node.Type.FILE, 0444, 9000, 1, created));
        assertThat(tree.attributes(tree.lookup(v + "/images/bin/run.sh")).permissions()).isEqualTo(0555);
        assertThat(tree.attributes(tree.lookup(v + "/images/train/cat/2.png")).size()).isZero();
        assertThat(tree.attributes(tree.lookup(v))).isEqualTo(new NodeAttributes(Node.Type.DIRECTORY, 0555, 0, 5, created));
        assertThat(tree.attributes(tree.lookup(v + "/images")).nlink()).isEqualTo(4);
        assertThat(tree.attributes(tree.lookup(v + "/images/train")).nlink()).isEqualTo(4);
        assertThat(tree.attributes(tree.lookup(v + "/images/train/cat")).nlink()).isEqualTo(2);
        assertThat(tree.attributes(tree.lookup("/")).permissions()).isEqualTo(0555);
    }

    @Test
    void workspacesAndNameLinksAreNotDated1970() {
        long started = Instant.parse("2026-11-25T10:00:00Z").getEpochSecond();
        WarpTree dated = new WarpTree(catalog, reader, 1_000_000, loader,
                java.time.Clock.fixed(Instant.parse("2026-11-25T10:00:00Z"), java.time.ZoneOffset.UTC));

        assertThat(dated.attributes(dated.lookup("/")).mtimeSeconds()).as("the root: the mount's start").isEqualTo(started);
        assertThat(dated.attributes(dated.lookup("/" + MNIST.workspace())).mtimeSeconds()).as("a workspace").isEqualTo(started);
        assertThat(dated.attributes(dated.lookup("/" + MNIST)).mtimeSeconds())
                .as("the name link: the version it points at").isEqualTo(Instant.parse(CREATED).getEpochSecond());
    }

    @Test
    void theVersionsTimeKeepsItsFractionOfASecond() {
        VersionHash v2 = versions.publish(MNIST, Map.of("main", versions.table(Map.of("x.parquet", shard1))),
                Map.of(), "2026-11-29T03:08:15.872536864Z", false);
        for (String path : new String[] {version(v2), version(v2) + "/main", version(v2) + "/main/x.parquet"}) {
            NodeAttributes a = tree.attributes(tree.lookup(path));
            assertThat(a.mtimeSeconds()).isEqualTo(Instant.parse("2026-11-29T03:08:15Z").getEpochSecond());
            assertThat(a.mtimeNanos()).as(path).isEqualTo(872_536_864);
        }
    }

    @Test
    void versionWithoutCreatedAtHasMtimeZero() {
        VersionHash v2 = versions.publish(MNIST, Map.of("main", versions.table(Map.of("x.parquet", shard1))),
                Map.of(), null, false);
        assertThat(tree.attributes(tree.lookup(version(v2) + "/main/x.parquet")).mtimeSeconds()).isZero();
    }

    @Test
    void readsAtAnyOffsetMatchTheSourceAndPastEofReturnNothing() {
        String shard = version(v1) + "/main/part-0.parquet";
        assertThat(readAll(shard, 4096)).isEqualTo(shard0);
        assertThat(readAll(shard, 777)).isEqualTo(shard0);
        Node n = tree.lookup(shard);
        byte[] buf = new byte[5000];
        assertThat(tree.read(n, 4000, buf, 5000)).isEqualTo(5000);
        assertThat(Arrays.copyOf(buf, 5000)).isEqualTo(Arrays.copyOfRange(shard0, 4000, 9000));
        assertThat(tree.read(n, 9990, buf, 5000)).isEqualTo(10);
        assertThat(Arrays.copyOf(buf, 10)).isEqualTo(Arrays.copyOfRange(shard0, 9990, 10_000));
        assertThat(tree.read(n, 10_000, buf, 5000)).isZero();
        assertThat(tree.read(n, 1L << 40, buf, 5000)).isZero();
    }

    @Test
    void membersReadClampedToTheirOwnBytes() {
        String v = version(v1);
        for (Map.Entry<String, byte[]> m : members.entrySet()) {
            assertThat(readAll(v + "/images/" + m.getKey(), 1000)).as(m.getKey()).isEqualTo(m.getValue());
        }
        Node readme = tree.lookup(v + "/images/README");
        byte[] buf = new byte[4096];
        assertThat(tree.read(readme, 2, buf, 4096)).isEqualTo(3);
        assertThat(new String(buf, 0, 3, StandardCharsets.UTF_8)).isEqualTo("llo");
        assertThat(tree.read(readme, 5, buf, 4096)).isZero();
    }

    @Test
    void manifestJsonIsTheStoredManifest() {
        byte[] stored = store.objects().get(StoreLayout.version(MNIST, v1));
        assertThat(readAll(version(v1) + "/.warp/manifest.json", 100)).isEqualTo(stored);
    }

    @Test
    void wrongNodeTypesAreRejected() {
        String v = version(v1);
        assertThatThrownBy(() -> tree.read(tree.lookup(v + "/main"), 0, new byte[10], 10))
                .isInstanceOf(WrongNodeTypeException.class);
        assertThatThrownBy(() -> tree.list(tree.lookup(v + "/main/part-0.parquet"), 0, (n, t, o, c) -> false))
                .isInstanceOf(WrongNodeTypeException.class);
        assertThatThrownBy(() -> tree.lookup(v + "/main/part-0.parquet/x")).isInstanceOf(WrongNodeTypeException.class);
        assertThat(errno.of(catchThrowable(() -> tree.readlink(tree.lookup(v))), "readlink", v)).isEqualTo(Errno.EINVAL);
    }

    @Test
    void corruptedShardBytesFailTheReadWithEioNeverServingThem() {
        BlobRef blob = ((FileContent.BlobSlice) ((Node.File) tree.lookup(version(v1) + "/main/part-0.parquet")).content()).blob();
        byte[] stored = store.objects().get(StoreLayout.blob(blob.id()));
        stored[5000] ^= 1;
        Node n = tree.lookup(version(v1) + "/main/part-0.parquet");
        byte[] buf = new byte[4096];
        Throwable t = catchThrowable(() -> tree.read(n, 4096, buf, 4096));
        assertThat(t).isInstanceOf(BlockVerificationException.class);
        assertThat(errno.of(t, "read", version(v1))).isEqualTo(Errno.EIO);
        // Other blocks of the same blob and other files still read.
        assertThat(tree.read(n, 0, buf, 4096)).isEqualTo(4096);
        assertThat(Arrays.copyOf(buf, 4096)).isEqualTo(Arrays.copyOf(shard0, 4096));
        assertThat(readAll(version(v1) + "/main/part-1.parquet", 4096)).isEqualTo(shard1);
    }

    @Test
    void aBrokenMemberIndexFailsOnlyItsOwnArtifact() {
        Artifact good = versions.artifact(Map.of("a/x.bin", TestVersions.bytes(10, 9)), Map.of(), 10);
        Artifact bad = versions.artifact(Map.of("b/y.bin", TestVersions.bytes(10, 10)), Map.of(), 10);
        VersionHash v = versions.publish(MNIST, Map.of(), Map.of("good", good, "bad", bad), null, false);
        store.objects().get(StoreLayout.blob(bad.index().id()))[3] ^= 1;

        Throwable t = catchThrowable(() -> list(version(v) + "/bad"));
        assertThat(t).isNotNull().isNotInstanceOf(NoSuchEntryException.class);
        assertThat(errno.of(t, "opendir", version(v) + "/bad")).isEqualTo(Errno.EIO);
        assertThat(list(version(v) + "/good/a")).containsExactly(".", "..", "x.bin");
        // The failure is not cached: fixing the store fixes the next lookup.
        store.objects().get(StoreLayout.blob(bad.index().id()))[3] ^= 1;
        assertThat(list(version(v) + "/bad/b")).containsExactly(".", "..", "y.bin");
    }

    @Test
    void directoryOfHundredThousandMembersListsAcrossCallsWithOffsets() {
        Map<String, byte[]> many = new TreeMap<>();
        byte[] tiny = {1};
        for (int i = 0; i < 100_000; i++) {
            many.put(String.format("big/f%06d.bin", i), tiny);
        }
        many.put("big/sub/inner.bin", tiny);
        many.put("other.bin", tiny);
        Artifact art = versions.artifact(many, Map.of(), 50_000);
        VersionHash v = versions.publish(MNIST, Map.of(), Map.of("many", art), null, false);
        Node dir = tree.lookup(version(v) + "/many/big");

        List<String> names = new ArrayList<>();
        long[] offset = {0};
        int calls = 0;
        while (true) {
            calls++;
            int before = names.size();
            tree.list(dir, offset[0], (name, type, next, node) -> {
                if (names.size() - before == 1000) {
                    return true; // buffer full, like the kernel's 4 KiB pages
                }
                names.add(name);
                offset[0] = next;
                return false;
            });
            if (names.size() == before) {
                break;
            }
        }
        assertThat(calls).isGreaterThan(100);
        assertThat(names).hasSize(100_003).doesNotHaveDuplicates();
        assertThat(names.subList(0, 3)).containsExactly(".", "..", "f000000.bin");
        assertThat(names).contains("sub", "f099999.bin").doesNotContain("other.bin", "inner.bin");
        assertThat(tree.attributes(dir).nlink()).isEqualTo(3);
        assertThat(tree.attributes(tree.lookup(version(v) + "/many/big/f054321.bin")).size()).isEqualTo(1);
    }

    private void assertNotFound(String path) {
        Throwable t = catchThrowable(() -> tree.attributes(tree.lookup(path)));
        assertThat(t).as(path).isNotNull();
        assertThat(errno.of(t, "getattr", path)).as(path + ": " + t).isEqualTo(Errno.ENOENT);
    }

    private static Throwable catchThrowable(Runnable r) {
        try {
            r.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    private static String flip(String hex) {
        char c = hex.charAt(0);
        return (c == 'a' ? 'b' : 'a') + hex.substring(1);
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    @Test
    void tagAndBranchLinksPointAtTheirVersionsAndShowInTheWorkspace() {
        VersionHash v2 = versions.publish(MNIST, Map.of("main", versions.table(Map.of("x.parquet", shard1))),
                Map.of(), null, false);
        versions.pointer(StoreLayout.tag(MNIST, "v1"), v1);
        versions.pointer(StoreLayout.branch(MNIST, "dev"), v2);
        ticker.addAndGet(TimeUnit.SECONDS.toNanos(5));

        assertThat(list("/vision")).contains("mnist@v1", "mnist@dev");
        Node tag = tree.lookup("/vision/mnist@v1");
        assertThat(tag.type()).isEqualTo(Node.Type.SYMLINK);
        assertThat(tree.readlink(tag)).isEqualTo("mnist@" + v1.hex());
        assertThat(tree.readlink(tree.lookup("/vision/mnist@dev"))).isEqualTo("mnist@" + v2.hex());
        assertThat(tree.readlink(tree.lookup("/vision/mnist@latest"))).isEqualTo("mnist@" + v1.hex());
        assertNotFound("/vision/mnist@v9");
        assertThatThrownBy(() -> tree.lookup("/vision/mnist@v1/main")).isInstanceOf(WrongNodeTypeException.class);
    }

    @Test
    void onlyWhatCanChangeIsMutableForTheKernel() {
        versions.pointer(StoreLayout.tag(MNIST, "v1"), v1);
        versions.pointer(StoreLayout.branch(MNIST, "dev"), v1);
        String v = version(v1);
        assertThat(tree.immutable(tree.lookup("/"))).isFalse();
        assertThat(tree.immutable(tree.lookup("/vision"))).isFalse();
        assertThat(tree.immutable(tree.lookup("/vision/mnist"))).isFalse();
        assertThat(tree.immutable(tree.lookup("/vision/mnist@dev"))).isFalse();
        assertThat(tree.immutable(tree.lookup("/vision/mnist@v1"))).isTrue();
        for (String p : List.of(v, v + "/main", v + "/main/part-0.parquet", v + "/images", v + "/images/train",
                v + "/images/README", v + "/.warp", v + "/.warp/manifest.json")) {
            assertThat(tree.immutable(tree.lookup(p))).as(p).isTrue();
        }
    }

    @Test
    void aChildFromItsParentNodeIsTheNodeThePathWalkGivesAndTheListingHandsOut() {
        String v = version(v1);
        Node train = tree.lookup(v + "/images/train");
        assertThat(tree.lookup(train, "cat")).isEqualTo(tree.lookup(v + "/images/train/cat"));
        Node cat = tree.lookup(train, "cat");
        assertThat(tree.lookup(cat, "1.png")).isEqualTo(tree.lookup(v + "/images/train/cat/1.png"));

        Map<String, Node> listed = new LinkedHashMap<>();
        tree.list(cat, 0, (name, type, next, node) -> {
            if (node != null) {
                listed.put(name, node);
            }
            return false;
        });
        assertThat(listed.keySet()).containsExactly("1.png", "2.png");
        listed.forEach((name, node) -> assertThat(node).isEqualTo(tree.lookup(cat, name)));

        Map<String, Node> top = new LinkedHashMap<>();
        tree.list(tree.lookup(v), 0, (name, type, next, node) -> {
            top.put(name, node);
            return false;
        });
        assertThat(top.get(".warp")).isEqualTo(tree.lookup(v + "/.warp"));
        assertThat(top.get("main")).isEqualTo(tree.lookup(v + "/main"));
        assertThat(top.get("images")).isEqualTo(tree.lookup(v + "/images"));
        // The workspace's entries come without nodes: they would need every version's manifest.
        tree.list(tree.lookup("/vision"), 0, (name, type, next, node) -> {
            assertThat(node).as(name).isNull();
            return false;
        });
        assertThatThrownBy(() -> tree.lookup(tree.lookup(v + "/images/README"), "x"))
                .isInstanceOf(WrongNodeTypeException.class);
    }

    @Test
    void membersRepackedIntoOtherShardsAreReadFromTheCacheOfTheFirstVersion(@TempDir Path cacheDir) throws Exception {
        // The same files packed two members a shard (v1) and three a shard (another dataset):
        // every shard differs, every member's bytes are the same.
        DatasetId copy = new DatasetId("vision", "mnist-copy");
        VersionHash repacked = versions.publish(copy, Map.of(), Map.of("images", versions.artifact(members,
                Map.of("bin/run.sh", 0755), 3)), CREATED, true);
        try (BlockCache cache = BlockCache.open(store, CacheConfig.defaults(cacheDir).withMinFreeBytes(0))) {
            WarpTree cached = new WarpTree(catalog, cache, 1_000_000, loader);
            String first = version(v1) + "/images/";
            String second = "/vision/mnist-copy@" + repacked.hex() + "/images/";
            for (String member : members.keySet()) {
                assertThat(readAll(cached, first + member, 4096)).as(member).isEqualTo(members.get(member));
            }
            cached.list(cached.lookup(second + "train/cat"), 0, (name, type, next, node) -> false);
            // Read-ahead of the first pass may still be fetching: count from when it is done.
            assertThat(cache.awaitIdle(java.time.Duration.ofSeconds(30))).isTrue();
            long reads = store.reads.get();

            for (String member : members.keySet()) {
                assertThat(readAll(cached, second + member, 4096)).as(member).isEqualTo(members.get(member));
            }
            assertThat(store.reads.get()).as("no ranged read for the second dataset's members").isEqualTo(reads);
            assertThat(cache.metrics().memberHits.sum() + cache.metrics().dedupHits.sum()).isPositive();
        }
    }

    private static byte[] readAll(WarpTree t, String path, int chunk) {
        Node n = t.lookup(path);
        byte[] out = new byte[(int) t.attributes(n).size()];
        long off = 0;
        while (off < out.length) {
            int got = t.read(n, off, ByteBuffer.wrap(out, (int) off, Math.min(chunk, out.length - (int) off)).slice());
            assertThat(got).isPositive();
            off += got;
        }
        return out;
    }

    @Test
    void aFileOfInlineBytesAndABlobSliceReadsAsOneAcrossThePieces() {
        String v = version(v1);
        Node.File member = (Node.File) tree.lookup(v + "/images/train/dog/1.png");
        FileContent.Member slice = (FileContent.Member) member.content();
        byte[] header = "HEADER:".getBytes(StandardCharsets.UTF_8);
        FileContent.BlobSlice middle = new FileContent.BlobSlice(slice.shard(), slice.blobMember().offset() + 100, 5000);
        Node.File synthesized = new Node.File(member.version(),
                FileContent.Pieces.of(new FileContent.Inline(header), middle, new FileContent.Inline(header)), false);
        byte[] dog = members.get("train/dog/1.png");
        byte[] expected = new byte[header.length * 2 + 5000];
        System.arraycopy(header, 0, expected, 0, header.length);
        System.arraycopy(dog, 100, expected, header.length, 5000);
        System.arraycopy(header, 0, expected, header.length + 5000, header.length);

        assertThat(tree.attributes(synthesized).size()).isEqualTo(expected.length);
        for (int chunk : new int[] {1, 3, 7, 4096, 100_000}) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[chunk];
            long off = 0;
            int got;
            while ((got = tree.read(synthesized, off, buf, chunk)) > 0) {
                out.write(buf, 0, got);
                off += got;
            }
            assertThat(out.toByteArray()).as("chunk " + chunk).isEqualTo(expected);
        }
        assertThatThrownBy(() -> FileContent.Pieces.of(FileContent.Pieces.of(new FileContent.Inline(header))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aVersionOpenedOnceIsListedAfterARestartWithTheStoreDown(@org.junit.jupiter.api.io.TempDir java.nio.file.Path state) {
        io.warpdata.store.FaultStore outage = new io.warpdata.store.FaultStore(store);
        Catalog first = new Catalog(outage, Catalog.Config.defaults(), ticker::get,
                io.warpdata.catalog.LastKnownGood.onDisk(state), java.time.Clock.systemUTC());
        WarpTree before = new WarpTree(first, new DirectBlobReader(outage), 1_000_000, loader);
        String v = version(v1);
        List<String> listed = new ArrayList<>();
        before.list(before.lookup(v + "/images/train"), 0, (name, type, next, node) -> listed.add(name) && false);
        before.lookup("/vision/mnist");

        outage.down();
        Catalog second = new Catalog(outage, Catalog.Config.defaults(), ticker::get,
                io.warpdata.catalog.LastKnownGood.onDisk(state), java.time.Clock.systemUTC());
        WarpTree after = new WarpTree(second, new DirectBlobReader(outage), 1_000_000, loader);
        List<String> again = new ArrayList<>();
        after.list(after.lookup(v + "/images/train"), 0, (name, type, next, node) -> again.add(name) && false);
        assertThat(again).isEqualTo(listed).contains("cat", "dog");
        assertThat(after.readlink(after.lookup("/vision/mnist"))).isEqualTo("mnist@" + v1.hex());
        assertThat(after.attributes(after.lookup(v + "/images/train/cat/1.png")).size()).isEqualTo(5000);
        // Its bytes were never cached: reading them needs the store.
        assertThatThrownBy(() -> after.read(after.lookup(v + "/images/train/cat/1.png"), 0, new byte[10], 10))
                .isInstanceOf(io.warpdata.store.StoreUnreachableException.class);
        assertThat(errno.of(new io.warpdata.store.StoreUnreachableException("down", null), "read", v)).isEqualTo(Errno.EIO);
    }

    /** Audit 34: a kept member index damaged on disk while warpd ran was listed as it was (a name not in the dataset). */
    @Test
    void aKeptIndexDamagedOnDiskWhileWarpdRunsIsFetchedAgainAndListsRight(@org.junit.jupiter.api.io.TempDir java.nio.file.Path state)
            throws java.io.IOException {
        io.warpdata.catalog.LastKnownGood known = io.warpdata.catalog.LastKnownGood.onDisk(state);
        Catalog catalog = new Catalog(store, Catalog.Config.defaults(), ticker::get, known, java.time.Clock.systemUTC());
        String v = version(v1);
        List<String> listed = new ArrayList<>();
        WarpTree first = new WarpTree(catalog, new DirectBlobReader(store), 1_000_000, loader);
        first.list(first.lookup(v + "/images/train/dog"), 0, (name, type, next, node) -> listed.add(name) && false);
        assertThat(listed).isNotEmpty();
        List<java.nio.file.Path> kept;
        try (var files = java.nio.file.Files.list(state.resolve("v1").resolve("blobs"))) {
            kept = files.toList();
        }
        assertThat(kept).isNotEmpty();
        for (java.nio.file.Path f : kept) { // every byte of every kept index flipped: any read of it is wrong
            byte[] b = java.nio.file.Files.readAllBytes(f);
            for (int i = 0; i < b.length; i++) {
                b[i] ^= 0x01;
            }
            java.nio.file.Files.write(f, b);
        }
        // The same process (its catalog verified these files once), a new open of the index.
        WarpTree second = new WarpTree(catalog, new DirectBlobReader(store), 1_000_000, loader);
        List<String> again = new ArrayList<>();
        second.list(second.lookup(v + "/images/train/dog"), 0, (name, type, next, node) -> again.add(name) && false);
        assertThat(again).isEqualTo(listed);
        assertThat(second.read(second.lookup(v + "/images/train/dog/1.png"), 0, new byte[10], 10)).isEqualTo(10);
        for (java.nio.file.Path f : kept) {
            assertThat(io.warpdata.manifest.BlobId.of(java.nio.file.Files.readAllBytes(f)).hex()).isEqualTo(f.getFileName().toString());
        }

        // Damaged again while warpd was down: the restarted one catches it at the first open, fetches it again.
        for (java.nio.file.Path f : kept) {
            byte[] b = java.nio.file.Files.readAllBytes(f);
            b[b.length / 2] ^= 0x10;
            java.nio.file.Files.write(f, b);
        }
        Catalog restarted = new Catalog(store, Catalog.Config.defaults(), ticker::get,
                io.warpdata.catalog.LastKnownGood.onDisk(state), java.time.Clock.systemUTC());
        WarpTree third = new WarpTree(restarted, new DirectBlobReader(store), 1_000_000, loader);
        List<String> afterRestart = new ArrayList<>();
        third.list(third.lookup(v + "/images/train/dog"), 0, (name, type, next, node) -> afterRestart.add(name) && false);
        assertThat(afterRestart).isEqualTo(listed);
        for (java.nio.file.Path f : kept) {
            assertThat(io.warpdata.manifest.BlobId.of(java.nio.file.Files.readAllBytes(f)).hex()).isEqualTo(f.getFileName().toString());
        }
    }

    @Test
    void statOfTheRootNeverFailsEvenWithNothingKnownAndTheStoreDown() {
        io.warpdata.store.FaultStore outage = new io.warpdata.store.FaultStore(store).down();
        WarpTree cold = new WarpTree(new Catalog(outage), new DirectBlobReader(outage), 1_000, loader);
        assertThat(cold.attributes(cold.root()).type()).isEqualTo(Node.Type.DIRECTORY);
        assertThatThrownBy(() -> cold.list(cold.root(), 0, (n, t, o, c) -> false))
                .isInstanceOf(io.warpdata.store.StoreUnreachableException.class);
    }
}
