package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Reads and writes manifests as JSON, by hand on Jackson's streaming API (keys are constants
 * here; no annotations, no data binding), so that the bytes that are hashed are fully under
 * our control.
 *
 * <p>Canonical form: object keys sorted, no insignificant whitespace, integers only (all our
 * numbers are byte sizes and counts), strings as Jackson escapes them, fields with their
 * defaults still written. The version id is SHA-256 over the canonical JSON of everything but
 * {@code version_hash} and {@code metadata}.
 *
 * <p>Stored form ({@link #toJson}): the canonical fields plus {@code version_hash} and
 * {@code metadata}, keys still sorted, compact.
 *
 * <pre>
 * {"artifacts":{"images":{"index":{"blocks":H,"byte_size":N,"hash":H},"kind":"tar_shards",
 *    "member_bytes":N,"member_count":N,"shards":[{"blocks":H,"byte_size":N,"hash":H}]}},
 *  "bindings":[{"artifact":"images","column":"path","ref_type":"image","table":"main"}],
 *  "dataset_id":"ws/name","format_version":1,"metadata":{"created_at":"..."},
 *  "stats":{"total_bytes":N,"total_members":N,"total_rows":N},
 *  "tables":{"main":{"format":"parquet","schema":[{"name":"id","type":"BIGINT"}],
 *    "shards":[{"blocks":H,"byte_size":N,"hash":H,"name":"part-0.parquet","row_count":N}]}},
 *  "version_hash":H}
 * </pre>
 *
 * <p>Reading is strict: any key order and whitespace is accepted (only the hash is over the
 * canonical form), but unknown, duplicate, missing or mistyped fields, non-integer numbers,
 * invalid values, an unknown {@code format_version}, trailing bytes and a {@code version_hash}
 * that is not the hash of the content are all {@link ManifestCorruptedException}s naming the
 * JSON path of the field, e.g. {@code tables.main.shards[1].hash}.
 */
public final class ManifestCodec {
    /** Bumped only with a migration story; readers refuse versions they do not know. */
    public static final int FORMAT_VERSION = 1;

    // Keys are written in sorted order by hand; ManifestCodecTest checks that every object of
    // the canonical form has sorted keys, so a new key in the wrong place fails the build.
    private static final String ARTIFACTS = "artifacts";
    private static final String BINDINGS = "bindings";
    private static final String DATASET_ID = "dataset_id";
    private static final String FORMAT_VERSION_KEY = "format_version";
    private static final String METADATA = "metadata";
    private static final String STATS = "stats";
    private static final String TABLES = "tables";
    private static final String VERSION_HASH = "version_hash";

    private static final String INDEX = "index";
    private static final String KIND = "kind";
    private static final String MEMBER_BYTES = "member_bytes";
    private static final String MEMBER_COUNT = "member_count";
    private static final String SHARDS = "shards";

    private static final String BLOCKS = "blocks";
    private static final String BYTE_SIZE = "byte_size";
    private static final String HASH = "hash";
    private static final String NAME = "name";
    private static final String ROW_COUNT = "row_count";

    private static final String FORMAT = "format";
    private static final String SCHEMA = "schema";
    private static final String TYPE = "type";

    private static final String ARTIFACT = "artifact";
    private static final String COLUMN = "column";
    private static final String REF_TYPE = "ref_type";
    private static final String TABLE = "table";

    private static final String TOTAL_BYTES = "total_bytes";
    private static final String TOTAL_MEMBERS = "total_members";
    private static final String TOTAL_ROWS = "total_rows";

    /**
     * Thread-safe once built and never reconfigured. Parser defaults are strict JSON. Writer
     * features that shape the hashed bytes are pinned explicitly, so that a Jackson upgrade
     * changing a default cannot change version ids: non-ASCII is written as raw UTF-8 (also
     * characters outside the BMP), '/' is not escaped, control characters use upper-case hex.
     */
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
            .disable(JsonWriteFeature.ESCAPE_NON_ASCII)
            .disable(JsonWriteFeature.ESCAPE_FORWARD_SLASHES)
            .enable(JsonWriteFeature.WRITE_HEX_UPPER_CASE)
            .enable(JsonWriteFeature.QUOTE_FIELD_NAMES)
            .disable(JsonWriteFeature.WRITE_NUMBERS_AS_STRINGS)
            .build();

    private ManifestCodec() {
    }

    /** Canonical JSON of the hashed part (no {@code version_hash}, no {@code metadata}). */
    public static byte[] canonicalJson(Manifest manifest) {
        return write(manifest, false, null);
    }

    /** The version id: SHA-256 of {@link #canonicalJson(Manifest)}. */
    public static VersionHash version(Manifest manifest) {
        return new VersionHash(HexFormat.of().formatHex(BlobId.sha256().digest(canonicalJson(manifest))));
    }

    /** The stored form, including {@code version_hash} and {@code metadata}. */
    public static byte[] toJson(Manifest manifest) {
        return write(manifest, true, version(manifest));
    }

    /**
     * Parses and validates a stored manifest.
     *
     * @param json the stored bytes
     * @param source what to name in errors (e.g. the store key)
     * @return the manifest
     * @throws ManifestCorruptedException if it does not parse, fails validation (naming the
     *         field), has an unknown format version, or its {@code version_hash} is not the hash
     *         of its content
     */
    public static Manifest fromJson(byte[] json, String source) {
        JsonParser parser;
        try {
            parser = JSON.createParser(json);
        } catch (IOException e) {
            throw new UncheckedIOException("reading from memory cannot fail", e);
        }
        try (parser) {
            return new Reader(parser, source).manifest();
        } catch (JsonProcessingException e) {
            throw new ManifestCorruptedException(source, pathOf(parser.getParsingContext()),
                    "not valid JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException("reading from memory cannot fail", e);
        }
    }

    // ---------------------------------------------------------------- writing

    private static byte[] write(Manifest m, boolean stored, VersionHash version) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        try (JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeObjectFieldStart(ARTIFACTS);
            for (var e : m.artifacts().entrySet()) {
                g.writeObjectFieldStart(e.getKey());
                writeArtifact(g, e.getValue());
                g.writeEndObject();
            }
            g.writeEndObject();
            g.writeArrayFieldStart(BINDINGS);
            for (Binding b : m.bindings()) {
                g.writeStartObject();
                g.writeStringField(ARTIFACT, b.artifact());
                g.writeStringField(COLUMN, b.column());
                g.writeStringField(REF_TYPE, b.refType().json());
                g.writeStringField(TABLE, b.table());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeStringField(DATASET_ID, m.datasetId().toString());
            g.writeNumberField(FORMAT_VERSION_KEY, FORMAT_VERSION);
            if (stored) {
                g.writeObjectFieldStart(METADATA);
                for (var e : m.metadata().entrySet()) {
                    g.writeStringField(e.getKey(), e.getValue());
                }
                g.writeEndObject();
            }
            g.writeObjectFieldStart(STATS);
            g.writeNumberField(TOTAL_BYTES, m.stats().totalBytes());
            g.writeNumberField(TOTAL_MEMBERS, m.stats().totalMembers());
            g.writeNumberField(TOTAL_ROWS, m.stats().totalRows());
            g.writeEndObject();
            g.writeObjectFieldStart(TABLES);
            for (var e : m.tables().entrySet()) {
                g.writeObjectFieldStart(e.getKey());
                writeTable(g, e.getValue());
                g.writeEndObject();
            }
            g.writeEndObject();
            if (stored) {
                g.writeStringField(VERSION_HASH, version.hex());
            }
            g.writeEndObject();
        } catch (JsonProcessingException e) {
            // e.g. a string holding an unpaired surrogate, which has no UTF-8 form
            throw new ManifestValidationException("$", "cannot be written as JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return out.toByteArray();
    }

    private static void writeArtifact(JsonGenerator g, Artifact a) throws IOException {
        g.writeObjectFieldStart(INDEX);
        writeBlobFields(g, a.index());
        g.writeEndObject();
        g.writeStringField(KIND, a.kind().json());
        g.writeNumberField(MEMBER_BYTES, a.memberBytes());
        g.writeNumberField(MEMBER_COUNT, a.memberCount());
        g.writeArrayFieldStart(SHARDS);
        for (BlobRef shard : a.shards()) {
            g.writeStartObject();
            writeBlobFields(g, shard);
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static void writeTable(JsonGenerator g, Table t) throws IOException {
        g.writeStringField(FORMAT, Table.FORMAT);
        g.writeArrayFieldStart(SCHEMA);
        for (Column c : t.schema()) {
            g.writeStartObject();
            g.writeStringField(NAME, c.name());
            g.writeStringField(TYPE, c.type());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeArrayFieldStart(SHARDS);
        for (TableShard s : t.shards()) {
            g.writeStartObject();
            writeBlobFields(g, s.blob());
            g.writeStringField(NAME, s.name());
            g.writeNumberField(ROW_COUNT, s.rowCount());
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    /** blocks, byte_size, hash: the first keys of both shard kinds, in sorted order. */
    private static void writeBlobFields(JsonGenerator g, BlobRef b) throws IOException {
        g.writeStringField(BLOCKS, b.blocks().hex());
        g.writeNumberField(BYTE_SIZE, b.size());
        g.writeStringField(HASH, b.id().hex());
    }

    // ---------------------------------------------------------------- reading

    /** A function that may throw the records' validation exceptions. */
    private interface Checked<T> {
        T get();
    }

    /**
     * Recursive-descent reader. Each method is handed the JSON path of the value it reads;
     * field paths are only built when an error is reported.
     */
    private static final class Reader {
        private final JsonParser p;
        private final String source;

        Reader(JsonParser p, String source) {
            this.p = p;
            this.source = source;
        }

        Manifest manifest() throws IOException {
            startObject("$");
            SortedMap<String, Artifact> artifacts = null;
            List<Binding> bindings = null;
            DatasetId datasetId = null;
            boolean formatSeen = false;
            SortedMap<String, String> metadata = null;
            Stats stats = null;
            SortedMap<String, Table> tables = null;
            String versionHash = null;
            String key;
            while ((key = nextField("")) != null) {
                switch (key) {
                    case ARTIFACTS -> {
                        once(artifacts, key);
                        artifacts = artifacts(key);
                    }
                    case BINDINGS -> {
                        once(bindings, key);
                        bindings = bindings(key);
                    }
                    case DATASET_ID -> {
                        once(datasetId, key);
                        String text = string(key);
                        datasetId = check(key, () -> DatasetId.parse(text));
                    }
                    case FORMAT_VERSION_KEY -> {
                        once(formatSeen ? key : null, key);
                        formatSeen = true;
                        long v = integer(key);
                        if (v != FORMAT_VERSION) {
                            throw corrupted(key, "unknown format version " + v + " (this Warp reads version "
                                    + FORMAT_VERSION + "; upgrade Warp to read newer manifests)");
                        }
                    }
                    case METADATA -> {
                        once(metadata, key);
                        metadata = metadata(key);
                    }
                    case STATS -> {
                        once(stats, key);
                        stats = stats(key);
                    }
                    case TABLES -> {
                        once(tables, key);
                        tables = tables(key);
                    }
                    case VERSION_HASH -> {
                        once(versionHash, key);
                        versionHash = string(key);
                    }
                    default -> throw unknown("", key);
                }
            }
            required("", ARTIFACTS, artifacts);
            required("", BINDINGS, bindings);
            required("", DATASET_ID, datasetId);
            required("", FORMAT_VERSION_KEY, formatSeen ? Boolean.TRUE : null);
            required("", METADATA, metadata);
            required("", STATS, stats);
            required("", TABLES, tables);
            required("", VERSION_HASH, versionHash);
            if (p.nextToken() != null) {
                throw corrupted("$", "trailing content after the manifest object at "
                        + p.currentTokenLocation().offsetDescription());
            }
            String stored = versionHash;
            check(VERSION_HASH, () -> new VersionHash(stored));
            DatasetId id = datasetId;
            var t = tables;
            var a = artifacts;
            var b = bindings;
            var s = stats;
            var md = metadata;
            Manifest m = check("$", () -> new Manifest(id, t, a, b, s, md));
            String actual = check("$", () -> version(m)).hex();
            if (!actual.equals(stored)) {
                throw corrupted(VERSION_HASH, "hash mismatch: stored " + stored + ", content hashes to " + actual);
            }
            return m;
        }

        private SortedMap<String, Table> tables(String path) throws IOException {
            startObject(path);
            SortedMap<String, Table> tables = new TreeMap<>();
            String name;
            while ((name = nextField(path)) != null) {
                String at = path + "." + name;
                if (tables.containsKey(name)) {
                    throw corrupted(at, "duplicate table name '" + name + "'");
                }
                component(at, name);
                tables.put(name, table(at));
            }
            return tables;
        }

        private Table table(String path) throws IOException {
            startObject(path);
            boolean formatSeen = false;
            List<Column> schema = null;
            List<TableShard> shards = null;
            String key;
            while ((key = nextField(path)) != null) {
                switch (key) {
                    case FORMAT -> {
                        once(formatSeen ? key : null, path, key);
                        formatSeen = true;
                        String format = string(path + "." + key);
                        if (!Table.FORMAT.equals(format)) {
                            throw corrupted(path + "." + key, "unsupported table format '" + format
                                    + "' (only '" + Table.FORMAT + "')");
                        }
                    }
                    case SCHEMA -> {
                        once(schema, path, key);
                        schema = schema(path + "." + key);
                    }
                    case SHARDS -> {
                        once(shards, path, key);
                        shards = tableShards(path + "." + key);
                    }
                    default -> throw unknown(path, key);
                }
            }
            required(path, FORMAT, formatSeen ? Boolean.TRUE : null);
            required(path, SCHEMA, schema);
            required(path, SHARDS, shards);
            var sc = schema;
            var sh = shards;
            return check(path, () -> new Table(sh, sc));
        }

        private List<Column> schema(String path) throws IOException {
            startArray(path);
            List<Column> columns = new ArrayList<>();
            Set<String> names = new HashSet<>();
            while (nextElement(path)) {
                String at = path + "[" + columns.size() + "]";
                startObjectHere(at);
                String name = null;
                String type = null;
                String key;
                while ((key = nextField(at)) != null) {
                    switch (key) {
                        case NAME -> {
                            once(name, at, key);
                            name = string(at + "." + key);
                            if (name.isEmpty()) {
                                throw corrupted(at + "." + key, "empty column name");
                            }
                            if (!names.add(name)) {
                                throw corrupted(at + "." + key, "duplicate column name '" + name + "'");
                            }
                        }
                        case TYPE -> {
                            once(type, at, key);
                            type = string(at + "." + key);
                        }
                        default -> throw unknown(at, key);
                    }
                }
                required(at, NAME, name);
                required(at, TYPE, type);
                var n = name;
                var ty = type;
                columns.add(check(at, () -> new Column(n, ty)));
            }
            return columns;
        }

        private List<TableShard> tableShards(String path) throws IOException {
            startArray(path);
            List<TableShard> shards = new ArrayList<>();
            Set<String> names = new HashSet<>();
            while (nextElement(path)) {
                String at = path + "[" + shards.size() + "]";
                startObjectHere(at);
                BlobId blocks = null;
                Long size = null;
                BlobId hash = null;
                String name = null;
                Long rows = null;
                String key;
                while ((key = nextField(at)) != null) {
                    String f = at + "." + key;
                    switch (key) {
                        case BLOCKS -> {
                            once(blocks, at, key);
                            blocks = blobId(f);
                        }
                        case BYTE_SIZE -> {
                            once(size, at, key);
                            size = integer(f);
                        }
                        case HASH -> {
                            once(hash, at, key);
                            hash = blobId(f);
                        }
                        case NAME -> {
                            once(name, at, key);
                            String n = string(f);
                            component(f, n);
                            if (!names.add(n)) {
                                throw corrupted(f, "duplicate shard name '" + n + "'");
                            }
                            name = n;
                        }
                        case ROW_COUNT -> {
                            once(rows, at, key);
                            rows = integer(f);
                        }
                        default -> throw unknown(at, key);
                    }
                }
                required(at, BLOCKS, blocks);
                required(at, BYTE_SIZE, size);
                required(at, HASH, hash);
                required(at, NAME, name);
                required(at, ROW_COUNT, rows);
                BlobRef blob = blobRef(at, hash, size, blocks);
                var n = name;
                long r = rows;
                shards.add(check(at, () -> new TableShard(n, blob, r)));
            }
            return shards;
        }

        private SortedMap<String, Artifact> artifacts(String path) throws IOException {
            startObject(path);
            SortedMap<String, Artifact> artifacts = new TreeMap<>();
            String name;
            while ((name = nextField(path)) != null) {
                String at = path + "." + name;
                if (artifacts.containsKey(name)) {
                    throw corrupted(at, "duplicate artifact name '" + name + "'");
                }
                component(at, name);
                artifacts.put(name, artifact(at));
            }
            return artifacts;
        }

        private Artifact artifact(String path) throws IOException {
            startObject(path);
            BlobRef index = null;
            ArtifactKind kind = null;
            Long memberBytes = null;
            Long memberCount = null;
            List<BlobRef> shards = null;
            String key;
            while ((key = nextField(path)) != null) {
                String f = path + "." + key;
                switch (key) {
                    case INDEX -> {
                        once(index, path, key);
                        startObject(f);
                        index = blobRefFields(f);
                    }
                    case KIND -> {
                        once(kind, path, key);
                        String k = string(f);
                        kind = check(f, () -> ArtifactKind.fromJson(k));
                    }
                    case MEMBER_BYTES -> {
                        once(memberBytes, path, key);
                        memberBytes = integer(f);
                    }
                    case MEMBER_COUNT -> {
                        once(memberCount, path, key);
                        memberCount = integer(f);
                    }
                    case SHARDS -> {
                        once(shards, path, key);
                        startArray(f);
                        shards = new ArrayList<>();
                        while (nextElement(f)) {
                            String at = f + "[" + shards.size() + "]";
                            startObjectHere(at);
                            shards.add(blobRefFields(at));
                        }
                    }
                    default -> throw unknown(path, key);
                }
            }
            required(path, INDEX, index);
            required(path, KIND, kind);
            required(path, MEMBER_BYTES, memberBytes);
            required(path, MEMBER_COUNT, memberCount);
            required(path, SHARDS, shards);
            var k = kind;
            var sh = shards;
            var ix = index;
            long mc = memberCount;
            long mb = memberBytes;
            return check(path, () -> new Artifact(k, sh, ix, mc, mb));
        }

        /** The fields of an object already opened: blocks, byte_size, hash. */
        private BlobRef blobRefFields(String path) throws IOException {
            BlobId blocks = null;
            Long size = null;
            BlobId hash = null;
            String key;
            while ((key = nextField(path)) != null) {
                String f = path + "." + key;
                switch (key) {
                    case BLOCKS -> {
                        once(blocks, path, key);
                        blocks = blobId(f);
                    }
                    case BYTE_SIZE -> {
                        once(size, path, key);
                        size = integer(f);
                    }
                    case HASH -> {
                        once(hash, path, key);
                        hash = blobId(f);
                    }
                    default -> throw unknown(path, key);
                }
            }
            required(path, BLOCKS, blocks);
            required(path, BYTE_SIZE, size);
            required(path, HASH, hash);
            return blobRef(path, hash, size, blocks);
        }

        private BlobRef blobRef(String path, BlobId hash, long size, BlobId blocks) {
            return check(path, () -> new BlobRef(hash, size, blocks));
        }

        private List<Binding> bindings(String path) throws IOException {
            startArray(path);
            List<Binding> bindings = new ArrayList<>();
            while (nextElement(path)) {
                String at = path + "[" + bindings.size() + "]";
                startObjectHere(at);
                String artifact = null;
                String column = null;
                RefType refType = null;
                String table = null;
                String key;
                while ((key = nextField(at)) != null) {
                    String f = at + "." + key;
                    switch (key) {
                        case ARTIFACT -> {
                            once(artifact, at, key);
                            String v = string(f);
                            component(f, v);
                            artifact = v;
                        }
                        case COLUMN -> {
                            once(column, at, key);
                            column = string(f);
                            if (column.isEmpty()) {
                                throw corrupted(f, "empty column name");
                            }
                        }
                        case REF_TYPE -> {
                            once(refType, at, key);
                            String v = string(f);
                            refType = check(f, () -> RefType.fromJson(v));
                        }
                        case TABLE -> {
                            once(table, at, key);
                            String v = string(f);
                            component(f, v);
                            table = v;
                        }
                        default -> throw unknown(at, key);
                    }
                }
                required(at, ARTIFACT, artifact);
                required(at, COLUMN, column);
                required(at, REF_TYPE, refType);
                required(at, TABLE, table);
                var a = artifact;
                var c = column;
                var r = refType;
                var t = table;
                bindings.add(check(at, () -> new Binding(t, c, a, r)));
            }
            return bindings;
        }

        private Stats stats(String path) throws IOException {
            startObject(path);
            Long bytes = null;
            Long members = null;
            Long rows = null;
            String key;
            while ((key = nextField(path)) != null) {
                String f = path + "." + key;
                switch (key) {
                    case TOTAL_BYTES -> {
                        once(bytes, path, key);
                        bytes = integer(f);
                    }
                    case TOTAL_MEMBERS -> {
                        once(members, path, key);
                        members = integer(f);
                    }
                    case TOTAL_ROWS -> {
                        once(rows, path, key);
                        rows = integer(f);
                    }
                    default -> throw unknown(path, key);
                }
            }
            required(path, TOTAL_BYTES, bytes);
            required(path, TOTAL_MEMBERS, members);
            required(path, TOTAL_ROWS, rows);
            long r = rows;
            long b = bytes;
            long m = members;
            return check(path, () -> new Stats(r, b, m));
        }

        private SortedMap<String, String> metadata(String path) throws IOException {
            startObject(path);
            SortedMap<String, String> metadata = new TreeMap<>();
            String key;
            while ((key = nextField(path)) != null) {
                String f = path + "." + key;
                if (metadata.containsKey(key)) {
                    throw corrupted(f, "duplicate metadata key '" + key + "'");
                }
                metadata.put(key, string(f));
            }
            return metadata;
        }

        // ------------------------------------------------------------ tokens

        /** Reads the next token, which must open an object. */
        private void startObject(String path) throws IOException {
            expect(p.nextToken(), JsonToken.START_OBJECT, path, "an object");
        }

        /** The current token (already read by {@link #nextElement}) must open an object. */
        private void startObjectHere(String path) {
            expect(p.currentToken(), JsonToken.START_OBJECT, path, "an object");
        }

        private void startArray(String path) throws IOException {
            expect(p.nextToken(), JsonToken.START_ARRAY, path, "an array");
        }

        /** Advances to the next field of the current object; null at its end. */
        private String nextField(String path) throws IOException {
            JsonToken t = p.nextToken();
            if (t == JsonToken.END_OBJECT) {
                return null;
            }
            if (t != JsonToken.FIELD_NAME) {
                throw corrupted(path.isEmpty() ? "$" : path, "expected a field name, found " + describe(t));
            }
            return p.currentName();
        }

        /** Advances to the next element of the current array; false at its end. */
        private boolean nextElement(String path) throws IOException {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw corrupted(path, "unexpected end of input");
            }
            return t != JsonToken.END_ARRAY;
        }

        private String string(String path) throws IOException {
            JsonToken t = p.nextToken();
            expect(t, JsonToken.VALUE_STRING, path, "a string");
            return p.getText();
        }

        /** A non-negative integer that fits a long: every number in a manifest is one. */
        private long integer(String path) throws IOException {
            JsonToken t = p.nextToken();
            expect(t, JsonToken.VALUE_NUMBER_INT, path, "an integer");
            JsonParser.NumberType type = p.getNumberType();
            if (type != JsonParser.NumberType.INT && type != JsonParser.NumberType.LONG) {
                throw corrupted(path, "integer " + p.getText() + " is out of range");
            }
            long v = p.getLongValue();
            if (v < 0) {
                throw corrupted(path, "must not be negative, was " + v);
            }
            return v;
        }

        private void component(String path, String value) {
            check(path, () -> {
                Names.requireComponent(path, value);
                return null;
            });
        }

        private BlobId blobId(String path) throws IOException {
            String hex = string(path);
            return check(path, () -> new BlobId(hex));
        }

        private void expect(JsonToken actual, JsonToken wanted, String path, String what) {
            if (actual != wanted) {
                throw corrupted(path.isEmpty() ? "$" : path, "expected " + what + ", found " + describe(actual));
            }
        }

        private static String describe(JsonToken t) {
            if (t == null) {
                return "end of input";
            }
            return switch (t) {
                case START_OBJECT -> "an object";
                case START_ARRAY -> "an array";
                case VALUE_STRING -> "a string";
                case VALUE_NUMBER_INT -> "an integer";
                case VALUE_NUMBER_FLOAT -> "a non-integer number";
                case VALUE_TRUE, VALUE_FALSE -> "a boolean";
                case VALUE_NULL -> "null";
                default -> t.asString() == null ? t.name() : "'" + t.asString() + "'";
            };
        }

        // ------------------------------------------------------------ errors

        private <T> T check(String path, Checked<T> f) {
            try {
                return f.get();
            } catch (ManifestValidationException e) {
                // Records name fields relative to themselves; the manifest record names the
                // JSON path of cross-references itself.
                String field = path.equals("$") ? e.field() : path;
                throw new ManifestCorruptedException(source, field, e.getMessage(), e);
            } catch (IllegalArgumentException e) {
                throw new ManifestCorruptedException(source, path, e.getMessage(), e);
            }
        }

        private void once(Object previous, String key) {
            once(previous, "", key);
        }

        private void once(Object previous, String path, String key) {
            if (previous != null) {
                throw corrupted(join(path, key), "duplicate field");
            }
        }

        private void required(String path, String key, Object value) {
            if (value == null) {
                throw corrupted(join(path, key), "missing required field");
            }
        }

        private ManifestCorruptedException unknown(String path, String key) {
            return corrupted(join(path, key), "unknown field");
        }

        private ManifestCorruptedException corrupted(String field, String message) {
            return new ManifestCorruptedException(source, field, message);
        }

        private static String join(String path, String key) {
            return path.isEmpty() ? key : path + "." + key;
        }
    }

    /** Dotted JSON path of a parser position, for errors Jackson itself raises. */
    static String pathOf(JsonStreamContext ctx) {
        List<String> parts = new ArrayList<>();
        for (JsonStreamContext c = ctx; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inArray()) {
                parts.add("[" + Math.max(0, c.getCurrentIndex()) + "]");
            } else if (c.getCurrentName() != null) {
                parts.add("." + c.getCurrentName());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int i = parts.size() - 1; i >= 0; i--) {
            sb.append(parts.get(i));
        }
        if (sb.isEmpty()) {
            return "$";
        }
        return sb.charAt(0) == '.' ? sb.substring(1) : sb.toString();
    }
}
