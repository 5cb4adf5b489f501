package io.warpdata.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class ManifestCodecTest {
    private static final int RUNS = 150;
    private static final String SOURCE = "datasets/ws/name/versions/x.json";

    @Test
    void storedFormParsesBackToTheSameManifest() {
        Random r = new Random(1);
        for (int i = 0; i < RUNS; i++) {
            Manifest m = Manifests.random(r);
            Manifest back = ManifestCodec.fromJson(ManifestCodec.toJson(m), SOURCE);
            assertThat(back).isEqualTo(m);
            assertThat(ManifestCodec.version(back)).isEqualTo(ManifestCodec.version(m));
            assertThat(ManifestCodec.toJson(back)).isEqualTo(ManifestCodec.toJson(m));
        }
    }

    @Test
    void versionOfAFixedManifestNeverChanges() {
        // Golden value: if this changes, every published version id changes. Do not update it
        // without a format_version bump and a migration story.
        assertThat(ManifestCodec.version(Manifests.sample()).hex())
                .isEqualTo(GOLDEN_SAMPLE_VERSION);
        assertThat(new String(ManifestCodec.canonicalJson(Manifests.sample()), StandardCharsets.UTF_8))
                .isEqualTo(GOLDEN_SAMPLE_CANONICAL);
    }

    static final String GOLDEN_SAMPLE_VERSION = "27c5d0d8b089dacc667145edea9359c2586c9df5cd26c503a95ebc59ce9a5654";
    /** Cross-checked with Python: json.dumps(d, sort_keys=True, separators=(",", ":")). */
    static final String GOLDEN_SAMPLE_CANONICAL = "{\"artifacts\":{\"images\":{\"index\":{\"blocks\":\"11111111111111111111111111111111111111111111111"
            + "11111111111111111\",\"byte_size\":300,\"hash\":\"22222222222222222222222222222222222222222222222"
            + "22222222222222222\"},\"kind\":\"tar_shards\",\"member_bytes\":4200,\"member_count\":42,\"shards\":[{\""
            + "blocks\":\"6666666666666666666666666666666666666666666666666666666666666666\",\"byte_size\":500"
            + "0,\"hash\":\"5555555555555555555555555555555555555555555555555555555555555555\"},{\"blocks\":\"55"
            + "55555555555555555555555555555555555555555555555555555555555555\",\"byte_size\":6000,\"hash\":\"6"
            + "666666666666666666666666666666666666666666666666666666666666666\"}]}},\"bindings\":[{\"artifac"
            + "t\":\"images\",\"column\":\"path\",\"ref_type\":\"image\",\"table\":\"main\"}],\"dataset_id\":\"ws/name\",\"fo"
            + "rmat_version\":1,\"stats\":{\"total_bytes\":14000,\"total_members\":42,\"total_rows\":30},\"tables\":"
            + "{\"main\":{\"format\":\"parquet\",\"schema\":[{\"name\":\"id\",\"type\":\"BIGINT\"},{\"name\":\"path\",\"type\":"
            + "\"VARCHAR\"}],\"shards\":[{\"blocks\":\"222222222222222222222222222222222222222222222222222222222"
            + "2222222\",\"byte_size\":1000,\"hash\":\"11111111111111111111111111111111111111111111111111111111"
            + "11111111\",\"name\":\"part-0.parquet\",\"row_count\":10},{\"blocks\":\"44444444444444444444444444444"
            + "44444444444444444444444444444444444\",\"byte_size\":2000,\"hash\":\"3333333333333333333333333333"
            + "333333333333333333333333333333333333\",\"name\":\"part-1.parquet\",\"row_count\":20}]}}}";

    @Test
    void stringsAreEscapedMinimallyAndNonAsciiIsRawUtf8() {
        String odd = "caf\u00e9 \"q\" \\ / \n\t \u0001 \u007f \ud83d\ude00";
        Table t = new Table(List.of(), List.of(new Column(odd, odd)));
        Manifest m = Manifest.of(new DatasetId("ws", "n"), Map.of("t", t), Map.of(), List.of(), Map.of(odd, odd));
        String canonical = new String(ManifestCodec.canonicalJson(m), StandardCharsets.UTF_8);
        String expected = "\"caf\u00e9 \\\"q\\\" \\\\ / \\n\\t \\u0001 \u007f \ud83d\ude00\"";
        assertThat(canonical).contains("{\"name\":" + expected + ",\"type\":" + expected + "}");
        String stored = new String(ManifestCodec.toJson(m), StandardCharsets.UTF_8);
        assertThat(stored).contains("\"metadata\":{" + expected + ":" + expected + "}");
        assertThat(ManifestCodec.fromJson(ManifestCodec.toJson(m), SOURCE)).isEqualTo(m);
    }

    @Test
    void unpairedSurrogatesAreWrittenAsEscapesAndRoundTrip() {
        Table t = new Table(List.of(), List.of(new Column("bad\ud800", "x\udc00y")));
        Manifest m = Manifest.of(new DatasetId("ws", "n"), Map.of("t", t), Map.of(), List.of(), Map.of());
        String canonical = new String(ManifestCodec.canonicalJson(m), StandardCharsets.UTF_8);
        assertThat(canonical).contains("{\"name\":\"bad\\uD800\",\"type\":\"x\\uDC00y\"}");
        assertThat(ManifestCodec.fromJson(ManifestCodec.toJson(m), SOURCE)).isEqualTo(m);
    }

    @Test
    void sameSeedGivesSameVersionAndBytes() {
        Random a = new Random(7);
        Random b = new Random(7);
        for (int i = 0; i < RUNS; i++) {
            Manifest ma = Manifests.random(a);
            Manifest mb = Manifests.random(b);
            assertThat(ManifestCodec.canonicalJson(ma)).isEqualTo(ManifestCodec.canonicalJson(mb));
            assertThat(ManifestCodec.version(ma)).isEqualTo(ManifestCodec.version(mb));
        }
    }

    @Test
    void anyKeyOrderAndWhitespaceParsesToTheSameVersion() {
        Random r = new Random(2);
        for (int i = 0; i < RUNS; i++) {
            Manifest m = Manifests.random(r);
            Object tree = JsonTree.read(ManifestCodec.toJson(m));
            byte[] scrambled = JsonTree.writeScrambled(tree, r);
            Manifest back = ManifestCodec.fromJson(scrambled, SOURCE);
            assertThat(back).isEqualTo(m);
            assertThat(ManifestCodec.version(back)).isEqualTo(ManifestCodec.version(m));
        }
    }

    @Test
    void canonicalFormHasSortedKeysNoWhitespaceAndExcludesHashAndMetadata() {
        Random r = new Random(3);
        for (int i = 0; i < RUNS; i++) {
            Manifest m = Manifests.random(r);
            byte[] canonical = ManifestCodec.canonicalJson(m);
            Object tree = JsonTree.read(canonical);
            assertSortedKeys(tree, "$");
            assertThat(JsonTree.write(tree)).as("compact").isEqualTo(canonical);
            @SuppressWarnings("unchecked")
            Map<String, Object> top = (Map<String, Object>) tree;
            assertThat(top).doesNotContainKeys("version_hash", "metadata").containsEntry("format_version", (long) m.formatVersion());

            byte[] stored = ManifestCodec.toJson(m);
            Object storedTree = JsonTree.read(stored);
            assertSortedKeys(storedTree, "$");
            assertThat(JsonTree.write(storedTree)).isEqualTo(stored);
            @SuppressWarnings("unchecked")
            Map<String, Object> storedTop = (Map<String, Object>) storedTree;
            assertThat(storedTop).containsEntry("version_hash", ManifestCodec.version(m).hex())
                    .containsKey("metadata");
        }
    }

    @SuppressWarnings("unchecked")
    private static void assertSortedKeys(Object v, String path) {
        if (v instanceof Map<?, ?> m) {
            List<String> keys = new ArrayList<>((Set<String>) m.keySet());
            List<String> sorted = new ArrayList<>(keys);
            sorted.sort(null);
            assertThat(keys).as(path).isEqualTo(sorted);
            m.forEach((k, x) -> assertSortedKeys(x, path + "." + k));
        } else if (v instanceof List<?> l) {
            l.forEach(x -> assertSortedKeys(x, path + "[]"));
        } else {
            assertThat(v).as(path).isNotInstanceOf(JsonTree.Raw.class);
        }
    }

    @Test
    void aViewRecordsItsParentAndQueryInTheHashedPart() {
        Manifest plain = Manifests.sample();
        Derivation d = new Derivation(DatasetId.parse("ws/parent"), ManifestCodec.version(plain), "main",
                new TreeMap<>(Map.of("where", "label IN ('cat', 'dog')", "seed", "7", "sample", "500")));
        Manifest view = plain.derivedFrom(d);
        assertThat(ManifestCodec.version(plain).hex()).as("ordinary versions keep their id").isEqualTo(GOLDEN_SAMPLE_VERSION);
        assertThat(ManifestCodec.version(view)).isNotEqualTo(ManifestCodec.version(plain));

        Manifest back = ManifestCodec.fromJson(ManifestCodec.toJson(view), SOURCE);
        assertThat(back).isEqualTo(view);
        assertThat(back.derivedFrom()).contains(d);
        Object tree = JsonTree.read(ManifestCodec.canonicalJson(view));
        assertSortedKeys(tree, "$");
        assertThat(new String(ManifestCodec.canonicalJson(view), StandardCharsets.UTF_8)).contains(
                "\"derived_from\":{\"dataset_id\":\"ws/parent\",\"query\":{\"sample\":\"500\",\"seed\":\"7\","
                        + "\"where\":\"label IN ('cat', 'dog')\"},\"table\":\"main\",\"version\":\"" + d.parentVersion().hex());

        TreeMap<String, String> otherSeed = new TreeMap<>(d.query());
        otherSeed.put("seed", "8");
        Manifest other = plain.derivedFrom(new Derivation(d.parent(), d.parentVersion(), "main", otherSeed));
        assertThat(ManifestCodec.version(other)).as("another seed is another view").isNotEqualTo(ManifestCodec.version(view));

        String stored = new String(ManifestCodec.toJson(view), StandardCharsets.UTF_8);
        String unknown = stored.replace("\"table\":\"main\",", "\"table\":\"main\",\"x\":\"y\",");
        assertThatThrownBy(() -> ManifestCodec.fromJson(unknown.getBytes(StandardCharsets.UTF_8), SOURCE))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("derived_from.x");
        String badVersion = stored.replace("\"version\":\"" + d.parentVersion().hex(), "\"version\":\"zz");
        assertThatThrownBy(() -> ManifestCodec.fromJson(badVersion.getBytes(StandardCharsets.UTF_8), SOURCE))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("derived_from.version");
    }

    @Test
    void partitionFoldersOfTableShardsRoundTripAndAreCheckedLikeMemberPaths() {
        BlobRef blob = Manifests.blob(new Random(2));
        Table t = new Table(List.of(new TableShard("data_0.parquet", blob, 5, "year=2026/cls=a"),
                new TableShard("data_0.parquet", blob, 5, "year=2026/cls=b")), List.of(new Column("id", "BIGINT")));
        Manifest m = Manifest.of(DatasetId.parse("ws/p"), Map.of("main", t), Map.of(), List.of(), Map.of());
        Manifest back = ManifestCodec.fromJson(ManifestCodec.toJson(m), SOURCE);
        assertThat(back).isEqualTo(m);
        assertThat(back.tables().get("main").shards().get(1).path()).isEqualTo("year=2026/cls=b/data_0.parquet");
        assertThat(new String(ManifestCodec.canonicalJson(m), StandardCharsets.UTF_8))
                .contains("\"dir\":\"year=2026/cls=a\",\"name\":\"data_0.parquet\"");
        assertThatThrownBy(() -> new TableShard("x.parquet", blob, 1, "../up")).isInstanceOf(ManifestValidationException.class);
        assertThatThrownBy(() -> new Table(List.of(new TableShard("x.parquet", blob, 1, "a"),
                new TableShard("x.parquet", blob, 1, "a")), List.of())).hasMessageContaining("duplicate shard name 'a/x.parquet'");
        String stored = new String(ManifestCodec.toJson(m), StandardCharsets.UTF_8).replace("year=2026/cls=a", "/abs");
        assertThatThrownBy(() -> ManifestCodec.fromJson(stored.getBytes(StandardCharsets.UTF_8), SOURCE))
                .isInstanceOf(ManifestCorruptedException.class).hasMessageContaining("tables.main.shards[0].dir");
    }

    @Test
    void formatFactsOfAnArtifactAreHashedAndRoundTrip() {
        Manifest plain = Manifests.sample();
        Artifact a = plain.artifacts().get("images");
        Artifact withFacts = new Artifact(ArtifactKind.SAFETENSORS, a.shards(), a.index(), a.memberCount(), a.memberBytes(),
                new TreeMap<>(Map.of("format", "safetensors", "tensors", "132", "dtypes", "F32:120 BF16:3")));
        Manifest m = Manifest.of(plain.datasetId(), plain.tables(), Map.of("images", withFacts), plain.bindings(), Map.of());
        assertThat(ManifestCodec.fromJson(ManifestCodec.toJson(m), SOURCE)).isEqualTo(m);
        assertThat(new String(ManifestCodec.canonicalJson(m), StandardCharsets.UTF_8))
                .contains("{\"facts\":{\"dtypes\":\"F32:120 BF16:3\",\"format\":\"safetensors\",\"tensors\":\"132\"},\"index\":");
        Artifact otherFacts = new Artifact(ArtifactKind.SAFETENSORS, a.shards(), a.index(), a.memberCount(), a.memberBytes(),
                new TreeMap<>(Map.of("format", "safetensors", "tensors", "133", "dtypes", "F32:120 BF16:3")));
        assertThat(ManifestCodec.version(Manifest.of(plain.datasetId(), plain.tables(), Map.of("images", otherFacts),
                plain.bindings(), Map.of()))).isNotEqualTo(ManifestCodec.version(m));
        assertThatThrownBy(() -> new Artifact(ArtifactKind.SAFETENSORS, a.shards(), a.index(), 1, 1,
                new TreeMap<>(Map.of("Bad Name", "x")))).isInstanceOf(ManifestValidationException.class);
    }

    @Test
    void metadataDoesNotChangeTheVersion() {
        Random r = new Random(4);
        for (int i = 0; i < RUNS; i++) {
            Manifest m = Manifests.random(r);
            Manifest other = m.withMetadata(Map.of("created_at", "x" + i, "creator", Manifests.odd(r)));
            assertThat(ManifestCodec.version(other)).isEqualTo(ManifestCodec.version(m));
            assertThat(ManifestCodec.canonicalJson(other)).isEqualTo(ManifestCodec.canonicalJson(m));
        }
    }

    @Test
    void everySingleFieldChangeChangesTheVersion() {
        Manifest base = Manifests.sample();
        Map<String, UnaryOperator<Map<String, Object>>> edits = new LinkedHashMap<>();
        edits.put("dataset workspace", t -> put(t, "dataset_id", "ws2/name"));
        edits.put("dataset name", t -> put(t, "dataset_id", "ws/name2"));
        edits.put("table name", t -> {
            rename(obj(t, "tables"), "main", "main2");
            return put(elem(t, "bindings", 0), "table", "main2");
        });
        edits.put("table shard name", t -> put(elem(t, "tables.main.shards", 0), "name", "p.parquet"));
        edits.put("table shard hash", t -> put(elem(t, "tables.main.shards", 0), "hash", "a".repeat(64)));
        edits.put("table shard blocks", t -> put(elem(t, "tables.main.shards", 0), "blocks", "a".repeat(64)));
        edits.put("table shard size", t -> put(elem(t, "tables.main.shards", 0), "byte_size", 1001L));
        edits.put("table shard rows", t -> put(elem(t, "tables.main.shards", 1), "row_count", 21L));
        edits.put("table shard order", t -> swap(list(t, "tables.main.shards")));
        edits.put("column name", t -> put(elem(t, "tables.main.schema", 0), "name", "id2"));
        edits.put("column type", t -> put(elem(t, "tables.main.schema", 0), "type", "INTEGER"));
        edits.put("column order", t -> swap(list(t, "tables.main.schema")));
        edits.put("artifact name", t -> {
            rename(obj(t, "artifacts"), "images", "images2");
            return put(elem(t, "bindings", 0), "artifact", "images2");
        });
        edits.put("artifact kind", t -> put(obj(t, "artifacts.images"), "kind", "webdataset_shards"));
        edits.put("artifact shard hash", t -> put(elem(t, "artifacts.images.shards", 0), "hash", "a".repeat(64)));
        edits.put("artifact shard blocks", t -> put(elem(t, "artifacts.images.shards", 0), "blocks", "a".repeat(64)));
        edits.put("artifact shard size", t -> put(elem(t, "artifacts.images.shards", 1), "byte_size", 1L));
        edits.put("artifact shard order", t -> swap(list(t, "artifacts.images.shards")));
        edits.put("index hash", t -> put(obj(t, "artifacts.images.index"), "hash", "a".repeat(64)));
        edits.put("index blocks", t -> put(obj(t, "artifacts.images.index"), "blocks", "a".repeat(64)));
        edits.put("index size", t -> put(obj(t, "artifacts.images.index"), "byte_size", 0L));
        edits.put("member count", t -> put(obj(t, "artifacts.images"), "member_count", 43L));
        edits.put("member bytes", t -> put(obj(t, "artifacts.images"), "member_bytes", 4201L));
        edits.put("binding table", t -> {
            obj(t, "tables").put("other", JsonTree.copy(obj(t, "tables.main")));
            return put(elem(t, "bindings", 0), "table", "other");
        });
        edits.put("binding column", t -> put(elem(t, "bindings", 0), "column", "id"));
        edits.put("binding ref type", t -> put(elem(t, "bindings", 0), "ref_type", "file"));
        edits.put("bindings added", t -> {
            list(t, "bindings").add(JsonTree.copy(elem(t, "bindings", 0)));
            return t;
        });
        edits.put("stats rows", t -> put(obj(t, "stats"), "total_rows", 31L));
        edits.put("stats bytes", t -> put(obj(t, "stats"), "total_bytes", 1L));
        edits.put("stats members", t -> put(obj(t, "stats"), "total_members", 1L));

        Set<VersionHash> seen = new HashSet<>();
        VersionHash baseVersion = ManifestCodec.version(base);
        seen.add(baseVersion);
        for (var e : edits.entrySet()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> tree = (Map<String, Object>) JsonTree.read(ManifestCodec.toJson(base));
            e.getValue().apply(tree);
            tree.remove("version_hash");
            Manifest edited = parseIgnoringHash(tree);
            assertThat(edited).as(e.getKey()).isNotEqualTo(base);
            VersionHash v = ManifestCodec.version(edited);
            assertThat(seen.add(v)).as(e.getKey() + " gives a new version").isTrue();
        }
    }

    /** Parses an edited tree by filling in its recomputed version hash. */
    private static Manifest parseIgnoringHash(Map<String, Object> tree) {
        tree.put("version_hash", "0".repeat(64));
        ManifestCorruptedException e = catchThrowableOfType(ManifestCorruptedException.class,
                () -> ManifestCodec.fromJson(JsonTree.write(tree), SOURCE));
        assertThat(e).isNotNull();
        assertThat(e.field()).isEqualTo("version_hash");
        String msg = e.getMessage();
        String actual = msg.substring(msg.lastIndexOf(' ') + 1);
        tree.put("version_hash", actual);
        return ManifestCodec.fromJson(JsonTree.write(tree), SOURCE);
    }

    @Test
    void versionHashMismatchIsCorruption() {
        Manifest m = Manifests.sample();
        @SuppressWarnings("unchecked")
        Map<String, Object> tree = (Map<String, Object>) JsonTree.read(ManifestCodec.toJson(m));
        put(elem(tree, "tables.main.shards", 0), "row_count", 11L);
        assertCorrupted(JsonTree.write(tree), "version_hash")
                .hasMessageContaining("hash mismatch: stored " + ManifestCodec.version(m).hex() + ", content hashes to ");
    }

    // ------------------------------------------------------------ corruption, field by field

    @Test
    void everyMissingFieldIsNamed() {
        Object base = storedSample();
        for (String path : objectPaths(base)) {
            if (isMapPath(path)) {
                continue;
            }
            Map<String, Object> o = at(base, path);
            for (String key : o.keySet()) {
                Object tree = JsonTree.copy(base);
                at(tree, path).remove(key);
                assertCorrupted(JsonTree.write(tree), join(path, key)).hasMessageContaining("missing required field");
            }
        }
    }

    @Test
    void everyUnknownFieldIsNamed() {
        Object base = storedSample();
        for (String path : objectPaths(base)) {
            Object tree = JsonTree.copy(base);
            at(tree, path).put("zz_unknown", 1L);
            assertCorrupted(JsonTree.write(tree), join(path, "zz_unknown"));
        }
    }

    @Test
    void everyMistypedOrInvalidLeafIsNamed() {
        Object base = storedSample();
        for (String path : objectPaths(base)) {
            Map<String, Object> o = at(base, path);
            for (var e : o.entrySet()) {
                String field = join(path, e.getKey());
                List<Object> bad = new ArrayList<>();
                if (e.getValue() instanceof String) {
                    bad.add(7L);
                    bad.add(new JsonTree.Raw("null"));
                    bad.add(List.of());
                    if (!path.equals("metadata") && !e.getKey().equals("type") && !e.getKey().equals("column")
                            && !path.contains("schema")) {
                        bad.add("../bad/" + e.getValue());
                    }
                } else if (e.getValue() instanceof Long) {
                    bad.add("7");
                    bad.add(-1L);
                    bad.add(new JsonTree.Raw("1.5"));
                    bad.add(new JsonTree.Raw("1e3"));
                    bad.add(new JsonTree.Raw("99999999999999999999"));
                    bad.add(new JsonTree.Raw("true"));
                } else if (e.getValue() instanceof Map<?, ?>) {
                    bad.add("x");
                    bad.add(List.of());
                } else if (e.getValue() instanceof List<?>) {
                    bad.add("x");
                    bad.add(new LinkedHashMap<>());
                }
                for (Object b : bad) {
                    Object tree = JsonTree.copy(base);
                    at(tree, path).put(e.getKey(), b);
                    assertCorrupted(JsonTree.write(tree), field);
                }
            }
        }
    }

    @Test
    void invalidValuesAreNamedByJsonPath() {
        assertCorrupted(edit(t -> put(elem(t, "tables.main.shards", 1), "hash", "ABC")), "tables.main.shards[1].hash");
        assertCorrupted(edit(t -> put(elem(t, "tables.main.shards", 1), "blocks", "1".repeat(63))),
                "tables.main.shards[1].blocks");
        assertCorrupted(edit(t -> put(elem(t, "artifacts.images.shards", 1), "hash", "1".repeat(65))),
                "artifacts.images.shards[1].hash");
        assertCorrupted(edit(t -> put(obj(t, "artifacts.images"), "kind", "zip")), "artifacts.images.kind");
        assertCorrupted(edit(t -> put(elem(t, "bindings", 0), "ref_type", "IMAGE")), "bindings[0].ref_type");
        assertCorrupted(edit(t -> put(elem(t, "bindings", 0), "table", "nope")), "bindings[0].table");
        assertCorrupted(edit(t -> put(elem(t, "bindings", 0), "artifact", "nope")), "bindings[0].artifact");
        assertCorrupted(edit(t -> put(elem(t, "bindings", 0), "column", "")), "bindings[0].column");
        assertCorrupted(edit(t -> put(obj(t, "tables.main"), "format", "csv")), "tables.main.format")
                .hasMessageContaining("parquet");
        assertCorrupted(edit(t -> put(t, "format_version", 0L)), "format_version")
                .hasMessageContaining("format version 0");
        assertCorrupted(edit(t -> put(t, "version_hash", "xyz")), "version_hash");
        assertCorrupted(edit(t -> put(elem(t, "tables.main.schema", 1), "name", "")), "tables.main.schema[1].name");
    }

    @Test
    void aVersionWhoseIndexIsInPartsIsWrittenInFormatTwoAndEveryOtherInFormatOne() {
        Manifest small = withMembers(MemberIndex.PART_MEMBERS);
        Manifest parted = withMembers(MemberIndex.PART_MEMBERS + 1);
        assertThat(small.formatVersion()).as("a flat index: every Warp reads it").isEqualTo(1);
        assertThat(parted.formatVersion()).as("an index in parts: older readers refuse it by number").isEqualTo(2);
        assertThat(new String(ManifestCodec.toJson(parted), StandardCharsets.UTF_8)).contains("\"format_version\":2");
        assertThat(ManifestCodec.fromJson(ManifestCodec.toJson(parted), SOURCE)).isEqualTo(parted);
        assertThat(ManifestCodec.version(Manifests.sample()).hex()).as("format 1 versions keep their ids")
                .isEqualTo(GOLDEN_SAMPLE_VERSION);
        assertThat(parted.withMetadata(Map.of("creator", "bob")).formatVersion()).isEqualTo(2);
    }

    @Test
    void aVersionPublishedInPartsBeforeFormatTwoIsReadAsStoredAndKeepsItsId() {
        // Publishers from commit 2d598f7 until format 2 wrote parted indexes under format 1.
        Manifest parted = withMembers(MemberIndex.PART_MEMBERS + 1);
        Manifest legacy = new Manifest(parted.datasetId(), parted.tables(), parted.artifacts(), parted.bindings(),
                parted.stats(), parted.metadata(), parted.derivedFrom(), 1);
        byte[] stored = ManifestCodec.toJson(legacy);
        assertThat(new String(stored, StandardCharsets.UTF_8)).contains("\"format_version\":1");
        Manifest back = ManifestCodec.fromJson(stored, SOURCE);
        assertThat(back.formatVersion()).isEqualTo(1);
        assertThat(ManifestCodec.version(back)).isEqualTo(ManifestCodec.version(legacy))
                .isNotEqualTo(ManifestCodec.version(parted));
        assertThat(ManifestCodec.toJson(back)).isEqualTo(stored);
    }

    @Test
    void aFormatNewerThanThisWarpIsRefusedAsTooNewNotAsDamage() {
        assertThatThrownBy(() -> ManifestCodec.fromJson(edit(t -> put(t, "format_version", 6L)), SOURCE))
                .isInstanceOf(ManifestFormatTooNewException.class)
                .hasMessageContaining("format version 6; this Warp reads versions 1 to 5")
                .hasMessageContaining("published by a newer Warp")
                .satisfies(e -> assertThat(((WarpException) e).type()).isEqualTo("FormatTooNew"))
                .satisfies(e -> assertThat(((WarpException) e).nextStep()).contains("Upgrade Warp")
                        .doesNotContain("tamper"));
        // A newer format may well hold fields and kinds this one does not know: still too new.
        assertThatThrownBy(() -> ManifestCodec.fromJson(edit(t -> {
            put(t, "format_version", 6L);
            put(t, "lineage", "new in format 6");
            put(obj(t, "artifacts.images"), "kind", "zip_shards");
            return t;
        }), SOURCE)).isInstanceOf(ManifestFormatTooNewException.class);
    }

    @Test
    void webDatasetShardsThatNameTheirFilesAreFormatThreeAndEveryOtherVersionKeepsItsFormat() {
        Manifest s = Manifests.sample();
        Artifact a = s.artifacts().get("images");
        List<String> names = java.util.stream.IntStream.range(0, a.shards().size())
                .mapToObj(i -> String.format("shard-%06d.tar", i)).toList();
        Artifact named = new Artifact(ArtifactKind.WEBDATASET_SHARDS, a.shards(), a.index(), a.memberCount(),
                a.memberBytes(), new TreeMap<>(), names);
        Manifest m = Manifest.of(s.datasetId(), s.tables(), Map.of("images", named), s.bindings(), s.metadata());
        assertThat(m.formatVersion()).as("older readers refuse it by number, not as damage").isEqualTo(3);
        String json = new String(ManifestCodec.toJson(m), StandardCharsets.UTF_8);
        assertThat(json).contains("\"format_version\":3", "\"shard_names\":[\"shard-000000.tar\"");
        Manifest back = ManifestCodec.fromJson(ManifestCodec.toJson(m), SOURCE);
        assertThat(back).isEqualTo(m);
        assertThat(back.artifacts().get("images").shardNames()).isEqualTo(names);
        // Without names (folders, views, older publishes) nothing changes: the golden id holds.
        assertThat(ManifestCodec.version(Manifests.sample()).hex()).isEqualTo(GOLDEN_SAMPLE_VERSION);
        assertThat(new String(ManifestCodec.toJson(Manifests.sample()), StandardCharsets.UTF_8))
                .doesNotContain("shard_names");
    }

    @Test
    void anArtifactWithTensorHashesIsFormatFourAndReadsBackWithThem() {
        Manifest s = Manifests.sample();
        Artifact a = s.artifacts().get("images");
        BlobRef hashes = new BlobRef(BlobId.of("tensor hashes".getBytes(StandardCharsets.UTF_8)), 13,
                BlobId.of("blocks".getBytes(StandardCharsets.UTF_8)));
        Manifest m = Manifest.of(s.datasetId(), s.tables(), Map.of("images", a.withTensorHashes(hashes, null)), s.bindings(),
                s.metadata());
        assertThat(m.formatVersion()).as("older readers refuse it by number, not as damage").isEqualTo(4);
        String json = new String(ManifestCodec.toJson(m), StandardCharsets.UTF_8);
        assertThat(json).contains("\"format_version\":4", "\"tensor_hashes\":{");
        Manifest back = ManifestCodec.fromJson(ManifestCodec.toJson(m), SOURCE);
        assertThat(back).isEqualTo(m);
        assertThat(back.artifacts().get("images").tensorHashes()).isEqualTo(hashes);
        // Shard names too: still 4, the newest thing it names.
        Artifact both = new Artifact(ArtifactKind.WEBDATASET_SHARDS, a.shards(), a.index(), a.memberCount(), a.memberBytes(),
                new TreeMap<>(), java.util.stream.IntStream.range(0, a.shards().size()).mapToObj(i -> i + ".tar").toList(),
                hashes);
        assertThat(Manifest.of(s.datasetId(), s.tables(), Map.of("images", both), s.bindings(), s.metadata())
                .formatVersion()).isEqualTo(4);
        // Without them nothing changes: the golden id holds.
        assertThat(ManifestCodec.version(Manifests.sample()).hex()).isEqualTo(GOLDEN_SAMPLE_VERSION);
        // In a stored manifest under an older number they are damage.
        @SuppressWarnings("unchecked") Map<String, Object> tree = (Map<String, Object>) JsonTree.read(ManifestCodec.toJson(m));
        put(tree, "format_version", 3L);
        assertCorrupted(JsonTree.write(tree), "artifacts.images.tensor_hashes").hasMessageContaining("format 4");
    }

    @Test
    void anArtifactWithTensorHeadersIsFormatFiveAndReadsBackWithThem() {
        Manifest s = Manifests.sample();
        Artifact a = s.artifacts().get("images");
        BlobRef hashes = new BlobRef(BlobId.of("tensor hashes".getBytes(StandardCharsets.UTF_8)), 13,
                BlobId.of("blocks".getBytes(StandardCharsets.UTF_8)));
        BlobRef headers = new BlobRef(BlobId.of("tensor headers".getBytes(StandardCharsets.UTF_8)), 14,
                BlobId.of("header blocks".getBytes(StandardCharsets.UTF_8)));
        Manifest m = Manifest.of(s.datasetId(), s.tables(), Map.of("images", a.withTensorHashes(hashes, headers)),
                s.bindings(), s.metadata());
        assertThat(m.formatVersion()).as("older readers refuse it by number, not as damage").isEqualTo(5);
        String json = new String(ManifestCodec.toJson(m), StandardCharsets.UTF_8);
        assertThat(json).contains("\"format_version\":5", "\"tensor_hashes\":{", "\"tensor_headers\":{");
        Manifest back = ManifestCodec.fromJson(ManifestCodec.toJson(m), SOURCE);
        assertThat(back).isEqualTo(m);
        assertThat(back.artifacts().get("images").tensorHeaders()).isEqualTo(headers);
        // Under an older number they are damage; without the hashes they vouch for nothing.
        @SuppressWarnings("unchecked") Map<String, Object> tree = (Map<String, Object>) JsonTree.read(ManifestCodec.toJson(m));
        put(tree, "format_version", 4L);
        assertCorrupted(JsonTree.write(tree), "artifacts.images.tensor_headers").hasMessageContaining("format 5");
        assertThatThrownBy(() -> a.withTensorHashes(null, headers)).isInstanceOf(ManifestValidationException.class)
                .hasMessageContaining("only with its tensor hashes");
    }

    @Test
    void shardNamesThatCannotBeShownAsFilesAreRefused() {
        Manifest s = Manifests.sample();
        Artifact a = s.artifacts().get("images");
        int n = a.shards().size();
        List<String> names = java.util.stream.IntStream.range(0, n).mapToObj(i -> i + ".tar").toList();
        assertThatThrownBy(() -> new Artifact(ArtifactKind.TAR_SHARDS, a.shards(), a.index(), 1, 1, new TreeMap<>(), names))
                .isInstanceOf(ManifestValidationException.class).hasMessageContaining("only webdataset_shards");
        assertThatThrownBy(() -> new Artifact(ArtifactKind.WEBDATASET_SHARDS, a.shards(), a.index(), 1, 1,
                new TreeMap<>(), names.subList(0, n - 1))).hasMessageContaining((n - 1) + " names for " + n + " shards");
        List<String> twice = new ArrayList<>(names);
        twice.set(n - 1, names.get(0));
        assertThatThrownBy(() -> new Artifact(ArtifactKind.WEBDATASET_SHARDS, a.shards(), a.index(), 1, 1,
                new TreeMap<>(), twice)).hasMessageContaining("names two shards");
        List<String> path = new ArrayList<>(names);
        path.set(0, "sub/0.tar");
        assertThatThrownBy(() -> new Artifact(ArtifactKind.WEBDATASET_SHARDS, a.shards(), a.index(), 1, 1,
                new TreeMap<>(), path)).hasMessageContaining("is not a file name");
        List<String> spaced = new ArrayList<>(names);
        spaced.set(0, "shard 0 ü=+.tar");
        assertThat(new Artifact(ArtifactKind.WEBDATASET_SHARDS, a.shards(), a.index(), 1, 1, new TreeMap<>(), spaced)
                .shardNames()).as("any name a member may have").isEqualTo(spaced);
        Artifact named = new Artifact(ArtifactKind.WEBDATASET_SHARDS, a.shards(), a.index(), 1, 1, new TreeMap<>(), names);
        assertThatThrownBy(() -> Manifest.of(s.datasetId(), s.tables(), Map.of("images", named, "images.tars", a),
                List.of(), s.metadata())).hasMessageContaining("'images.tars', is the name of an artifact");
        String longName = "a".repeat(251);
        assertThatThrownBy(() -> Manifest.of(s.datasetId(), s.tables(), Map.of(longName, named), List.of(),
                s.metadata())).hasMessageContaining("longer than a file name may be");
        // In a stored manifest: names under an older format number, an empty list.
        Manifest m = Manifest.of(s.datasetId(), s.tables(), Map.of("images", named), s.bindings(), s.metadata());
        @SuppressWarnings("unchecked") Map<String, Object> tree = (Map<String, Object>) JsonTree.read(ManifestCodec.toJson(m));
        put(tree, "format_version", 2L);
        assertCorrupted(JsonTree.write(tree), "artifacts.images.shard_names").hasMessageContaining("format 3");
        @SuppressWarnings("unchecked") Map<String, Object> empty = (Map<String, Object>) JsonTree.read(ManifestCodec.toJson(m));
        put(obj(empty, "artifacts.images"), "shard_names", List.of());
        assertCorrupted(JsonTree.write(empty), "artifacts.images.shard_names");
    }

    private static Manifest withMembers(long members) {
        Manifest s = Manifests.sample();
        Artifact a = s.artifacts().get("images");
        Artifact big = new Artifact(a.kind(), a.shards(), a.index(), members, a.memberBytes());
        return Manifest.of(s.datasetId(), s.tables(), Map.of("images", big), s.bindings(), s.metadata());
    }

    @Test
    void badDatasetIdsAreRejected() {
        for (String id : List.of("ws", "ws/name/x", "WS/name", "ws/na me", "/name", "ws/", "", "ws/../x", "file:ws/x")) {
            assertCorrupted(edit(t -> put(t, "dataset_id", id)), "dataset_id");
        }
    }

    @Test
    void unsafeNamesAreRejected() {
        for (String bad : List.of("/abs", "..", ".", "a/b", "../x", "file:x", ".hidden", "-dash", "", "a\u0000b")) {
            assertCorrupted(edit(t -> rename(obj(t, "tables"), "main", bad)), "tables." + bad);
            assertCorrupted(edit(t -> rename(obj(t, "artifacts"), "images", bad)), "artifacts." + bad);
            assertCorrupted(edit(t -> put(elem(t, "tables.main.shards", 0), "name", bad)), "tables.main.shards[0].name");
        }
        assertThatThrownBy(() -> new TableShard("../x", Manifests.blob(new Random(1)), 1))
                .isInstanceOf(ManifestValidationException.class);
    }

    @Test
    void duplicateNamesAreRejected() {
        assertCorrupted(edit(t -> put(elem(t, "tables.main.shards", 1), "name", "part-0.parquet")),
                "tables.main.shards[1].name").hasMessageContaining("duplicate");
        assertCorrupted(edit(t -> put(elem(t, "tables.main.schema", 1), "name", "id")),
                "tables.main.schema[1].name").hasMessageContaining("duplicate");
        assertCorrupted(edit(t -> {
            obj(t, "artifacts").put("main", JsonTree.copy(obj(t, "artifacts.images")));
            return t;
        }), "artifacts.main").hasMessageContaining("used by a table and an artifact");
        // a JSON object with the same key twice
        String json = new String(ManifestCodec.toJson(Manifests.sample()), StandardCharsets.UTF_8);
        String tables = json.substring(json.indexOf("\"tables\":{") + 10, json.indexOf(",\"version_hash\"") - 1);
        String doubled = json.replace("\"tables\":{" + tables + "}", "\"tables\":{" + tables + "," + tables + "}");
        assertThat(doubled).isNotEqualTo(json);
        assertCorrupted(doubled.getBytes(StandardCharsets.UTF_8), "tables.main").hasMessageContaining("duplicate");
        String twice = json.replace("\"format_version\":1", "\"format_version\":1,\"format_version\":1");
        assertCorrupted(twice.getBytes(StandardCharsets.UTF_8), "format_version").hasMessageContaining("duplicate");
        assertThatThrownBy(() -> new Table(List.of(new TableShard("a", Manifests.blob(new Random(1)), 1),
                new TableShard("a", Manifests.blob(new Random(2)), 1)), List.of()))
                .isInstanceOf(ManifestValidationException.class).hasMessageContaining("'a'");
    }

    @Test
    void malformedJsonAndTrailingGarbageAreCorruption() {
        byte[] good = ManifestCodec.toJson(Manifests.sample());
        String s = new String(good, StandardCharsets.UTF_8);
        assertCorrupted((s + "x").getBytes(StandardCharsets.UTF_8), null);
        assertCorrupted((s + "{}").getBytes(StandardCharsets.UTF_8), "$").hasMessageContaining("trailing");
        assertCorrupted((s + " \n").getBytes(StandardCharsets.UTF_8).length == good.length + 2
                ? (s + "[").getBytes(StandardCharsets.UTF_8) : good, null);
        assertCorrupted(s.substring(0, s.length() / 2).getBytes(StandardCharsets.UTF_8), null);
        assertCorrupted(new byte[0], null);
        assertCorrupted("[]".getBytes(StandardCharsets.UTF_8), "$");
        assertCorrupted("null".getBytes(StandardCharsets.UTF_8), "$");
        assertCorrupted(s.replace("\"dataset_id\"", "dataset_id").getBytes(StandardCharsets.UTF_8), null);
        assertCorrupted(s.replace("}}", "},}").getBytes(StandardCharsets.UTF_8), null);
        // whitespace around the document is fine
        assertThat(ManifestCodec.fromJson((" \n" + s + "\n ").getBytes(StandardCharsets.UTF_8), SOURCE))
                .isEqualTo(Manifests.sample());
        // every truncation is corruption, never another exception
        for (int n = 0; n < good.length; n += 7) {
            byte[] cut = java.util.Arrays.copyOf(good, n);
            assertThatThrownBy(() -> ManifestCodec.fromJson(cut, SOURCE)).isInstanceOf(ManifestCorruptedException.class);
        }
    }

    @Test
    void malformedJsonNamesWhereItBroke() {
        String s = new String(ManifestCodec.toJson(Manifests.sample()), StandardCharsets.UTF_8);
        String broken = s.replace("\"name\":\"path\"", "\"name\":path");
        assertCorrupted(broken.getBytes(StandardCharsets.UTF_8), "tables.main.schema[1].name")
                .hasMessageContaining("not valid JSON");
        String unclosed = s.replace("\"kind\":\"tar_shards\"", "\"kind\":\"tar_shards");
        assertThatThrownBy(() -> ManifestCodec.fromJson(unclosed.getBytes(StandardCharsets.UTF_8), SOURCE))
                .isInstanceOf(ManifestCorruptedException.class);
    }

    @Test
    void randomByteFlipsNeverEscapeAsOtherExceptions() {
        Random r = new Random(5);
        byte[] good = ManifestCodec.toJson(Manifests.sample());
        for (int i = 0; i < 2000; i++) {
            byte[] bad = good.clone();
            int pos = r.nextInt(bad.length);
            byte b = (byte) r.nextInt(256);
            if (bad[pos] == b) {
                continue;
            }
            bad[pos] = b;
            try {
                Manifest m = ManifestCodec.fromJson(bad, SOURCE);
                // only a flip that keeps the content (e.g. whitespace, metadata) may parse
                assertThat(ManifestCodec.version(m)).isEqualTo(ManifestCodec.version(Manifests.sample()));
            } catch (ManifestCorruptedException expected) {
                assertThat(expected.field()).isNotBlank();
                assertThat(expected.getMessage()).contains(SOURCE);
            }
        }
    }

    @Test
    void corruptionErrorsSayWhatToDo() {
        ManifestCorruptedException e = catchThrowableOfType(ManifestCorruptedException.class,
                () -> ManifestCodec.fromJson("{}".getBytes(StandardCharsets.UTF_8), SOURCE));
        assertThat(e.getMessage()).contains(SOURCE).contains("artifacts");
        assertThat(e.nextStep()).isNotBlank();
        assertThat(e.type()).isEqualTo("ManifestCorrupted");
    }

    // ------------------------------------------------------------ helpers

    private static org.assertj.core.api.AbstractThrowableAssert<?, ? extends Throwable> assertCorrupted(
            byte[] json, String field) {
        ManifestCorruptedException e = catchThrowableOfType(ManifestCorruptedException.class,
                () -> ManifestCodec.fromJson(json, SOURCE));
        assertThat(e).as("corruption expected at " + field + " in " + new String(json, StandardCharsets.UTF_8))
                .isNotNull();
        if (field != null) {
            assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
        }
        return assertThat((Throwable) e);
    }

    private static Object storedSample() {
        return JsonTree.read(ManifestCodec.toJson(Manifests.sample()));
    }

    @SuppressWarnings("unchecked")
    private static byte[] edit(UnaryOperator<Map<String, Object>> f) {
        Map<String, Object> tree = (Map<String, Object>) storedSample();
        f.apply(tree);
        return JsonTree.write(tree);
    }

    private static boolean isMapPath(String path) {
        return path.equals("tables") || path.equals("artifacts") || path.equals("metadata");
    }

    /** JSON paths of every object in the tree ("" for the root). */
    @SuppressWarnings("unchecked")
    private static List<String> objectPaths(Object tree) {
        List<String> out = new ArrayList<>();
        collect(tree, "", out);
        return out;
    }

    @SuppressWarnings("unchecked")
    private static void collect(Object v, String path, List<String> out) {
        if (v instanceof Map<?, ?> m) {
            out.add(path);
            ((Map<String, Object>) m).forEach((k, x) -> collect(x, join(path, k), out));
        } else if (v instanceof List<?> l) {
            for (int i = 0; i < l.size(); i++) {
                collect(l.get(i), path + "[" + i + "]", out);
            }
        }
    }

    private static String join(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    /** Resolves a path written like "tables.main.shards[1]" (names here contain no '.'). */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> at(Object tree, String path) {
        Object v = tree;
        if (!path.isEmpty()) {
            for (String part : path.split("\\.")) {
                int bracket = part.indexOf('[');
                String key = bracket < 0 ? part : part.substring(0, bracket);
                v = ((Map<String, Object>) v).get(key);
                while (bracket >= 0) {
                    int close = part.indexOf(']', bracket);
                    v = ((List<Object>) v).get(Integer.parseInt(part.substring(bracket + 1, close)));
                    bracket = part.indexOf('[', close);
                }
            }
        }
        return (Map<String, Object>) v;
    }

    private static Map<String, Object> obj(Map<String, Object> tree, String path) {
        return at(tree, path);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Map<String, Object> tree, String path) {
        int dot = path.lastIndexOf('.');
        Map<String, Object> parent = dot < 0 ? tree : at(tree, path.substring(0, dot));
        return (List<Object>) parent.get(path.substring(dot + 1));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> elem(Map<String, Object> tree, String path, int i) {
        return (Map<String, Object>) list(tree, path).get(i);
    }

    private static Map<String, Object> put(Map<String, Object> o, String key, Object value) {
        o.put(key, value);
        return o;
    }

    private static Map<String, Object> rename(Map<String, Object> o, String from, String to) {
        Map<String, Object> copy = new LinkedHashMap<>(o);
        o.clear();
        copy.forEach((k, v) -> o.put(k.equals(from) ? to : k, v));
        return o;
    }

    private static Map<String, Object> swap(List<Object> l) {
        Object first = l.get(0);
        l.set(0, l.get(1));
        l.set(1, first);
        return null;
    }

    static {
        // keep TreeMap import used for readers of this test who build manifests by hand
        new TreeMap<String, String>();
    }
}
