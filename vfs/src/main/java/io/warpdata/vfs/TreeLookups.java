package io.warpdata.vfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.catalog.Catalog;
import io.warpdata.catalog.DatasetNotFoundException;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;
import io.warpdata.store.StoreException;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link WarpTree#lookup(Node, String)}: the child of a directory node by name, one step. Names
 * under a workspace are parsed by {@link DatasetRef} and resolved by the {@link Catalog}; a
 * version's facts are parsed once ({@link VersionTree}) and shared by its nodes; an artifact's
 * folder is numbered for its member inodes ({@link MemberInodes}) when a lookup first reaches it.
 */
final class TreeLookups {
    /**
     * Version facts are small (a manifest, its JSON) but a daemon may see thousands of versions
     * over its life; this many stay parsed, the rest are re-read from the catalog's own cache.
     */
    private static final int VERSION_TREES_HELD = 1024;
    /** As long as the catalog trusts a negative answer: a version published elsewhere appears fast. */
    private static final Duration MISSING_VERSION_TTL = Duration.ofSeconds(1);

    private final Catalog catalog;
    private final BlobReader reader;
    private final MemberInodes members;
    private final TensorFolders tensors;
    private final TensorInodes tensorInodes;
    private final Cache<VersionKey, VersionTree> versionTrees;
    /**
     * Versions the store said do not exist, remembered briefly: the kernel does not cache
     * failed lookups (WarpFuse answers them without an entry), and a tool probing name@hash in a
     * loop must not cost a GET per probe. Short, so that a version published by another host
     * appears fast.
     */
    private final Cache<VersionKey, Boolean> missingVersions;

    TreeLookups(Catalog catalog, BlobReader reader, MemberInodes members, TensorInodes tensorInodes) {
        this.catalog = catalog;
        this.reader = reader;
        this.members = members;
        this.tensorInodes = tensorInodes;
        this.tensors = new TensorFolders(reader);
        this.versionTrees = Caffeine.newBuilder().maximumSize(VERSION_TREES_HELD).build();
        this.missingVersions = Caffeine.newBuilder().maximumSize(10_000)
                .expireAfterWrite(MISSING_VERSION_TTL).build();
    }

    /** What the tensor folders cost so far. */
    TensorFolderStats tensorFolders() {
        return tensors.stats();
    }

    /** See {@link WarpTree#lookup(Node, String)}. */
    Node lookup(Node parent, String name) {
        if (!validComponent(name)) {
            throw new NoSuchEntryException(name);
        }
        return switch (parent) {
            case Node.Root r -> workspace(name);
            case Node.Workspace w -> workspaceEntry(w.name(), name);
            case Node.VersionDir v -> versionEntry(v.version(), name);
            case Node.TableDir t -> tableShard(t, name);
            case Node.MetaDir m -> {
                if (!name.equals(WarpTree.MANIFEST_FILE)) {
                    throw new NoSuchEntryException(WarpTree.META_DIR + "/" + name);
                }
                yield m.manifest();
            }
            case Node.MemberDir d -> member(d, name);
            case Node.TensorDir t -> tensorEntry(t, name);
            case Node.Link l -> throw new WrongNodeTypeException(l.entry(), Node.Type.SYMLINK);
            case Node.File f -> throw new WrongNodeTypeException(name, Node.Type.FILE);
        };
    }

    /** Not empty, not "." and not "..": the kernel never sends these, a hand-made path might. */
    private static boolean validComponent(String name) {
        return !name.isEmpty() && !name.equals(".") && !name.equals("..") && name.indexOf('/') < 0;
    }

    private Node workspace(String name) {
        if (!catalog.hasWorkspace(name)) {
            throw new NoSuchEntryException("/" + name);
        }
        return new Node.Workspace(name);
    }

    /** {@code name}, {@code name@<hash prefix>} or {@code name@<tag or branch>} in workspace {@code ws}. */
    private Node workspaceEntry(String ws, String entry) {
        DatasetRef ref;
        try {
            ref = DatasetRef.parse(ws + "/" + entry);
        } catch (ManifestValidationException notAName) {
            throw new NoSuchEntryException("/" + ws + "/" + entry);
        }
        Catalog.Located at = catalog.locate(ref);
        return switch (ref.ref()) {
            case DatasetRef.Version v -> new Node.VersionDir(versionTree(at.id(), at.version(), entry));
            case DatasetRef.Latest l -> new Node.Link(at.id(), entry, at.kind(), at.version());
            case DatasetRef.Named n -> new Node.Link(at.id(), entry, at.kind(), at.version());
        };
    }

