package io.warpdata.manifest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/** Seeded random manifests for property-style tests. */
final class Manifests {
    private static final String ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_-";
    private static final String NAME_FIRST = "ABCXYZabcxyz019_";
    private static final String NAME_REST = "ABCXYZabcxyz019_.=+-";
    /** Strings that exercise escaping: quotes, backslashes, controls, non-ASCII, emoji. */
    private static final String[] ODD_STRINGS = {"", "BIGINT", "VARCHAR", "STRUCT(a INTEGER, \"b\" VARCHAR)",
        "tab\there", "new\nline", "back\\slash", "quote\"d", "ctrl\u0001\u001f", "caf\u00e9", "\u65e5\u672c",
        "emoji \ud83d\ude00", "slash/es", "\u007f del"};

    private Manifests() {
    }

    static BlobId hash(Random r) {
        byte[] b = new byte[32];
        r.nextBytes(b);
        return BlobId.fromDigest(b);
    }

    static BlobRef blob(Random r) {
        return new BlobRef(hash(r), r.nextInt(4) == 0 ? 0 : r.nextLong(1L << 50), hash(r));
    }

    static String idPart(Random r) {
        StringBuilder sb = new StringBuilder();
        int n = 1 + r.nextInt(12);
        for (int i = 0; i < n; i++) {
            // not starting with '-' (ID_CHARS ends with it)
            sb.append(ID_CHARS.charAt(r.nextInt(ID_CHARS.length() - (i == 0 ? 1 : 0))));
        }
        return sb.toString();
    }

    static String name(Random r) {
        StringBuilder sb = new StringBuilder();
        sb.append(NAME_FIRST.charAt(r.nextInt(NAME_FIRST.length())));
        int n = r.nextInt(12);
        for (int i = 0; i < n; i++) {
            sb.append(NAME_REST.charAt(r.nextInt(NAME_REST.length())));
        }
        return sb.toString();
    }

    static String odd(Random r) {
        return r.nextBoolean() ? ODD_STRINGS[r.nextInt(ODD_STRINGS.length)] : name(r);
    }

    static Manifest random(Random r) {
        Map<String, Table> tables = new TreeMap<>();
        Map<String, Artifact> artifacts = new TreeMap<>();
        int nt = r.nextInt(4);
        while (tables.size() < nt) {
            Map<String, TableShard> shards = new LinkedHashMap<>();
            int ns = r.nextInt(4);
            while (shards.size() < ns) {
                String n = name(r);
                shards.put(n, new TableShard(n, blob(r), r.nextInt(1_000_000)));
            }
            Map<String, Column> columns = new LinkedHashMap<>();
            int nc = r.nextInt(5);
            while (columns.size() < nc) {
                String n = odd(r);
                if (!n.isEmpty()) {
                    columns.put(n, new Column(n, odd(r)));
                }
            }
            tables.put(name(r), new Table(new ArrayList<>(shards.values()), new ArrayList<>(columns.values())));
        }
        int na = r.nextInt(4);
        while (artifacts.size() < na) {
            String n = name(r);
            if (tables.containsKey(n)) {
                continue;
            }
            List<BlobRef> shards = new ArrayList<>();
            int ns = r.nextInt(4);
            for (int i = 0; i < ns; i++) {
                shards.add(blob(r));
            }
            ArtifactKind kind = ArtifactKind.values()[r.nextInt(ArtifactKind.values().length)];
            artifacts.put(n, new Artifact(kind, shards, blob(r), r.nextInt(1 << 30), r.nextLong(1L << 50)));
        }
        List<Binding> bindings = new ArrayList<>();
        if (!tables.isEmpty() && !artifacts.isEmpty()) {
            int nb = r.nextInt(3);
            List<String> tn = new ArrayList<>(tables.keySet());
            List<String> an = new ArrayList<>(artifacts.keySet());
            for (int i = 0; i < nb; i++) {
                bindings.add(new Binding(tn.get(r.nextInt(tn.size())), odd(r).isEmpty() ? "path" : name(r),
                        an.get(r.nextInt(an.size())), RefType.values()[r.nextInt(RefType.values().length)]));
            }
        }
        Map<String, String> metadata = new TreeMap<>();
        int nm = r.nextInt(4);
        for (int i = 0; i < nm; i++) {
            metadata.put(odd(r), odd(r));
        }
        return Manifest.of(new DatasetId(idPart(r), idPart(r)), tables, artifacts, bindings, metadata);
    }

    /** A fixed manifest with one of everything, for field-by-field tests. */
    static Manifest sample() {
        BlobId h1 = new BlobId("1".repeat(64));
        BlobId h2 = new BlobId("2".repeat(64));
        BlobId h3 = new BlobId("3".repeat(64));
        BlobId h4 = new BlobId("4".repeat(64));
        BlobId h5 = new BlobId("5".repeat(64));
        BlobId h6 = new BlobId("6".repeat(64));
        Table main = new Table(
                List.of(new TableShard("part-0.parquet", new BlobRef(h1, 1000, h2), 10),
                        new TableShard("part-1.parquet", new BlobRef(h3, 2000, h4), 20)),
                List.of(new Column("id", "BIGINT"), new Column("path", "VARCHAR")));
        Artifact images = new Artifact(ArtifactKind.TAR_SHARDS,
                List.of(new BlobRef(h5, 5000, h6), new BlobRef(h6, 6000, h5)),
                new BlobRef(h2, 300, h1), 42, 4200);
        return Manifest.of(new DatasetId("ws", "name"), Map.of("main", main), Map.of("images", images),
                List.of(new Binding("main", "path", "images", RefType.IMAGE)),
                Map.of("created_at", "2026-11-22T05:00:00Z", "creator", "test"));
    }
}
