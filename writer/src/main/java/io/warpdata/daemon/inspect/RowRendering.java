package io.warpdata.daemon.inspect;

import java.util.List;
import java.util.stream.Collectors;

/**
 * How a table's values are rendered, one way for every command that shows rows ({@code head},
 * {@code stream}): by DuckDB itself, never by Java's {@code toString} of JDBC objects. A row as
 * JSON is {@code to_json} of the row (nested lists and structs as JSON arrays and objects, a BLOB
 * as a string with {@code \xNN} escapes, dates and timestamps as ISO text); a value as text is
 * DuckDB's {@code CAST(... AS VARCHAR)}, as its own CSV writer and shell print it (NULL stays
 * NULL, for the caller to show).
 */
public final class RowRendering {
    private RowRendering() {
    }

    /** The select item rendering the whole row of {@link #over(String)} as one JSON object. */
    public static String json() {
        return "to_json(t)::VARCHAR";
    }

    /**
     * {@code json}, one rendered row, as strict JSON: DuckDB writes a DOUBLE's NaN and infinities
     * as the bare tokens {@code NaN}, {@code Infinity}, {@code -Infinity}, which JSON has no
     * spelling for ({@code jq} turned them into null and 1.79e308); they become the strings
     * {@code "NaN"}, {@code "Infinity"}, {@code "-Infinity"}, as Jackson and Spark write them.
     */
    public static String strictJson(String json) {
        if (json == null || (json.indexOf("NaN") < 0 && json.indexOf("Infinity") < 0 && !bareFraction(json))) {
            return json;
        }
        StringBuilder out = new StringBuilder(json.length() + 16);
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (inString) {
                out.append(c);
                if (c == '\\' && i + 1 < json.length()) {
                    out.append(json.charAt(++i));
                } else if (c == '"') {
                    inString = false;
                }
                continue;
            }
            if (c == '"') {
                inString = true;
                out.append(c);
                continue;
            }
            String token = json.startsWith("NaN", i) ? "NaN" : json.startsWith("-Infinity", i) ? "-Infinity"
                    : json.startsWith("Infinity", i) ? "Infinity" : null;
            char before = out.isEmpty() ? 0 : out.charAt(out.length() - 1);
            boolean valueStart = before == ':' || before == ',' || before == '[';
            if (c == '.' && (valueStart || before == '-')) {
                // A DECIMAL whose width is its scale (DECIMAL(18,18)) renders as .123: JSON wants 0.123 (audit 29).
                out.append("0.");
            } else if (token != null) {
                out.append('"').append(token).append('"');
                i += token.length() - 1;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** The select items rendering each of {@code columns} as text, in order. */
    public static String text(List<String> columns) {
        return columns.stream().map(c -> "CAST(t." + ident(c) + " AS VARCHAR)").collect(Collectors.joining(", "));
    }

    /** Whether a rendered row may hold a number written without its leading 0 ({@code .5}, {@code -.5}). */
    private static boolean bareFraction(String json) {
        return json.contains(":.") || json.contains(",.") || json.contains("[.") || json.contains(":-.")
                || json.contains(",-.") || json.contains("[-.");
    }

    /** The FROM clause over a query whose rows are rendered (aliased {@code t}). */
    public static String over(String inner) {
        return " FROM (" + inner + ") t";
    }

    /** A quoted SQL identifier. */
    public static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }

    /** A quoted SQL string literal. */
    public static String literal(String text) {
        return "'" + text.replace("'", "''") + "'";
    }
}
