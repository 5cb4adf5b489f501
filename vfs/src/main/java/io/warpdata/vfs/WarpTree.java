package io.warpdata.vfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.warpdata.blobcache.BlobNotFoundException;
import io.warpdata.blobcache.BlobReader;
import io.warpdata.blobcache.Catalog;
import io.warpdata.blobcache.DatasetNotFoundException;
import io.warpdata.blobcache.StoreException;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.ManifestValidationException;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.regex.Pattern;

/**
 * The mount's file tree (DESIGN.md section 5) as plain Java: path -> {@link Node}, attributes,
 * directory listings with resumable offsets, symlink targets and reads. The FUSE adapter only
 * translates; unit tests drive this class directly.
 *
 * <pre>
 * /                                   workspaces
 * /ws/name            -> name@HASH    latest (the catalog re-reads the pointer after its TTL)
 * /ws/name@HASH/                      a version; any unique prefix of >= 8 hex resolves
 *     table/shard.parquet             table shards
 *     artifact/member/path            artifact members and their directories
 *     .warp/manifest.json             the stored manifest
 * </pre>
 *
 * <p>Thread-safe and lock-free: version facts are cached per version, member indexes per
 * artifact behind their own futures. Errors surface as exceptions ({@link NoSuchEntryException},
 * {@link WrongNodeTypeException}, the store's {@link StoreException} family, corrupted
 * manifests); {@link Errno} turns them into errnos.
 */
public final class WarpTree {
    /** The hidden directory of version metadata. */
    public static final String META_DIR = ".warp";
    public static final String MANIFEST_FILE = "manifest.json";

    private static final Pattern ID_PART = Pattern.compile("^[a-z0-9_-]+$");
    private static final int HASH_HEX = 64;
    private static final Pattern VERSION_PREFIX = Pattern.compile("^[0-9a-f]{8,64}$");
    private static final Node ROOT = new Node.Root();
    /** Offsets 1 and 2 are "." and ".."; entries start at 3. */
    private static final int FIRST_ENTRY_OFFSET = 3;
    /**
     * Version facts are small (a manifest, its JSON) but a daemon may see thousands of versions
     * over its life; this many stay parsed, the rest are re-read from the catalog's own cache.
     */
    private static final int VERSION_TREES_HELD = 1024;
    /** As long as the catalog trusts a negative answer: a version published elsewhere appears fast. */
    private static final Duration MISSING_VERSION_TTL = Duration.ofSeconds(1);

    private final Catalog catalog;
    private final BlobReader reader;
    private final MemberIndexCache indexes;
    private final Cache<VersionKey, VersionTree> versionTrees;
    /** Versions by their full name {@code ws/name@<64 hex>}, the hot path of every lookup under a version. */
    private final Cache<String, VersionTree> versionsByName;
    /** The full-hash version the last lookup went through (only ever a validated, resolved name). */
    private volatile NamedVersion lastVersion;
    /**
     * Versions the store said do not exist, remembered briefly: the kernel does not cache
     * failed lookups (WarpFuse answers them without an entry), and a tool probing name@hash in a loop must not
     * cost a GET per probe. Short, so that a version published by another host appears fast.
     */
    private final Cache<VersionKey, Boolean> missingVersions;

    /**
     * @param catalog where versions and pointers come from (its TTLs decide how fast
     *        {@code latest} moves and how long negative answers are remembered)
     * @param reader the verified read path
     * @param maxIndexedMembers bound of the member index cache, in members
     * @param indexLoader runs member index loads
     */
    public WarpTree(Catalog catalog, BlobReader reader, long maxIndexedMembers, Executor indexLoader) {
        this.catalog = catalog;
        this.reader = reader;
        this.indexes = new MemberIndexCache(reader, maxIndexedMembers, indexLoader);
        this.versionTrees = Caffeine.newBuilder().maximumSize(VERSION_TREES_HELD).build();
        this.versionsByName = Caffeine.newBuilder().maximumSize(VERSION_TREES_HELD).build();
        this.missingVersions = Caffeine.newBuilder().maximumSize(10_000)
                .expireAfterWrite(MISSING_VERSION_TTL).build();
    }

    /** Members held by the member index cache (a gauge). */
    public long indexedMembers() {
        return indexes.heldMembers();
    }

