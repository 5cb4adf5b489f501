package io.warpdata.vfs.fuse;

import io.warpdata.blobcache.cache.BlobReader;
import io.warpdata.blobcache.cache.DirectBlobReader;
import io.warpdata.catalog.Catalog;
import io.warpdata.manifest.BlobRef;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.TestVersions;
import io.warpdata.vfs.WarpTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static io.warpdata.vfs.fuse.FuseAbi.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Passthrough opens as the kernel sees them: INIT asks for them where offered, a whole file with
 * a local copy opens onto one backing id per inode, and an inode never mixes cached and
 * passthrough opens (the kernel would fail the open with ETXTBSY or EBUSY).
 */
class PassthroughTest {
    private static final DatasetId DS = new DatasetId("tables", "events");
    private static final Path COPY = Path.of("/cache/v1/copies/abc");

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final Catalog catalog = new Catalog(store);
    private final TestVersions versions = new TestVersions(store, catalog);
    private final ExecutorService loader = Executors.newVirtualThreadPerTaskExecutor();
    private final DirectBlobReader direct = new DirectBlobReader(store);
    /** Blobs asked for a copy, in order; whether a copy is "ready". */
    private final List<BlobRef> asked = new ArrayList<>();
    private volatile boolean copyReady = true;
    private final List<BlobRef> closedBlobs = new ArrayList<>();
    private final BlobReader reader = new BlobReader() {
        @Override
        public int read(BlobRef blob, long offset, byte[] dst, int dstOff, int len) {
            return direct.read(blob, offset, dst, dstOff, len);
        }

        @Override
        public Path localCopy(BlobRef blob) {
            asked.add(blob);
            return copyReady ? COPY : null;
        }

        @Override
        public void closed(BlobRef blob) {
            closedBlobs.add(blob);
        }

        @Override
        public io.warpdata.blobcache.cache.ReadMetrics metrics() {
            return direct.metrics();
        }

        @Override
        public void close() {
        }
    };
    private final WarpFuse fuse = new WarpFuse(new WarpTree(catalog, reader, 1000, loader),
            new Errno(System::nanoTime), 0, 0, true);
    private final List<String> backingCalls = new ArrayList<>();
    private int nextBackingId = 7;
    /** What the next openBacking answers instead of an id (0: an id). */
    private int backingError;
    private final FuseChannel channel = new FuseChannel() {
        @Override
        public int send(ByteBuffer buf, int len) {
            ByteBuffer copy = ByteBuffer.allocate(len).order(ByteOrder.nativeOrder());
            copy.put(0, buf, 0, len);
            sent.add(copy);
            return 0;
        }

        @Override
        public int openBacking(Path file) {
            backingCalls.add("open " + file);
            return backingError != 0 ? -backingError : nextBackingId++;
        }

        @Override
        public int closeBacking(int id) {
            backingCalls.add("close " + id);
            return 0;
        }
    };
    private final List<ByteBuffer> sent = new ArrayList<>();
    private final ByteBuffer out = ByteBuffer.allocateDirect(FuseServer.REPLY_BUFFER).order(ByteOrder.nativeOrder());
    private long unique = 1;
    private String version;

    @BeforeEach
    void publish() {
        VersionHash v = versions.publish(DS, Map.of("main", versions.table(Map.of("part-0.parquet",
                        TestVersions.bytes(200_000, 1)))),
                Map.of("images", versions.artifact(Map.of("a/1.png", TestVersions.bytes(100_000, 2)), Map.of(), 1)),
                "2026-11-01T12:00:00Z", true);
        version = "events@" + v.hex();
    }

    @AfterEach
    void close() {
        loader.shutdownNow();
        direct.close();
    }

