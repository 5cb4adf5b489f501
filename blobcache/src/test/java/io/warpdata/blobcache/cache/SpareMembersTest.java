package io.warpdata.blobcache.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.warpdata.manifest.BlobId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SpareMembersTest {

    private static BlobId id(int k) {
        return BlobId.of(new byte[] {(byte) k, (byte) (k >> 8), (byte) (k >> 16), 7});
    }

    @Test
    void keepsMembersFirstInFirstOutUpToItsBound() {
        SpareMembers s = new SpareMembers(3);
        assertThat(s.add(id(1), 100)).isNull();
        assertThat(s.add(id(2), 200)).isNull();
        assertThat(s.add(id(3), 300)).isNull();
        assertThat(s.add(id(4), 400)).as("full: the oldest is let go").isEqualTo(new SpareMembers.Spare(id(1), 100));
        assertThat(s.contains(id(1))).isFalse();
        assertThat(s.count()).isEqualTo(3);
        assertThat(s.bytes()).isEqualTo(SpareMembers.weight(200) + SpareMembers.weight(300) + SpareMembers.weight(400));
        assertThat(s.take(id(3))).isEqualTo(300);
        assertThat(s.take(id(3))).as("taken once").isEqualTo(-1);
        assertThat(s.trimTo(SpareMembers.weight(400))).containsExactly(new SpareMembers.Spare(id(2), 200));
        assertThat(s.all()).containsExactly(new SpareMembers.Spare(id(4), 400));
    }

    /** Other work's members first, then those passed in this pass, then the rest: oldest first each. */
    @Test
    void letsGoOfOldWorkThenPassedMembersThenTheRest() {
        SpareMembers s = new SpareMembers(100);
        s.newPass();
        s.add(id(1), 10);
        s.add(id(2), 20);
        s.newPass();
        s.add(id(3), 30);
        s.pass(id(4), 40);
        assertThat(s.passKept(id(3))).isTrue();
        s.add(id(5), 50);
        assertThat(s.trimTo(0)).as("members of the last pass are kept before passed ones go")
                .containsExactly(spare(4, 40), spare(3, 30), spare(1, 10), spare(2, 20), spare(5, 50));

        s.add(id(1), 10);
        s.pass(id(2), 20);
        s.newPass();
        s.add(id(3), 30);
        s.newPass();
        s.pass(id(4), 40);
        assertThat(s.contains(id(2))).isTrue();
        assertThat(s.take(id(3))).isEqualTo(30);
        s.add(id(5), 50);
        assertThat(s.trimTo(0)).as("two passes old: other work's")
                .containsExactly(spare(1, 10), spare(2, 20), spare(4, 40), spare(5, 50));
        assertThat(s.isEmpty()).isTrue();
        assertThat(s.bytes()).isZero();
    }

    private static SpareMembers.Spare spare(int k, int length) {
        return new SpareMembers.Spare(id(k), length);
    }

    @Test
    void aBoundOfZeroKeepsNothing() {
        SpareMembers s = new SpareMembers(0);
        BlobId a = id(1);
        assertThat(s.add(a, 10).id()).isSameAs(a);
        assertThat(s.isEmpty()).isTrue();
        assertThat(s.contains(a)).isFalse();
        assertThat(s.bytes()).isZero();
    }

    /** Random adds, takes and trims against a plain ordered map, through the ring's growth and compactions. */
    @Test
    void agreesWithAnOrderedMapThroughGrowthTakesAndTrims() {
        Random rnd = new Random(40);
        int max = 5_000;
        SpareMembers s = new SpareMembers(max);
        LinkedHashMap<BlobId, Integer> model = new LinkedHashMap<>();
        List<BlobId> known = new ArrayList<>();
        for (int op = 0; op < 200_000; op++) {
            int r = rnd.nextInt(100);
            if (r < 55 || known.isEmpty()) {
                BlobId id = id(op);
                int len = 1 + rnd.nextInt(300_000);
                SpareMembers.Spare out = s.add(id, len);
                if (model.size() >= max) {
                    BlobId oldest = model.keySet().iterator().next();
                    assertThat(out).isEqualTo(new SpareMembers.Spare(oldest, model.get(oldest)));
                    model.remove(oldest);
                } else {
                    assertThat(out).isNull();
                }
                model.put(id, len);
                known.add(id);
            } else if (r < 97) {
                BlobId id = known.get(rnd.nextInt(known.size()));
                Integer len = model.remove(id);
                assertThat(s.take(id)).isEqualTo(len == null ? -1 : len);
            } else {
                long keep = s.bytes() / 2;
                for (SpareMembers.Spare out : s.trimTo(keep)) {
                    assertThat(out.id()).isEqualTo(model.keySet().iterator().next());
                    assertThat(out.length()).isEqualTo(model.remove(out.id()));
                }
                assertThat(s.bytes()).isLessThanOrEqualTo(keep);
            }
            if (op % 10_000 == 0) {
                long bytes = 0;
                for (int len : model.values()) {
                    bytes += SpareMembers.weight(len);
                }
                assertThat(s.bytes()).isEqualTo(bytes);
                assertThat(s.count()).isEqualTo(model.size());
                List<SpareMembers.Spare> want = new ArrayList<>();
                for (Map.Entry<BlobId, Integer> e : model.entrySet()) {
                    want.add(new SpareMembers.Spare(e.getKey(), e.getValue()));
                }
                assertThat(s.all()).isEqualTo(want);
            }
        }
        for (BlobId id : known) {
            assertThat(s.contains(id)).as("%s", id).isEqualTo(model.containsKey(id));
        }
    }

    /**
     * The members live outside the heap, so the bound no longer follows it: a million, where the
     * default heap kept 224,694 (a 100 GB cache holds about 900,000 of ImageNet's images).
     */
    @Test
    void theBoundIsAMillionMembersWhateverTheHeap() {
        assertThat(OffHeap.available()).isTrue();
        assertThat(SpareMembers.defaultMax()).isEqualTo(1 << 20);
    }

    /**
     * More members than the old heap bound, each found again and let go in order; the memory they
     * take is what a ring of them needs (about 60 bytes a member here, 112 at most), and a pass's
     * ring and {@link SpareMembers#clear} give it back.
     */
    @Test
    void keepsMoreMembersThanTheHeapDidInMemoryThatFollowsThem() {
        int n = 300_000;
        SpareMembers s = new SpareMembers(SpareMembers.MAX);
        assertThat(s.memoryBytes()).as("an unused tier costs nothing").isZero();
        for (int k = 0; k < n; k++) {
            assertThat(s.add(id(k), 1 + k % 1000)).isNull();
        }
        assertThat(s.count()).isEqualTo(n);
        for (int k = 0; k < n; k += 997) {
            assertThat(s.contains(id(k))).isTrue();
        }
        assertThat(s.contains(id(n))).isFalse();
        long kept = s.memoryBytes();
        assertThat(kept).isBetween(40L * n, (long) SpareMembers.BYTES_PER_MEMBER * n);

        for (int k = 0; k < 100_000; k++) {
            s.pass(id(n + k), 10);
        }
        assertThat(s.memoryBytes()).isGreaterThan(kept);
        List<SpareMembers.Spare> lost = s.newPass();
        assertThat(lost).as("memory for every member").isEmpty();
        assertThat(s.count()).isEqualTo(n + 100_000);
        assertThat(s.take(id(n + 99_999))).isEqualTo(10);

        List<SpareMembers.Spare> out = s.trimTo(s.bytes() - SpareMembers.weight(1) - SpareMembers.weight(2));
        assertThat(out).as("oldest first").containsExactly(spare(0, 1), spare(1, 2));
        s.clear();
        assertThat(s.memoryBytes()).isZero();
        assertThat(s.count()).isZero();
        assertThat(s.add(id(7), 70)).as("usable again after a clear").isNull();
        assertThat(s.take(id(7))).isEqualTo(70);
    }
}
