package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.ControlException;

import java.util.Map;
import java.util.stream.Collectors;

/**
 * How the protocol's records become JSON and back: field names in snake_case
 * ({@code bytesDone} is {@code "bytes_done"}), unknown fields ignored (a newer peer may send
 * more), scalars not coerced (a string is not a number), and a field a record marks
 * {@code required} missing is a typed error that says what to do.
 */
public final class Wire {
    /** A reply or event a client could not read: warpd and warpctl of different versions. */
    public static final String INCOMPATIBLE_PEER = "IncompatiblePeer";

    private static final ObjectMapper JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            // A number or a boolean where a string belongs is a mistake, not a string.
            .withCoercionConfig(LogicalType.Textual, c -> c
                    .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
            .build();

    private Wire() {
    }

    /** The mapper every record of the protocol goes through. */
    public static ObjectMapper json() {
        return JSON;
    }

    /** {@code value} as a JSON object (a record of this package, or a map). */
    public static ObjectNode tree(Object value) {
        return JSON.valueToTree(value);
    }

    /**
     * Reads a request's {@code args} as {@code type}.
     *
     * @throws ControlException of type {@link ControlException#BAD_REQUEST} naming the argument
     *         and the problem, e.g. {@code warm: argument 'dataset' is required}
     */
    public static <T> T request(String op, JsonNode args, Class<T> type) {
        try {
            return JSON.treeToValue(args, type);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw badArgument(op, field(e), problem(e));
        }
    }

    /**
     * Reads what warpd sent (a result or an event) as {@code type}.
     *
     * @throws ControlException of type {@link #INCOMPATIBLE_PEER} saying which field was missing
     *         or wrong and to run warpctl and warpd of one version
     */
    public static <T> T reply(String op, JsonNode node, Class<T> type) {
        try {
            return JSON.treeToValue(node, type);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            String field = field(e);
            throw new ControlException(INCOMPATIBLE_PEER,
                    "warpd's answer to '" + op + "' " + (field.isEmpty() ? "" : "has field '" + field + "' that ")
                            + problem(e) + ": warpd and warpctl speak different versions of the control protocol",
                    "run warpctl and warpd of the same version: restart warpd after an upgrade (systemctl restart warpd,"
                            + " or scripts/warpd), and use the warpctl installed with it (warpctl --version)", e);
        }
    }

    /**
     * How warpctl and the Python package spell the arguments they pass, keyed by {@code op.field}
     * or by {@code field} for every operation. Only spellings that exist: a guess of "--FIELD" and
     * "FIELD=" named "warpctl's --dataset" (audit 30), "--world", "--paths" (audit 33), which no
     * command has; any other field is named as the operation's argument alone.
     */
    private static final Map<String, String> SPELLED = Map.of(
            "dataset", "warpctl's DATASET argument, the first argument in Python",
            "publish.dataset", "warpctl publish's DATASET argument, wd.publish's name",
            "publish.tables", "warpctl's --table NAME=PATH, Python's tables=",
            "publish.artifacts", "warpctl's --artifact NAME=DIR, Python's artifacts=",
            "publish.bindings", "warpctl's --bind TABLE.COLUMN=ARTIFACT:TYPE, Python's bindings=",
            "warm.tables", "warpctl warm's --tables, Python's tables=",
            "warm.artifacts", "warpctl warm's --artifacts, Python's artifacts=",
            "warm.shards", "warpctl warm's --shards",
            "warm.max_bytes", "warpctl warm's --max-bytes, Python's max_bytes=");

    /** A bad argument of {@code op}, in the words every operation uses. */
    public static ControlException badArgument(String op, String field, String problem) {
        String top = field.contains(".") ? field.substring(0, field.indexOf('.')) : field;
        String spelled = SPELLED.getOrDefault(op + "." + top, SPELLED.get(top));
        return new ControlException(ControlException.BAD_REQUEST, op + ": argument '" + field + "' " + problem,
                "fix the value of " + top + (spelled == null ? "" : " (" + spelled + ")") + "; docs/control.md lists"
                        + " the arguments of '" + op + "'");
    }

    /** The dotted path of the field a Jackson error is about, e.g. {@code tables.main}; empty if none. */
    private static String field(Exception e) {
        if (!(e instanceof JsonMappingException m)) {
            return "";
        }
        return m.getPath().stream()
                .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
                .collect(Collectors.joining(".")).replace(".[", "[");
    }

    private static String problem(Exception e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root instanceof IllegalArgumentException && root.getMessage() != null && root != e) {
            return root.getMessage();
        }
        String msg = e instanceof JsonMappingException m ? m.getOriginalMessage() : e.getMessage();
        if (msg != null && msg.startsWith("Missing required creator property")) {
            return "is required";
        }
        if (e instanceof MismatchedInputException mi && mi.getTargetType() != null) {
            return "must be " + kind(mi.getTargetType());
        }
        return "is not valid: " + (msg == null ? e.getClass().getSimpleName() : firstLine(msg));
    }

    private static String kind(Class<?> t) {
        if (t == String.class || t.isEnum()) {
            return "a string";
        }
        if (t == boolean.class || t == Boolean.class) {
            return "true or false";
        }
        if (t == int.class || t == Integer.class || t == long.class || t == Long.class) {
            return "a whole number";
        }
        if (t == double.class || t == Double.class) {
            return "a number";
        }
        if (java.util.Collection.class.isAssignableFrom(t)) {
            return "a list";
        }
        return "an object (" + t.getSimpleName() + ")";
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
