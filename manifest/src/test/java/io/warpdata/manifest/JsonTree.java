package io.warpdata.manifest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Test-only generic JSON tree (LinkedHashMap / ArrayList / String / Long / Raw), so tests can
 * edit stored manifests field by field and write them back in any key order and layout.
 */
final class JsonTree {
    /** A value written verbatim, e.g. {@code 1.5} or {@code -1}. */
    record Raw(String text) {
    }

    private static final JsonFactory JSON = new JsonFactory();

    private JsonTree() {
    }

    static Object read(byte[] json) {
        try (JsonParser p = JSON.createParser(json)) {
            p.nextToken();
            return value(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Object value(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() != JsonToken.END_OBJECT) {
                    String k = p.currentName();
                    p.nextToken();
                    m.put(k, value(p));
                }
                return m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    l.add(value(p));
                }
                return l;
            }
            case VALUE_STRING -> {
                return p.getText();
            }
            case VALUE_NUMBER_INT -> {
                return p.getLongValue();
            }
            default -> {
                return new Raw(p.getText());
            }
        }
    }

    /** Compact, keys in map order. */
    static byte[] write(Object v) {
        StringBuilder sb = new StringBuilder();
        write(v, sb, null);
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Keys shuffled and random whitespace between tokens. */
    static byte[] writeScrambled(Object v, Random random) {
        StringBuilder sb = new StringBuilder();
        write(v, sb, random);
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    @SuppressWarnings("unchecked")
    private static void write(Object v, StringBuilder sb, Random r) {
        ws(sb, r);
        if (v instanceof Map<?, ?> m) {
            sb.append('{');
            List<Map.Entry<String, Object>> entries = new ArrayList<>(((Map<String, Object>) m).entrySet());
            if (r != null) {
                Collections.shuffle(entries, r);
            }
            for (int i = 0; i < entries.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                ws(sb, r);
                string(entries.get(i).getKey(), sb);
                ws(sb, r);
                sb.append(':');
                write(entries.get(i).getValue(), sb, r);
            }
            ws(sb, r);
            sb.append('}');
        } else if (v instanceof List<?> l) {
            sb.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                write(l.get(i), sb, r);
            }
            ws(sb, r);
            sb.append(']');
        } else if (v instanceof String s) {
            string(s, sb);
        } else if (v instanceof Long n) {
            sb.append(n);
        } else if (v instanceof Raw raw) {
            sb.append(raw.text());
        } else {
            throw new IllegalArgumentException(String.valueOf(v));
        }
        ws(sb, r);
    }

    private static void string(String s, StringBuilder sb) {
        sb.append('"').append(JsonStringEncoder.getInstance().quoteAsString(s)).append('"');
    }

    private static void ws(StringBuilder sb, Random r) {
        if (r == null) {
            return;
        }
        int n = r.nextInt(3);
        for (int i = 0; i < n; i++) {
            sb.append(" \n\t\r".charAt(r.nextInt(4)));
        }
    }

    /** Deep copy. */
    @SuppressWarnings("unchecked")
    static Object copy(Object v) {
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> c = new LinkedHashMap<>();
            ((Map<String, Object>) m).forEach((k, x) -> c.put(k, copy(x)));
            return c;
        }
        if (v instanceof List<?> l) {
            List<Object> c = new ArrayList<>();
            l.forEach(x -> c.add(copy(x)));
            return c;
        }
        return v;
    }
}
