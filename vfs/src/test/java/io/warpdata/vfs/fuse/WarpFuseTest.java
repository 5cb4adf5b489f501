package io.warpdata.vfs.fuse;

import io.warpdata.catalog.Catalog;
import io.warpdata.store.InMemoryBlobStore;
import io.warpdata.blobcache.cache.DirectBlobReader;
import io.warpdata.manifest.DatasetId;
import io.warpdata.manifest.VersionHash;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.TestVersions;
import io.warpdata.vfs.WarpTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static io.warpdata.vfs.fuse.FuseAbi.*;
import static org.assertj.core.api.Assertions.assertThat;

/** The FUSE protocol as the kernel speaks it: request bytes in, reply bytes out, no mount. */
class WarpFuseTest {
    private static final DatasetId MNIST = new DatasetId("vision", "mnist");
    private static final int ALL_FLAGS = 0xffffffff;

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final Catalog catalog = new Catalog(store);
    private final TestVersions versions = new TestVersions(store, catalog);
    private final ExecutorService loader = Executors.newVirtualThreadPerTaskExecutor();
    private final DirectBlobReader reader = new DirectBlobReader(store);
    private final java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong(1_000_000_000L);
    private final WarpFuse fuse = new WarpFuse(new WarpTree(catalog, reader, 1000, loader),
            new Errno(System::nanoTime), 1234, 5678, true, nanos::get);
    private final Map<String, byte[]> members = new LinkedHashMap<>();
    private final List<ByteBuffer> sent = new ArrayList<>();
    private final FuseChannel channel = (buf, len) -> {
        ByteBuffer copy = ByteBuffer.allocate(len).order(ByteOrder.nativeOrder());
        copy.put(0, buf, 0, len);
        sent.add(copy);
        return 0;
    };
    private final ByteBuffer out = ByteBuffer.allocateDirect(FuseServer.REPLY_BUFFER).order(ByteOrder.nativeOrder());
    private long unique = 100;
    private String version;

    @BeforeEach
    void publish() {
        members.put("train/cat/1.png", TestVersions.bytes(3_000_000, 3));
        members.put("train/dog.png", TestVersions.bytes(17, 4));
        members.put("bin/run.sh", "#!/bin/sh\n".getBytes(StandardCharsets.UTF_8));
        VersionHash v = versions.publish(MNIST, Map.of("main", versions.table(Map.of("part-0.parquet",
                        TestVersions.bytes(1000, 1)))),
                Map.of("images", versions.artifact(members, Map.of("bin/run.sh", 0755), 2)),
                "2026-11-01T12:00:00Z", true);
        version = "mnist@" + v.hex();
        init(7, 40, ALL_FLAGS);
    }

    @AfterEach
    void close() {
        loader.shutdownNow();
        reader.close();
    }

    // ---- INIT ----

    @Test
    void initGrantsWhatWarpWantsOfWhatTheKernelOffersAtMinor31() {
        WarpFuse fresh = new WarpFuse(new WarpTree(catalog, reader, 1000, loader), new Errno(System::nanoTime), 0, 0);
        assertThat(fresh.maxReadBytes()).isZero();
        Reply r = call(fresh, INIT, 0, initBody(7, 40, ALL_FLAGS, 4 << 20));
        assertThat(r.error()).isZero();
        assertThat(r.body().remaining()).isEqualTo(INIT_OUT_SIZE);
        assertThat(r.intAt(INIT_OUT_MAJOR)).isEqualTo(7);
        assertThat(r.intAt(INIT_OUT_MINOR)).isEqualTo(31);
        assertThat(r.intAt(INIT_OUT_FLAGS)).isEqualTo(WarpFuse.WANTED);
        assertThat(r.intAt(INIT_OUT_MAX_READAHEAD)).isEqualTo(MountOptions.MAX_READAHEAD);
        assertThat(r.shortAt(INIT_OUT_MAX_PAGES)).isEqualTo((short) 256);
        assertThat(r.shortAt(INIT_OUT_MAX_BACKGROUND)).isEqualTo((short) WarpFuse.MAX_BACKGROUND);
        assertThat(fresh.maxReadBytes()).isEqualTo(1 << 20);
        assertThat(fresh.kernelCachesLinks()).isTrue();
        assertThat(fresh.readdirPlus()).isTrue();
    }

