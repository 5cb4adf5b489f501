package io.warpdata.vfs.fuse;

import io.warpdata.blobcache.Catalog;
import io.warpdata.blobcache.InMemoryBlobStore;
import io.warpdata.blobcache.cache.DirectBlobReader;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.TestVersions;
import io.warpdata.vfs.WarpTree;
import jnr.ffi.Memory;
import jnr.ffi.Platform;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.types.off_t;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The raw callbacks against jnr-fuse's own structs, through real native memory and a real native filler. */
public class RawCallbacksTest {
    private static final DatasetId MNIST = new DatasetId("vision", "mnist");

    private final Runtime runtime = Runtime.getSystemRuntime();
    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final Catalog catalog = new Catalog(store);
    private final TestVersions versions = new TestVersions(store, catalog);
    private final ExecutorService loader = Executors.newVirtualThreadPerTaskExecutor();
    private final DirectBlobReader reader = new DirectBlobReader(store);
    private final WarpFuse fuse = new WarpFuse(new WarpTree(catalog, reader, 1000, loader),
            new Errno(System::nanoTime), 1234, 5678, true);
    private final Map<String, byte[]> members = new LinkedHashMap<>();
    private String version;

    @BeforeEach
    void publish() {
        assumeTrue(RawCallbacks.layoutMatches(runtime), "x86_64 Linux layout");
        members.put("train/cat/1.png", TestVersions.bytes(300_000, 3));
        members.put("train/dog.png", TestVersions.bytes(17, 4));
        members.put("bin/run.sh", "#!/bin/sh\n".getBytes(StandardCharsets.UTF_8));
        VersionHash v = versions.publish(MNIST, Map.of("main", versions.table(Map.of("part-0.parquet",
                        TestVersions.bytes(1000, 1)))),
                Map.of("images", versions.artifact(members, Map.of("bin/run.sh", 0755), 2)),
                "2026-11-01T12:00:00Z", true);
        version = "/vision/mnist@" + v.hex();
    }

    @AfterEach
    void close() {
        loader.shutdownNow();
        reader.close();
    }

    @Test
    void theLayoutIsX8664LinuxOnExactlyThatPlatform() {
        Platform p = Platform.getNativePlatform();
        assertThat(RawCallbacks.layoutMatches(runtime))
                .isEqualTo(p.getOS() == Platform.OS.LINUX && p.getCPU() == Platform.CPU.X86_64);
    }

    @Test
    void rawGetattrWritesByteForByteWhatTheJnrFuseOverrideWrites() {
        for (String path : List.of("/", "/vision", "/vision/mnist", version, version + "/main",
                version + "/main/part-0.parquet", version + "/images", version + "/images/train",
                version + "/images/train/cat/1.png", version + "/images/bin/run.sh", version + "/.warp/manifest.json")) {
            Pointer raw = Memory.allocateDirect(runtime, RawCallbacks.STAT_SIZE, true);
            raw.setMemory(0, RawCallbacks.STAT_SIZE, (byte) 0x5a); // every byte must be written
            Pointer viaJnr = Memory.allocateDirect(runtime, RawCallbacks.STAT_SIZE, true);
            assertThat(fuse.rawGetattr(cString(path), raw)).as(path).isZero();
            assertThat(fuse.getattr(path, FileStat.of(viaJnr))).as(path).isZero();
            assertThat(bytes(raw, RawCallbacks.STAT_SIZE)).as(path).isEqualTo(bytes(viaJnr, RawCallbacks.STAT_SIZE));
        }
        Pointer st = Memory.allocateDirect(runtime, RawCallbacks.STAT_SIZE, true);
        fuse.rawGetattr(cString(version + "/images/train/cat/1.png"), st);
        FileStat stat = FileStat.of(st);
        assertThat(stat.st_size.longValue()).isEqualTo(300_000);
        assertThat(stat.st_mode.intValue()).isEqualTo(FileStat.S_IFREG | 0444);
        assertThat(stat.st_uid.longValue()).isEqualTo(1234);
        assertThat(stat.st_gid.longValue()).isEqualTo(5678);
    }

    @Test
    void rawGetattrOfAMissingPathIsEnoent() {
        Pointer st = Memory.allocateDirect(runtime, RawCallbacks.STAT_SIZE, true);
        assertThat(fuse.rawGetattr(cString(version + "/images/nope"), st)).isEqualTo(-Errno.ENOENT);
        assertThat(fuse.rawGetattr(cString("/nope"), st)).isEqualTo(-Errno.ENOENT);
    }

    @Test
    void rawReadWithoutAFileHandleFindsTheFileByItsPath() {
        String path = version + "/images/train/cat/1.png";
        Pointer fi = Memory.allocateDirect(runtime, RawCallbacks.FI_SIZE, true); // fh 0: opened without us
        Pointer buf = Memory.allocateDirect(runtime, MountOptions.MAX_READ, true);
        byte[] expected = members.get("train/cat/1.png");
        byte[] got = new byte[expected.length];
        int off = 0;
        while (off < expected.length) {
            int n = fuse.rawRead(cString(path), buf, MountOptions.MAX_READ, off, off == 0 ? null : fi);
            assertThat(n).isPositive();
            buf.get(0, got, off, n);
            off += n;
        }
        assertThat(got).isEqualTo(expected);
        assertThat(fuse.rawRead(cString(path), buf, MountOptions.MAX_READ, off, fi)).isZero();
        assertThat(fuse.rawRead(cString(version + "/images/train"), buf, 10, 0, fi)).isEqualTo(-Errno.EISDIR);
    }

