package io.warpdata.vfs.fuse;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class LinkWatchTest {
    private final Map<Long, String> pointers = new HashMap<>();
    private final List<Long> invalidated = new ArrayList<>();
    private RuntimeException storeDown;
    private final LinkWatch watch = new LinkWatch(node -> {
        if (storeDown != null) {
            throw storeDown;
        }
        return pointers.get(node);
    }, node -> {
        invalidated.add(node);
        return 0;
    });

    @Test
    void aLinkWhosePointerStaysIsLeftCached() {
        pointers.put(7L, "a@1");
        watch.answered(7, "a@1");
        assertThat(watch.check()).isZero();
        assertThat(invalidated).isEmpty();
        assertThat(watch.size()).isEqualTo(1);
    }

    @Test
    void aMovedPointerInvalidatesItsNodeOnceUntilTheKernelAsksAgain() {
        pointers.put(7L, "a@1");
        pointers.put(9L, "b@1");
        watch.answered(7, "a@1");
        watch.answered(9, "b@1");
        pointers.put(7L, "a@2");

        assertThat(watch.check()).isEqualTo(1);
        assertThat(invalidated).containsExactly(7L);
        assertThat(watch.check()).isZero();
        assertThat(invalidated).containsExactly(7L);
        assertThat(watch.invalidations()).isEqualTo(1);

        watch.answered(7, "a@2");
        assertThat(watch.check()).isZero();
        assertThat(watch.size()).isEqualTo(2);
    }

    /** After drop_caches the kernel forgets the link's node: no pointer moved, so nothing is counted. */
    @Test
    void aNodeTheKernelForgotIsDroppedWithoutCountingAnInvalidation() {
        LinkWatch forgetful = new LinkWatch(node -> null, node -> -2); // the node names nothing now: ENOENT
        forgetful.answered(7, "a@1");
        assertThat(forgetful.check()).isZero();
        assertThat(forgetful.invalidations()).isZero();
        assertThat(forgetful.size()).as("forgotten here too").isZero();
    }

    @Test
    void aRemovedPointerInvalidatesItsNode() {
        pointers.put(7L, "a@1");
        watch.answered(7, "a@1");
        pointers.remove(7L);
        assertThat(watch.check()).isEqualTo(1);
        assertThat(invalidated).containsExactly(7L);
    }

    @Test
    void whileTheStoreDoesNotAnswerLinksKeepTheirTarget() {
        pointers.put(7L, "a@1");
        watch.answered(7, "a@1");
        storeDown = new IllegalStateException("store down");
        assertThat(watch.check()).isZero();
        assertThat(invalidated).isEmpty();
        storeDown = null;
        pointers.put(7L, "a@2");
        assertThat(watch.check()).isEqualTo(1);
    }

    @Test
    void afterCloseNothingIsInvalidated() {
        pointers.put(7L, "a@1");
        watch.answered(7, "a@1");
        pointers.put(7L, "a@2");
        watch.close();
        assertThat(watch.check()).isZero();
        assertThat(invalidated).isEmpty();
    }

    @Test
    void answersOutsideAFuseRequestAreNotRemembered() {
        watch.answered(0, "a@1");
        assertThat(watch.size()).isZero();
    }
}
