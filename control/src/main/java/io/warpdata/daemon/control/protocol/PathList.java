package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * The files of one table or artifact of a publish: a JSON array of strings, or one string (a
 * path may hold a comma, so one string is one path); always sent as the array.
 */
public record PathList(List<String> paths) {
    public PathList {
        paths = List.copyOf(paths);
    }

    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    static PathList read(JsonNode v) {
        List<JsonNode> values = new ArrayList<>();
        if (v.isArray()) {
            v.forEach(values::add);
        } else {
            values.add(v);
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : values) {
            if (!e.isTextual()) {
                throw new IllegalArgumentException("must hold paths (strings), got " + e);
            }
            out.add(e.asText());
        }
        return new PathList(out);
    }

    @JsonValue
    public List<String> paths() {
        return paths;
    }
}