    /**
     * Resolves an absolute path ({@code /} or {@code /a/b}, no trailing slash) to its node.
     *
     * @throws NoSuchEntryException if nothing is there
     * @throws WrongNodeTypeException if a non-directory is used as a directory
     * @throws StoreException if the store could not answer
     */
    public Node lookup(String path) {
        if (path.isEmpty() || path.equals("/")) {
            return ROOT;
        }
        // One pass over the path, no split and no regex: this runs once per FUSE lookup.
        int from = path.charAt(0) == '/' ? 1 : 0;
        int to = path.charAt(path.length() - 1) == '/' ? path.length() - 1 : path.length();
        int[] ends = {-1, -1, -1, -1};
        int parts = 0;
        int start = from;
        for (int i = from; i <= to; i++) {
            if (i == to || path.charAt(i) == '/') {
                if (!validComponent(path, start, i)) {
                    throw new NoSuchEntryException(path);
                }
                if (parts < ends.length) {
                    ends[parts] = i;
                }
                parts++;
                start = i + 1;
            }
        }
        int wsEnd = ends[0];
        if (!isIdPart(path, from, wsEnd)) {
            throw new NoSuchEntryException(path);
        }
        if (parts == 1) {
            String ws = path.substring(from, wsEnd);
            if (!catalog.workspaces().contains(ws)) {
                throw new NoSuchEntryException(path);
            }
            return new Node.Workspace(ws);
        }
        int entryEnd = ends[1];
        int at = path.indexOf('@', wsEnd + 1);
        if (at < 0 || at > entryEnd) {
            Node.LatestLink link = latestLink(path.substring(from, wsEnd), path.substring(wsEnd + 1, entryEnd), path);
            if (parts > 2) {
                // The kernel follows symlinks itself; a path through one never reaches us.
                throw new WrongNodeTypeException(path, Node.Type.SYMLINK);
            }
            return link;
        }
        VersionTree version = version(path, from, wsEnd, at, entryEnd);
        if (parts == 2) {
            return new Node.VersionDir(version);
        }
        return insideVersion(version, path, entryEnd + 1, ends[2], ends[3], to, parts);
    }

    /** Not empty, not "." and not "..": the kernel never sends these, a hand-made path might. */
    private static boolean validComponent(String path, int from, int to) {
        int n = to - from;
        return n > 2 || (n == 2 && !(path.charAt(from) == '.' && path.charAt(from + 1) == '.'))
                || (n == 1 && path.charAt(from) != '.');
    }