    @Test
    void initAsksForPassthroughOnlyWhereTheKernelOffersItAndSaysHowDeepItStacks() {
        fuse.askPassthrough(true);
        ByteBuffer r = call(INIT, 0, initBody(7, 41, WarpFuse.WANTED | INIT_EXT, PASSTHROUGH_FLAGS2));
        assertThat(r.getInt(OUT_ERROR)).isZero();
        assertThat(r.getInt(OUT_HEADER + INIT_OUT_FLAGS)).isEqualTo(WarpFuse.WANTED | INIT_EXT);
        assertThat(r.getInt(OUT_HEADER + INIT_OUT_FLAGS2)).isEqualTo(PASSTHROUGH_FLAGS2);
        assertThat(r.getInt(OUT_HEADER + INIT_OUT_MAX_STACK_DEPTH)).isEqualTo(1);
        assertThat(fuse.passthrough()).isTrue();
        assertThat(fuse.passthroughState()).isEqualTo("on");
        assertThat(fuse.passthroughReason()).isEmpty();

        WarpFuse notOffered = new WarpFuse(new WarpTree(catalog, reader, 1000, loader), new Errno(System::nanoTime), 0,
                0, true);
        notOffered.askPassthrough(true);
        ByteBuffer r2 = call(notOffered, INIT, 0, initBody(7, 41, WarpFuse.WANTED | INIT_EXT, 0));
        assertThat(r2.getInt(OUT_HEADER + INIT_OUT_FLAGS)).isEqualTo(WarpFuse.WANTED);
        assertThat(r2.getInt(OUT_HEADER + INIT_OUT_FLAGS2)).isZero();
        assertThat(notOffered.passthrough()).isFalse();
        assertThat(notOffered.passthroughState()).isEqualTo("unavailable");
        assertThat(notOffered.passthroughReason()).contains("Linux 6.9", "CONFIG_FUSE_PASSTHROUGH");
        // Without passthrough, files open without a round trip, as before.
        assertThat(call(notOffered, OPEN, file(notOffered), new byte[8]).getInt(OUT_ERROR)).isEqualTo(-Errno.ENOSYS);

        WarpFuse notAsked = new WarpFuse(new WarpTree(catalog, reader, 1000, loader), new Errno(System::nanoTime), 0,
                0, true);
        ByteBuffer r3 = call(notAsked, INIT, 0, initBody(7, 41, WarpFuse.WANTED | INIT_EXT, PASSTHROUGH_FLAGS2));
        assertThat(r3.getInt(OUT_HEADER + INIT_OUT_FLAGS2)).isZero();
        assertThat(notAsked.passthrough()).isFalse();
        assertThat(notAsked.passthroughState()).isEqualTo("off");
    }

    @Test
    void opensOfOneFileShareOneBackingIdWhichIsClosedAtTheLastRelease() {
        granted();
        long file = file(fuse);
        ByteBuffer a = call(OPEN, file, new byte[8]);
        ByteBuffer b = call(OPEN, file, new byte[8]);
        for (ByteBuffer r : List.of(a, b)) {
            assertThat(r.getInt(OUT_ERROR)).isZero();
            assertThat(r.getInt(OUT_HEADER + OPEN_OUT_FLAGS)).isEqualTo(FOPEN_PASSTHROUGH); // no KEEP_CACHE: EINVAL
            assertThat(r.getInt(OUT_HEADER + OPEN_OUT_BACKING_ID)).isEqualTo(7);
            assertThat(r.getLong(OUT_HEADER + OPEN_OUT_FH)).isEqualTo(Backings.FH_PASSTHROUGH);
        }
        assertThat(backingCalls).containsExactly("open " + COPY);
        release(file, Backings.FH_PASSTHROUGH);
        assertThat(backingCalls).containsExactly("open " + COPY);
        release(file, Backings.FH_PASSTHROUGH);
        assertThat(backingCalls).containsExactly("open " + COPY, "close 7");
        assertThat(closedBlobs).as("passthrough closes are not the reader's").isEmpty();
        assertThat(fuse.passthroughOpens()).isEqualTo(2);
        // Opened again later: a new backing id.
        assertThat(call(OPEN, file, new byte[8]).getInt(OUT_HEADER + OPEN_OUT_BACKING_ID)).isEqualTo(8);
    }

    @Test
    void aFileOpenCachedStaysCachedUntilItsLastCachedOpenIsReleased() {
        granted();
        long file = file(fuse);
        copyReady = false;
        ByteBuffer first = call(OPEN, file, new byte[8]);
        assertThat(first.getInt(OUT_HEADER + OPEN_OUT_FLAGS)).isEqualTo(FOPEN_KEEP_CACHE);
        assertThat(first.getLong(OUT_HEADER + OPEN_OUT_FH)).isEqualTo(Backings.FH_CACHED);
        copyReady = true;
        // The kernel holds the inode in cached mode: a passthrough open now would fail with ETXTBSY.
        ByteBuffer second = call(OPEN, file, new byte[8]);
        assertThat(second.getInt(OUT_HEADER + OPEN_OUT_FLAGS)).isEqualTo(FOPEN_KEEP_CACHE);
        assertThat(backingCalls).isEmpty();
        release(file, Backings.FH_CACHED);
        assertThat(closedBlobs).as("a file read through warpd, closed: the reader may copy it now")
                .containsExactly(asked.get(0));
        assertThat(call(OPEN, file, new byte[8]).getInt(OUT_HEADER + OPEN_OUT_FLAGS)).isEqualTo(FOPEN_KEEP_CACHE);
        release(file, Backings.FH_CACHED);
        release(file, Backings.FH_CACHED);
        ByteBuffer pass = call(OPEN, file, new byte[8]);
        assertThat(pass.getInt(OUT_HEADER + OPEN_OUT_FLAGS)).isEqualTo(FOPEN_PASSTHROUGH);
        assertThat(backingCalls).containsExactly("open " + COPY);
    }

