package io.warpdata.store.local;

import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.BlobStore;
import io.warpdata.store.BlobStoreContract;
import io.warpdata.store.InvalidRemoteException;
import io.warpdata.store.PermissionDeniedException;
import io.warpdata.store.StoreException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LocalBlobStoreTest extends BlobStoreContract {
    private Path root;
    private LocalBlobStore store;

    @BeforeEach
    void open() throws Exception {
        root = Files.createDirectories(tmp.resolve("store"));
        store = LocalBlobStore.open(root.toUri().toString());
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    @Override
    protected BlobStore store() {
        return store;
    }

    @Test
    void aReadStoreWhoseDirectoryVanishesIsUnreachableNotEmpty() throws Exception {
        store.put("datasets/ws/a/latest.json", new byte[] {1, 2});
        store.requireRoot();
        assertThat(store.list("datasets/ws/")).containsExactly("a/");
        assertThat(store.list("datasets/nows/")).as("a prefix that is not there: empty").isEmpty();
        assertThat(store.length("datasets/ws/b/latest.json")).isEmpty();

        Path moved = tmp.resolve("store.off");
        Files.move(root, moved); // an NFS share unmounted, a disk gone
        for (Callable<?> call : List.<Callable<?>>of(() -> store.list("datasets/ws/"), () -> store.list(""),
                () -> store.length("datasets/ws/a/latest.json"), () -> store.get("datasets/ws/a/latest.json"))) {
            assertThatThrownBy(call::call).isInstanceOf(io.warpdata.store.StoreUnreachableException.class)
                    .hasMessageContaining(root + " is gone");
        }
        Files.move(moved, root);
        assertThat(store.list("datasets/ws/")).containsExactly("a/");

        // a store being published into (no requireRoot) is made as it is written: absent is empty
        LocalBlobStore fresh = LocalBlobStore.open(tmp.resolve("new-store").toUri().toString());
        assertThat(fresh.list("datasets/")).isEmpty();
        assertThat(fresh.length("datasets/ws/a/latest.json")).isEmpty();
    }

    @Test
    void keysMapUnderTheRootDirectory() {
        store.put("datasets/ws/a/latest.json", new byte[] {1, 2});
        assertThat(root.resolve("datasets/ws/a/latest.json")).exists().hasBinaryContent(new byte[] {1, 2});
    }

    @Test
    void aReadLargerThanOnePieceFillsExactlyItsRangeAtAnOffsetIntoTheArray() {
        byte[] data = new byte[3 * LocalBlobStore.READ_PIECE + 12345];
        new java.util.Random(7).nextBytes(data);
        store.put("blobs/big", data);
        int len = 2 * LocalBlobStore.READ_PIECE + 777;
        byte[] dst = new byte[len + 20];
        java.util.Arrays.fill(dst, (byte) 0x5a);
        store.read("blobs/big", 1001, dst, 10, len);
        assertThat(java.util.Arrays.copyOfRange(dst, 10, 10 + len)).isEqualTo(java.util.Arrays.copyOfRange(data, 1001, 1001 + len));
        for (int i : new int[] {0, 9, 10 + len, dst.length - 1}) {
            assertThat(dst[i]).as("byte %d outside the range", i).isEqualTo((byte) 0x5a);
        }
    }

    @Test
    void objectsHaveThePermissionsTheUmaskGivesNewFiles() throws Exception {
        // Not 0600: a warpd running as its own user reads what an administrator published.
        store.put("d/put", new byte[] {1});
        store.putIfAbsent("d/absent", new byte[] {2});
        Path source = Files.write(tmp.resolve("source"), new byte[] {3});
        Files.setPosixFilePermissions(source, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        store.putIfAbsent("d/file", source);
        var expected = Files.getPosixFilePermissions(Files.createFile(tmp.resolve("reference")));
        for (String key : new String[] {"d/put", "d/absent", "d/file"}) {
            assertThat(Files.getPosixFilePermissions(root.resolve(key))).as(key).isEqualTo(expected);
        }
    }

    @Test
    void aStoreDirectoryThatDoesNotExistIsRefusedWhereItIsOnlyRead() {
        LocalBlobStore missing = LocalBlobStore.open(tmp.resolve("typo").toUri().toString());
        assertThatThrownBy(() -> io.warpdata.store.BlobStores.requireExisting(missing))
                .isInstanceOf(io.warpdata.store.NoSuchBucketException.class)
                .hasMessageContaining("does not exist");
        assertThat(io.warpdata.store.BlobStores.requireExisting(store)).isSameAs(store);
        // A publish makes it.
        missing.put("datasets/ws/a/latest.json", new byte[] {1});
        assertThat(io.warpdata.store.BlobStores.requireExisting(missing)).isSameAs(missing);
    }

    @Test
    void writesLeaveNoTemporaryFilesBehind() throws Exception {
        store.put("d/x", new byte[] {1});
        store.putIfAbsent("d/y", new byte[] {2});
        store.putIfAbsent("d/y", new byte[] {3});
        try (Stream<Path> files = Files.list(root.resolve("d"))) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("x", "y");
        }
    }

    @Test
    void concurrentPutIfAbsentWritesExactlyOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Callable<Boolean>> tasks = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                byte[] data = {(byte) i};
                tasks.add(() -> store.putIfAbsent("v/one", data));
            }
            int written = 0;
            for (Future<Boolean> f : pool.invokeAll(tasks)) {
                written += f.get() ? 1 : 0;
            }
            assertThat(written).isEqualTo(1);
            assertThat(store.get("v/one")).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void unreadableObjectIsPermissionDenied() throws Exception {
        store.put("secret", new byte[] {1});
        Path p = root.resolve("secret");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("---------"));
        try {
            // root reads anything regardless of permission bits: the check is meaningless there.
            Assumptions.assumeFalse(Files.isReadable(p), "running as root");
            assertThatThrownBy(() -> store.get("secret")).isInstanceOf(PermissionDeniedException.class)
                    .hasMessageContaining("secret");
        } finally {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
        }
    }

    @Test
    void otherIoFailuresAreStoreErrorsNamingTheKeyAndANextStep() {
        store.put("dir/child", new byte[] {1});
        assertThatThrownBy(() -> store.get("dir")).isInstanceOf(StoreException.class)
                .isNotInstanceOf(BlobNotFoundException.class)
                .hasMessageContaining("dir")
                .satisfies(e -> assertThat(((StoreException) e).nextStep()).isNotBlank());
        assertThat(store.length("dir")).isEmpty();
    }

    @Test
    void missingRootListsNothingAndReadsAsNotFound() {
        LocalBlobStore missing = new LocalBlobStore(tmp.resolve("nowhere"));
        assertThat(missing.list("datasets/")).isEmpty();
        assertThatThrownBy(() -> missing.get("datasets/ws/a/latest.json")).isInstanceOf(BlobNotFoundException.class);
    }

    @Test
    void keysCannotEscapeTheRoot() {
        assertThatThrownBy(() -> store.get("../outside")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void relativeOrHostFileUrisAreRejectedWithAnExample() {
        assertThatThrownBy(() -> LocalBlobStore.open("file://host/dir")).isInstanceOf(InvalidRemoteException.class)
                .hasMessageContaining("file:///");
        assertThatThrownBy(() -> LocalBlobStore.open("file:relative")).isInstanceOf(InvalidRemoteException.class);
    }
}