    @Test
    void anOlderKernelGetsOnlyWhatItOfferedAndItsOwnMinor() {
        WarpFuse fresh = new WarpFuse(new WarpTree(catalog, reader, 1000, loader), new Errno(System::nanoTime), 0, 0);
        Reply r = call(fresh, INIT, 0, initBody(7, 22, ASYNC_READ | DO_READDIRPLUS, 128 << 10));
        assertThat(r.intAt(INIT_OUT_MINOR)).isEqualTo(22);
        assertThat(r.body().remaining()).isEqualTo(INIT_OUT_SIZE_COMPAT_22);
        assertThat(r.intAt(INIT_OUT_FLAGS)).isEqualTo(ASYNC_READ | DO_READDIRPLUS);
        assertThat(r.intAt(INIT_OUT_MAX_READAHEAD)).isEqualTo(128 << 10);
        assertThat(fresh.maxReadBytes()).isEqualTo(128 << 10);
        assertThat(fresh.kernelCachesLinks()).isFalse();
    }

    @Test
    void aNewerMajorIsAskedForOursAndAnAncientKernelIsRefused() {
        WarpFuse fresh = new WarpFuse(new WarpTree(catalog, reader, 1000, loader), new Errno(System::nanoTime), 0, 0);
        Reply newer = call(fresh, INIT, 0, initBody(8, 0, ALL_FLAGS, 0));
        assertThat(newer.error()).isZero();
        assertThat(newer.intAt(INIT_OUT_MAJOR)).isEqualTo(7);
        assertThat(fresh.maxReadBytes()).isZero(); // not initialized yet: the kernel asks again
        assertThat(call(fresh, INIT, 0, initBody(7, 12, ALL_FLAGS, 0)).error()).isEqualTo(-71); // EPROTO
    }

    // ---- lookups, attributes, forgets ----

    @Test
    void lookupsWalkTheTreeAndGiveOneNodePerPathWithItsAttributes() {
        long ws = lookup(ROOT_ID, "vision");
        long v = lookup(ws, version);
        long file = lookup(lookup(lookup(lookup(v, "images"), "train"), "cat"), "1.png");
        Reply e = call(LOOKUP, lookup(lookup(v, "images"), "train"), cString("dog.png"));
        assertThat(e.error()).isZero();
        assertThat(e.longAt(ENTRY_VALID)).isEqualTo(MountOptions.DEFAULT_TIMEOUT_SECONDS);
        assertThat(e.intAt(ENTRY_ATTR + ATTR_MODE)).isEqualTo(0100444);
        assertThat(e.longAt(ENTRY_ATTR + ATTR_SIZE)).isEqualTo(17);
        assertThat(e.intAt(ENTRY_ATTR + ATTR_UID)).isEqualTo(1234);
        assertThat(e.intAt(ENTRY_ATTR + ATTR_GID)).isEqualTo(5678);
        assertThat(e.longAt(ENTRY_ATTR + ATTR_INO)).isEqualTo(e.longAt(ENTRY_NODEID));

        assertThat(lookup(lookup(lookup(lookup(v, "images"), "train"), "cat"), "1.png")).isEqualTo(file);
        Reply attr = call(GETATTR, file, new byte[16]);
        assertThat(attr.longAt(ATTR_OUT_ATTR + ATTR_SIZE)).isEqualTo(3_000_000);
        assertThat(attr.intAt(ATTR_OUT_ATTR + ATTR_BLKSIZE)).isEqualTo(WarpFuse.BLOCK_SIZE);
        assertThat(call(GETATTR, lookup(v, "images"), new byte[16]).intAt(ATTR_OUT_ATTR + ATTR_MODE))
                .isEqualTo(040555);
        assertThat(call(LOOKUP, v, cString("nope")).error()).isEqualTo(-Errno.ENOENT);
        assertThat(call(LOOKUP, ws, cString("mnist@00000000")).error()).isEqualTo(-Errno.ENOENT);
    }

    @Test
    void forgetGivesLookupsBackAndTheNodeGoesAtZero() {
        long ws = lookup(ROOT_ID, "vision");
        int before = fuse.kernelInodes();
        long v = lookup(ws, version);
        lookup(ws, version);
        assertThat(fuse.kernelInodes()).isEqualTo(before + 1);
        assertThat(call(FORGET, v, longs(1))).isNull(); // no reply to FORGET
        assertThat(call(GETATTR, v, new byte[16]).error()).isZero();
        assertThat(call(BATCH_FORGET, 0, batch(v, 1))).isNull();
        assertThat(fuse.kernelInodes()).isEqualTo(before);
        assertThat(call(GETATTR, v, new byte[16]).error()).isEqualTo(-116); // ESTALE
        assertThat(lookup(ws, version)).isNotEqualTo(v); // ids are never reused
        assertThat(fuse.requests()).containsEntry("forget", 2L).containsEntry("init", 1L).containsKey("lookup");
    }

    // ---- reads ----