    @Test
    void membersAreNeverAskedForACopyNorCounted() {
        granted();
        long member = lookupPath(fuse, "images", "a", "1.png");
        ByteBuffer r = call(OPEN, member, new byte[8]);
        assertThat(r.getInt(OUT_HEADER + OPEN_OUT_FLAGS)).isEqualTo(FOPEN_KEEP_CACHE);
        assertThat(r.getLong(OUT_HEADER + OPEN_OUT_FH)).isZero();
        assertThat(asked).isEmpty();
        assertThat(call(RELEASE, member, new byte[24]).getInt(OUT_ERROR)).isZero();
        assertThat(backingCalls).isEmpty();
    }

    @Test
    void aCopyDeletedMeanwhileOpensCachedAndIsTriedAgainNextTime() {
        granted();
        long file = file(fuse);
        backingError = Errno.ENOENT;
        assertThat(call(OPEN, file, new byte[8]).getInt(OUT_HEADER + OPEN_OUT_FLAGS)).isEqualTo(FOPEN_KEEP_CACHE);
        release(file, Backings.FH_CACHED);
        backingError = 0;
        assertThat(call(OPEN, file, new byte[8]).getInt(OUT_HEADER + OPEN_OUT_FLAGS)).isEqualTo(FOPEN_PASSTHROUGH);
    }

    @Test
    void aKernelThatRefusesBackingFilesGetsFilesOpenedWithoutARoundTripFromThenOn() {
        granted();
        long file = file(fuse);
        backingError = Errno.EPERM;
        ByteBuffer r = call(OPEN, file, new byte[8]);
        assertThat(r.getInt(OUT_ERROR)).isZero();
        assertThat(r.getInt(OUT_HEADER + OPEN_OUT_FLAGS)).isEqualTo(FOPEN_KEEP_CACHE);
        // ENOSYS: the kernel opens this file itself, and every later one (no_open).
        assertThat(call(OPEN, file, new byte[8]).getInt(OUT_ERROR)).isEqualTo(-Errno.ENOSYS);
        assertThat(fuse.passthrough()).isFalse();
        assertThat(fuse.passthroughState()).isEqualTo("stopped");
        assertThat(fuse.passthroughReason()).contains("errno " + Errno.EPERM, "CAP_SYS_ADMIN");
        assertThat(backingCalls).containsExactly("open " + COPY);
    }

    // ---- helpers ----

    private void granted() {
        fuse.askPassthrough(true);
        call(INIT, 0, initBody(7, 41, WarpFuse.WANTED | INIT_EXT, PASSTHROUGH_FLAGS2));
        assertThat(fuse.passthrough()).isTrue();
    }

    private long file(WarpFuse fs) {
        return lookupPath(fs, "main", "part-0.parquet");
    }

    private long lookupPath(WarpFuse fs, String... names) {
        long n = lookup(fs, lookup(fs, ROOT_ID, "tables"), version);
        for (String name : names) {
            n = lookup(fs, n, name);
        }
        return n;
    }

    private long lookup(WarpFuse fs, long parent, String name) {
        ByteBuffer r = call(fs, LOOKUP, parent, cString(name));
        assertThat(r.getInt(OUT_ERROR)).as(name).isZero();
        return r.getLong(OUT_HEADER + ENTRY_NODEID);
    }

    private void release(long nodeid, long fh) {
        ByteBuffer b = ByteBuffer.allocate(24).order(ByteOrder.nativeOrder());
        b.putLong(0, fh);
        assertThat(call(RELEASE, nodeid, b.array()).getInt(OUT_ERROR)).isZero();
    }

    private ByteBuffer call(int opcode, long nodeid, byte[] body) {
        return call(fuse, opcode, nodeid, body);
    }

    private ByteBuffer call(WarpFuse fs, int opcode, long nodeid, byte[] body) {
        ByteBuffer in = ByteBuffer.allocateDirect(IN_HEADER + body.length).order(ByteOrder.nativeOrder());
        in.putInt(IN_LEN, in.capacity()).putInt(IN_OPCODE, opcode).putLong(IN_UNIQUE, unique++)
                .putLong(IN_NODEID, nodeid);
        in.put(IN_HEADER, body);
        int before = sent.size();
        fs.serve(in, out, channel);
        assertThat(sent).hasSize(before + 1);
        return sent.get(before);
    }

    private static byte[] initBody(int major, int minor, int flags, int flags2) {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder());
        b.putInt(0, major).putInt(4, minor).putInt(8, 1 << 20).putInt(12, flags).putInt(16, flags2);
        return b.array();
    }

    private static byte[] cString(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return java.util.Arrays.copyOf(b, b.length + 1);
    }
}
