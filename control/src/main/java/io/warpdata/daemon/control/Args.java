package io.warpdata.daemon.control;

import io.warpdata.daemon.ByteSize;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/** Typed access to a request's {@code args} object; bad values are {@code BadRequest} errors naming the field. */
public final class Args {
    private final String op;
    private final ObjectNode node;

    public Args(String op, ObjectNode node) {
        this.op = op;
        this.node = node == null ? JsonNodeFactory.instance.objectNode() : node;
    }

    public ObjectNode node() {
        return node;
    }

    public String string(String name) {
        return optString(name).orElseThrow(() -> bad(name, "is required"));
    }

    public Optional<String> optString(String name) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isTextual()) {
            throw bad(name, "must be a string");
        }
        return Optional.of(v.asText());
    }

    public boolean bool(String name, boolean dflt) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw bad(name, "must be true or false");
        }
        return v.booleanValue();
    }

    /** A non-negative whole number that fits an int. */
    public java.util.OptionalInt optInt(String name) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return java.util.OptionalInt.empty();
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < 0) {
            throw bad(name, "must be a whole number from 0");
        }
        return java.util.OptionalInt.of(v.intValue());
    }

    /** A size: a non-negative integer of bytes or a string such as {@code 200GB}. */
    public OptionalLong optSize(String name) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return OptionalLong.empty();
        }
        if (v.canConvertToLong() && v.isIntegralNumber() && v.longValue() >= 0) {
            return OptionalLong.of(v.longValue());
        }
        if (v.isTextual()) {
            try {
                return OptionalLong.of(ByteSize.parse(v.asText()));
            } catch (IllegalArgumentException e) {
                throw bad(name, e.getMessage());
            }
        }
        throw bad(name, "must be a byte count or a size such as 200GB");
    }

    /** A list of strings: a JSON array of strings or one comma-separated string. */
    public List<String> stringList(String name) {
        JsonNode v = node.get(name);
        List<String> out = new ArrayList<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (v.isTextual()) {
            for (String s : v.asText().split(",")) {
                if (!s.isBlank()) {
                    out.add(s.trim());
                }
            }
            return out;
        }
        if (!v.isArray()) {
            throw bad(name, "must be a list of strings");
        }
        for (JsonNode e : v) {
            if (!e.isTextual()) {
                throw bad(name, "must be a list of strings");
            }
            out.add(e.asText());
        }
        return out;
    }

    public ControlException bad(String name, String problem) {
        return new ControlException(ControlException.BAD_REQUEST, op + ": argument '" + name + "' " + problem,
                "see docs/control.md for the arguments of '" + op + "'");
    }
}