    @Test
    void readsFindTheFileByNodeIdInChunksUpToTheRequestSize() {
        long file = path("images", "train", "cat", "1.png");
        byte[] expected = members.get("train/cat/1.png");
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        int size = 1 << 20;
        while (true) {
            Reply r = call(READ, file, readIn(got.size(), size));
            assertThat(r.error()).isZero();
            byte[] b = r.bytes();
            assertThat(b.length).isLessThanOrEqualTo(size);
            if (b.length == 0) {
                break;
            }
            got.writeBytes(b);
        }
        assertThat(got.toByteArray()).isEqualTo(expected);
        // an unaligned read in the middle
        assertThat(call(READ, file, readIn(123_457, 1000)).bytes())
                .isEqualTo(java.util.Arrays.copyOfRange(expected, 123_457, 124_457));
        assertThat(call(READ, path("images", "train"), readIn(0, 10)).error()).isEqualTo(-Errno.EISDIR);
        assertThat(call(READ, path(".warp", "manifest.json"), readIn(0, 1)).bytes()).containsExactly('{');
    }

    @Test
    void filesOpenWithEnosysAndWritesAreReadOnly() {
        long file = path("images", "train", "dog.png");
        assertThat(call(OPEN, file, new byte[8]).error()).isEqualTo(-Errno.ENOSYS);
        WarpFuse withOpen = new WarpFuse(new WarpTree(catalog, reader, 1000, loader), new Errno(System::nanoTime),
                0, 0, false);
        long f2 = lookup(withOpen, lookup(withOpen, lookup(withOpen, lookup(withOpen, lookup(withOpen,
                ROOT_ID, "vision"), version), "images"), "train"), "dog.png");
        Reply open = call(withOpen, OPEN, f2, new byte[8]);
        assertThat(open.error()).isZero();
        assertThat(open.intAt(OPEN_OUT_FLAGS) & FOPEN_KEEP_CACHE).isNotZero();
        assertThat(call(withOpen, OPEN, f2, ints(1, 0)).error()).isEqualTo(-Errno.EROFS); // O_WRONLY
        for (int op : new int[] {SETATTR, SYMLINK, MKNOD, MKDIR, UNLINK, RMDIR, RENAME, LINK, WRITE, SETXATTR,
                REMOVEXATTR, CREATE, FALLOCATE, RENAME2, COPY_FILE_RANGE, TMPFILE}) {
            assertThat(call(op, file, new byte[64]).error()).as("opcode %d", op).isEqualTo(-Errno.EROFS);
        }
        for (int op : new int[] {FLUSH, FSYNC, FSYNCDIR, GETXATTR, LISTXATTR, ACCESS, INTERRUPT, 40, 46, 52}) {
            assertThat(call(op, file, new byte[64]).error()).as("opcode %d", op).isEqualTo(-Errno.ENOSYS);
        }
        assertThat(call(IOCTL, file, new byte[64]).error()).isEqualTo(-25); // ENOTTY: "not a terminal"
        assertThat(call(STATFS, file, new byte[0]).intAt(STATFS_BSIZE)).isEqualTo(WarpFuse.BLOCK_SIZE);
    }

    // ---- listings ----

    @Test
    void readdirListsNamesTypesAndResumableOffsets() {
        long train = path("images", "train");
        List<Dirent> all = dirents(call(READDIR, train, readIn(0, 4096)), false);
        assertThat(all).extracting(Dirent::name).containsExactly(".", "..", "cat", "dog.png");
        assertThat(all).extracting(Dirent::type).containsExactly(4, 4, 4, 8);
        List<Dirent> rest = dirents(call(READDIR, train, readIn(all.get(2).off(), 4096)), false);
        assertThat(rest).extracting(Dirent::name).containsExactly("dog.png");
        // a buffer too small for the next entry ends the chunk before it
        assertThat(dirents(call(READDIR, train, readIn(0, 64)), false)).extracting(Dirent::name)
                .containsExactly(".", "..");
        assertThat(call(READDIR, path("images", "train", "dog.png"), readIn(0, 4096)).error())
                .isEqualTo(-Errno.ENOTDIR);
    }

