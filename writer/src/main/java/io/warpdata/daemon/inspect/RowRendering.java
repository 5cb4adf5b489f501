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

    /** The select items rendering each of {@code columns} as text, in order. */
    public static String text(List<String> columns) {
        return columns.stream().map(c -> "CAST(t." + ident(c) + " AS VARCHAR)").collect(Collectors.joining(", "));
    }

    /** The FROM clause over a query whose rows are rendered (aliased {@code t}). */
    public static String over(String inner) {
        return " FROM (" + inner + ") t";
    }

    /** A quoted SQL identifier. */
    public static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }
}
