package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The parted form answers exactly as the flat form of the same members (the flat index is the
 * oracle), loads only the parts a lookup or listing touches, and refuses malformed tops and
 * parts with {@link ManifestCorruptedException}.
 */
class PartedMemberIndexTest {

    /** Parts by id, and the ids loaded. */
    static final class Parts implements MemberIndex.PartLoader {
        final Map<BlobId, byte[]> byId = new HashMap<>();
        final Set<BlobId> loaded = ConcurrentHashMap.newKeySet();
        final List<BlobId> order = new ArrayList<>();

        Parts(List<byte[]> parts) {
            for (byte[] p : parts) {
                byId.put(BlobId.of(p), p);
                order.add(BlobId.of(p));
            }
        }

        @Override
        public IndexBytes load(BlobRef part) {
            byte[] b = byId.get(part.id());
            assertThat(b).as("part %s", part.id()).isNotNull();
            loaded.add(part.id());
            return IndexBytes.of(b);
        }
    }

    private static MemberIndex parted(MemberIndex flat, int partMembers, Parts[] out) {
        MemberIndex.Parts p = flat.writeParts(partMembers);
        out[0] = new Parts(p.parts());
        return MemberIndex.open(IndexBytes.of(p.top()), "top", out[0]);
    }

    @Test
    void answersAsTheFlatIndexForRandomTreesAndPartSizes() {
        Random r = new Random(7);
        for (int run = 0; run < 40; run++) {
            MemberIndex flat = MemberIndexTest.build(MemberIndexTest.randomTree(r, 1 + r.nextInt(300)));
            Parts[] parts = new Parts[1];
            MemberIndex parted = parted(flat, 1 + r.nextInt(40), parts);
            assertThat(parted.size()).isEqualTo(flat.size());
            Set<String> dirs = new TreeSet<>();
            dirs.add("");
            for (int i = 0; i < flat.size(); i++) {
                String p = flat.path(i);
                assertThat(parted.path(i)).isEqualTo(p);
                assertThat(parted.shard(i)).isEqualTo(flat.shard(i));
                assertThat(parted.offset(i)).isEqualTo(flat.offset(i));
                assertThat(parted.length(i)).isEqualTo(flat.length(i));
                assertThat(parted.mode(i)).isEqualTo(flat.mode(i));
                assertThat(parted.hash(i)).isEqualTo(flat.hash(i));
                assertThat(parted.hashEquals(i, flat.hash(i).digest(), 0)).isTrue();
                assertThat(parted.find(p)).isEqualTo(i);
                assertThat(parted.find(p + "x")).isEqualTo(flat.find(p + "x"));
                for (int k = p.indexOf('/'); k >= 0; k = p.indexOf('/', k + 1)) {
                    dirs.add(p.substring(0, k));
                }
            }
            assertThat(parted.find("\u0000")).isEqualTo(-1);
            assertThat(parted.find("zzzz/zz")).isEqualTo(flat.find("zzzz/zz"));
            for (String d : dirs) {
                assertThat(parted.range(d)).as("range %s", d).containsExactly(flat.range(d));
                assertThat(parted.isDirectory(d)).isTrue();
                assertThat(parted.childDirectoryCount(d)).as("subdirectories of %s", d)
                        .isEqualTo(flat.childDirectoryCount(d));
                assertThat(children(parted, d, 0)).as("children of '%s'", d).isEqualTo(children(flat, d, 0));
                // resumed after each entry, as FUSE readdir does
                List<String> all = children(flat, d, 0);
                int[] resume = {0};
                List<String> chunked = new ArrayList<>();
                while (true) {
                    List<String> one = new ArrayList<>();
                    parted.forEachChild(d, resume[0], (name, directory, from, to) -> {
                        one.add(name + (directory ? "/" : "") + "@" + from + "-" + to);
                        resume[0] = to;
                        return true;
                    });
                    if (one.isEmpty()) {
                        break;
                    }
                    chunked.addAll(one);
                }
                assertThat(chunked).isEqualTo(all);
            }
            for (String notDir : List.of("nope", dirs.size() > 1 ? dirs.toArray(new String[0])[1] + "/nope" : "nope2")) {
                assertThat(parted.isDirectory(notDir)).isEqualTo(flat.isDirectory(notDir));
                assertThat(children(parted, notDir, 0)).isEmpty();
                assertThat(parted.childDirectoryCount(notDir)).isZero();
            }
            if (flat.size() > 0) {
                assertThat(parted.isDirectory(flat.path(0))).isFalse();
            }
            assertThat(parted.serialize()).isEqualTo(flat.serialize());
        }
    }

    private static List<String> children(MemberIndex index, String dir, int start) {
        List<String> out = new ArrayList<>();
        index.forEachChild(dir, start, (name, directory, from, to) -> {
            out.add(name + (directory ? "/" : "") + "@" + from + "-" + to);
            return false;
        });
        return out;
    }

