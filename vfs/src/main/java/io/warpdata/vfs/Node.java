package io.warpdata.vfs;

import io.warpdata.catalog.Catalog;
import io.warpdata.manifest.Artifact;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.TableShard;
import io.warpdata.manifest.VersionHash;

/**
 * One entry of the mount tree, as {@link WarpTree#lookup(Node, String)} resolves it from its
 * parent. Nodes are cheap immutable values that name everything an operation needs (a read
 * needs no path walk): version content hangs off a shared {@link VersionTree}, member indexes
 * off the tree's bounded index cache.
 *
 * <p>Every switch over a node is exhaustive, with no {@code default}: a new kind of entry cannot
 * compile until every operation ({@link WarpTree#lookup(Node, String)}, {@link WarpTree#list},
 * {@link WarpTree#attributes}, {@link WarpTree#read(Node, long, java.nio.ByteBuffer)},
 * {@link WarpTree#readlink}, {@link WarpTree#immutable}) has decided what it does with it.
 */
public sealed interface Node {

    /** What kind of file the node is. */
    enum Type { DIRECTORY, FILE, SYMLINK }

    Type type();

    /**
     * A directory below a folder of a version (a table's, an artifact's, a tensor folder's):
     * {@code dir} is its path inside that folder ({@code ""} for the folder itself, else without
     * the trailing '/'), and its children are named by {@link #child}.
     */
    sealed interface Folder extends Node {
        String dir();

        @Override
        default Type type() {
            return Type.DIRECTORY;
        }

        /** The path inside the folder of a child named {@code name}. */
        default String child(String name) {
            return dir().isEmpty() ? name : dir() + "/" + name;
        }
    }

    /** {@code /}: one directory per workspace. */
    record Root() implements Node {
        @Override
        public Type type() {
            return Type.DIRECTORY;
        }
    }

    /** {@code /<ws>}: latest, tag and branch links and version directories of the workspace's datasets. */
    record Workspace(String name) implements Node {
        @Override
        public Type type() {
            return Type.DIRECTORY;
        }
    }

    /**
     * {@code /<ws>/<name>} (latest) or {@code /<ws>/<name>@<tag or branch>}: a symlink to
     * {@code <name>@<full hash>} of the version the pointer names now.
     *
     * @param entry the link's own name in the workspace
     * @param kind  which kind of pointer it is: latest and branches move, tags do not
     */
    record Link(DatasetId dataset, String entry, Catalog.RefKind kind, VersionHash target) implements Node {
        @Override
        public Type type() {
            return Type.SYMLINK;
        }

        /** The link text: always the full 64-hex hash, so the link's size never changes. */
        public String text() {
            return dataset.name() + "@" + target.hex();
        }
    }

    /** {@code /<ws>/<name>@<hash>}: one immutable version. */
    record VersionDir(VersionTree version) implements Node {
        @Override
        public Type type() {
            return Type.DIRECTORY;
        }
    }

    /**
     * {@code <version>/<table>/<dir>}: the table's Parquet shards, and its Hive partition folders
     * ({@code dir} is {@code ""} for the table's own folder); also {@code <artifact>.tars}, the
     * WebDataset shards of an artifact as whole files ({@link VersionTree#tarFolders()}).
     */
    record TableDir(VersionTree version, String table, String dir) implements Folder {
        /** The table's own folder. */
        public TableDir(VersionTree version, String table) {
            this(version, table, "");
        }

        /** A partition folder below this one. */
        TableDir subfolder(String name) {
            return new TableDir(version, table, child(name));
        }

        /** One of the table's shards as a file: the whole blob. */
        File shard(TableShard shard) {
            return new File(version, FileContent.BlobSlice.of(shard.blob()), false);
        }
    }

    /** {@code <version>/.warp}: version metadata. */
    record MetaDir(VersionTree version) implements Node {
        @Override
        public Type type() {
            return Type.DIRECTORY;
        }

        /** {@code .warp/manifest.json}: the stored manifest's bytes. */
        File manifest() {
            return new File(version, new FileContent.Inline(version.manifestJson()), false);
        }
    }

    /**
     * {@code <version>/<artifact>/<dir>}: a directory of an artifact, the members under
     * {@code dir} ({@code ""} for the artifact itself, else a member path prefix without the
     * trailing '/').
     *
     * @param slot the artifact, as the mount numbers it: its member files' inodes are computed
     *             from the slot and their index position ({@link MemberInodes})
     */
    record MemberDir(ArtifactSlot slot, MemberIndex index, String dir) implements Folder {
        public VersionTree version() {
            return slot.version();
        }

        public String artifactName() {
            return slot.name();
        }

        public Artifact artifact() {
            return slot.artifact();
        }

        /** The subdirectory at member path prefix {@code path}. */
        MemberDir subdirectory(String path) {
            return new MemberDir(slot, index, path);
        }

        /** Member {@code i} of the index as a file. */
        File member(int i) {
            return slot.member(index, i);
        }
    }

    /**
     * {@code <version>/<artifact>/<dir>/F.tensors/<dir>}: the tensors of the safetensors member
     * {@code F.safetensors} as files ({@link TensorFolder}); {@code dir} is {@code ""} for the
     * folder itself, else a path inside it without the trailing '/'.
     *
     * The node holds where its folder comes from, not the folder: the kernel keeps directory
     * inodes as long as it likes, and a folder of 100,000 tensors (90 MB) held by one would be
     * outside the budget of {@link TensorFolders} (session 30's review, M1).
     *
     * @param slot the folder as the mount numbers it: where it comes from, its path in the
     *             version, and the number its files' inodes are computed from ({@link TensorInodes})
     */
    record TensorDir(VersionTree version, TensorInodes.Slot slot, String dir) implements Folder {
        /** The subfolder at {@code inner}. */
        TensorDir subfolder(String inner) {
            return new TensorDir(version, slot, inner);
        }

        /** The folder: kept by {@link TensorFolders}, or made again from its header. */
        TensorFolder folder() {
            return slot.folder();
        }

        /** The folder's path in the version, for messages. */
        String path() {
            return slot.path();
        }

        /** The file at {@code position} of the folder, whose content is {@code content}. */
        File tensor(int position, FileContent content) {
            return new File(version, content, false, slot.inode(position));
        }
    }

    /**
     * A regular file of a version: a table shard (a whole blob), an artifact member (a slice of
     * its tar shard), the manifest (inline bytes), or anything made of such pieces. Artifact
     * members and tensor files are the nodes whose inodes the mount computes instead of keeping
     * ({@link WarpTree#computedInode}): millions of them are listed at a time.
     *
     * @param inode its computed inode ({@link MemberInodes}, {@link TensorInodes}), or 0 when the
     *              FUSE adapter numbers it from its own table
     */
    record File(VersionTree version, FileContent content, boolean executable, long inode) implements Node {
        public File {
            if (inode != 0 && !MemberInodes.isComputed(inode)) {
                throw new IllegalArgumentException("inode " + inode + " is not a computed one");
            }
        }

        /** A file whose inode the FUSE adapter tables. */
        public File(VersionTree version, FileContent content, boolean executable) {
            this(version, content, executable, 0);
        }

        @Override
        public Type type() {
            return Type.FILE;
        }
    }
}
