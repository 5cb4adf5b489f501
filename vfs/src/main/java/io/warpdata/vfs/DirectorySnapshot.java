package io.warpdata.vfs;

/**
 * One directory's listing as it was when an open handle of it first read it ({@link
 * WarpTree#snapshot}): later chunks of the same listing come from the same entries.
 */
@FunctionalInterface
public interface DirectorySnapshot {
    /** Lists from {@code offset}, as {@link WarpTree#list} does. */
    void list(long offset, DirectorySink sink);
}
