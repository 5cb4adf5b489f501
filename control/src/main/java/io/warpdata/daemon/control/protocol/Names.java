package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * A list of names (tables, artifacts, columns, bindings): a JSON array of strings, or one
 * comma-separated string ({@code "main,extra"}), as a user types it; always sent as the array.
 */
public record Names(List<String> names) {
    public static final Names NONE = new Names(List.of());

    public Names {
        names = List.copyOf(names);
    }

    public static Names of(List<String> names) {
        return names == null ? NONE : new Names(names);
    }

    /** The names of {@code n}, none when absent. */
    public static List<String> list(Names n) {
        return n == null ? List.of() : n.names();
    }

    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    static Names read(JsonNode v) {
        List<String> out = new ArrayList<>();
        if (v.isTextual()) {
            for (String s : v.asText().split(",")) {
                if (!s.isBlank()) {
                    out.add(s.trim());
                }
            }
            return new Names(out);
        }
        if (!v.isArray()) {
            throw new IllegalArgumentException("must be a list of strings");
        }
        for (JsonNode e : v) {
            if (!e.isTextual()) {
                throw new IllegalArgumentException("must be a list of strings");
            }
            out.add(e.asText());
        }
        return new Names(out);
    }

    @JsonValue
    public List<String> names() {
        return names;
    }
}