    /** {@code [a-z0-9_-]+}, the rule of workspace and dataset names (see {@link DatasetId}). */
    private static boolean isIdPart(String s, int from, int to) {
        if (from >= to) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    private static boolean isFullHash(String s, int from, int to) {
        if (to - from != HASH_HEX) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    /**
     * The version named by {@code path[from, entryEnd)} ({@code ws/name@prefix}). A full hash
     * names one immutable version forever, so its tree is remembered by that text and every
     * later lookup under it costs one hash-map probe; a short prefix is resolved every time,
     * because a later publish can make it ambiguous.
     */
    private VersionTree version(String path, int from, int wsEnd, int at, int entryEnd) {
        // Nearly every lookup is under the version the last one was under (ls -R, a training
        // epoch): compare in place, no substring, no hashing.
        NamedVersion last = lastVersion;
        int n = entryEnd - from;
        if (last != null && last.name().length() == n && path.regionMatches(from, last.name(), 0, n)) {
            return last.tree();
        }
        VersionTree version = versionByName(path, from, wsEnd, at, entryEnd);
        if (entryEnd - at - 1 == HASH_HEX) {
            lastVersion = new NamedVersion(path.substring(from, entryEnd), version);
        }
        return version;
    }

    private record NamedVersion(String name, VersionTree tree) {
    }

    private VersionTree versionByName(String path, int from, int wsEnd, int at, int entryEnd) {
        boolean full = isFullHash(path, at + 1, entryEnd);
        String key = full ? path.substring(from, entryEnd) : null;
        if (full) {
            VersionTree known = versionsByName.getIfPresent(key);
            if (known != null) {
                return known;
            }
        }
        VersionTree version = version(path.substring(from, wsEnd), path.substring(wsEnd + 1, at),
                path.substring(at + 1, entryEnd), path);
        if (full) {
            versionsByName.put(key, version);
        }
        return version;
    }

    private Node insideVersion(VersionTree version, String path, int topStart, int topEnd, int fourthEnd, int to,
                               int parts) {
        String top = path.substring(topStart, topEnd);
        if (top.equals(META_DIR)) {
            if (parts == 3) {
                return new Node.MetaDir(version);
            }
            if (parts == 4 && to - topEnd - 1 == MANIFEST_FILE.length()
                    && path.startsWith(MANIFEST_FILE, topEnd + 1)) {
                return new Node.ManifestFile(version);
            }
            throw new NoSuchEntryException(path);
        }
        Map<String, TableShard> shards = version.shards(top);
        if (shards != null) {
            if (parts == 3) {
                return new Node.TableDir(version, top);
            }
            TableShard shard = shards.get(path.substring(topEnd + 1, fourthEnd));
            if (shard == null) {
                throw new NoSuchEntryException(path);
            }
            if (parts > 4) {
                throw new WrongNodeTypeException(path, Node.Type.FILE);
            }
            return new Node.BlobFile(version, shard.blob(), 0, shard.blob().size(), false);
        }
        Artifact artifact = version.manifest().artifacts().get(top);
        if (artifact == null) {
            throw new NoSuchEntryException(path);
        }
        MemberIndex index = indexes.get(artifact.index());
        if (parts == 3) {
            return new Node.MemberDir(version, top, index, "");
        }
        String member = path.substring(topEnd + 1, to);
        int i = index.find(member);
        if (i >= 0) {
            BlobRef shard = artifact.shards().get(index.shard(i));
            return new Node.BlobFile(version, shard, index.offset(i), index.length(i), (index.mode(i) & 0111) != 0);
        }
        if (index.isDirectory(member)) {
            return new Node.MemberDir(version, top, index, member + "/");
        }
        throw new NoSuchEntryException(path);
    }

    private Node.LatestLink latestLink(String ws, String name, String path) {
        DatasetId id = datasetId(ws, name, path);
        Optional<VersionHash> latest;
        try {
            latest = catalog.latest(id);
        } catch (DatasetNotFoundException | BlobNotFoundException e) {
            throw new NoSuchEntryException(path);
        }
        return new Node.LatestLink(id, latest.orElseThrow(() -> new NoSuchEntryException(path)));
    }

    private VersionTree version(String ws, String name, String prefix, String path) {
        DatasetId id = datasetId(ws, name, path);
        if (!VERSION_PREFIX.matcher(prefix).matches()) {
            throw new NoSuchEntryException(path);
        }
        VersionHash hash;
        if (prefix.length() == 64) {
            hash = new VersionHash(prefix);
        } else {
            List<VersionHash> matches = new ArrayList<>(2);
            for (VersionHash v : versionsOf(id, path)) {
                if (v.hex().startsWith(prefix)) {
                    matches.add(v);
                }
            }
            if (matches.isEmpty()) {
                throw new NoSuchEntryException(path);
            }
            if (matches.size() > 1) {
                throw NoSuchEntryException.ambiguous(path, matches.size());
            }
            hash = matches.get(0);
        }
        VersionKey key = new VersionKey(id, hash);
        VersionTree tree = versionTrees.getIfPresent(key);
        if (tree != null) {
            return tree;
        }
        if (missingVersions.getIfPresent(key) != null) {
            throw new NoSuchEntryException(path);
        }
        try {
            tree = new VersionTree(id, hash, catalog.manifest(id, hash));
        } catch (DatasetNotFoundException | BlobNotFoundException e) {
            missingVersions.put(key, Boolean.TRUE);
            throw new NoSuchEntryException(path);
        }
        versionTrees.put(key, tree);
        return tree;
    }

    private List<VersionHash> versionsOf(DatasetId id, String path) {
        try {
            return catalog.versions(id);
        } catch (DatasetNotFoundException | BlobNotFoundException e) {
            throw new NoSuchEntryException(path);
        }
    }

    private static DatasetId datasetId(String ws, String name, String path) {
        if (!ID_PART.matcher(name).matches()) {
            throw new NoSuchEntryException(path);
        }
        try {
            return new DatasetId(ws, name);
        } catch (ManifestValidationException e) {
            throw new NoSuchEntryException(path);
        }
    }

    /**
     * stat of a node.
     *
     * @throws StoreException if a listing needed for a directory's link count failed
     */
    public NodeAttributes attributes(Node node) {
        return switch (node) {
            case Node.Root r -> dir(2 + catalog.workspaces().size(), 0);
            case Node.Workspace w -> dir(2 + versionDirCount(w.name()), 0);
            case Node.LatestLink l -> new NodeAttributes(Node.Type.SYMLINK, 0777, l.text().length(), 1, 0);
            case Node.VersionDir v -> dir(3 + v.version().manifest().tables().size()
                    + v.version().manifest().artifacts().size(), v.version().mtimeSeconds());
            case Node.TableDir t -> dir(2, t.version().mtimeSeconds());
            case Node.MetaDir m -> dir(2, m.version().mtimeSeconds());
            case Node.MemberDir d -> dir(2 + MemberDirectories.subdirectoryCount(d.index(), d.prefix()),
                    d.version().mtimeSeconds());
            case Node.BlobFile f -> new NodeAttributes(Node.Type.FILE, f.executable() ? 0555 : 0444, f.length(), 1,
                    f.version().mtimeSeconds());
            case Node.ManifestFile m -> new NodeAttributes(Node.Type.FILE, 0444, m.version().manifestJson().length, 1,
                    m.version().mtimeSeconds());
        };
    }

    /** Subdirectories of a workspace (its version directories), for nlink; from cached listings. */
    private long versionDirCount(String ws) {
        long n = 0;
        try {
            for (DatasetId id : catalog.datasets(ws)) {
                n += versionsOrEmpty(id).size();
            }
        } catch (DatasetNotFoundException e) {
            return 0;
        }
        return n;
    }

    private List<VersionHash> versionsOrEmpty(DatasetId id) {
        try {
            return catalog.versions(id);
        } catch (DatasetNotFoundException e) {
            return List.of();
        }
    }

    private static NodeAttributes dir(long nlink, long mtime) {
        return new NodeAttributes(Node.Type.DIRECTORY, 0555, 0, nlink, mtime);
    }

    /**
     * Lists a directory from {@code offset} (0 = from the start, else a {@code nextOffset} an
     * earlier call gave to the sink), including "." and "..". Offsets stay valid across calls,
     * so directories of any size list in as many calls as the kernel's buffer needs.
     *
     * @throws WrongNodeTypeException if {@code node} is not a directory
     * @throws StoreException if the store could not answer
     */
    public void list(Node node, long offset, DirectorySink sink) {
        if (node.type() != Node.Type.DIRECTORY) {
            throw new WrongNodeTypeException("listing", node.type());
        }
        if (offset < 1 && sink.add(".", Node.Type.DIRECTORY, 1)) {
            return;
        }
        if (offset < 2 && sink.add("..", Node.Type.DIRECTORY, 2)) {
            return;
        }
        long from = Math.max(offset, 2) - FIRST_ENTRY_OFFSET + 1;
        if (node instanceof Node.MemberDir d) {
            listMembers(d, from, sink);
            return;
        }
        List<Entry> entries = smallDirectory(node);
        for (int i = (int) Math.min(from, entries.size()); i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (sink.add(e.name(), e.type(), FIRST_ENTRY_OFFSET + i)) {
                return;
            }
        }
    }

    private record Entry(String name, Node.Type type) {
    }

    private List<Entry> smallDirectory(Node node) {
        List<Entry> out = new ArrayList<>();
        switch (node) {
            case Node.Root r -> catalog.workspaces().forEach(ws -> out.add(new Entry(ws, Node.Type.DIRECTORY)));
            case Node.Workspace w -> workspaceEntries(w.name(), out);
            case Node.VersionDir v -> {
                out.add(new Entry(META_DIR, Node.Type.DIRECTORY));
                v.version().manifest().tables().keySet().forEach(t -> out.add(new Entry(t, Node.Type.DIRECTORY)));
                v.version().manifest().artifacts().keySet().forEach(a -> out.add(new Entry(a, Node.Type.DIRECTORY)));
            }
            case Node.TableDir t -> t.version().shards(t.table()).keySet()
                    .forEach(s -> out.add(new Entry(s, Node.Type.FILE)));
            case Node.MetaDir m -> out.add(new Entry(MANIFEST_FILE, Node.Type.FILE));
            default -> throw new WrongNodeTypeException("listing", node.type());
        }
        return out;
    }

    private void workspaceEntries(String ws, List<Entry> out) {
        List<DatasetId> datasets;
        try {
            datasets = catalog.datasets(ws);
        } catch (DatasetNotFoundException e) {
            return;
        }
        for (DatasetId id : datasets) {
            if (hasLatest(id)) {
                out.add(new Entry(id.name(), Node.Type.SYMLINK));
            }
            for (VersionHash v : versionsOrEmpty(id)) {
                out.add(new Entry(id.name() + "@" + v.hex(), Node.Type.DIRECTORY));
            }
        }
        out.sort((a, b) -> a.name().compareTo(b.name()));
    }

    /**
     * Whether {@code id} shows a latest link. A pointer that cannot be read (corrupted, store
     * hiccup) must not hide the dataset's versions: the link is still listed, and a lookup of it
     * reports the error (EIO, logged) to whoever follows it.
     */
    private boolean hasLatest(DatasetId id) {
        try {
            return catalog.latest(id).isPresent();
        } catch (DatasetNotFoundException e) {
            return false;
        } catch (RuntimeException e) {
            return true;
        }
    }

    /**
     * Members: an entry's offset is the index position where the scan resumes, so a resumed
     * listing costs one binary search, not a rescan.
     */
    private static void listMembers(Node.MemberDir d, long from, DirectorySink sink) {
        int start = (int) Math.min(from, Integer.MAX_VALUE);
        MemberDirectories.list(d.index(), d.prefix(), start, (name, directory, next) ->
                sink.add(name, directory ? Node.Type.DIRECTORY : Node.Type.FILE, FIRST_ENTRY_OFFSET + next - 1L));
    }

    /**
     * The target of a symlink.
     *
     * @throws WrongNodeTypeException if {@code node} is not a symlink
     */
    public String readlink(Node node) {
        if (node instanceof Node.LatestLink l) {
            return l.text();
        }
        throw new WrongNodeTypeException("readlink", node.type());
    }

    /**
     * Reads up to {@code len} bytes of a file at {@code offset} into {@code dst[0, len)}.
     *
     * @return the bytes read: {@code min(len, size - offset)}, 0 at or past the end, never short
     *         otherwise
     * @throws WrongNodeTypeException if {@code node} is not a file
     * @throws StoreException if the bytes could not be fetched or failed verification
     */
    public int read(Node node, long offset, byte[] dst, int len) {
        return read(node, offset, ByteBuffer.wrap(dst, 0, len));
    }

    /**
     * Reads up to {@code dst.remaining()} bytes of a file at {@code offset} into {@code dst} at its
     * position (which is not advanced). FUSE passes a direct buffer over libfuse's reply buffer,
     * which the block cache fills without an intermediate copy.
     *
     * @return the bytes read: {@code min(dst.remaining(), size - offset)}, 0 at or past the end,
     *         never short otherwise
     * @throws WrongNodeTypeException if {@code node} is not a file
     * @throws StoreException if the bytes could not be fetched or failed verification
     */
    public int read(Node node, long offset, ByteBuffer dst) {
        int len = dst.remaining();
        if (offset < 0) {
            throw new IllegalArgumentException("offset " + offset + ", len " + len);
        }
        if (node instanceof Node.BlobFile f) {
            if (offset >= f.length()) {
                return 0;
            }
            int n = (int) Math.min(len, f.length() - offset);
            int got = reader.read(f.blob(), f.offset() + offset, dst.slice(dst.position(), n));
            if (got != n) {
                throw new StoreException("Short read of blob " + f.blob().id() + " at offset " + (f.offset() + offset)
                        + ": " + got + " of " + n + " bytes", "This is a bug in the blob reader; report it.", null);
            }
            return n;
        }
        if (node instanceof Node.ManifestFile m) {
            byte[] json = m.version().manifestJson();
            if (offset >= json.length) {
                return 0;
            }
            int n = (int) Math.min(len, json.length - offset);
            dst.put(dst.position(), json, (int) offset, n);
            return n;
        }
        throw new WrongNodeTypeException("read", node.type());
    }

    private record VersionKey(DatasetId id, VersionHash version) {
    }
}
