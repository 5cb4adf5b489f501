package io.warpdata.vfs;

import io.warpdata.store.BlobStore;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.StoreLayout;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobId;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.BlockHashList;
import io.warpdata.manifest.Column;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.Manifest;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.MemberIndexBuilder;
import io.warpdata.manifest.Table;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Publishes small versions into a store by hand (blobs, block hash lists, member indexes,
 * manifest, latest pointer), the way the publish pipeline lays them out.
 */
public final class TestVersions {
    /** Small blocks so that reads cross block boundaries in tiny test files. */
    static final int BLOCK_SIZE = BlockHashList.MIN_BLOCK_SIZE;

    private final BlobStore store;
    private final Catalog catalog;

    public TestVersions(BlobStore store, Catalog catalog) {
        this.store = store;
        this.catalog = catalog;
    }

    public BlobRef putBlob(byte[] data) {
        BlockHashList hashes = BlockHashList.of(data, BLOCK_SIZE);
        byte[] list = hashes.serialize();
        BlobId id = BlobId.of(data);
        BlobId listId = BlobId.of(list);
        store.putIfAbsent(StoreLayout.blob(id), data);
        store.putIfAbsent(StoreLayout.blob(listId), list);
        return new BlobRef(id, data.length, listId);
    }

    /** Writes a pointer object ({@code {"version": hash}}: latest, a tag or a branch) at {@code key}. */
    public void pointer(String key, VersionHash version) {
        store.put(key, ("{\"version\":\"" + version.hex() + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** A table of shards with the given names and bytes. */
    public Table table(Map<String, byte[]> shards) {
        List<TableShard> out = new ArrayList<>();
        shards.forEach((name, bytes) -> out.add(new TableShard(name, putBlob(bytes), 1)));
        return new Table(out, List.of(new Column("id", "BIGINT")));
    }

    /**
     * An artifact whose members are packed into shards of at most {@code perShard} members,
     * each member preceded by a 512-byte filler (like a tar header) so offsets are not trivial.
     */
    public Artifact artifact(Map<String, byte[]> members, Map<String, Integer> modes, int perShard) {
        MemberIndexBuilder index = new MemberIndexBuilder();
        List<BlobRef> shards = new ArrayList<>();
        ByteArrayOutputStream shard = new ByteArrayOutputStream();
        int inShard = 0;
        long bytes = 0;
        for (Map.Entry<String, byte[]> m : members.entrySet()) {
            if (inShard == perShard) {
                shards.add(putBlob(shard.toByteArray()));
                shard.reset();
                inShard = 0;
            }
            shard.writeBytes(new byte[512]);
            index.add(m.getKey(), shards.size(), shard.size(), m.getValue().length,
                    modes.getOrDefault(m.getKey(), 0644), BlobId.of(m.getValue()));
            shard.writeBytes(m.getValue());
            inShard++;
            bytes += m.getValue().length;
        }
        if (inShard > 0 || shards.isEmpty()) {
            shards.add(putBlob(shard.toByteArray()));
        }
        BlobRef indexRef = putBlob(index.build().serialize());
        return new Artifact(ArtifactKind.TAR_SHARDS, shards, indexRef, members.size(), bytes);
    }

    public VersionHash publish(DatasetId id, Map<String, Table> tables, Map<String, Artifact> artifacts,
                        String createdAt, boolean setLatest) {
        SortedMap<String, String> metadata = new TreeMap<>();
        if (createdAt != null) {
            metadata.put("created_at", createdAt);
        }
        Manifest m = Manifest.of(id, new LinkedHashMap<>(tables), new LinkedHashMap<>(artifacts), List.of(), metadata);
        VersionHash v = catalog.putVersion(m);
        if (setLatest) {
            catalog.setLatest(id, v);
        }
        return v;
    }

    public static byte[] bytes(int size, int seed) {
        byte[] b = new byte[size];
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        for (int i = 0; i < size; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b[i] = (byte) x;
        }
        return b;
    }
}
