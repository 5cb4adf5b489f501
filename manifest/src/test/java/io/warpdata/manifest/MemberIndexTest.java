package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class MemberIndexTest {
    private static final String SOURCE = "blobs/index";

    @Test
    void shardsRenumberedByAPermutationKeepEachMembersPlace() {
        BlobId h = BlobId.of(new byte[] {1});
        MemberIndexBuilder b = new MemberIndexBuilder()
                .add("c/1", 0, 512, 10, 0644, h).add("a/1", 1, 1024, 20, 0644, h).add("b/1", 2, 2048, 30, 0644, h);
        assertThatThrownBy(() -> b.renumberShards(new int[] {1, 1, 0})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a permutation");
        assertThatThrownBy(() -> b.renumberShards(new int[] {1, 0})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no new number for shard 2");
        MemberIndex idx = b.renumberShards(new int[] {2, 0, 1}).build();
        assertThat(idx.shard(idx.find("a/1"))).isEqualTo(0);
        assertThat(idx.shard(idx.find("b/1"))).isEqualTo(1);
        assertThat(idx.shard(idx.find("c/1"))).isEqualTo(2);
        assertThat(idx.offset(idx.find("c/1"))).isEqualTo(512);
    }

    /** Reference component order: '/' mapped below every byte, computed independently. */
    static final Comparator<String> COMPONENT_ORDER = (a, b) -> {
        byte[] x = a.getBytes(StandardCharsets.UTF_8);
        byte[] y = b.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < Math.min(x.length, y.length); i++) {
            int cx = x[i] == '/' ? -1 : x[i] & 0xFF;
            int cy = y[i] == '/' ? -1 : y[i] & 0xFF;
            if (cx != cy) {
                return Integer.compare(cx, cy);
            }
        }
        return Integer.compare(x.length, y.length);
    };

    record Member(String path, int shard, long offset, long length, int mode, BlobId hash) {
    }

    /** A random tree: no path is both a member and a directory of another. */
    static List<Member> randomTree(Random r, int n) {
        String[] names = {"a", "b", "a-b", "a.b", "a0", "A", "caf\u00e9", "\u65e5", "x_y", "z", "img", "img-1", "d\ud83d\ude00"};
        Set<String> files = new TreeSet<>();
        Set<String> dirs = new TreeSet<>();
        int attempts = 0;
        while (files.size() < n && attempts++ < n * 20) {
            int depth = 1 + r.nextInt(4);
            StringBuilder sb = new StringBuilder();
            boolean ok = true;
            for (int d = 0; d < depth; d++) {
                if (d > 0) {
                    if (files.contains(sb.toString())) {
                        ok = false;
                        break;
                    }
                    sb.append('/');
                }
                sb.append(names[r.nextInt(names.length)]);
                if (r.nextInt(4) == 0) {
                    sb.append(r.nextInt(10));
                }
            }
            String p = sb.toString();
            if (!ok || dirs.contains(p) || files.contains(p)) {
                continue;
            }
            files.add(p);
            for (int k = p.indexOf('/'); k >= 0; k = p.indexOf('/', k + 1)) {
                dirs.add(p.substring(0, k));
            }
        }
        List<Member> out = new ArrayList<>();
        for (String p : files) {
            out.add(new Member(p, r.nextInt(5), r.nextLong(1L << 40), r.nextInt(1 << 20), r.nextBoolean() ? 0644 : 0755,
                    Manifests.hash(r)));
        }
        Collections.shuffle(out, r);
        return out;
    }

    static MemberIndex build(List<Member> members) {
        MemberIndexBuilder b = new MemberIndexBuilder();
        for (Member m : members) {
            b.add(m.path(), m.shard(), m.offset(), m.length(), m.mode(), m.hash());
        }
        return b.build();
    }

    @Test
    void buildSortsInComponentOrderAndKeepsEveryField() {
        Random r = new Random(1);
        for (int run = 0; run < 50; run++) {
            List<Member> members = randomTree(r, r.nextInt(200));
            MemberIndex index = build(members);
            List<Member> sorted = new ArrayList<>(members);
            sorted.sort(Comparator.comparing(Member::path, COMPONENT_ORDER));
            assertThat(index.size()).isEqualTo(members.size());
            for (int i = 0; i < sorted.size(); i++) {
                Member m = sorted.get(i);
                assertThat(index.path(i)).isEqualTo(m.path());
                assertThat(index.shard(i)).isEqualTo(m.shard());
                assertThat(index.offset(i)).isEqualTo(m.offset());
                assertThat(index.length(i)).isEqualTo(m.length());
                assertThat(index.mode(i)).isEqualTo(m.mode());
                assertThat(index.hash(i)).isEqualTo(m.hash());
                assertThat(index.hashEquals(i, m.hash().digest(), 0)).isTrue();
                assertThat(index.find(m.path())).isEqualTo(i);
                assertThat(index.pathLength(i)).isEqualTo(m.path().getBytes(StandardCharsets.UTF_8).length);
                assertThat(index.comparePath(i, m.path().getBytes(StandardCharsets.UTF_8))).isZero();
            }
        }
    }

    @Test
    void componentOrderPutsSlashBeforeEveryByte() {
        MemberIndex index = new MemberIndexBuilder()
                .add("a-b", 0, 0, 0, 0644, h(1))
                .add("a/b", 0, 0, 0, 0644, h(2))
                .add("a.b", 0, 0, 0, 0644, h(3))
                .add("a/a/c", 0, 0, 0, 0644, h(4))
                .add("a0", 0, 0, 0, 0644, h(5))
                .add("a/a-c", 0, 0, 0, 0644, h(6))
                .build();
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < index.size(); i++) {
            paths.add(index.path(i));
        }
        // plain byte order would put "a-b" and "a.b" before "a/..." and "a/a-c" before "a/a/c"
        assertThat(paths).containsExactly("a/a/c", "a/a-c", "a/b", "a-b", "a.b", "a0");
        assertThat(index.range("a")).containsExactly(0, 3);
        assertThat(index.range("a/a")).containsExactly(0, 1);
    }

    @Test
    void roundTripsThroughItsBinaryForm() {
        Random r = new Random(2);
        for (int run = 0; run < 30; run++) {
            MemberIndex index = build(randomTree(r, r.nextInt(300)));
            byte[] bytes = index.serialize();
            MemberIndex back = MemberIndex.parse(bytes, SOURCE);
            assertThat(back).isEqualTo(index);
            assertThat(back.serialize()).isEqualTo(bytes);
            assertThat(bytes).isEqualTo(RawIndex.of(index).bytes());
        }
        MemberIndex empty = new MemberIndexBuilder().build();
        assertThat(empty.size()).isZero();
        assertThat(MemberIndex.parse(empty.serialize(), SOURCE)).isEqualTo(empty);
        assertThat(empty.range("")).containsExactly(0, 0);
        assertThat(empty.find("a")).isEqualTo(-1);
    }

    @Test
    void findReturnsMinusOneForNonMembers() {
        Random r = new Random(3);
        List<Member> members = randomTree(r, 300);
        MemberIndex index = build(members);
        Set<String> paths = new TreeSet<>();
        members.forEach(m -> paths.add(m.path()));
        for (String p : paths) {
            for (String probe : List.of(p + "x", p + "/", p.substring(0, p.length() - 1), "/" + p, p + "/y")) {
                if (!paths.contains(probe)) {
                    assertThat(index.find(probe)).as(probe).isEqualTo(-1);
                }
            }
        }
        assertThat(index.find("")).isEqualTo(-1);
        assertThat(index.find((String) null)).isEqualTo(-1);
    }

    @Test
    void findSpelledTakesThePathsTheMountResolvesAndNoOthers() {
        Random r = new Random(4);
        List<Member> members = randomTree(r, 200);
        MemberIndex index = build(members);
        for (int i = 0; i < index.size(); i++) {
            String p = index.path(i);
            String deep = p.replace("/", "//");
            for (String spelled : List.of(p, "/" + p, "./" + p, "//./" + p, "././" + p, deep, p.replace("/", "/./"))) {
                assertThat(index.findSpelled(spelled)).as(spelled).isEqualTo(i);
            }
            assertThat(index.findSpelled("../" + p)).as("../" + p).isEqualTo(-1);
            assertThat(index.findSpelled(p + "/")).isEqualTo(-1);
        }
        assertThat(index.findSpelled(null)).isEqualTo(-1);
        assertThat(index.findSpelled("/")).isEqualTo(-1);
        assertThat(MemberIndex.memberPath("./a//b/./c")).isEqualTo("a/b/c");
        assertThat(MemberIndex.memberPath("a/../b")).isEqualTo("a/../b");
    }

    @Test
    void rangeMatchesABruteForceFilterOnRandomTrees() {
        Random r = new Random(4);
        for (int run = 0; run < 25; run++) {
            List<Member> members = randomTree(r, r.nextInt(400));
            MemberIndex index = build(members);
            Set<String> dirs = new LinkedHashSet<>();
            dirs.add("");
            for (Member m : members) {
                String p = m.path();
                dirs.add(p); // a member is not a directory: empty range
                dirs.add(p + "x");
                for (int k = p.indexOf('/'); k >= 0; k = p.indexOf('/', k + 1)) {
                    dirs.add(p.substring(0, k));
                    dirs.add(p.substring(0, k) + "-");
                    dirs.add(p.substring(0, k - 1));
                }
            }
            dirs.add("nope");
            dirs.add("zzzz");
            dirs.add("0");
            List<String> sortedPaths = new ArrayList<>();
            for (int i = 0; i < index.size(); i++) {
                sortedPaths.add(index.path(i));
            }
            for (String dir : dirs) {
                int[] range = index.range(dir);
                List<Integer> expected = new ArrayList<>();
                String prefix = dir + "/";
                for (int i = 0; i < sortedPaths.size(); i++) {
                    if (dir.isEmpty() || sortedPaths.get(i).startsWith(prefix)) {
                        expected.add(i);
                    }
                }
                if (expected.isEmpty()) {
                    assertThat(range[1] - range[0]).as(dir).isZero();
                    assertThat(index.isDirectory(dir)).as(dir).isEqualTo(dir.isEmpty());
                } else {
                    assertThat(range).as("range of '" + dir + "'")
                            .containsExactly(expected.get(0), expected.get(expected.size() - 1) + 1);
                    assertThat(expected).hasSize(range[1] - range[0]); // contiguous
                    assertThat(index.isDirectory(dir)).isTrue();
                }
            }
        }
    }

    @Test
    void forEachChildListsEachDirectoryOnceInNameOrder() {
        Random r = new Random(5);
        for (int run = 0; run < 25; run++) {
            List<Member> members = randomTree(r, r.nextInt(400));
            MemberIndex index = build(members);
            Set<String> dirs = new TreeSet<>();
            dirs.add("");
            for (Member m : members) {
                for (int k = m.path().indexOf('/'); k >= 0; k = m.path().indexOf('/', k + 1)) {
                    dirs.add(m.path().substring(0, k));
                }
            }
            for (String dir : dirs) {
                // brute force: name -> directory?
                TreeMap<String, Boolean> expected = new TreeMap<>(Comparator.comparing(
                        (String s) -> s.getBytes(StandardCharsets.UTF_8), Arrays::compareUnsigned));
                String prefix = dir.isEmpty() ? "" : dir + "/";
                for (Member m : members) {
                    if (m.path().startsWith(prefix)) {
                        String rest = m.path().substring(prefix.length());
                        int slash = rest.indexOf('/');
                        expected.put(slash < 0 ? rest : rest.substring(0, slash), slash >= 0);
                    }
                }
                List<String> names = new ArrayList<>();
                index.forEachChild(dir, (name, directory, from, to) -> {
                    names.add(name);
                    assertThat(directory).as(dir + " / " + name).isEqualTo(expected.get(name));
                    if (directory) {
                        assertThat(index.range(prefix + name)).containsExactly(from, to);
                    } else {
                        assertThat(to).isEqualTo(from + 1);
                        assertThat(index.path(from)).isEqualTo(prefix + name);
                    }
                });
                assertThat(names).as("children of '" + dir + "'").containsExactlyElementsOf(expected.keySet());
                assertThat(index.childDirectoryCount(dir)).as("subdirectories of '" + dir + "'")
                        .isEqualTo(expected.values().stream().filter(d -> d).count());
            }
        }
    }

    @Test
    void pathBytesCanBeReadWithoutDecoding() {
        MemberIndex index = new MemberIndexBuilder().add("d\u00e9/img.jpg", 0, 0, 1, 0644, h(1)).build();
        assertThat(index.pathLength(0)).isEqualTo(11);
        assertThat(index.slashAfter(0, 0)).isEqualTo(3);
        assertThat(index.slashAfter(0, 4)).isEqualTo(-1);
        assertThat(index.pathSlice(0, 0, 3)).isEqualTo("d\u00e9");
        assertThat(index.pathSlice(0, 4, 11)).isEqualTo("img.jpg");
        assertThat(index.pathByte(0, 4)).isEqualTo((byte) 'i');
        assertThat(index.find("d\u00e9/img.jpg".getBytes(StandardCharsets.UTF_8))).isZero();
        assertThat(index.hashEquals(0, h(2).digest(), 0)).isFalse();
    }

    // ------------------------------------------------------------ builder validation

    @Test
    void builderRejectsDuplicatesNamingThePath() {
        MemberIndexBuilder b = new MemberIndexBuilder().add("x/y.jpg", 0, 0, 1, 0644, h(1)).add("a", 0, 0, 1, 0644, h(2))
                .add("x/y.jpg", 1, 5, 1, 0644, h(3));
        assertThatThrownBy(b::build).isInstanceOf(ManifestValidationException.class)
                .hasMessageContaining("duplicate").hasMessageContaining("'x/y.jpg'");
    }

    @Test
    void builderRejectsAPathThatIsAlsoADirectoryNamingBoth() {
        for (List<String> paths : List.of(List.of("a", "a/b"), List.of("a/b/c", "z", "a/b"), List.of("a/b", "a-c", "a"))) {
            MemberIndexBuilder b = new MemberIndexBuilder();
            paths.forEach(p -> b.add(p, 0, 0, 1, 0644, h(1)));
            assertThatThrownBy(b::build).as(paths.toString()).isInstanceOf(ManifestValidationException.class)
                    .hasMessageContaining("both a member and a directory");
        }
        MemberIndexBuilder b = new MemberIndexBuilder().add("a", 0, 0, 1, 0644, h(1)).add("a/b", 0, 0, 1, 0644, h(1));
        assertThatThrownBy(b::build).hasMessageContaining("'a'").hasMessageContaining("'a/b'");
        // a sibling sharing a prefix is fine
        assertThat(new MemberIndexBuilder().add("a", 0, 0, 1, 0644, h(1)).add("ab/c", 0, 0, 1, 0644, h(1))
                .add("a-b/c", 0, 0, 1, 0644, h(1)).build().size()).isEqualTo(3);
    }

    @Test
    void builderRejectsUnsafePaths() {
        for (String bad : List.of("", "/etc/passwd", "../x", "a/../x", "a/..", "./a", "a/./b", "a//b", "a/",
                "s3://bucket/key", "a\\b", "a\u0000b", "x".repeat(256), "a/" + "\u00e9".repeat(128),
                "bad\ud800", "bad\udc00x")) {
            assertThatThrownBy(() -> new MemberIndexBuilder().add(bad, 0, 0, 1, 0644, h(1)))
                    .as("'" + bad + "'").isInstanceOf(ManifestValidationException.class);
        }
        for (String ok : List.of("a", "a/b", "x".repeat(255), "..a", "a..", ".hidden", "a/.b", "1:x", "a b", "a/b:c",
                "cam:front.jpg", "file:x", "C:stuff",
                "\u65e5\u672c/\ud83d\ude00")) {
            assertThat(new MemberIndexBuilder().add(ok, 0, 0, 1, 0644, h(1)).build().find(ok)).as(ok).isZero();
        }
        assertThatThrownBy(() -> new MemberIndexBuilder().add("a", -1, 0, 1, 0644, h(1))).isInstanceOf(ManifestValidationException.class);
        assertThatThrownBy(() -> new MemberIndexBuilder().add("a", 0, -1, 1, 0644, h(1))).isInstanceOf(ManifestValidationException.class);
        assertThatThrownBy(() -> new MemberIndexBuilder().add("a", 0, 0, -1, 0644, h(1))).isInstanceOf(ManifestValidationException.class);
        assertThatThrownBy(() -> new MemberIndexBuilder().add("a", 0, 0, 1, 010000, h(1))).isInstanceOf(ManifestValidationException.class);
    }

    // ------------------------------------------------------------ parse validation

    @Test
    void corruptIndexesAreRejectedNamingTheField() {
        RawIndex good = RawIndex.of(build(List.of(
                new Member("a/x", 0, 0, 10, 0644, h(1)),
                new Member("a/y", 1, 10, 20, 0644, h(2)),
                new Member("b", 2, 30, 5, 0755, h(3)))));
        assertThat(MemberIndex.parse(good.bytes(), SOURCE).size()).isEqualTo(3);

        byte[] bytes = good.bytes();
        byte[] magic = bytes.clone();
        magic[3] = 'Y';
        assertCorrupted(magic, "magic");
        assertCorrupted(good.with(r -> r.version = 2).bytes(), "version");
        assertCorrupted(good.with(r -> r.count = 4).bytes(), "count");
        assertCorrupted(good.with(r -> r.count = -1).bytes(), "count");
        assertCorrupted(good.with(r -> r.count = Integer.MAX_VALUE).bytes(), "count");
        assertCorrupted(Arrays.copyOf(bytes, bytes.length - 1), "length");
        assertCorrupted(Arrays.copyOf(bytes, bytes.length + 1), "length");
        assertCorrupted(Arrays.copyOf(bytes, 11), "header");
        assertCorrupted(good.with(r -> r.paths = List.of("a/y", "a/x", "b")).bytes(), "members[1].path");
        assertCorrupted(good.with(r -> r.paths = List.of("a/x", "a/x", "b")).bytes(), "members[1].path");
        assertCorrupted(good.with(r -> r.paths = List.of("a", "a/x", "b")).bytes(), "members[1].path");
        assertCorrupted(good.with(r -> r.paths = List.of("a/x", "a/y", "/b")).bytes(), "members[2].path");
        assertCorrupted(good.with(r -> r.paths = List.of("a/x", "a/y", "../b")).bytes(), "members[2].path");
        assertCorrupted(good.with(r -> r.paths = List.of("a/x", "a/y", "b/")).bytes(), "members[2].path");
        assertCorrupted(good.with(r -> r.rawPaths = new byte[][] {bytes("a/x"), bytes("a/y"), {'b', (byte) 0xC3}}).bytes(),
                "members[2].path");
        assertCorrupted(good.with(r -> r.rawPaths = new byte[][] {bytes("a/x"), bytes("a/y"), {'b', (byte) 0xED, (byte) 0xA0, (byte) 0x80}}).bytes(),
                "members[2].path");
        assertCorrupted(good.with(r -> r.rawPaths = new byte[][] {bytes("a/x"), {}, bytes("b")}).bytes(), "members[1].path");
        assertCorrupted(good.with(r -> r.shards[1] = -1).bytes(), "members[1].shard");
        assertCorrupted(good.with(r -> r.offsets[2] = -5).bytes(), "members[2].offset");
        assertCorrupted(good.with(r -> r.lengths[0] = Long.MIN_VALUE).bytes(), "members[0].length");
        assertCorrupted(good.with(r -> r.modes[0] = 010644).bytes(), "members[0].mode");
        assertCorrupted(good.with(r -> r.modes[0] = -1).bytes(), "members[0].mode");
    }

    @Test
    void pathsLongerThanTheChecksScratchBufferAreCheckedWhole() {
        String a = "d/" + "a".repeat(250) + "/" + "b".repeat(250) + "/x";
        String b = "d/" + "a".repeat(250) + "/" + "b".repeat(250) + "/y";
        String c = "e/" + "c".repeat(255) + "/" + "c".repeat(255) + "/" + "c".repeat(255);
        RawIndex good = RawIndex.of(build(List.of(new Member(a, 0, 0, 1, 0644, h(1)), new Member(b, 0, 1, 1, 0644, h(2)),
                new Member(c, 0, 2, 1, 0644, h(3)))));
        MemberIndex read = MemberIndex.parse(good.bytes(), SOURCE);
        assertThat(read.path(2)).isEqualTo(c);
        // Out of order past the first 256 bytes, and both paths named whole in the message.
        ManifestCorruptedException e = catchThrowableOfType(ManifestCorruptedException.class,
                () -> MemberIndex.parse(good.with(r -> r.paths = List.of(b, a, c)).bytes(), SOURCE));
        assertThat(e.field()).isEqualTo("members[1].path");
        assertThat(e.getMessage()).contains("'" + a + "' is out of order after '" + b + "'");
        assertCorrupted(good.with(r -> r.paths = List.of(a, a, c)).bytes(), "members[1].path");
        assertCorrupted(good.with(r -> r.paths = List.of(a, b, c + "/" + "z".repeat(256))).bytes(), "members[2].path");
    }

    @Test
    void corruptionDeepInALargeIndexIsFoundAndNamed() {
        // 12,000 members (a part's worth): each corruption sits past the first 32 KiB of its column.
        List<Member> members = new java.util.ArrayList<>();
        for (int i = 0; i < 12_000; i++) {
            members.add(new Member(String.format("c%03d/f%07d.jpg", i / 100, i), i % 7, 100L * i, 100, 0644, h(i % 5)));
        }
        RawIndex good = RawIndex.of(build(members));
        MemberIndex read = MemberIndex.parse(good.bytes(), SOURCE);
        assertThat(read.size()).isEqualTo(12_000);
        assertThat(read.path(11_999)).isEqualTo("c119/f0011999.jpg");
        assertThat(read.offset(11_999)).isEqualTo(1_199_900L);

        assertCorrupted(good.with(r -> {
            List<String> paths = new java.util.ArrayList<>(r.paths);
            java.util.Collections.swap(paths, 10_000, 10_001);
            r.paths = paths;
        }).bytes(), "members[10001].path");
        assertCorrupted(good.with(r -> {
            List<String> paths = new java.util.ArrayList<>(r.paths);
            paths.set(9_001, paths.get(9_000) + "/x"); // f0009000.jpg is then a member and a directory
            r.paths = paths;
        }).bytes(), "members[9001].path");
        assertCorrupted(good.with(r -> r.modes[11_998] = 070000).bytes(), "members[11998].mode");
        assertCorrupted(good.with(r -> r.offsets[9_500] = -1).bytes(), "members[9500].offset");
        assertCorrupted(good.with(r -> r.shards[11_999] = -2).bytes(), "members[11999].shard");
        assertCorrupted(good.with(r -> r.lengths[8_200] = -3).bytes(), "members[8200].length");
    }

    @Test
    void randomCorruptionNeverEscapesAsAnotherException() {
        Random r = new Random(6);
        byte[] good = build(randomTree(r, 50)).serialize();
        for (int n = 0; n < 3000; n++) {
            byte[] bad = good.clone();
            int flips = 1 + r.nextInt(3);
            for (int f = 0; f < flips; f++) {
                bad[r.nextInt(bad.length)] = (byte) r.nextInt(256);
            }
            if (r.nextInt(10) == 0) {
                bad = Arrays.copyOf(bad, r.nextInt(bad.length + 20));
            }
            try {
                MemberIndex.parse(bad, SOURCE);
            } catch (ManifestCorruptedException expected) {
                assertThat(expected.getMessage()).contains(SOURCE);
            }
        }
    }

    @Test
    void byteLevelPathRulesMatchAStringReference() {
        String alphabet = "ab/.:\\\u0000-+Z9\u00e9\ud83d\ude00 ";
        Random r = new Random(7);
        for (int n = 0; n < 20000; n++) {
            StringBuilder sb = new StringBuilder();
            int len = r.nextInt(8);
            for (int i = 0; i < len; i++) {
                int k = r.nextInt(alphabet.length());
                char c = alphabet.charAt(k);
                if (Character.isHighSurrogate(c)) {
                    sb.append(c).append(alphabet.charAt(k + 1));
                } else if (!Character.isLowSurrogate(c)) {
                    sb.append(c);
                }
            }
            String p = sb.toString();
            boolean ok;
            try {
                Names.requireMemberPath("p", p);
                ok = true;
            } catch (ManifestValidationException e) {
                ok = false;
            }
            assertThat(ok).as("'" + p + "'").isEqualTo(referenceValid(p));
        }
    }

    /** The rules spelled out on Strings, independently of the byte-level implementation. */
    private static boolean referenceValid(String path) {
        if (path.isEmpty() || path.startsWith("/") || path.contains("\u0000") || path.contains("\\")) {
            return false;
        }
        for (String part : path.split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..") || part.getBytes(StandardCharsets.UTF_8).length > 255) {
                return false;
            }
        }
        return true;
    }

    @Test
    void utf8CheckAgreesWithTheJdkDecoder() {
        Random r = new Random(8);
        for (int n = 0; n < 20000; n++) {
            byte[] b = new byte[r.nextInt(6)];
            for (int i = 0; i < b.length; i++) {
                int pick = r.nextInt(4);
                b[i] = (byte) (pick == 0 ? r.nextInt(128) : pick == 1 ? 0x80 + r.nextInt(64) : 0xC0 + r.nextInt(64));
            }
            boolean jdk;
            try {
                StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(b));
                jdk = true;
            } catch (java.nio.charset.CharacterCodingException e) {
                jdk = false;
            }
            assertThat(Names.isUtf8(b, 0, b.length)).as(java.util.HexFormat.of().formatHex(b)).isEqualTo(jdk);
        }
    }

    // ------------------------------------------------------------ helpers

    static BlobId h(int n) {
        byte[] d = new byte[32];
        d[31] = (byte) n;
        d[0] = (byte) (n >> 8);
        return BlobId.fromDigest(d);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void assertCorrupted(byte[] bytes, String field) {
        ManifestCorruptedException e = catchThrowableOfType(ManifestCorruptedException.class,
                () -> MemberIndex.parse(bytes, SOURCE));
        assertThat(e).as("corruption at " + field).isNotNull();
        assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
        assertThat(e.getMessage()).contains(SOURCE);
    }

    /** Writes the documented binary form independently of MemberIndex.serialize(). */
    static final class RawIndex {
        int version = 1;
        int count;
        List<String> paths;
        byte[][] rawPaths;
        int[] shards;
        long[] offsets;
        long[] lengths;
        int[] modes;
        byte[] hashes;

        static RawIndex of(MemberIndex index) {
            RawIndex r = new RawIndex();
            int n = index.size();
            r.count = n;
            r.paths = new ArrayList<>();
            r.shards = new int[n];
            r.offsets = new long[n];
            r.lengths = new long[n];
            r.modes = new int[n];
            r.hashes = new byte[32 * n];
            for (int i = 0; i < n; i++) {
                r.paths.add(index.path(i));
                r.shards[i] = index.shard(i);
                r.offsets[i] = index.offset(i);
                r.lengths[i] = index.length(i);
                r.modes[i] = index.mode(i);
                System.arraycopy(index.hash(i).digest(), 0, r.hashes, 32 * i, 32);
            }
            return r;
        }

        RawIndex with(java.util.function.Consumer<RawIndex> edit) {
            RawIndex c = new RawIndex();
            c.version = version;
            c.count = count;
            c.paths = new ArrayList<>(paths);
            c.rawPaths = rawPaths;
            c.shards = shards.clone();
            c.offsets = offsets.clone();
            c.lengths = lengths.clone();
            c.modes = modes.clone();
            c.hashes = hashes.clone();
            edit.accept(c);
            return c;
        }

        byte[] bytes() {
            byte[][] p = rawPaths;
            if (p == null) {
                p = new byte[paths.size()][];
                for (int i = 0; i < p.length; i++) {
                    p[i] = paths.get(i).getBytes(StandardCharsets.UTF_8);
                }
            }
            int n = p.length;
            int total = 0;
            for (byte[] x : p) {
                total += x.length;
            }
            ByteBuffer b = ByteBuffer.allocate(12 + 60 * n + total);
            b.put("WMIX".getBytes(StandardCharsets.US_ASCII)).putInt(version).putInt(count);
            int end = 0;
            for (byte[] x : p) {
                end += x.length;
                b.putInt(end);
            }
            for (byte[] x : p) {
                b.put(x);
            }
            for (int s : shards) {
                b.putInt(s);
            }
            for (long o : offsets) {
                b.putLong(o);
            }
            for (long l : lengths) {
                b.putLong(l);
            }
            for (int m : modes) {
                b.putInt(m);
            }
            b.put(hashes);
            return b.array();
        }
    }
}
