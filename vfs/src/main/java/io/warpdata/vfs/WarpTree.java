package io.warpdata.vfs;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.catalog.Catalog;
import io.warpdata.store.StoreException;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.DatasetRef;
import io.warpdata.manifest.PartReadAhead;

import java.nio.ByteBuffer;
import java.util.concurrent.Executor;

/**
 * The mount's file tree (DESIGN.md section 5) as plain Java: a child by (parent node, name),
 * attributes, directory listings with resumable offsets, symlink targets and reads. The FUSE
 * adapter only translates; unit tests drive this class directly.
 *
 * <pre>
 * /                                   workspaces
 * /ws/name            -> name@HASH    latest (the catalog re-reads the pointer after its TTL)
 * /ws/name@TAG        -> name@HASH    a tag or a branch (re-read like latest: tag --force moves a tag)
 * /ws/name@HASH/                      a version; any unique prefix of >= 8 hex resolves
 *     table/shard.parquet             table shards
 *     artifact/member/path            artifact members and their directories
 *     artifact/F.tensors/KEY.npy      in a safetensors artifact: each tensor of F.safetensors
 *     artifact.tars/NAME.tar          WebDataset shards as the files they were published as
 *     .warp/manifest.json             the stored manifest
 * </pre>
 *
 * <p>Names under a workspace are parsed by {@link DatasetRef} and resolved by the
 * {@link Catalog}: this class knows no naming rule of its own. A lookup is one step from its
 * parent node, and a listing ({@link DirectoryListing}) hands out the child nodes it produced,
 * so READDIRPLUS needs no second resolution per entry.
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
    /** {@code F.tensors} is the folder of the tensors of {@code F.safetensors}. */
    public static final String TENSORS_SUFFIX = ".tensors";

    private static final Node ROOT = new Node.Root();
    /**
     * Shards of an artifact or table whose block hash lists are prefetched when its folder is
     * looked up: 64. An artifact or table of up to 64 shards (the tar shards of an image folder,
     * a table's Parquet files) has every list in by its first read; a list is small (32 bytes a
     * block: 32 KiB for a 1 GiB shard), so this costs at most 64 small GETs, once (lists are
     * kept). One of more shards (a table of thousands of files, of which a query may read three)
     * gets the lists of its first 64; the others load on their first read.
     */
    static final int HASH_LISTS_PREFETCHED = 64;

    private final BlobReader reader;
    private final MemberIndexCache indexes;
    private final MemberInodes members;
    private final TensorInodes tensors = new TensorInodes();
    private final TreeLookups lookups;
    private final DirectoryListing listing;
    /** When the tree was made (the mount's start): the time of the root and workspace folders. */
    private final long startedSeconds;

    /**
     * @param catalog where versions and pointers come from (its TTLs decide how fast
     *        {@code latest} moves and how long negative answers are remembered)
     * @param reader the verified read path
     * @param maxIndexedMembers bound of the member index cache, in members
     * @param indexLoader runs member index loads
     */
    public WarpTree(Catalog catalog, BlobReader reader, long maxIndexedMembers, Executor indexLoader) {
        this(catalog, reader, maxIndexedMembers, indexLoader, java.time.Clock.systemUTC());
    }

    /**
     * As above, with the clock whose time at construction (the mount's start) dates the root and
     * the workspace folders.
     */
    public WarpTree(Catalog catalog, BlobReader reader, long maxIndexedMembers, Executor indexLoader, java.time.Clock clock) {
        this.startedSeconds = clock.instant().getEpochSecond();
        this.reader = reader;
        this.indexes = new MemberIndexCache(reader, catalog.known(), maxIndexedMembers, indexPageCacheBytes(), indexLoader);
        this.members = new MemberInodes(indexes);
        this.lookups = new TreeLookups(catalog, reader, members, tensors);
        this.listing = new DirectoryListing(catalog, members);
    }

    /**
     * Heap for pages of member index files: a sixteenth of the heap, between 4 and 64 MiB (at
     * warpd's default 384 MiB heap, 24 MiB), whatever the number of members.
     */
    static long indexPageCacheBytes() {
        return Math.max(4L << 20, Math.min(64L << 20, Runtime.getRuntime().maxMemory() / 16));
    }

    /** Members held by the member index cache (a gauge). */
    public long indexedMembers() {
        return indexes.heldMembers();
    }

    /** Index parts read ahead of walks: started, loaded and failed so far (stats.json, Prometheus). */
    public PartReadAhead indexPartsReadAhead() {
        return indexes.readAhead();
    }

    /** What the mount's tensor folders cost so far (stats.json, Prometheus). */
    public TensorFolderStats tensorFolders() {
        return lookups.tensorFolders();
    }

    /** The root directory. */
    public Node root() {
        return ROOT;
    }

    // ---------------------------------------------------------------- inodes

    /**
     * The inode of a node the mount numbers by computation (an artifact member or a tensor file:
     * see {@link MemberInodes} and {@link TensorInodes} for the layout), or 0 for any other node,
     * which the FUSE adapter numbers from its own table. A computed inode is the same for every
     * lookup of the file and stays valid for the life of the tree, with nothing kept for it.
     */
    public long computedInode(Node node) {
        return node instanceof Node.File f ? f.inode() : 0;
    }

    /**
     * The folder of a computed inode, as a number that is the same for every member of one
     * version's artifact (or every file of one tensor folder) and differs between folders (its
     * slot; see {@link MemberInodes}).
     */
    public static long artifactOfComputedInode(long nodeid) {
        return MemberInodes.slotBits(nodeid);
    }

    /** Whether {@code nodeid} is in the range of computed inodes ({@link #computedInode}), named or not. */
    public static boolean isComputedInode(long nodeid) {
        return MemberInodes.isComputed(nodeid);
    }

    /**
     * The member or tensor file a computed inode names.
     *
     * @throws StaleNodeException if it names none (a number never handed out by this tree)
     * @throws StoreException if the member's index, or the tensor's folder, cannot be read now
     */
    public Node nodeOfComputedInode(long nodeid) {
        return TensorInodes.isTensor(nodeid) ? tensors.file(nodeid) : members.file(nodeid);
    }

    /** The path of a computed inode's file, for log lines; {@code (node N)} if it names none. */
    public String describeComputedInode(long nodeid) {
        return TensorInodes.isTensor(nodeid) ? tensors.describe(nodeid) : members.describe(nodeid);
    }

    /** Tensor folders numbered for tensor inodes since the tree was made (for tests). */
    int numberedTensorFolders() {
        return tensors.slots();
    }

    /** Artifacts numbered for member inodes since the tree was made (a gauge). */
    public int numberedArtifacts() {
        return members.slots();
    }

    // ---------------------------------------------------------------- lookup

    /**
     * The child {@code name} (one path component) of directory {@code parent}.
     *
     * @throws NoSuchEntryException if nothing is there
     * @throws WrongNodeTypeException if {@code parent} is not a directory
     * @throws StoreException if the store could not answer
     */
    public Node lookup(Node parent, String name) {
        return lookups.lookup(parent, name);
    }

    /**
     * An order plan will read tensors of the folder {@code name} ({@code F.tensors}) of
     * {@code parent}: from now on its tensors are read by their own hashes, whatever the size of
     * the shard (and its header comes from the version's deflated headers), so that the plan
     * fetches each one on its own. Call before looking the folder up; does nothing for any other
     * name, or a version without tensor hashes.
     */
    public void wantTensorHashes(Node parent, String name) {
        lookups.wantTensorHashes(parent, name);
    }

    /**
     * Resolves an absolute path ({@code /} or {@code /a/b}, a trailing slash allowed) one
     * component at a time from the root, as the kernel would. For tools and tests; the mount
     * itself looks up by parent node.
     *
     * @throws NoSuchEntryException if nothing is there
     * @throws WrongNodeTypeException if a non-directory is used as a directory
     * @throws StoreException if the store could not answer
     */
    public Node lookup(String path) {
        String rel = path.startsWith("/") ? path.substring(1) : path;
        if (rel.isEmpty()) {
            return ROOT;
        }
        if (rel.endsWith("/")) {
            rel = rel.substring(0, rel.length() - 1);
        }
        Node node = ROOT;
        // Empty components ("a//b") fail validComponent like "." and "..".
        for (String name : rel.split("/", -1)) {
            try {
                node = lookup(node, name);
            } catch (NoSuchEntryException e) {
                throw new NoSuchEntryException(path);
            }
        }
        return node;
    }

    // ---------------------------------------------------------------- attributes

    /**
     * stat of a node.
     *
     * @throws StoreException if a listing needed for a directory's link count failed
     */
    public NodeAttributes attributes(Node node) {
        return switch (node) {
            // Not 1970: the root and workspaces date from the mount's start (their contents change
            // without a time of their own), a name/tag/branch link from the version it points at,
            // so 'find -newer' spots a dataset published since.
            // Their subfolders come and go with every publish, so their link count is 1, which
            // find and fts read as "not counted" (a count from the last listing lagged a publish).
            case Node.Root r -> dir(1, startedSeconds);
            case Node.Workspace w -> dir(1, startedSeconds);
            case Node.Link l -> linkAttributes(l);
            case Node.VersionDir v -> dir(3 + v.version().manifest().tables().size()
                    + v.version().manifest().artifacts().size() + v.version().tarFolders().size(), v.version());
            case Node.TableDir t -> dir(2 + t.version().tableFolder(t.table(), t.dir()).stream()
                    .filter(c -> c.shard() == null).count(), t.version());
            case Node.MetaDir m -> dir(2, m.version());
            case Node.MemberDir d -> dir(2 + d.index().childDirectoryCount(d.dir()) + listing.tensorFolderCount(d),
                    d.version());
            case Node.TensorDir t -> dir(2 + t.folder().childDirectoryCount(t.dir()), t.version());
            case Node.File f -> new NodeAttributes(Node.Type.FILE, f.executable() ? 0555 : 0444, f.content().size(), 1,
                    f.version().mtimeSeconds(), f.version().mtimeNanos());
        };
    }

    /** Dated as the version a link points at; from the mount's start if it cannot be read now. */
    private NodeAttributes linkAttributes(Node.Link l) {
        long seconds = startedSeconds;
        int nanos = 0;
        try {
            VersionTree v = lookups.versionTree(l.dataset(), l.target(), l.entry());
            if (v.mtimeSeconds() > 0) {
                seconds = v.mtimeSeconds();
                nanos = v.mtimeNanos();
            }
        } catch (RuntimeException e) {
            // the mount's start
        }
        return new NodeAttributes(Node.Type.SYMLINK, 0777, l.text().length(), 1, seconds, nanos);
    }

    private static NodeAttributes dir(long nlink, long mtime) {
        return new NodeAttributes(Node.Type.DIRECTORY, 0555, 0, nlink, mtime);
    }

    private static NodeAttributes dir(long nlink, VersionTree version) {
        return new NodeAttributes(Node.Type.DIRECTORY, 0555, 0, nlink, version.mtimeSeconds(), version.mtimeNanos());
    }

    /**
     * Whether the kernel may cache what it learns of this node (attributes, pages, a listing, a
     * link's target) for as long as it likes: everything inside a version and tag links, which
     * never change. The root, workspaces and the links that move (latest, branches) are re-read.
     */
    public boolean immutable(Node node) {
        return switch (node) {
            case Node.Root r -> false;
            case Node.Workspace w -> false;
            case Node.Link l -> !l.kind().moves();
            case Node.VersionDir v -> true;
            case Node.TableDir t -> true;
            case Node.MetaDir m -> true;
            case Node.MemberDir d -> true;
            case Node.TensorDir t -> true;
            case Node.File f -> true;
        };
    }

    // ---------------------------------------------------------------- listing

    /**
     * Lists a directory from {@code offset} (0 = from the start, else a {@code nextOffset} an
     * earlier call gave to the sink), including "." and "..". Offsets stay valid across calls,
     * so directories of any size list in as many calls as the kernel's buffer needs. Inside a
     * version each entry comes with its node; the root's and workspaces' entries come without
     * (their attributes would need every version's manifest, which a plain {@code ls} must not
     * fetch).
     *
     * @throws WrongNodeTypeException if {@code node} is not a directory
     * @throws StoreException if the store could not answer
     */
    public void list(Node node, long offset, DirectorySink sink) {
        listing.list(node, offset, sink);
    }

    /**
     * The listing of directory {@code node} as of now, for one open handle of it (its later
     * chunks come from the same entries, though the root's and workspaces' change meanwhile).
     *
     * @throws WrongNodeTypeException if {@code node} is not a directory
     * @throws io.warpdata.store.StoreException if the store could not answer
     */
    public DirectorySnapshot snapshot(Node node) {
        if (node.type() != Node.Type.DIRECTORY) {
            throw new WrongNodeTypeException("listing", node.type());
        }
        return listing.snapshot(node);
    }

    // ---------------------------------------------------------------- links and reads

    /**
     * The target of a symlink.
     *
     * @throws WrongNodeTypeException if {@code node} is not a symlink
     */
    public String readlink(Node node) {
        return switch (node) {
            case Node.Link l -> l.text();
            case Node.Root r -> throw notALink(r);
            case Node.Workspace w -> throw notALink(w);
            case Node.VersionDir v -> throw notALink(v);
            case Node.TableDir t -> throw notALink(t);
            case Node.MetaDir m -> throw notALink(m);
            case Node.MemberDir d -> throw notALink(d);
            case Node.TensorDir t -> throw notALink(t);
            case Node.File f -> throw notALink(f);
        };
    }

    private static WrongNodeTypeException notALink(Node node) {
        return new WrongNodeTypeException("readlink", node.type());
    }

    /**
     * The blob whose bytes are exactly {@code node}'s, all of them (a table shard, an artifact
     * file), or null: members, tensors, manifests and directories are not whole blobs.
     */
    public BlobRef wholeBlob(Node node) {
        if (node instanceof Node.File f && f.content() instanceof FileContent.BlobSlice s && s.offset() == 0
                && s.length() == s.blob().size()) {
            return s.blob();
        }
        return null;
    }

    /**
     * A local file holding exactly {@code blob}'s verified bytes (see {@link BlobReader#localCopy}),
     * or null; counts an open of it.
     */
    public java.nio.file.Path localCopy(BlobRef blob) {
        return reader.localCopy(blob);
    }

    /** A file that is all of {@code blob}, opened through warpd, was closed (see {@link BlobReader#closed}). */
    public void closed(BlobRef blob) {
        reader.closed(blob);
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
     * position (which is not advanced). FUSE passes a direct buffer over the reply buffer, which
     * the block cache fills without an intermediate copy.
     *
     * @return the bytes read: {@code min(dst.remaining(), size - offset)}, 0 at or past the end,
     *         never short otherwise
     * @throws WrongNodeTypeException if {@code node} is not a file
     * @throws StoreException if the bytes could not be fetched or failed verification
     */
    public int read(Node node, long offset, ByteBuffer dst) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset " + offset + ", len " + dst.remaining());
        }
        return switch (node) {
            case Node.File f -> readContent(f.content(), offset, dst, dst.position(), dst.remaining());
            case Node.Root r -> throw notAFile(r);
            case Node.Workspace w -> throw notAFile(w);
            case Node.Link l -> throw notAFile(l);
            case Node.VersionDir v -> throw notAFile(v);
            case Node.TableDir t -> throw notAFile(t);
            case Node.MetaDir m -> throw notAFile(m);
            case Node.MemberDir d -> throw notAFile(d);
            case Node.TensorDir t -> throw notAFile(t);
        };
    }

    /**
     * The dataset a node belongs to, or null for the root and workspace directories. Allocates
     * nothing: the FUSE read path calls it on every read (for per-dataset metrics).
     */
    public static DatasetId datasetOf(Node node) {
        return switch (node) {
            case Node.File f -> f.version().dataset();
            case Node.Root r -> null;
            case Node.Workspace w -> null;
            case Node.Link l -> l.dataset();
            case Node.VersionDir v -> v.version().dataset();
            case Node.TableDir t -> t.version().dataset();
            case Node.MetaDir m -> m.version().dataset();
            case Node.MemberDir d -> d.version().dataset();
            case Node.TensorDir t -> t.version().dataset();
        };
    }

    private static WrongNodeTypeException notAFile(Node node) {
        return new WrongNodeTypeException("read", node.type());
    }

    /** Reads {@code content[offset, ...)} into {@code dst[at, at + len)}; returns the bytes read. */
    private int readContent(FileContent content, long offset, ByteBuffer dst, int at, int len) {
        if (offset >= content.size()) {
            return 0;
        }
        int n = (int) Math.min(len, content.size() - offset);
        switch (content) {
            case FileContent.BlobSlice s -> {
                int got = reader.read(s.blob(), s.offset() + offset, dst.slice(at, n));
                if (got != n) {
                    throw shortRead("blob " + s.blob().id() + " at offset " + (s.offset() + offset), got, n);
                }
            }
            case FileContent.Member m -> {
                int got = reader.readMember(m.blobMember(), offset, dst.slice(at, n));
                if (got != n) {
                    throw shortRead("member " + m.member() + " of blob " + m.shard().id() + " at offset " + offset, got, n);
                }
            }
            case FileContent.HashedRange r -> {
                int got = reader.readMember(r.range(), offset, dst.slice(at, n));
                if (got != n) {
                    throw shortRead("bytes [" + r.range().offset() + ", +" + r.size() + ") of blob " + r.range().blob().id()
                            + " at offset " + offset, got, n);
                }
            }
            case FileContent.Inline i -> dst.put(at, i.bytes(), (int) offset, n);
            case FileContent.Pieces p -> {
                long pieceStart = 0;
                int done = 0;
                for (FileContent piece : p.pieces()) {
                    long pieceEnd = pieceStart + piece.size();
                    if (offset + done < pieceEnd) {
                        done += readContent(piece, offset + done - pieceStart, dst, at + done, n - done);
                        if (done == n) {
                            break;
                        }
                    }
                    pieceStart = pieceEnd;
                }
            }
        }
        return n;
    }


    /** A reader that returned fewer bytes than asked: a bug, said with what was read ({@code what}). */
    static StoreException shortRead(String what, int got, int wanted) {
        return new StoreException("Short read of " + what + ": " + got + " of " + wanted + " bytes",
                "This is a bug in the blob reader; report it.", null);
    }
}