    @Test
    void rawReadAndFgetattrUseAnOpenDirectorysHandle() {
        FuseFileInfo fi = FuseFileInfo.of(Memory.allocateDirect(runtime, RawCallbacks.FI_SIZE, true));
        assertThat(fuse.opendir(version + "/images/train", fi)).isZero();
        Pointer st = Memory.allocateDirect(runtime, RawCallbacks.STAT_SIZE, true);
        // the path is ignored when the handle names the node
        assertThat(fuse.rawFgetattr(cString("/nope"), st, jnr.ffi.Struct.getMemory(fi))).isZero();
        assertThat(FileStat.of(st).st_mode.intValue()).isEqualTo(FileStat.S_IFDIR | 0555);
        assertThat(fuse.releasedir(version + "/images/train", fi)).isZero();
        assertThat(fuse.openHandles()).isZero();
    }

    /** A native-callable stand-in for libfuse's fill_dir, so readdir's direct filler call is exercised for real. */
    public interface Filler {
        @Delegate
        int apply(Pointer buf, Pointer name, Pointer stat, @off_t long off);
    }

    @Test
    void rawReaddirCallsTheNativeFillerWithNamesTypesAndResumableOffsets() {
        List<String> seen = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        int[] room = {Integer.MAX_VALUE};
        Filler filler = (buf, name, stat, off) -> {
            if (room[0]-- <= 0) {
                return 1;
            }
            int mode = stat.getInt(RawCallbacks.ST_MODE) & FileStat.S_IFMT;
            seen.add(name.getString(0) + (mode == FileStat.S_IFDIR ? "/" : mode == FileStat.S_IFREG ? "" : "?"));
            offsets.add(off);
            return 0;
        };
        Pointer fillerPointer = runtime.getClosureManager().getClosurePointer(Filler.class, filler);
        Pointer dirBuf = Memory.allocateDirect(runtime, 8, true);
        assertThat(fuse.rawReaddir(cString(version + "/images"), dirBuf, fillerPointer, 0, null)).isZero();
        assertThat(seen).containsExactly("./", "../", "bin/", "train/");

        seen.clear();
        offsets.clear();
        assertThat(fuse.rawReaddir(cString(version + "/images/train"), dirBuf, fillerPointer, 0, null)).isZero();
        assertThat(seen).containsExactly("./", "../", "cat/", "dog.png");
        long afterCat = offsets.get(2);
        seen.clear();
        room[0] = 0; // libfuse's buffer is full at once: nothing more is sent
        assertThat(fuse.rawReaddir(cString(version + "/images/train"), dirBuf, fillerPointer, afterCat, null)).isZero();
        room[0] = Integer.MAX_VALUE;
        assertThat(fuse.rawReaddir(cString(version + "/images/train"), dirBuf, fillerPointer, afterCat, null)).isZero();
        assertThat(seen).containsExactly("dog.png");
        assertThat(filler).isNotNull(); // keeps the closure reachable until here
    }

    @Test
    void rawReaddirOfAFileIsEnotdir() {
        Pointer dirBuf = Memory.allocateDirect(runtime, 8, true);
        Filler filler = (buf, name, stat, off) -> 0;
        Pointer fillerPointer = runtime.getClosureManager().getClosurePointer(Filler.class, filler);
        assertThat(fuse.rawReaddir(cString(version + "/images/train/dog.png"), dirBuf, fillerPointer, 0, null))
                .isEqualTo(-Errno.ENOTDIR);
    }

    @Test
    void filesOpenWithEnosysSoThatTheKernelStopsAskingAndCloseNeedsNoFlush() {
        FuseFileInfo fi = FuseFileInfo.of(Memory.allocateDirect(runtime, RawCallbacks.FI_SIZE, true));
        assertThat(fuse.open(version + "/images/train/dog.png", fi)).isEqualTo(-Errno.ENOSYS);
        assertThat(fuse.flush(version + "/images/train/dog.png", fi)).isEqualTo(-Errno.ENOSYS);
        assertThat(fuse.openHandles()).isZero();

        WarpFuse withOpen = new WarpFuse(new WarpTree(catalog, reader, 1000, loader), new Errno(System::nanoTime),
                0, 0, false);
        assertThat(withOpen.open(version + "/images/train/dog.png", fi)).isZero();
        assertThat(fi.fh.get()).isNotZero();
        assertThat(withOpen.openHandles()).isEqualTo(1);
        assertThat(withOpen.release(version + "/images/train/dog.png", fi)).isZero();
        assertThat(withOpen.openHandles()).isZero();
    }

    private Pointer cString(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        Pointer p = Memory.allocateDirect(runtime, b.length + 1, true);
        p.put(0, b, 0, b.length);
        return p;
    }

    private static byte[] bytes(Pointer p, int n) {
        byte[] out = new byte[n];
        p.get(0, out, 0, n);
        return out;
    }
}
