package io.warpdata.daemon.control.ops;

import io.warpdata.catalog.DatasetNotFoundException;
import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.blobcache.cache.BlobMember;
import io.warpdata.blobcache.cache.OrderPlan;
import io.warpdata.blobcache.cache.PlanStatus;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.PrefetchOrderCall;
import io.warpdata.vfs.FileContent;
import io.warpdata.vfs.Node;
import io.warpdata.vfs.NoSuchEntryException;
import io.warpdata.vfs.WarpTree;
import io.warpdata.vfs.WrongNodeTypeException;

import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code prefetch.order {plan?, root?, paths[], part?, more?}}: a reader announces the order in
 * which it will read files under the mount (a shuffled epoch), and warpd fetches ahead in exactly
 * that order (see the block cache's {@code OrderPrefetcher}). Paths are relative to {@code root},
 * a directory of the mount (mount-relative, e.g. {@code ws/name@3fa1c09e}, or an absolute path
 * under the mount; default: the mount itself), and are resolved through the same tree the mount
 * serves, so a plan names exactly the bytes the reader's {@code open} will read.
 *
 * <p>A request line is at most 1 MiB, so a long order comes in parts: {@code part} 0, 1, 2, ...
 * each with {@code "more": true} but the last, each sent after the previous one's answer. The plan
 * starts with the last part and replaces the plan of the same name (the reader's previous epoch).
 * Parts not continued within {@link #PART_TIMEOUT} are dropped. An empty final order stops the
 * plan of that name.
 */
public final class PrefetchOrderOperation extends TypedOperation<PrefetchOrderCall.Request, PrefetchOrderCall.Reply, Empty> {
    /** A plan whose next part does not come within this is dropped (its memory given back). */
    static final Duration PART_TIMEOUT = Duration.ofSeconds(60);
    /** Plan names: anything printable, kept short for logs. */
    static final int MAX_NAME_CHARS = 200;
    /** Directories remembered per plan while its parts come in (ImageNet has 1,000). */
    static final int DIRECTORIES_REMEMBERED = 100_000;

    private final WarpTree tree;
    private final BlockCache cache;
    private final String mount;
    private final Clock clock;
    /** Plans whose parts are coming in, by name. */
    private final Map<String, Pending> pending = new LinkedHashMap<>();

    /** A plan still receiving parts. */
    private static final class Pending {
        final OrderPlan.Builder builder;
        final String root;
        final Node rootNode;
        final Map<String, Node> directories = new HashMap<>();
        /** Whether its tensor folders are read by their hashes (not for a plan that keeps to blocks). */
        final boolean tensorHashes;
        int nextPart;
        long touchedMillis;

        Pending(OrderPlan.Builder builder, String root, Node rootNode, boolean tensorHashes) {
            this.builder = builder;
            this.root = root;
            this.rootNode = rootNode;
            this.tensorHashes = tensorHashes;
        }
    }

    /**
     * @param mount the mount point (absolute roots are taken relative to it)
     */
    public PrefetchOrderOperation(WarpTree tree, BlockCache cache, String mount, Clock clock) {
        super(Calls.PREFETCH_ORDER, AccessPolicy.Access.OPEN);
        this.tree = tree;
        this.cache = cache;
        this.mount = mount.endsWith("/") && mount.length() > 1 ? mount.substring(0, mount.length() - 1) : mount;
        this.clock = clock;
    }

    @Override
    protected PrefetchOrderCall.Reply run(PrefetchOrderCall.Request q, Events<Empty> events) {
        String name = q.plan() == null ? "default" : q.plan();
        if (name.isEmpty() || name.length() > MAX_NAME_CHARS || name.chars().anyMatch(Character::isISOControl)) {
            throw bad("plan", "must be 1 to " + MAX_NAME_CHARS + " printable characters");
        }
        int part = q.part() == null ? 0 : q.part();
        if (part < 0) {
            throw bad("part", "must be a whole number from 0");
        }
        OrderPlan.Fetch fetch = switch (q.fetch() == null ? PrefetchOrderCall.Fetch.AUTO : q.fetch()) {
            case AUTO -> OrderPlan.Fetch.AUTO;
            case BLOCKS -> OrderPlan.Fetch.BLOCKS;
            case FILES -> OrderPlan.Fetch.FILES;
        };
        Pending p = partFor(q, name, part, fetch);
        try {
            int position = p.builder.members();
            for (String path : q.paths()) {
                add(p, path, position++);
            }
        } catch (RuntimeException e) {
            drop(name, p);
            throw e;
        }
        if (q.more()) {
            synchronized (pending) {
                p.nextPart = part + 1;
                p.touchedMillis = clock.millis();
                pending.put(name, p);
            }
            return PrefetchOrderCall.Reply.partTaken(name, part, p.builder.members());
        }
        synchronized (pending) {
            pending.remove(name, p);
        }
        if (p.builder.members() == 0) {
            p.builder.discard();
            return PrefetchOrderCall.Reply.stopped(name, cache.stopPlan(name));
        }
        boolean replaces = cache.plans().stream().anyMatch(s -> s.name().equals(name)
                && (s.state().equals("active") || s.state().startsWith("waiting") || s.state().equals("done")));
        PlanStatus s = cache.startPlan(name, p.builder);
        return PrefetchOrderCall.Reply.started(name, p.root, s.members(), s.blobs(), s.plannedBytes(), s.grains(),
                s.aheadBytes(), s.heldBytes(), replaces, s.byFile() ? "files" : "blocks");
    }

    /** The plan this part belongs to: a new one for part 0, else the one whose previous part came last. */
    private Pending partFor(PrefetchOrderCall.Request q, String name, int part, OrderPlan.Fetch fetch) {
        synchronized (pending) {
            long now = clock.millis();
            for (Iterator<Pending> it = pending.values().iterator(); it.hasNext(); ) {
                Pending old = it.next();
                if (now - old.touchedMillis > PART_TIMEOUT.toMillis()) {
                    old.builder.discard();
                    it.remove();
                }
            }
            Pending p = pending.get(name);
            if (part == 0) {
                if (p != null) {
                    p.builder.discard();
                    pending.remove(name);
                }
            } else {
                if (p == null || p.nextPart != part) {
                    throw bad("part", "is " + part + " but plan '" + name + "' expects "
                            + (p == null ? "part 0 (no earlier part within " + PART_TIMEOUT.toSeconds() + " s)"
                            : "part " + p.nextPart) + ": send the parts in order, each after the previous one's answer");
                }
                pending.remove(name);
                return p;
            }
        }
        String root = q.root() == null ? "" : q.root();
        // A plan that keeps to its blocks reads tensors through them: no hashes fetched for it.
        boolean tensorHashes = fetch != OrderPlan.Fetch.BLOCKS;
        Node rootNode = root(root, tensorHashes);
        String description = rootNode instanceof Node.VersionDir v ? v.version().describe()
                : "/" + relative(root);
        return new Pending(cache.orderPlan(description).members(this::member).fetch(fetch), root, rootNode,
                tensorHashes);
    }

    /**
     * The archive member or tensor a plan's file reference (its computed inode) names, or null
     * (the plan then skips it).
     */
    private BlobMember member(long inode) {
        if (!(tree.nodeOfComputedInode(inode) instanceof Node.File f)) {
            return null;
        }
        return switch (f.content()) {
            case FileContent.Member m -> m.blobMember();
            case FileContent.Pieces p -> tensor(p);
            default -> null;
        };
    }

    /** The tensor a {@code KEY.npy} file reads after its NPY header, checked by its own hash, or null. */
    private static BlobMember tensor(FileContent.Pieces pieces) {
        BlobMember found = null;
        for (FileContent piece : pieces.pieces()) {
            if (piece instanceof FileContent.HashedRange r && found == null) {
                found = r.range();
            } else if (!(piece instanceof FileContent.Inline)) {
                return null;
            }
        }
        return found;
    }

    private void drop(String name, Pending p) {
        synchronized (pending) {
            pending.remove(name, p);
        }
        p.builder.discard();
    }

    /** The mount-relative form of {@code root}: no leading or trailing slash. */
    private String relative(String root) {
        String rel = root;
        if (rel.startsWith("/")) {
            if (rel.equals(mount) || rel.equals(mount + "/")) {
                rel = "";
            } else if (rel.startsWith(mount + "/")) {
                rel = rel.substring(mount.length() + 1);
            } else {
                throw bad("root", "is " + root + ", which is not under the mount " + mount);
            }
        }
        while (rel.endsWith("/")) {
            rel = rel.substring(0, rel.length() - 1);
        }
        return rel;
    }

    /**
     * The directory {@code root} names, one component at a time as the kernel walks it: a link
     * (ws/name, ws/name@tag) on the way is followed to the version it names now (as are links
     * in the paths, when the root is above them).
     */
    private Node root(String root, boolean tensorHashes) {
        String rel = relative(root);
        Node node = tree.root();
        try {
            for (String name : rel.isEmpty() ? new String[0] : rel.split("/")) {
                node = step(node, name, tensorHashes);
            }
        } catch (NoSuchEntryException | DatasetNotFoundException | WrongNodeTypeException e) {
            throw new ControlException("NotFound", "prefetch.order: root '" + root + "' is not a directory of the mount "
                    + mount, "name a directory under the mount, e.g. ws/name@<version> (warpctl info ws/name shows it)");
        }
        if (node.type() != Node.Type.DIRECTORY) {
            throw bad("root", "is " + root + ", which is not a directory");
        }
        return node;
    }

    /** Resolves {@code path} under the plan's root and adds its bytes as the next member. */
    private void add(Pending p, String path, int position) {
        Node file;
        try {
            if (path.isEmpty() || path.startsWith("/")) {
                throw new NoSuchEntryException(path);
            }
            int slash = path.lastIndexOf('/');
            Node dir = slash < 0 ? p.rootNode : directory(p, path.substring(0, slash));
            file = tree.lookup(dir, slash < 0 ? path : path.substring(slash + 1));
        } catch (NoSuchEntryException | DatasetNotFoundException | WrongNodeTypeException e) {
            throw notAFile(p, path, position);
        }
        if (!(file instanceof Node.File f)) {
            throw notAFile(p, path, position);
        }
        switch (f.content()) {
            case FileContent.BlobSlice s -> p.builder.add(s.blob(), s.offset(), s.length());
            case FileContent.Member m -> {
                long length = m.index().length(m.member());
                p.builder.add(m.shard(), m.index().offset(m.member()), length);
                long inode = tree.computedInode(f);
                if (inode != 0) {
                    // Fetched by file over more than the cache keeps: the member, told again then from its inode.
                    p.builder.member(inode, length);
                }
            }
            case FileContent.HashedRange r -> p.builder.add(r.range().blob(), r.range().offset(), r.range().length());
            case FileContent.Inline i -> p.builder.addEmpty();
            case FileContent.Pieces pieces -> {
                boolean started = false;
                for (FileContent piece : pieces.pieces()) {
                    FileContent.BlobSlice s = switch (piece) {
                        case FileContent.BlobSlice slice -> slice;
                        case FileContent.HashedRange r -> new FileContent.BlobSlice(r.range().blob(), r.range().offset(),
                                r.range().length());
                        default -> null;
                    };
                    if (s != null) {
                        if (started) {
                            p.builder.addToMember(s.blob(), s.offset(), s.length());
                        } else {
                            p.builder.add(s.blob(), s.offset(), s.length());
                            started = true;
                        }
                    }
                }
                if (!started) {
                    p.builder.addEmpty();
                } else {
                    // A tensor checked by its own hash: fetched on its own, as an archive member is.
                    BlobMember tensor = tensor(pieces);
                    long inode = tensor == null ? 0 : tree.computedInode(f);
                    if (inode != 0) {
                        p.builder.member(inode, tensor.length());
                    }
                }
            }
        }
    }

    /** The directory at {@code rel} under the root, remembered for the plan's later paths. */
    private Node directory(Pending p, String rel) {
        Node d = p.directories.get(rel);
        if (d != null) {
            return d;
        }
        int slash = rel.lastIndexOf('/');
        Node parent = slash < 0 ? p.rootNode : directory(p, rel.substring(0, slash));
        d = step(parent, slash < 0 ? rel : rel.substring(slash + 1), p.tensorHashes);
        if (p.directories.size() >= DIRECTORIES_REMEMBERED) {
            p.directories.clear();
        }
        p.directories.put(rel, d);
        return d;
    }

    /** The child {@code name} of {@code parent}; a link (ws/name, ws/name@tag) is followed to the version it names now. */
    private Node step(Node parent, String name, boolean tensorHashes) {
        // A tensor folder's files are fetched by their own hashes for a plan, whatever their shard's size.
        if (tensorHashes) {
            tree.wantTensorHashes(parent, name);
        }
        Node node = tree.lookup(parent, name);
        if (node instanceof Node.Link l) {
            node = tree.lookup(new Node.Workspace(l.dataset().workspace()), l.text());
        }
        return node;
    }

    private ControlException notAFile(Pending p, String path, int position) {
        return new ControlException("NotFound", "prefetch.order: '" + path + "' (position " + position
                + ") is not a file under " + (p.root.isEmpty() ? mount : p.root) + "; nothing was planned",
                "send paths of files relative to root, e.g. images/cat/1.jpg under root ws/name@<version>"
                        + (p.root.isEmpty() ? " (warpctl prefetch --root ws/name: the folder a 'find .' was run in)"
                        : ""));
    }
}