    /** 100 class folders of 50 members, and two files at the root. */
    private static MemberIndex classes() {
        MemberIndexBuilder b = new MemberIndexBuilder();
        BlobId h = BlobId.of(new byte[] {1});
        for (int c = 0; c < 100; c++) {
            for (int i = 0; i < 50; i++) {
                b.add(String.format("train/n%04d/img_%05d.jpg", c, c * 50 + i), c / 10, i * 1000L, 900, 0644, h);
            }
        }
        b.add("LICENSE", 0, 0, 10, 0644, h).add("README", 0, 10, 10, 0644, h);
        return b.build();
    }

    @Test
    void listingAFolderLoadsOnlyThePartsHoldingItsMembers() {
        MemberIndex flat = classes();
        Parts[] parts = new Parts[1];
        MemberIndex parted = parted(flat, 20, parts);
        assertThat(parts[0].order).hasSize((5002 + 19) / 20);

        assertThat(children(parted, "", 0)).containsExactly("LICENSE@0-1", "README@1-2", "train/@2-5002");
        assertThat(children(parted, "train", 0)).hasSize(100).startsWith("n0000/@2-52");
        assertThat(parted.childDirectoryCount("train")).isEqualTo(100);
        assertThat(parted.isDirectory("train/n0042")).isTrue();
        // The root's two files sit in part 0; train/ and its 100 folders come from the top alone.
        assertThat(parts[0].loaded).containsExactly(parts[0].order.get(0));

        parts[0].loaded.clear();
        List<String> one = children(parted, "train/n0042", 0);
        assertThat(one).hasSize(50).first().isEqualTo("img_02100.jpg@2102-2103");
        // Members [2102, 2152) lie in parts 105..107 (20 members each).
        assertThat(parts[0].loaded).containsExactlyInAnyOrder(parts[0].order.get(105), parts[0].order.get(106),
                parts[0].order.get(107));

        parts[0].loaded.clear();
        int i = parted.find("train/n0099/img_04999.jpg");
        assertThat(i).isEqualTo(5001);
        assertThat(parts[0].loaded).containsExactly(parts[0].order.get(250));
        assertThat(parted.find("train/n0099/img_05000.jpg")).isEqualTo(-1);
    }

    // ---------------------------------------------------------------- malformed input

    private static byte[] top(MemberIndex flat, int partMembers) {
        return flat.writeParts(partMembers).top();
    }

    private static void assertCorrupted(byte[] top, MemberIndex.PartLoader loader, String field) {
        assertThatThrownBy(() -> MemberIndex.open(IndexBytes.of(top), "top", loader))
                .isInstanceOf(ManifestCorruptedException.class)
                .satisfies(e -> assertThat(((ManifestCorruptedException) e).field()).contains(field));
    }

    @Test
    void truncatedOrPaddedTopIsCorrupted() {
        byte[] top = top(classes(), 100);
        for (int cut : new int[] {3, 19, 20, 100, top.length - 1}) {
            assertThatThrownBy(() -> MemberIndex.open(IndexBytes.of(Arrays.copyOf(top, cut)), "top", MemberIndex.NO_PARTS))
                    .as("cut at %d", cut).isInstanceOf(ManifestCorruptedException.class);
        }
        assertCorrupted(Arrays.copyOf(top, top.length + 1), MemberIndex.NO_PARTS, "length");
    }

    @Test
    void unknownVersionAndImpossibleCountsAreCorrupted() {
        byte[] top = top(classes(), 100);
        byte[] v = top.clone();
        ByteBuffer.wrap(v).putInt(4, 2);
        assertCorrupted(v, MemberIndex.NO_PARTS, "version");
        byte[] parts = top.clone();
        ByteBuffer.wrap(parts).putInt(8, Integer.MAX_VALUE);
        assertCorrupted(parts, MemberIndex.NO_PARTS, "count");
        byte[] members = top.clone();
        ByteBuffer.wrap(members).putInt(16, 5003);
        assertCorrupted(members, MemberIndex.NO_PARTS, "members");
        byte[] partCount = top.clone();
        ByteBuffer.wrap(partCount).putInt(20, 0); // part 0 of no members
        assertCorrupted(partCount, MemberIndex.NO_PARTS, "parts[0].members");
    }

