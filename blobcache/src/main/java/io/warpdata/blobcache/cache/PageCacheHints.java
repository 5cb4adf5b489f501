package io.warpdata.blobcache.cache;

import java.nio.file.Path;
import jnr.ffi.LibraryLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the kernel to read block files into its page cache before they are read
 * ({@code posix_fadvise(POSIX_FADV_WILLNEED)}): the kernel starts the disk reads and returns.
 *
 * <p>A local file read in order gets this from the kernel's read-ahead, which reads the next
 * part of the file while the reader copies the last. A blob read from the disk cache is a
 * chain of 1 MiB block files, and read-ahead stops at each file's end, so every block's first
 * read waited for the disk. Read-ahead ({@link ReadAhead}) already knows which blocks a
 * sequential reader wants next; those that are cached get this hint instead of a fetch.
 *
 * <p>Costs an {@code open}, the advice and a {@code close} per block hinted (a few
 * microseconds; nothing when the pages are already cached, beyond the lookup). Where libc
 * cannot be loaded, hints are skipped: reads are as before.
 */
final class PageCacheHints {
    private static final Logger LOG = LoggerFactory.getLogger(PageCacheHints.class);
    private static final int O_RDONLY_CLOEXEC = 02000000;
    private static final int POSIX_FADV_WILLNEED = 3;

    /** The three libc calls a hint makes. */
    public interface LibC {
        int open(String path, int flags);

        int posix_fadvise(int fd, long offset, long len, int advice);

        int close(int fd);
    }

    /** Hints nothing: for tests, and where libc is not there. */
    static final PageCacheHints NONE = new PageCacheHints(null);

    private final LibC libc;

    private PageCacheHints(LibC libc) {
        this.libc = libc;
    }

    /** Loads libc at the first hint of the process (the JVM's lazy class init; no lock of ours). */
    private static final class Shared {
        static final PageCacheHints INSTANCE = load();
    }

    /** The process's hints, loaded at first use. */
    static PageCacheHints shared() {
        return Shared.INSTANCE;
    }

    /** Hints through libc; {@link #NONE} if it cannot be loaded. */
    static PageCacheHints load() {
        try {
            return new PageCacheHints(LibraryLoader.create(LibC.class).failImmediately().load("c"));
        } catch (LinkageError | RuntimeException e) {
            LOG.info("Block files will not be read ahead into the page cache: libc's posix_fadvise is not available ({})",
                    e.toString());
            return NONE;
        }
    }

    /**
     * Starts reading {@code file} into the page cache; returns at once.
     *
     * @return whether the kernel took the advice (false: no such file, e.g. evicted meanwhile, whose
     *         read will then be a miss as without the hint; or no libc)
     */
    boolean willNeed(Path file) {
        if (libc == null) {
            return false;
        }
        int fd = libc.open(file.toString(), O_RDONLY_CLOEXEC);
        if (fd < 0) {
            return false;
        }
        try {
            return libc.posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED) == 0;
        } finally {
            libc.close(fd);
        }
    }
}