    /**
     * The facts of one version, parsed once and shared by all its nodes.
     *
     * @param entry the version's name in its workspace, for messages
     * @throws NoSuchEntryException if the store has no such version
     */
    VersionTree versionTree(DatasetId id, VersionHash hash, String entry) {
        VersionKey key = new VersionKey(id, hash);
        VersionTree tree = versionTrees.getIfPresent(key);
        if (tree != null) {
            return tree;
        }
        if (missingVersions.getIfPresent(key) != null) {
            throw new NoSuchEntryException("/" + id.workspace() + "/" + entry);
        }
        try {
            tree = new VersionTree(id, hash, catalog.manifest(id, hash));
        } catch (DatasetNotFoundException e) {
            missingVersions.put(key, Boolean.TRUE);
            throw new NoSuchEntryException("/" + id.workspace() + "/" + entry);
        }
        versionTrees.put(key, tree);
        return tree;
    }

    /**
     * An entry of a version's folder. Entering an artifact or a table starts loading the block
     * hash lists of its shards ({@link #HASH_LISTS_PREFETCHED}): in an artifact they load while
     * its member index does (which says which shard and offset a member is at), so that a
     * member's first read waits for its data block alone; in a table they are in for the reads
     * of its files after the first.
     */
    private Node versionEntry(VersionTree version, String name) {
        if (name.equals(WarpTree.META_DIR)) {
            return new Node.MetaDir(version);
        }
        Map<String, TableShard> shards = version.shards(name);
        if (shards != null) {
            reader.prefetchHashLists(shards.values().stream().limit(WarpTree.HASH_LISTS_PREFETCHED).map(TableShard::blob).toList());
            return new Node.TableDir(version, name);
        }
        Artifact artifact = version.manifest().artifacts().get(name);
        if (artifact == null) {
            throw new NoSuchEntryException(version.describe() + "/" + name);
        }
        List<BlobRef> artifactShards = artifact.shards();
        reader.prefetchHashLists(artifactShards.subList(0, Math.min(artifactShards.size(),
                WarpTree.HASH_LISTS_PREFETCHED)));
        return members.artifactDir(version, name, artifact);
    }

    private static Node tableShard(Node.TableDir t, String name) {
        TableShard shard = t.version().shards(t.table()).get(t.child(name));
        if (shard != null) {
            return t.shard(shard);
        }
        if (t.version().tableFolder(t.table(), t.child(name)) != null) {
            return t.subfolder(name);
        }
        throw new NoSuchEntryException(t.version().describe() + "/" + t.table() + "/" + t.child(name));
    }

    private Node member(Node.MemberDir d, String name) {
        String path = d.child(name);
        int i = d.index().find(path);
        if (i >= 0) {
            return d.member(i);
        }
        if (d.index().isDirectory(path)) {
            return d.subdirectory(path);
        }
        int st = tensorSource(d, path);
        if (st >= 0) {
            TensorInodes.Slot slot = tensorInodes.slot(new TensorFolders.Source(tensors, d.slot(), st, members::index),
                    d.version().describe() + "/" + d.artifactName() + "/" + path);
            slot.folder(); // refused here, at its lookup, when it is too large or its header unreadable
            return new Node.TensorDir(d.version(), slot, "");
        }
        throw new NoSuchEntryException(d.version().describe() + "/" + d.artifactName() + "/" + path);
    }

    /** {@link WarpTree#wantTensorHashes}. */
    void wantTensorHashes(Node parent, String name) {
        if (parent instanceof Node.MemberDir d) {
            String path = d.child(name);
            int st = d.index().find(path) >= 0 ? -1 : tensorSource(d, path);
            if (st >= 0) {
                tensors.wantHashes(d, st);
            }
        }
    }

    /**
     * The member index position of {@code F.safetensors} when {@code path} is {@code F.tensors}
     * in a safetensors artifact (and no member of that name exists), else -1.
     */
    static int tensorSource(Node.MemberDir d, String path) {
        if (d.artifact().kind() != ArtifactKind.SAFETENSORS || !path.endsWith(WarpTree.TENSORS_SUFFIX)) {
            return -1;
        }
        return d.index().find(path.substring(0, path.length() - WarpTree.TENSORS_SUFFIX.length()) + ".safetensors");
    }

    private static Node tensorEntry(Node.TensorDir t, String name) {
        String inner = t.child(name);
        TensorFolder folder = t.folder();
        int position = folder.position(inner);
        if (position >= 0) {
            return t.tensor(position, folder.file(position));
        }
        if (folder.isDirectory(inner)) {
            return t.subfolder(inner);
        }
        throw new NoSuchEntryException(t.path() + "/" + inner);
    }

    private record VersionKey(DatasetId id, VersionHash version) {
    }
}