    @Test
    void directoryTableOutOfOrderOrMissingAParentOrWithRunsThatDoNotNestIsCorrupted() {
        MemberIndex flat = classes();
        byte[] top = top(flat, 100);
        ByteBuffer b = ByteBuffer.wrap(top);
        int p = b.getInt(8);
        int d = b.getInt(12);
        assertThat(d).isEqualTo(101); // train, and its 100 folders
        int rangesAt = top.length - 8 * d;
        // A run that escapes its parent's.
        byte[] escaping = top.clone();
        ByteBuffer.wrap(escaping).putInt(rangesAt + 8 * 5 + 4, 5002 + 1);
        assertCorrupted(escaping, MemberIndex.NO_PARTS, "directories[5].members");
        // Siblings that overlap.
        byte[] overlapping = top.clone();
        ByteBuffer.wrap(overlapping).putInt(rangesAt + 8 * 6, 2 + 4 * 50 + 10);
        assertCorrupted(overlapping, MemberIndex.NO_PARTS, "directories[6].members");
        // 'train' renamed 'trail': its folders have no parent in the table.
        int pathsAt = new String(top, StandardCharsets.ISO_8859_1).indexOf("traintrain/n0000");
        assertThat(pathsAt).isPositive();
        byte[] renamed = top.clone();
        renamed[pathsAt + 4] = 'l';
        assertThatThrownBy(() -> MemberIndex.open(IndexBytes.of(renamed), "top", MemberIndex.NO_PARTS))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("is not in the directory table");
        assertThat(p).isEqualTo(51);
    }

    @Test
    void partsOfLongPathsAreCutToTheByteBoundAndAnswerAsTheFlatIndex() {
        MemberIndexBuilder b = new MemberIndexBuilder();
        BlobId h = BlobId.of(new byte[] {2});
        String pad = "x".repeat(150); // ~230-byte paths: 8,192 of them would make a 2.3 MB part
        for (int i = 0; i < 20_000; i++) {
            b.add(String.format("train/n%04d/%s_%06d.jpg", i / 1000, pad, i), 0, i * 1000L, 900, 0644, h);
        }
        MemberIndex flat = b.build();
        MemberIndex.Parts written = flat.writeParts(8192);
        assertThat(written.parts()).allSatisfy(part -> assertThat(part.length)
                .isLessThanOrEqualTo(MemberIndexWriter.MAX_PART_BYTES));
        // Full parts up to the bound: the count is what the bytes need, not one per member.
        int perPart = (MemberIndexWriter.MAX_PART_BYTES - MemberIndex.HEADER) / (MemberIndex.PER_MEMBER + flat.pathLength(0));
        assertThat(written.parts()).hasSize((20_000 + perPart - 1) / perPart);
        Parts parts = new Parts(written.parts());
        MemberIndex parted = MemberIndex.open(IndexBytes.of(written.top()), "top", parts);
        for (int i = 0; i < flat.size(); i += 997) {
            assertThat(parted.path(i)).isEqualTo(flat.path(i));
            assertThat(parted.find(flat.path(i))).isEqualTo(i);
            assertThat(parted.offset(i)).isEqualTo(flat.offset(i));
        }
        assertThat(children(parted, "train/n0007", 0)).isEqualTo(children(flat, "train/n0007", 0));
        assertThat(parted.serialize()).isEqualTo(flat.serialize());
        // Short paths keep parts of partMembers members.
        assertThat(classes().writeParts(1000).parts()).hasSize(6);
    }

    @Test
    void aPartThatDoesNotMatchTheTopIsCorruptedWhenLoaded() {
        MemberIndex flat = classes();
        MemberIndex.Parts written = flat.writeParts(1000);
        // The loader hands part 1 where part 2 is asked for (as a store mixing up blobs would,
        // had the hash check not caught it): its size or first path gives it away.
        Parts good = new Parts(written.parts());
        MemberIndex.PartLoader swapped = ref -> ref.id().equals(good.order.get(2))
                ? IndexBytes.of(written.parts().get(1)) : good.load(ref);
        MemberIndex index = MemberIndex.open(IndexBytes.of(written.top()), "top", swapped);
        assertThat(index.path(10)).isEqualTo(flat.path(10));
        assertThatThrownBy(() -> index.path(2500)).isInstanceOf(ManifestCorruptedException.class)
                .hasMessageContaining("part 2");
        // A part that is no index at all.
        MemberIndex.PartLoader garbage = ref -> IndexBytes.of(new byte[(int) ref.size()]);
        MemberIndex bad = MemberIndex.open(IndexBytes.of(written.top()), "top", garbage);
        assertThatThrownBy(() -> bad.find("README")).isInstanceOf(ManifestCorruptedException.class)
                .hasMessageContaining("magic");
        // A listing whose directory table disagrees with the members is refused, not guessed.
        assertThat(children(index, "train/n0001", 0)).hasSize(50);
    }

    @Test
    void aFlatIndexOpensThroughTheSameEntryAndAPartedOneNeedsItsParts() {
        MemberIndex flat = classes();
        assertThat(MemberIndex.open(IndexBytes.of(flat.serialize()), "flat", MemberIndex.NO_PARTS)).isEqualTo(flat);
        MemberIndex noParts = MemberIndex.open(IndexBytes.of(top(flat, 100)), "top", MemberIndex.NO_PARTS);
        assertThat(children(noParts, "train", 0)).hasSize(100);
        assertThatThrownBy(() -> noParts.path(0)).isInstanceOf(ManifestCorruptedException.class)
                .hasMessageContaining("parted index");
    }
}
