package io.warpdata.vfs;

/** Receives directory entries from {@link WarpTree#list}. */
@FunctionalInterface
public interface DirectorySink {
    /**
     * Takes one entry.
     *
     * @param name the entry's name (one path component)
     * @param type the entry's type (for d_type)
     * @param nextOffset the offset to pass to {@link WarpTree#list} to continue after this entry
     * @param node the entry's node, as {@link WarpTree#lookup(Node, String)} would give it, where
     *        the listing has it at no extra cost (inside a version); null otherwise ("." and "..",
     *        the root's and workspaces' entries)
     * @return true if the sink is full and listing must stop (the entry was not taken)
     */
    boolean add(String name, Node.Type type, long nextOffset, Node node);
}