    @Test
    void membersNobodyLooksUpAreListedAsDirentsAloneWithTheInodesALookupGives() {
        long train = path("images", "train");
        int before = fuse.kernelInodes();
        List<Dirent> bare = dirents(call(READDIRPLUS, train, readIn(0, 4096)), true);
        assertThat(bare).extracting(Dirent::name).containsExactly(".", "..", "cat", "dog.png");
        Dirent dog = bare.get(3);
        assertThat(dog.nodeid()).as("no inode for the kernel to build").isZero();
        assertThat(dog.size()).isZero();
        assertThat(dog.type()).isEqualTo(8); // DT_REG: what find -type f reads
        assertThat(WarpTree.isComputedInode(dog.ino())).isTrue();
        assertThat(bare.get(2).nodeid()).as("a directory still comes with its inode").isNotZero();
        assertThat(bare.get(2).ino()).as("the number stat gives").isEqualTo(
                call(LOOKUP, train, cString("cat")).longAt(ENTRY_ATTR + ATTR_INO));
        assertThat(fuse.kernelInodes()).isEqualTo(before + 1);
        // stat after the listing: the lookup gives the number the dirent had, with the attributes
        Reply r = call(LOOKUP, train, cString("dog.png"));
        assertThat(r.longAt(ENTRY_NODEID)).isEqualTo(dog.ino());
        assertThat(r.longAt(ENTRY_ATTR + ATTR_INO)).isEqualTo(dog.ino());
        assertThat(r.longAt(ENTRY_ATTR + ATTR_SIZE)).isEqualTo(17);
        // members of this artifact are being looked up: its listings now come with attributes
        nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(AttributeDemand.WINDOW_SECONDS - 1));
        Dirent full = dirents(call(READDIRPLUS, train, readIn(0, 4096)), true).get(3);
        assertThat(full.nodeid()).isEqualTo(dog.ino());
        assertThat(full.ino()).isEqualTo(dog.ino());
        assertThat(full.size()).isEqualTo(17);
        assertThat(full.mode()).isEqualTo(0100444);
        // ... until no member lookup came for the window
        nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(2));
        Dirent again = dirents(call(READDIRPLUS, train, readIn(0, 4096)), true).get(3);
        assertThat(again.nodeid()).isZero();
        assertThat(again.ino()).isEqualTo(dog.ino());
        // a plain READDIR is unchanged
        assertThat(dirents(call(READDIR, train, readIn(0, 4096)), false)).extracting(Dirent::name)
                .containsExactly(".", "..", "cat", "dog.png");
    }

    @Test
    void anArtifactWhoseMembersAreReadIsListedWithInodesForTheReadWindow() {
        long train = path("images", "train");
        long dog = path("images", "train", "dog.png");
        java.util.function.LongSupplier listedNode = () -> dirents(call(READDIRPLUS, train, readIn(0, 4096)), true)
                .get(3).nodeid();
        nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(AttributeDemand.WINDOW_SECONDS + 1));
        assertThat(listedNode.getAsLong()).as("looked up only, and not lately: bare").isZero();
        assertThat(call(READ, dog, readIn(0, 17)).bytes()).hasSize(17);
        nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(AttributeDemand.READ_WINDOW_SECONDS - 1));
        assertThat(listedNode.getAsLong()).as("read lately: the next scan's opens need no LOOKUP").isEqualTo(dog);
        nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(2));
        assertThat(listedNode.getAsLong()).as("no read for the window: bare again").isZero();
        // Reads of a file that is not a member (here the manifest) do not count.
        assertThat(call(READ, path(".warp", "manifest.json"), readIn(0, 1)).bytes()).containsExactly('{');
        assertThat(listedNode.getAsLong()).isZero();
    }

    @Test
    void readdirPlusHandsOutInodesWithAttributesAndTablesOnlyTheDirectories() {
        long train = path("images", "train");
        int before = fuse.kernelInodes();
        lookup(train, "dog.png"); // a member looked up: the artifact's listings come with attributes
        List<Dirent> all = dirents(call(READDIRPLUS, train, readIn(0, 4096)), true);
        assertThat(all).extracting(Dirent::name).containsExactly(".", "..", "cat", "dog.png");
        assertThat(all.get(0).nodeid()).isZero(); // the kernel skips "." and "..": no inode, no lookup
        assertThat(all.get(1).nodeid()).isZero();
        Dirent dog = all.get(3);
        assertThat(dog.nodeid()).isNotZero();
        assertThat(WarpTree.isComputedInode(dog.nodeid())).as("a member's inode is computed").isTrue();
        assertThat(WarpTree.isComputedInode(all.get(2).nodeid())).as("a directory's is tabled").isFalse();
        assertThat(dog.size()).isEqualTo(17);
        assertThat(dog.mode()).isEqualTo(0100444);
        assertThat(fuse.kernelInodes()).as("the folder alone took an entry").isEqualTo(before + 1);
        // the same inode a lookup gives; forgetting it drops nothing and it stays valid
        assertThat(lookup(train, "dog.png")).isEqualTo(dog.nodeid());
        call(FORGET, dog.nodeid(), longs(1));
        call(BATCH_FORGET, 0, batch(dog.nodeid(), 5));
        assertThat(fuse.kernelInodes()).isEqualTo(before + 1);
        Reply attr = call(GETATTR, dog.nodeid(), new byte[16]);
        assertThat(attr.error()).isZero();
        assertThat(attr.longAt(ATTR_OUT_ATTR + ATTR_INO)).isEqualTo(dog.nodeid());
        assertThat(call(READ, dog.nodeid(), readIn(0, 100)).bytes()).isEqualTo(members.get("train/dog.png"));
        // a directory's entry still goes at zero lookups
        call(FORGET, all.get(2).nodeid(), longs(1));
        assertThat(fuse.kernelInodes()).isEqualTo(before);
        assertThat(call(GETATTR, all.get(2).nodeid(), new byte[16]).error()).isEqualTo(-116);
        // entries that did not fit were not counted
        int n = fuse.kernelInodes();
        List<Dirent> first = dirents(call(READDIRPLUS, train, readIn(0, 2 * 160 + 8)), true);
        assertThat(first).extracting(Dirent::name).containsExactly(".", "..");
        assertThat(fuse.kernelInodes()).isEqualTo(n);
    }

    @Test
    void aMemberInodeNeverHandedOutIsStaleNeverAnotherMembersBytes() {
        long dog = path("images", "train", "dog.png");
        long cat = path("images", "train", "cat", "1.png");
        // the three members of "images" sit at positions 0-2 of its index, in slot 0
        long slotBase = dog & ~((1L << 31) - 1);
        assertThat(cat & ~((1L << 31) - 1)).as("one artifact, one slot").isEqualTo(slotBase);
        long pastTheEnd = slotBase | 3;
        long unnumberedSlot = slotBase + (1L << 31);
        long reservedBit = dog | (1L << 62);
        for (long bad : new long[] {pastTheEnd, unnumberedSlot, reservedBit, Long.MIN_VALUE | Integer.MAX_VALUE}) {
            assertThat(call(GETATTR, bad, new byte[16]).error()).as("getattr %x", bad).isEqualTo(-Errno.ESTALE);
            assertThat(call(READ, bad, readIn(0, 10)).error()).as("read %x", bad).isEqualTo(-Errno.ESTALE);
        }
        // a member is no directory, whatever the kernel sends
        assertThat(call(LOOKUP, dog, cString("x")).error()).isEqualTo(-Errno.ENOTDIR);
        assertThat(call(OPENDIR, dog, new byte[8]).error()).isEqualTo(-Errno.ENOTDIR);
        assertThat(call(READDIRPLUS, dog, readIn(0, 4096)).error()).isEqualTo(-Errno.ENOTDIR);
        assertThat(fuse.isDirectory(dog)).isFalse();
    }

    @Test
    void walkingAHundredThousandMembersTablesOnlyTheirDirectories() {
        int folders = 120;
        int perFolder = 1000;
        Map<String, byte[]> many = new java.util.TreeMap<>();
        for (int c = 0; c < folders; c++) {
            for (int i = 0; i < perFolder; i++) {
                many.put(String.format("c%03d/%05d.jpg", c, i), ("member " + c + "/" + i).getBytes(StandardCharsets.UTF_8));
            }
        }
        VersionHash big = versions.publish(new DatasetId("vision", "big"), Map.of(),
                Map.of("train", versions.artifact(many, Map.of(), 20_000)), "2026-11-01T12:00:00Z", false);
        WarpFuse fs = new WarpFuse(new WarpTree(catalog, reader, 10_000_000, loader), new Errno(System::nanoTime),
                0, 0, true);
        assertThat(call(fs, INIT, 0, initBody(7, 40, ALL_FLAGS, 1 << 20)).error()).isZero();
        long artifact = lookup(fs, lookup(fs, lookup(fs, ROOT_ID, "vision"), "big@" + big.hex()), "train");
        int before = fs.kernelInodes();

        Map<Long, String> byInode = new java.util.HashMap<>();
        Map<String, Long> folderInodes = new LinkedHashMap<>();
        for (Dirent f : listAll(fs, artifact)) {
            folderInodes.put(f.name(), f.nodeid());
        }
        assertThat(folderInodes).hasSize(folders);
        for (Map.Entry<String, Long> f : folderInodes.entrySet()) {
            for (Dirent d : listAll(fs, f.getValue())) {
                String path = f.getKey() + "/" + d.name();
                assertThat(d.nodeid()).as("%s listed without an inode for the kernel (nothing looked up)", path)
                        .isZero();
                assertThat(byInode.put(d.ino(), path)).as("inode of %s given once", path).isNull();
            }
        }
        assertThat(byInode).hasSize(folders * perFolder);
        assertThat(byInode.keySet()).allMatch(WarpTree::isComputedInode);
        assertThat(fs.kernelInodes()).as("entries after listing every member: the folders alone")
                .isEqualTo(before + folders);

        // every 97th member looked up by name (the same inode), read by inode (its own bytes)
        int k = 0;
        for (Map.Entry<Long, String> e : byInode.entrySet()) {
            if (k++ % 97 != 0) {
                continue;
            }
            String[] parts = e.getValue().split("/");
            Reply r = call(fs, LOOKUP, folderInodes.get(parts[0]), cString(parts[1]));
            assertThat(r.longAt(ENTRY_NODEID)).as(e.getValue()).isEqualTo(e.getKey());
            assertThat(r.longAt(ENTRY_ATTR + ATTR_SIZE)).as(e.getValue()).isEqualTo(many.get(e.getValue()).length);
            assertThat(call(fs, READ, e.getKey(), readIn(0, 4096)).bytes()).as(e.getValue())
                    .isEqualTo(many.get(e.getValue()));
        }
        assertThat(fs.kernelInodes()).as("lookups of members add no entry").isEqualTo(before + folders);
        // looked up: the next listing of a folder hands out every member's inode and size
        Map.Entry<String, Long> f0 = folderInodes.entrySet().iterator().next();
        for (Dirent d : listAll(fs, f0.getValue())) {
            String path = f0.getKey() + "/" + d.name();
            assertThat(d.nodeid()).as(path).isEqualTo(d.ino());
            assertThat(byInode.get(d.nodeid())).isEqualTo(path);
            assertThat(d.size()).as(path).isEqualTo(many.get(path).length);
        }
        assertThat(fs.kernelInodes()).isEqualTo(before + folders);
        // the kernel forgetting every member changes nothing, and each still reads
        for (long ino : byInode.keySet()) {
            assertThat(call(fs, FORGET, ino, longs(1))).isNull();
        }
        assertThat(fs.kernelInodes()).isEqualTo(before + folders);
        long last = byInode.keySet().iterator().next();
        assertThat(call(fs, READ, last, readIn(0, 4096)).bytes()).isEqualTo(many.get(byInode.get(last)));
    }

    /** Every entry of a directory but "." and "..", by READDIRPLUS in chunks of 64 KiB. */
    private List<Dirent> listAll(WarpFuse fs, long dir) {
        List<Dirent> out = new ArrayList<>();
        long offset = 0;
        while (true) {
            List<Dirent> chunk = dirents(call(fs, READDIRPLUS, dir, readIn(offset, 64 << 10)), true);
            if (chunk.isEmpty()) {
                return out;
            }
            for (Dirent d : chunk) {
                if (!d.name().equals(".") && !d.name().equals("..")) {
                    out.add(d);
                }
                offset = d.off();
            }
        }
    }

    @Test
    void inodeNumbersComeFromPathsTheSameAfterTheKernelForgetsAndInAnotherRun() {
        long train = path("images", "train");
        long cat = lookup(train, "cat");
        long catIno = call(LOOKUP, train, cString("cat")).longAt(ENTRY_ATTR + ATTR_INO);
        long ws = lookup(ROOT_ID, "vision");
        long wsIno = call(GETATTR, ws, new byte[16]).longAt(ATTR_OUT_ATTR + ATTR_INO);
        assertThat(catIno).isNotEqualTo(cat).isPositive();
        // what /proc's fdinfo shows of an open directory is that number: status tells directories by it
        assertThat(fuse.isDirectory(catIno)).isTrue();
        assertThat(fuse.isDirectory(ROOT_ID)).isTrue();
        // the dirents of the root and a workspace (no node handed out) carry the numbers stat gives
        assertThat(dirents(call(READDIR, ROOT_ID, readIn(0, 4096)), false)).filteredOn(d -> d.name().equals("vision"))
                .extracting(Dirent::ino).containsExactly(wsIno);
        List<Dirent> inWs = dirents(call(READDIRPLUS, ws, readIn(0, 4096)), true);
        assertThat(inWs.get(0).ino()).as(".").isEqualTo(wsIno);
        assertThat(inWs.get(1).ino()).as("..").isEqualTo(1);
        long versionIno = inWs.get(3).ino();
        assertThat(call(LOOKUP, ws, cString(version)).longAt(ENTRY_ATTR + ATTR_INO)).isEqualTo(versionIno);

        // the kernel forgets every node (memory pressure): new node ids, the same numbers
        for (long id : new long[] {cat, train, path("images"), ws}) {
            call(FORGET, id, longs(1_000));
        }
        long again = lookup(path("images", "train"), "cat");
        assertThat(again).isNotEqualTo(cat);
        assertThat(call(GETATTR, again, new byte[16]).longAt(ATTR_OUT_ATTR + ATTR_INO)).isEqualTo(catIno);

        // another warpd over the same store: the same numbers
        WarpFuse other = new WarpFuse(new WarpTree(catalog, reader, 1000, loader), new Errno(System::nanoTime), 0, 0, true);
        long otherTrain = lookup(other, lookup(other, lookup(other, ROOT_ID, "vision"), version), "images");
        otherTrain = lookup(other, otherTrain, "train");
        assertThat(call(other, LOOKUP, otherTrain, cString("cat")).longAt(ENTRY_ATTR + ATTR_INO)).isEqualTo(catIno);
        assertThat(call(other, LOOKUP, ROOT_ID, cString("vision")).longAt(ENTRY_ATTR + ATTR_INO)).isEqualTo(wsIno);
    }

    @Test
    void aNameLongerThanAFileNameIsTooLongNotMissing() {
        assertThat(call(LOOKUP, ROOT_ID, cString("v".repeat(256))).error()).isEqualTo(-Errno.ENAMETOOLONG);
        assertThat(call(LOOKUP, path("images"), cString("x".repeat(1024))).error()).isEqualTo(-Errno.ENAMETOOLONG);
        assertThat(call(LOOKUP, ROOT_ID, cString("v".repeat(255))).error()).isEqualTo(-Errno.ENOENT);
    }

    @Test
    void aWorkspaceListsWithoutInodesSoThatNoManifestIsFetched() {
        long ws = lookup(ROOT_ID, "vision");
        List<Dirent> all = dirents(call(READDIRPLUS, ws, readIn(0, 4096)), true);
        assertThat(all).extracting(Dirent::name).containsExactly(".", "..", "mnist", version);
        assertThat(all).extracting(Dirent::nodeid).containsOnly(0L);
        assertThat(all.get(2).type()).isEqualTo(10); // DT_LNK
    }

    @Test
    void theLatestLinkReadsItsTargetAndCountsTheRead() {
        long link = lookup(lookup(ROOT_ID, "vision"), "mnist");
        Reply r = call(READLINK, link, new byte[0]);
        assertThat(new String(r.bytes(), StandardCharsets.UTF_8)).isEqualTo(version);
        assertThat(fuse.linkReads()).isEqualTo(1);
        assertThat(call(READLINK, path("images"), new byte[0]).error()).isEqualTo(-Errno.EINVAL);
    }

    @Test
    void aWorkspaceListingReadInChunksWhileItChangesNeitherRepeatsNorSkipsAnEntryThatStayed() {
        long ws = lookup(ROOT_ID, "vision");
        long fh = call(OPENDIR, ws, new byte[8]).longAt(OPEN_OUT_FH);
        List<Dirent> first = dirents(call(READDIR, ws, readIn(fh, 0, 80)), false);
        assertThat(first).extracting(Dirent::name).containsExactly(".", "..");
        // two datasets published meanwhile, named to sort before every entry left to read
        versions.publish(new DatasetId("vision", "a0"), Map.of(), Map.of(), "2026-11-02T12:00:00Z", true);
        versions.publish(new DatasetId("vision", "a1"), Map.of(), Map.of(), "2026-11-02T12:00:00Z", true);
        catalog.refresh();
        assertThat(dirents(call(READDIR, ws, readIn(0, 4096)), false)).as("a listing without the handle sees them")
                .extracting(Dirent::name).contains("a0", "a1", "mnist", version);
        List<Dirent> rest = dirents(call(READDIR, ws, readIn(fh, first.get(1).off(), 4096)), false);
        assertThat(rest).extracting(Dirent::name).containsExactly("mnist", version);
        // rewinddir: the directory as it is now
        assertThat(dirents(call(READDIR, ws, readIn(fh, 0, 4096)), false)).extracting(Dirent::name)
                .contains("a0", "a1", "mnist", version).doesNotHaveDuplicates();
        call(RELEASEDIR, 0, longs(fh, 0, 0));
        assertThat(fuse.openHandles()).isZero();
    }

    @Test
    void directoryHandlesAreCountedUntilReleased() {
        long train = path("images", "train");
        Reply r = call(OPENDIR, train, new byte[8]);
        assertThat(fuse.openHandles()).isEqualTo(1);
        assertThat(r.intAt(OPEN_OUT_FLAGS)).isEqualTo(FOPEN_KEEP_CACHE | FOPEN_CACHE_DIR); // immutable: kernel keeps it
        Reply ws = call(OPENDIR, lookup(ROOT_ID, "vision"), new byte[8]);
        assertThat(ws.intAt(OPEN_OUT_FLAGS)).isZero(); // changes with every publish
        call(RELEASEDIR, 0, longs(ws.longAt(OPEN_OUT_FH), 0, 0));
        assertThat(call(RELEASEDIR, train, longs(r.longAt(OPEN_OUT_FH), 0, 0)).error()).isZero();
        assertThat(fuse.openHandles()).isZero();
        assertThat(call(OPENDIR, path("images", "train", "dog.png"), new byte[8]).error()).isEqualTo(-Errno.ENOTDIR);
    }

    // ---- helpers ----

    private record Reply(int error, ByteBuffer body) {
        int intAt(int at) {
            return body.getInt(body.position() + at);
        }

        short shortAt(int at) {
            return body.getShort(body.position() + at);
        }

        long longAt(int at) {
            return body.getLong(body.position() + at);
        }

        byte[] bytes() {
            byte[] b = new byte[body.remaining()];
            body.get(body.position(), b);
            return b;
        }
    }

    /** A dirent: its name, type, offset and inode number, and with READDIRPLUS its entry's node id and attributes. */
    private record Dirent(String name, int type, long off, long ino, long nodeid, long size, int mode) {
    }

    private static List<Dirent> dirents(Reply r, boolean plus) {
        assertThat(r.error()).isZero();
        List<Dirent> out = new ArrayList<>();
        ByteBuffer b = r.body();
        int p = b.position();
        while (p < b.limit()) {
            int d = plus ? p + DIRENTPLUS_DIRENT : p;
            int len = b.getInt(d + DIRENT_NAMELEN);
            byte[] name = new byte[len];
            b.get(d + DIRENT_NAME, name);
            out.add(new Dirent(new String(name, StandardCharsets.UTF_8), b.getInt(d + DIRENT_TYPE),
                    b.getLong(d + DIRENT_OFF), b.getLong(d + DIRENT_INO), plus ? b.getLong(p + ENTRY_NODEID) : 0,
                    plus ? b.getLong(p + ENTRY_ATTR + ATTR_SIZE) : 0, plus ? b.getInt(p + ENTRY_ATTR + ATTR_MODE) : 0));
            p = align8(d + DIRENT_NAME + len);
        }
        return out;
    }

    private Reply call(int opcode, long nodeid, byte[] body) {
        return call(fuse, opcode, nodeid, body);
    }

    /** Serves one request; the reply, or null when none was sent. */
    private Reply call(WarpFuse fs, int opcode, long nodeid, byte[] body) {
        ByteBuffer in = ByteBuffer.allocateDirect(IN_HEADER + body.length).order(ByteOrder.nativeOrder());
        long u = unique++;
        in.putInt(IN_LEN, in.capacity()).putInt(IN_OPCODE, opcode).putLong(IN_UNIQUE, u).putLong(IN_NODEID, nodeid);
        in.put(IN_HEADER, body);
        int before = sent.size();
        fs.serve(in, out, channel);
        if (sent.size() == before) {
            return null;
        }
        assertThat(sent).hasSize(before + 1);
        ByteBuffer r = sent.get(before);
        assertThat(r.getInt(OUT_LEN)).isEqualTo(r.capacity());
        assertThat(r.getLong(OUT_UNIQUE)).isEqualTo(u);
        if (r.getInt(OUT_ERROR) != 0) {
            assertThat(r.capacity()).isEqualTo(OUT_HEADER);
        }
        return new Reply(r.getInt(OUT_ERROR), r.position(OUT_HEADER).slice().order(ByteOrder.nativeOrder()));
    }

    private void init(int major, int minor, int flags) {
        assertThat(call(INIT, 0, initBody(major, minor, flags, 1 << 20)).error()).isZero();
    }

    private long lookup(long parent, String name) {
        return lookup(fuse, parent, name);
    }

    private long lookup(WarpFuse fs, long parent, String name) {
        Reply r = call(fs, LOOKUP, parent, cString(name));
        assertThat(r.error()).as(name).isZero();
        return r.longAt(ENTRY_NODEID);
    }

    /** The node of a path inside the version. */
    private long path(String... names) {
        long n = lookup(lookup(ROOT_ID, "vision"), version);
        for (String name : names) {
            n = lookup(n, name);
        }
        return n;
    }

    private static byte[] initBody(int major, int minor, int flags, int maxReadahead) {
        return ints(major, minor, maxReadahead, flags, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    private static byte[] readIn(long offset, int size) {
        return readIn(0, offset, size);
    }

    private static byte[] readIn(long fh, long offset, int size) {
        ByteBuffer b = ByteBuffer.allocate(40).order(ByteOrder.nativeOrder());
        b.putLong(0, fh).putLong(8, offset).putInt(16, size);
        return b.array();
    }

    private static byte[] batch(long nodeid, long nlookup) {
        ByteBuffer b = ByteBuffer.allocate(24).order(ByteOrder.nativeOrder());
        b.putInt(0, 1).putLong(8, nodeid).putLong(16, nlookup);
        return b.array();
    }

    private static byte[] longs(long... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 8).order(ByteOrder.nativeOrder());
        for (long x : v) {
            b.putLong(x);
        }
        return b.array();
    }

    private static byte[] ints(int... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.nativeOrder());
        for (int x : v) {
            b.putInt(x);
        }
        return b.array();
    }

    private static byte[] cString(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return java.util.Arrays.copyOf(b, b.length + 1);
    }
}
