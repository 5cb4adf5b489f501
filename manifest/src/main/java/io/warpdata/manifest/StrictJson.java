package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The one helper every codec of this package shares: a JSON document read strictly into a small
 * tree that knows where each value was found, with typed accessors that refuse anything else
 * as a {@link ManifestCorruptedException} naming the JSON path (e.g.
 * {@code tables.main.shards[1].hash}) and what was expected.
 *
 * <p>An object keeps its fields in document order, duplicates included: for a record's fixed
 * keys a repeated key is a "duplicate field", for a map of names (tables, artifacts, metadata)
 * the codec says what a repeated name means. Numbers keep whether they fit a long, so "out of
 * range" and "not an integer" are told apart. Parsing is Jackson's strict default.
 */
final class StrictJson {
    private static final JsonFactory JSON = new JsonFactory();

    private final String source;

    private StrictJson(String source) {
        this.source = source;
    }

    /** A value of the tree. */
    sealed interface Value permits Obj, Arr, Scalar {
    }

    /** A string, number, boolean or null as its token says, and its text. */
    record Scalar(JsonToken token, String text, boolean fitsLong, long longValue) implements Value {
    }

    /**
     * Parses {@code json}, whose top level must be an object.
     *
     * @param source what to name in errors (e.g. the store key)
     * @param what   what the document is, for "trailing content after the ..." (e.g. "manifest object")
     * @throws ManifestCorruptedException if it is not valid JSON, not an object, or has trailing content
     */
    static Obj parse(byte[] json, String source, String what) {
        StrictJson doc = new StrictJson(source);
        // UTF-8 only, decoded strictly here: given bytes, Jackson would guess UTF-16 or UTF-32
        // from zero bytes, and fail on what it guessed wrong with an I/O error, not a parse error
        // (found by fuzzing).
        String text;
        try {
            text = java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(json)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw doc.corrupted("$", "not valid UTF-8 (a " + what + " is UTF-8 JSON)");
        }
        JsonParser p;
        try {
            p = JSON.createParser(text);
        } catch (IOException e) {
            throw new UncheckedIOException("reading from memory cannot fail", e);
        }
        try (p) {
            JsonToken first = p.nextToken();
            if (first != JsonToken.START_OBJECT) {
                throw doc.corrupted("$", "expected an object, found " + describe(first));
            }
            Obj root = (Obj) doc.read(p, first, "");
            if (p.nextToken() != null) {
                throw doc.corrupted("$", "trailing content after the " + what + " at "
                        + p.currentTokenLocation().offsetDescription());
            }
            return root;
        } catch (JsonProcessingException e) {
            throw new ManifestCorruptedException(source, pathOf(p.getParsingContext()),
                    "not valid JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException("reading from memory cannot fail", e);
        }
    }

    private Value read(JsonParser p, JsonToken t, String path) throws IOException {
        if (t == JsonToken.START_OBJECT) {
            List<Map.Entry<String, Value>> fields = new ArrayList<>();
            JsonToken next;
            while ((next = p.nextToken()) == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                fields.add(new AbstractMap.SimpleImmutableEntry<>(key, read(p, p.nextToken(), join(path, key))));
            }
            return new Obj(path, fields);
        }
        if (t == JsonToken.START_ARRAY) {
            List<Value> elements = new ArrayList<>();
            JsonToken next;
            while ((next = p.nextToken()) != JsonToken.END_ARRAY) {
                elements.add(read(p, next, path + "[" + elements.size() + "]"));
            }
            return new Arr(path, elements);
        }
        if (t == JsonToken.VALUE_NUMBER_INT) {
            JsonParser.NumberType type = p.getNumberType();
            boolean fits = type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG;
            return new Scalar(t, p.getText(), fits, fits ? p.getLongValue() : 0);
        }
        return new Scalar(t, t == JsonToken.VALUE_NULL ? null : p.getText(), false, 0);
    }

    /** An object and where it was found. */
    final class Obj implements Value {
        private final String path;
        private final List<Map.Entry<String, Value>> fields;

        private Obj(String path, List<Map.Entry<String, Value>> fields) {
            this.path = path;
            this.fields = fields;
        }

        /** The JSON path of this object ({@code ""} for the top level). */
        String path() {
            return path;
        }

        /** The fields in document order, duplicates included. */
        List<Map.Entry<String, Value>> fields() {
            return fields;
        }

        /**
         * Checks the keys in document order: each must be one of {@code keys}, and appear once.
         *
         * @throws ManifestCorruptedException "unknown field" or "duplicate field" at the key's path
         */
        Obj allow(String... keys) {
            Set<String> allowed = Set.of(keys);
            Set<String> seen = new HashSet<>();
            for (Map.Entry<String, Value> f : fields) {
                if (!allowed.contains(f.getKey())) {
                    throw corrupted(join(path, f.getKey()), "unknown field");
                }
                if (!seen.add(f.getKey())) {
                    throw corrupted(join(path, f.getKey()), "duplicate field");
                }
            }
            return this;
        }

        /** The value of {@code key}, or null if absent. */
        Value get(String key) {
            for (Map.Entry<String, Value> f : fields) {
                if (f.getKey().equals(key)) {
                    return f.getValue();
                }
            }
            return null;
        }

        private Value required(String key) {
            Value v = get(key);
            if (v == null) {
                throw corrupted(join(path, key), "missing required field");
            }
            return v;
        }

        Obj object(String key) {
            return asObject(required(key), join(path, key));
        }

        Arr array(String key) {
            Value v = required(key);
            if (v instanceof Arr a) {
                return a;
            }
            throw expected(join(path, key), "an array", v);
        }

        String string(String key) {
            return asString(required(key), join(path, key));
        }

        /** A non-negative integer that fits a long: every number Warp writes is one. */
        long integer(String key) {
            String at = join(path, key);
            Value v = required(key);
            if (!(v instanceof Scalar s) || s.token() != JsonToken.VALUE_NUMBER_INT) {
                throw expected(at, "an integer", v);
            }
            if (!s.fitsLong()) {
                throw corrupted(at, "integer " + s.text() + " is out of range");
            }
            if (s.longValue() < 0) {
                throw corrupted(at, "must not be negative, was " + s.longValue());
            }
            return s.longValue();
        }

        /** A string that must also be a valid name component (see {@link Names#requireComponent}). */
        String component(String key) {
            String v = string(key);
            componentAt(join(path, key), v);
            return v;
        }

        /** A SHA-256 id. */
        BlobId blobId(String key) {
            String hex = string(key);
            return check(join(path, key), () -> new BlobId(hex));
        }

        /**
         * This object as a map of names to objects (tables, artifacts): each name once and a valid
         * name component, each value an object read by {@code read}.
         *
         * @param what what a name names, for "duplicate table name 'x'"
         */
        <T> SortedMap<String, T> named(String what, java.util.function.Function<Obj, T> read) {
            SortedMap<String, T> out = new TreeMap<>();
            for (Map.Entry<String, Value> f : fields) {
                String at = join(path, f.getKey());
                if (out.containsKey(f.getKey())) {
                    throw corrupted(at, "duplicate " + what + " name '" + f.getKey() + "'");
                }
                componentAt(at, f.getKey());
                out.put(f.getKey(), read.apply(asObject(f.getValue(), at)));
            }
            return out;
        }

        /** The path of {@code key} in this object. */
        String at(String key) {
            return join(path, key);
        }

        /** A value of a map of names: a string, or "expected a string" at the name's path. */
        String string(Map.Entry<String, Value> field) {
            return asString(field.getValue(), join(path, field.getKey()));
        }

        /** See {@link StrictJson#check}. */
        <T> T check(String at, Supplier<T> f) {
            return StrictJson.this.check(at, f);
        }

        /** A corruption at {@code at} (a path this object built with {@link #at}). */
        ManifestCorruptedException corrupted(String at, String message) {
            return StrictJson.this.corrupted(at, message);
        }

        /** Checks that a name is a valid component, at its path. */
        void component(String at, String value) {
            componentAt(at, value);
        }
    }

    /** An array and where it was found. */
    final class Arr implements Value {
        private final String path;
        private final List<Value> elements;

        private Arr(String path, List<Value> elements) {
            this.path = path;
            this.elements = elements;
        }

        int size() {
            return elements.size();
        }

        String path(int i) {
            return path + "[" + i + "]";
        }

        /** Element {@code i}, which must be an object. */
        Obj object(int i) {
            return asObject(elements.get(i), path(i));
        }

        /** Element {@code i}, which must be a string. */
        String string(int i) {
            return asString(elements.get(i), path(i));
        }

        ManifestCorruptedException corrupted(String at, String message) {
            return StrictJson.this.corrupted(at, message);
        }
    }

    Obj asObject(Value v, String at) {
        if (v instanceof Obj o) {
            return o;
        }
        throw expected(at, "an object", v);
    }

    String asString(Value v, String at) {
        if (v instanceof Scalar s && s.token() == JsonToken.VALUE_STRING) {
            return s.text();
        }
        throw expected(at, "a string", v);
    }

    void componentAt(String at, String value) {
        check(at, () -> {
            Names.requireComponent(at, value);
            return null;
        });
    }

    /**
     * Runs a record constructor (or parser) whose validation exceptions become corruption at
     * {@code path}. The manifest record names the JSON path of its cross-references itself, so
     * at the top level ({@code $}) its field name is kept.
     */
    <T> T check(String path, Supplier<T> f) {
        try {
            return f.get();
        } catch (ManifestValidationException e) {
            String field = path.equals("$") ? e.field() : path;
            throw new ManifestCorruptedException(source, field, e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new ManifestCorruptedException(source, path, e.getMessage(), e);
        }
    }

    ManifestCorruptedException corrupted(String field, String message) {
        return new ManifestCorruptedException(source, field.isEmpty() ? "$" : field, message);
    }

    private ManifestCorruptedException expected(String at, String what, Value found) {
        return corrupted(at, "expected " + what + ", found " + describe(found));
    }

    private static String describe(Value v) {
        return switch (v) {
            case Obj o -> "an object";
            case Arr a -> "an array";
            case Scalar s -> describe(s.token());
        };
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

    static String join(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
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
