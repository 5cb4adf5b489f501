package io.warpdata.daemon.control;

import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.manifest.WarpException;

import java.nio.charset.StandardCharsets;

/**
 * The wire format (docs/control.md): one JSON object per line, UTF-8.
 * <pre>
 * request:  {"id":1,"op":"warm","args":{...}}
 * progress: {"id":1,"event":"progress", ...fields}
 * result:   {"id":1,"ok":true,"result":{...}}
 * error:    {"id":1,"ok":false,"error":{"type":"...","message":"...","next_step":"..."}}
 * </pre>
 * The id is echoed as sent (number or string); errors about unparseable lines carry
 * {@code "id":null}.
 */
public final class ControlProtocol {
    /** Longest request line accepted, in bytes (without the newline). */
    public static final int MAX_LINE_BYTES = 1 << 20;

    public static final String ID = "id";
    public static final String OP = "op";
    public static final String ARGS = "args";
    public static final String EVENT = "event";
    public static final String OK = "ok";
    public static final String RESULT = "result";
    public static final String ERROR = "error";
    public static final String TYPE = "type";
    public static final String MESSAGE = "message";
    public static final String NEXT_STEP = "next_step";

    private static final ObjectMapper JSON = new ObjectMapper();

    private ControlProtocol() {
    }

    /** A parsed request. */
    public record Request(JsonNode id, String op, ObjectNode args) {
    }

    /**
     * A line from warpd as a client reads it: an event (its own fields aside), a result, or an
     * error; what is absent is null.
     */
    public record Incoming(JsonNode id, String event, boolean ok, JsonNode result, ErrorBody error) {
    }

    /** An error's fields: {@code details} are its other text fields ({@link WarpException#details()}). */
    public record ErrorBody(String type, String message, String nextStep, Map<String, String> details) {
        static final ErrorBody NONE = new ErrorBody(null, null, null, Map.of());

        public ErrorBody {
            details = details == null ? Map.of() : Map.copyOf(details);
        }

        /** As {@code {"type", "message", "next_step", ...details}}, the wire's form of an error. */
        public ObjectNode json() {
            ObjectNode err = object();
            err.put(TYPE, type);
            err.put(MESSAGE, message == null ? type : message);
            err.put(NEXT_STEP, nextStep == null ? "" : nextStep);
            details.forEach((k, v) -> {
                if (!err.has(k)) {
                    err.put(k, v);
                }
            });
            return err;
        }
    }

    /** Reads a line from warpd; fields of other types than expected are treated as absent. */
    static Incoming incoming(JsonNode msg) {
        JsonNode id = msg.get(ID);
        JsonNode event = msg.get(EVENT);
        JsonNode error = msg.get(ERROR);
        ErrorBody body = null;
        if (error != null && error.isObject()) {
            Map<String, String> details = new java.util.LinkedHashMap<>();
            error.fields().forEachRemaining(f -> {
                if (!f.getKey().equals(TYPE) && !f.getKey().equals(MESSAGE) && !f.getKey().equals(NEXT_STEP)
                        && f.getValue().isTextual()) {
                    details.put(f.getKey(), f.getValue().asText());
                }
            });
            body = new ErrorBody(text(error.get(TYPE)), text(error.get(MESSAGE)), text(error.get(NEXT_STEP)), details);
        }
        JsonNode ok = msg.get(OK);
        return new Incoming(id, event == null ? null : event.asText(), ok != null && ok.asBoolean(false),
                msg.get(RESULT), body);
    }

    private static String text(JsonNode n) {
        return n == null || n.isNull() ? null : n.asText();
    }

    public static ObjectMapper json() {
        return JSON;
    }

    public static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    /**
     * Parses one request line.
     *
     * @throws ControlException of type {@link ControlException#BAD_REQUEST}; when the id could
     *         be read it is kept in {@link BadRequest#id()}
     */
    public static Request parseRequest(byte[] line) {
        JsonNode node;
        try {
            node = JSON.readTree(line);
        } catch (java.io.IOException e) {
            throw new BadRequest(NullNode.getInstance(), "request is not valid JSON: " + firstLine(e.getMessage()));
        }
        if (node == null || !node.isObject()) {
            throw new BadRequest(NullNode.getInstance(), "request must be a JSON object");
        }
        JsonNode id = node.get(ID);
        if (id == null || !(id.isIntegralNumber() || id.isTextual())) {
            throw new BadRequest(NullNode.getInstance(), "request needs an \"id\" (a number or a string)");
        }
        JsonNode op = node.get(OP);
        if (op == null || !op.isTextual()) {
            throw new BadRequest(id, "request needs an \"op\" (a string)");
        }
        JsonNode args = node.get(ARGS);
        if (args != null && !args.isNull() && !args.isObject()) {
            throw new BadRequest(id, "\"args\" must be an object");
        }
        return new Request(id, op.asText(), args == null || args.isNull() ? object() : (ObjectNode) args);
    }

    public static ObjectNode request(long id, String op, ObjectNode args) {
        ObjectNode n = object();
        n.put(ID, id);
        n.put(OP, op);
        n.set(ARGS, args == null ? object() : args);
        return n;
    }

    public static ObjectNode result(JsonNode id, JsonNode result) {
        ObjectNode n = reply(id, true);
        n.set(RESULT, result == null ? object() : result);
        return n;
    }

    public static ObjectNode error(JsonNode id, WarpException e) {
        return error(id, new ErrorBody(e.type(), e.getMessage(), e.nextStep(), e.details()));
    }

    public static ObjectNode error(JsonNode id, String type, String message, String nextStep) {
        return error(id, new ErrorBody(type, message, nextStep, Map.of()));
    }

    private static ObjectNode error(JsonNode id, ErrorBody body) {
        ObjectNode n = reply(id, false);
        n.set(ERROR, body.json());
        return n;
    }

    /** The head of a reply: {@code {"id": id, "ok": ok}}. */
    private static ObjectNode reply(JsonNode id, boolean ok) {
        ObjectNode n = object();
        n.set(ID, id);
        n.put(OK, ok);
        return n;
    }

    /** A progress event, or another event when {@code fields} names one in {@code "event"} (e.g. {@code batch}). */
    public static ObjectNode progress(JsonNode id, ObjectNode fields) {
        ObjectNode n = object();
        n.set(ID, id);
        n.put(EVENT, "progress");
        fields.fields().forEachRemaining(f -> n.set(f.getKey(), f.getValue()));
        return n;
    }

    /** The line for {@code node}, newline included; Jackson's compact output never contains a raw newline. */
    public static byte[] line(JsonNode node) {
        try {
            return (JSON.writeValueAsString(node) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise " + node, e);
        }
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /**
     * A request that could not be understood; keeps the id when it was readable. A typed Warp
     * error like every refusal of untrusted bytes (the fuzz tests hold the parser to that).
     */
    public static final class BadRequest extends WarpException {
        private static final String NEXT = "send one JSON object per line: {\"id\":1,\"op\":\"status\",\"args\":{}}"
                + " (see docs/control.md)";
        private final transient JsonNode id;

        BadRequest(JsonNode id, String message) {
            super(message, NEXT);
            this.id = id;
        }

        public JsonNode id() {
            return id;
        }

        @Override
        public String type() {
            return ControlException.BAD_REQUEST;
        }

        public ControlException asControlException() {
            return new ControlException(ControlException.BAD_REQUEST, getMessage(), NEXT);
        }
    }
}
