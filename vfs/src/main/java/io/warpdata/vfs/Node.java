package io.warpdata.vfs;

import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.MemberIndex;
import io.warpdata.manifest.VersionHash;

/**
 * One entry of the mount tree, as {@link WarpTree#lookup(String)} resolves it. Nodes are cheap
 * values: version content hangs off a shared {@link VersionTree}, member indexes off the tree's
 * bounded index cache.
 */
public sealed interface Node {

    /** What kind of file the node is. */
    enum Type { DIRECTORY, FILE, SYMLINK }

    Type type();

    /** {@code /}: one directory per workspace. */
    record Root() implements Node {
        @Override
        public Type type() {
            return Type.DIRECTORY;
        }
    }

    /** {@code /<ws>}: latest symlinks and version directories of the workspace's datasets. */
    record Workspace(String name) implements Node {
        @Override
        public Type type() {
            return Type.DIRECTORY;
        }
    }

    /** {@code /<ws>/<name>}: symlink to {@code <name>@<full hash>} of the latest version. */
    record LatestLink(DatasetId dataset, VersionHash target) implements Node {
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

    /** {@code <version>/<table>}: the table's Parquet shards. */
    record TableDir(VersionTree version, String table) implements Node {
        @Override
        public Type type() {
            return Type.DIRECTORY;
        }
    }

    /** {@code <version>/.warp}: version metadata. */
    record MetaDir(VersionTree version) implements Node {
        @Override
        public Type type() {
            return Type.DIRECTORY;
        }
    }

    /**
     * {@code <version>/<artifact>/<dir>}: a directory of an artifact, the members whose paths
     * start with {@code prefix} ({@code ""} for the artifact itself, else ending with '/').
     */
    record MemberDir(VersionTree version, String artifact, MemberIndex index, String prefix) implements Node {
        @Override
        public Type type() {
            return Type.DIRECTORY;
        }
    }

    /**
     * A file whose bytes are {@code length} bytes of {@code blob} starting at {@code offset}:
     * a table shard (the whole blob) or an artifact member (a slice of its tar shard).
     */
    record BlobFile(VersionTree version, BlobRef blob, long offset, long length, boolean executable) implements Node {
        @Override
        public Type type() {
            return Type.FILE;
        }
    }

    /** {@code <version>/.warp/manifest.json}: the stored manifest JSON. */
    record ManifestFile(VersionTree version) implements Node {
        @Override
        public Type type() {
            return Type.FILE;
        }
    }
}
