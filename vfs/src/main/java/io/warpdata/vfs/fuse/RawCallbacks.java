package io.warpdata.vfs.fuse;

import com.kenai.jffi.CallContext;
import com.kenai.jffi.CallingConvention;
import com.kenai.jffi.Invoker;
import com.kenai.jffi.MemoryIO;
import com.kenai.jffi.Type;
import jnr.ffi.Memory;
import jnr.ffi.Platform;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.FuseOperations;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The hot libfuse callbacks (getattr, fgetattr, read, readdir) registered without jnr-fuse's
 * per-call wrappers. jnr-fuse registers {@code (path, stbuf) -> getattr(path, FileStat.of(stbuf))}:
 * a jnr {@link Struct} is one Java object per field, so every getattr built some twenty objects,
 * every read a {@link FuseFileInfo}, every readdir a filler proxy, and every path went through a
 * {@code CharsetDecoder}. These callbacks take the raw pointers, write {@code struct stat} and
 * read {@code fuse_file_info} at fixed offsets, and call readdir's filler through jffi directly.
 *
 * <p>The offsets are those of x86_64 Linux (glibc {@code struct stat}, libfuse 2.9's
 * {@code struct fuse_file_info}). {@link #install} first checks them against jnr-fuse's own
 * struct definitions on the running platform and installs nothing if they differ, leaving
 * jnr-fuse's (slower, portable) callbacks in place.
 *
 * <p>The interfaces are public only because jnr generates their native stubs in another class
 * loader.
 */
public final class RawCallbacks {
    /** {@code sizeof(struct stat)} and its fields (x86_64 glibc). */
    static final int STAT_SIZE = 144;
    static final int ST_NLINK = 16;
    static final int ST_MODE = 24;
    static final int ST_UID = 28;
    static final int ST_GID = 32;
    static final int ST_SIZE = 48;
    static final int ST_BLKSIZE = 56;
    static final int ST_BLOCKS = 64;
    static final int ST_ATIM = 72;
    static final int ST_MTIM = 88;
    static final int ST_CTIM = 104;
    /** {@code struct fuse_file_info} (libfuse 2.9): {@code int flags} first, {@code uint64_t fh} at 24. */
    static final int FI_SIZE = 40;
    static final int FI_FLAGS = 0;
    static final int FI_FH = 24;

    private static final MemoryIO IO = MemoryIO.getInstance();

    /** {@code int getattr(const char *path, struct stat *stbuf)}. */
    @FunctionalInterface
    public interface Getattr {
        @Delegate
        int getattr(Pointer path, Pointer stat);
    }

    /** {@code int fgetattr(const char *path, struct stat *stbuf, struct fuse_file_info *fi)}. */
    @FunctionalInterface
    public interface Fgetattr {
        @Delegate
        int fgetattr(Pointer path, Pointer stat, Pointer fi);
    }

    /** {@code int read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi)}. */
    @FunctionalInterface
    public interface Read {
        @Delegate
        int read(Pointer path, Pointer buf, @size_t long size, @off_t long offset, Pointer fi);
    }

    /** {@code int readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset, struct fuse_file_info *fi)}. */
    @FunctionalInterface
    public interface Readdir {
        @Delegate
        int readdir(Pointer path, Pointer buf, Pointer filler, @off_t long offset, Pointer fi);
    }

    /** {@code int (*fuse_fill_dir_t)(void *buf, const char *name, const struct stat *stbuf, off_t off)}. */
    private static final CallContext FILLER = CallContext.getCallContext(Type.SINT,
            new Type[] {Type.POINTER, Type.POINTER, Type.POINTER, Type.SINT64}, CallingConvention.DEFAULT, false);

    /** Strong references: a closure whose Java object is collected stops working in native code. */
    private final List<Object> keepAlive = new ArrayList<>();

    private RawCallbacks() {
    }

    /**
     * Whether this platform's {@code struct stat} and {@code struct fuse_file_info}, as jnr-fuse
     * lays them out, are the ones the constants above describe.
     */
    static boolean layoutMatches(Runtime runtime) {
        if (Platform.getNativePlatform().getOS() != Platform.OS.LINUX
                || Platform.getNativePlatform().getCPU() != Platform.CPU.X86_64) {
            return false;
        }
        Pointer scratch = Memory.allocateDirect(runtime, 256, true);
        FileStat st = FileStat.of(scratch);
        FuseFileInfo fi = FuseFileInfo.of(scratch);
        return Struct.size(st) == STAT_SIZE && st.st_nlink.offset() == ST_NLINK && st.st_mode.offset() == ST_MODE
                && st.st_uid.offset() == ST_UID && st.st_gid.offset() == ST_GID && st.st_size.offset() == ST_SIZE
                && st.st_blksize.offset() == ST_BLKSIZE && st.st_blocks.offset() == ST_BLOCKS
                && st.st_atim.tv_sec.offset() == ST_ATIM && st.st_atim.tv_nsec.offset() == ST_ATIM + 8
                && st.st_mtim.tv_sec.offset() == ST_MTIM && st.st_ctim.tv_sec.offset() == ST_CTIM
                && Struct.size(fi) == FI_SIZE && fi.flags.offset() == FI_FLAGS && fi.fh.offset() == FI_FH;
    }

    /**
     * Registers the raw callbacks of {@code fuse} in {@code ops} (before libfuse sees the
     * struct), replacing jnr-fuse's registrations of the same operations.
     *
     * @return what keeps the callbacks alive (hold it as long as the mount), or null if nothing
     *         was installed because this platform's layout differs
     */
    static RawCallbacks install(FuseOperations ops, WarpFuse fuse) {
        Runtime runtime = Runtime.getSystemRuntime();
        if (!layoutMatches(runtime)) {
            return null;
        }
        RawCallbacks raw = new RawCallbacks();
        Pointer table = Struct.getMemory(ops);
        raw.put(runtime, table, Offsets.of(ops.getattr), Getattr.class, (Getattr) fuse::rawGetattr);
        raw.put(runtime, table, Offsets.of(ops.fgetattr), Fgetattr.class, (Fgetattr) fuse::rawFgetattr);
        raw.put(runtime, table, Offsets.of(ops.read), Read.class, (Read) fuse::rawRead);
        raw.put(runtime, table, Offsets.of(ops.readdir), Readdir.class, (Readdir) fuse::rawReaddir);
        return raw;
    }

    private <T> void put(Runtime runtime, Pointer table, long offset, Class<T> type, T callback) {
        Pointer closure = runtime.getClosureManager().getClosurePointer(type, callback);
        keepAlive.add(callback);
        keepAlive.add(closure);
        table.putPointer(offset, closure);
    }

    /** Longest path read through a thread's buffer; longer ones (never seen in practice) allocate. */
    private static final int PATH_BUFFER = 4096;
    /** One buffer per FUSE thread for the path bytes: decoding a path allocates only the String. */
    private static final ThreadLocal<byte[]> PATH_BYTES = ThreadLocal.withInitial(() -> new byte[PATH_BUFFER]);

    /**
     * The NUL-terminated UTF-8 string at {@code p}, or null for a null pointer. Read byte by byte
     * through {@link MemoryIO} (Unsafe, no JNI call), which for paths of a few dozen bytes is
     * cheaper than a native strlen plus copy.
     */
    static String string(Pointer p) {
        if (p == null || p.address() == 0) {
            return null;
        }
        long a = p.address();
        byte[] buf = PATH_BYTES.get();
        for (int n = 0; n < buf.length; n++) {
            byte b = IO.getByte(a + n);
            if (b == 0) {
                return new String(buf, 0, n, StandardCharsets.UTF_8);
            }
            buf[n] = b;
        }
        return new String(IO.getZeroTerminatedByteArray(a), StandardCharsets.UTF_8);
    }

    /** {@code fi->fh}, or 0 without a file info. */
    static long fileHandle(Pointer fi) {
        return fi == null || fi.address() == 0 ? 0 : IO.getLong(fi.address() + FI_FH);
    }

    /** Writes {@code struct stat}: the fields a read-only tree has, zero elsewhere. */
    static void writeStat(Pointer stat, int mode, long nlink, long size, int blksize, long uid, long gid,
                          long mtimeSeconds) {
        long a = stat.address();
        IO.setMemory(a, STAT_SIZE, (byte) 0);
        IO.putLong(a + ST_NLINK, nlink);
        IO.putInt(a + ST_MODE, mode);
        IO.putInt(a + ST_UID, (int) uid);
        IO.putInt(a + ST_GID, (int) gid);
        IO.putLong(a + ST_SIZE, size);
        IO.putLong(a + ST_BLKSIZE, blksize);
        IO.putLong(a + ST_BLOCKS, (size + 511) / 512);
        IO.putLong(a + ST_ATIM, mtimeSeconds);
        IO.putLong(a + ST_ATIM + 8, 0);
        IO.putLong(a + ST_MTIM, mtimeSeconds);
        IO.putLong(a + ST_MTIM + 8, 0);
        IO.putLong(a + ST_CTIM, mtimeSeconds);
        IO.putLong(a + ST_CTIM + 8, 0);
    }

    /**
     * One FUSE thread's scratch for readdir: a {@code struct stat} whose only meaningful field is
     * the file type bits (libfuse copies it; the kernel uses it for {@code d_type}), followed by
     * room for one NUL-terminated entry name. Grown when a name does not fit.
     */
    static final class DirentScratch {
        private Pointer memory;
        private long address;
        private long capacity;

        DirentScratch(Runtime runtime) {
            grow(runtime, 1024);
        }

        private void grow(Runtime runtime, long nameBytes) {
            capacity = STAT_SIZE + nameBytes + 1;
            memory = Memory.allocateDirect(runtime, (int) capacity, true);
            address = memory.address();
        }

        /**
         * Calls {@code filler(buf, name, stat, next)} with {@code name} and the type bits.
         *
         * @return the filler's answer: nonzero when libfuse's buffer is full
         */
        int fill(long filler, long buf, String name, int typeBits, long next) {
            byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
            if (STAT_SIZE + utf8.length + 1L > capacity) {
                grow(Runtime.getSystemRuntime(), Math.max(utf8.length, 2 * (capacity - STAT_SIZE)));
            }
            IO.putInt(address + ST_MODE, typeBits);
            IO.putByteArray(address + STAT_SIZE, utf8, 0, utf8.length);
            IO.putByte(address + STAT_SIZE + utf8.length, (byte) 0);
            return (int) Invoker.getInstance().invokeN4(FILLER, filler, buf, address + STAT_SIZE, address, next);
        }

        /** Keeps the memory reachable for as long as this scratch is (it is freed with it). */
        Pointer memory() {
            return memory;
        }
    }

    /** Field offsets of jnr structs, which only a {@link Struct} subclass may read. */
    private static final class Offsets extends Struct {
        private Offsets() {
            super(Runtime.getSystemRuntime());
        }

        static long of(Struct.Member member) {
            return ((AbstractMember) member).offset();
        }
    }
}
