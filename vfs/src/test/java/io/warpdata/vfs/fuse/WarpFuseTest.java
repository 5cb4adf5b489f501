package io.warpdata.vfs.fuse;

import io.warpdata.blobcache.Catalog;
import io.warpdata.blobcache.InMemoryBlobStore;
import io.warpdata.blobcache.cache.DirectBlobReader;
import io.warpdata.vfs.Errno;
import io.warpdata.vfs.WarpTree;
import org.junit.jupiter.api.Test;
import ru.serce.jnrfuse.FuseStubFS;
import ru.serce.jnrfuse.NotImplemented;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

class WarpFuseTest {
    private static final Set<String> WRITE_LIKE = Set.of("write", "create", "mknod", "mkdir", "unlink", "rmdir",
            "symlink", "rename", "link", "chmod", "chown", "truncate", "ftruncate", "utimens", "setxattr",
            "removexattr", "fallocate");
    /** Left unregistered on purpose (see WarpFuse's class comment). */
    private static final Set<String> UNREGISTERED = Set.of("read_buf", "write_buf", "lock", "flock", "ioctl");

    private final InMemoryBlobStore store = new InMemoryBlobStore();
    private final WarpFuse fuse = new WarpFuse(
            new WarpTree(new Catalog(store), new DirectBlobReader(store), 1000, Executors.newVirtualThreadPerTaskExecutor()),
            new Errno(System::nanoTime), 0, 0);

    @Test
    void everyOperationOfTheStubIsOverridden() {
        List<String> missing = new ArrayList<>();
        for (Method m : FuseStubFS.class.getDeclaredMethods()) {
            if (!Modifier.isPublic(m.getModifiers()) || Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            try {
                WarpFuse.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
            } catch (NoSuchMethodException e) {
                missing.add(m.getName());
            }
        }
        assertThat(missing).isEmpty();
    }

    @Test
    void onlyTheDeliberateOperationsStayUnregistered() throws Exception {
        List<String> unregistered = new ArrayList<>();
        for (Method m : WarpFuse.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && m.isAnnotationPresent(NotImplemented.class)) {
                unregistered.add(m.getName());
            }
        }
        assertThat(unregistered).containsExactlyInAnyOrderElementsOf(UNREGISTERED);
    }

    @Test
    void writeLikeOperationsAnswerReadOnlyFileSystem() throws Exception {
        for (Method m : WarpFuse.class.getDeclaredMethods()) {
            if (!WRITE_LIKE.contains(m.getName()) || !Modifier.isPublic(m.getModifiers())) {
                continue;
            }
            Object[] args = new Object[m.getParameterCount()];
            Class<?>[] types = m.getParameterTypes();
            for (int i = 0; i < args.length; i++) {
                args[i] = types[i] == long.class ? 0L : types[i] == int.class ? 0 : types[i] == String.class ? "/ws/x" : null;
            }
            assertThat(m.invoke(fuse, args)).as(m.getName()).isEqualTo(-Errno.EROFS);
        }
    }

    @Test
    void unknownPathsAreNotFoundAndUnsupportedCallsAreNosys() {
        assertThat(fuse.getxattr("/", "user.x", null, 0)).isEqualTo(-Errno.ENOSYS);
        assertThat(fuse.listxattr("/", null, 0)).isEqualTo(-Errno.ENOSYS);
        assertThat(fuse.bmap("/", 0, 0)).isEqualTo(-Errno.ENOSYS);
        assertThat(fuse.ioctl("/", 0, null, null, 0, null)).isEqualTo(-Errno.ENOSYS);
        assertThat(fuse.poll("/", null, null, null)).isEqualTo(-Errno.ENOSYS);
        assertThat(fuse.access("/nope", 4)).isEqualTo(-Errno.ENOENT);
        assertThat(fuse.access("/", 2)).isEqualTo(-Errno.EROFS);
        assertThat(fuse.readlink("/nope", null, 100)).isEqualTo(-Errno.ENOENT);
    }
}
