package io.warpdata.vfs;

import io.warpdata.catalog.Catalog;
import io.warpdata.catalog.DatasetNotFoundException;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.StoreException;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.ArtifactKind;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The mount tree's directory listings ({@link WarpTree#list}), with offsets that stay valid
 * across calls, and the link counts that come from the same listings. The root's and
 * workspaces' entries come from the {@link Catalog}'s listings; inside a version every entry is
 * made with its node, as {@link WarpTree#lookup(Node, String)} would give it.
 */
final class DirectoryListing {
    /** Offsets 1 and 2 are "." and ".."; entries start at 3. */
    private static final int FIRST_ENTRY_OFFSET = 3;

    private final Catalog catalog;
    private final MemberInodes members;

    /**
     * @param catalog lists workspaces, datasets, versions and refs
     * @param members makes an artifact's folder node (its member index, its slot)
     */
    DirectoryListing(Catalog catalog, MemberInodes members) {
        this.catalog = catalog;
        this.members = members;
    }

    /**
     * Lists a directory from {@code offset}; see {@link WarpTree#list}.
     *
     * @throws WrongNodeTypeException if {@code node} is not a directory
     * @throws StoreException if the store could not answer
     */
    void list(Node node, long offset, DirectorySink sink) {
        if (node.type() != Node.Type.DIRECTORY) {
            throw new WrongNodeTypeException("listing", node.type());
        }
        if (dotsFilled(offset, sink)) {
            return;
        }
        long from = firstEntry(offset);
        switch (node) {
            case Node.MemberDir d -> {
                if (d.artifact().kind() == ArtifactKind.SAFETENSORS) {
                    listEntries(safetensorsMembers(d), from, sink);
                } else {
                    listMembers(d, from, sink);
                }
            }
            case Node.TensorDir t -> listTensors(t, from, sink);
            case Node.Root r -> listEntries(workspaceNames(), from, sink);
            case Node.Workspace w -> listEntries(workspaceEntries(w.name()), from, sink);
            case Node.VersionDir v -> listEntries(versionEntries(v.version()), from, sink);
            case Node.TableDir t -> listEntries(shardEntries(t), from, sink);
            case Node.MetaDir m -> listEntries(List.of(new Entry(WarpTree.MANIFEST_FILE, m.manifest())), from, sink);
            case Node.Link l -> throw new WrongNodeTypeException("listing", l.type());
            case Node.File f -> throw new WrongNodeTypeException("listing", f.type());
        }
    }

    /**
     * The listing of {@code node} as of now, for one open handle of it: the root's and a
     * workspace's entries (which change with every publish, tag and delete) are taken once here,
     * so that a listing read in several chunks while they change neither repeats nor skips an
     * entry that did not change; inside a version, where nothing changes, it lists as
     * {@link #list} does.
     *
     * @throws StoreException if the store could not answer
     */
    DirectorySnapshot snapshot(Node node) {
        List<Entry> entries = switch (node) {
            case Node.Root r -> workspaceNames();
            case Node.Workspace w -> workspaceEntries(w.name());
            default -> null;
        };
        if (entries == null) {
            return (offset, sink) -> list(node, offset, sink);
        }
        return (offset, sink) -> {
            if (!dotsFilled(offset, sink)) {
                listEntries(entries, firstEntry(offset), sink);
            }
        };
    }

    /** Lists "." and ".." where {@code offset} is before them; true if the sink filled up. */
    private static boolean dotsFilled(long offset, DirectorySink sink) {
        return (offset < 1 && sink.add(".", Node.Type.DIRECTORY, 1, null))
                || (offset < 2 && sink.add("..", Node.Type.DIRECTORY, 2, null));
    }

    /** The index of the first entry after {@code offset} (past "." and ".."). */
    private static long firstEntry(long offset) {
        return Math.max(offset, 2) - FIRST_ENTRY_OFFSET + 1;
    }

    /** A directory entry: its name, and its node where the listing has it (else null, and its type). */
    private record Entry(String name, Node node, Node.Type type) {
        Entry(String name, Node node) {
            this(name, node, node.type());
        }
    }

    private static void listEntries(List<Entry> entries, long from, DirectorySink sink) {
        for (int i = (int) Math.min(from, entries.size()); i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (sink.add(e.name(), e.type(), FIRST_ENTRY_OFFSET + i, e.node())) {
                return;
            }
        }
    }

    private List<Entry> workspaceNames() {
        List<Entry> out = new ArrayList<>();
        for (String ws : catalog.workspaces()) {
            out.add(new Entry(ws, null, Node.Type.DIRECTORY));
        }
        return out;
    }

    /**
     * The metadata folder, tables, artifacts and folders of WebDataset shards' files. An
     * artifact's node needs its member index; one that cannot be loaded now is listed without its
     * node, and its lookup reports the error.
     */
    private List<Entry> versionEntries(VersionTree version) {
        List<Entry> out = new ArrayList<>();
        out.add(new Entry(WarpTree.META_DIR, new Node.MetaDir(version)));
        version.manifest().tables().keySet().forEach(t -> out.add(new Entry(t, new Node.TableDir(version, t))));
        for (Map.Entry<String, Artifact> a : version.manifest().artifacts().entrySet()) {
            Node dir;
            try {
                dir = members.artifactDir(version, a.getKey(), a.getValue());
            } catch (RuntimeException notNow) {
                dir = null;
            }
            out.add(new Entry(a.getKey(), dir, Node.Type.DIRECTORY));
        }
        version.tarFolders().forEach(f -> out.add(new Entry(f, new Node.TableDir(version, f))));
        return out;
    }

    private static List<Entry> shardEntries(Node.TableDir t) {
        List<Entry> out = new ArrayList<>();
        for (VersionTree.TableChild c : t.version().tableFolder(t.table(), t.dir())) {
            out.add(new Entry(c.name(), c.shard() == null ? t.subfolder(c.name()) : t.shard(c.shard())));
        }
        return out;
    }

    /**
     * Latest links, version directories, and tag and branch links of every dataset, sorted.
     * A pointer that cannot be read (corrupted, store hiccup) does not hide the dataset's
     * versions: its link is still listed, and a lookup of it reports the error (EIO, logged).
     */
    private List<Entry> workspaceEntries(String ws) {
        List<Entry> out = new ArrayList<>();
        List<DatasetId> datasets;
        try {
            datasets = catalog.datasets(ws);
        } catch (DatasetNotFoundException e) {
            return out;
        }
        catalog.prefetch(datasets);
        for (DatasetId id : datasets) {
            if (hasLatest(id)) {
                out.add(new Entry(id.name(), null, Node.Type.SYMLINK));
            }
            for (VersionHash v : versionsOrEmpty(id)) {
                out.add(new Entry(id.name() + "@" + v.hex(), null, Node.Type.DIRECTORY));
            }
            for (String ref : refNames(id)) {
                out.add(new Entry(id.name() + "@" + ref, null, Node.Type.SYMLINK));
            }
        }
        out.sort((a, b) -> a.name().compareTo(b.name()));
        return out;
    }

    private boolean hasLatest(DatasetId id) {
        try {
            return catalog.latest(id).isPresent();
        } catch (DatasetNotFoundException e) {
            return false;
        } catch (RuntimeException e) {
            return true;
        }
    }

    /** Tags and branches of a dataset; none if they cannot be listed now (the versions still show). */
    private List<String> refNames(DatasetId id) {
        List<String> out = new ArrayList<>();
        try {
            out.addAll(catalog.tags(id));
            out.addAll(catalog.branches(id));
        } catch (RuntimeException e) {
            return List.of();
        }
        return out;
    }

    /**
     * Members, walked by the index itself: an entry's offset is the index position where the
     * walk resumes, so a resumed listing costs one binary search, not a rescan.
     */
    private void listMembers(Node.MemberDir d, long from, DirectorySink sink) {
        int start = (int) Math.min(from, Integer.MAX_VALUE);
        d.index().forEachChild(d.dir(), start, (name, directory, first, end) -> {
            Node child = directory ? d.subdirectory(d.child(name)) : d.member(first);
            return sink.add(name, child.type(), FIRST_ENTRY_OFFSET + end - 1L, child);
        });
    }

    /**
     * The members of a safetensors artifact's directory, each {@code F.safetensors} followed by
     * its {@code F.tensors} folder (unless a member has that name). Listed whole (such folders
     * hold files, not millions of members); the folders come without nodes, since a node would
     * need the file's header: their lookup reads it.
     */
    private static List<Entry> safetensorsMembers(Node.MemberDir d) {
        List<Entry> out = new ArrayList<>();
        d.index().forEachChild(d.dir(), 0, (name, directory, first, end) -> {
            Node child = directory ? d.subdirectory(d.child(name)) : d.member(first);
            out.add(new Entry(name, child));
            String tensors = name.endsWith(".safetensors")
                    ? name.substring(0, name.length() - ".safetensors".length()) + WarpTree.TENSORS_SUFFIX : null;
            if (!directory && tensors != null && d.index().find(d.child(tensors)) < 0
                    && !d.index().isDirectory(d.child(tensors))) {
                out.add(new Entry(tensors, null, Node.Type.DIRECTORY));
            }
            return false;
        });
        return out;
    }

    /** The {@code F.tensors} folders in a directory (0 outside safetensors artifacts), for its nlink. */
    long tensorFolderCount(Node.MemberDir d) {
        if (d.artifact().kind() != ArtifactKind.SAFETENSORS) {
            return 0;
        }
        return safetensorsMembers(d).stream().filter(e -> e.node() == null).count();
    }

    /**
     * A tensor folder's entries from {@code from}, made one at a time as the sink takes them: a
     * listing that made all of a folder's entries for each chunk of it cost O(n^2) (audit 40: 92 s
     * for a flat folder of 120,000 tensors).
     */
    private static void listTensors(Node.TensorDir t, long from, DirectorySink sink) {
        TensorFolder folder = t.folder();
        int count = folder.childCount(t.dir());
        for (int i = (int) Math.min(from, count); i < count; i++) {
            TensorFolder.Child c = folder.child(t.dir(), i);
            Node node = c.file() == null ? t.subfolder(t.child(c.name())) : t.tensor(c.position(), c.file());
            if (sink.add(c.name(), node.type(), FIRST_ENTRY_OFFSET + i, node)) {
                return;
            }
        }
    }

    private List<VersionHash> versionsOrEmpty(DatasetId id) {
        try {
            return catalog.versions(id);
        } catch (DatasetNotFoundException | StoreUnavailableException notNow) {
            // Unknown and the store not answering: the rest of the workspace still lists.
            return List.of();
        }
    }
}
