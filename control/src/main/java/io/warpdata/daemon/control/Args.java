package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A request's {@code args} object as received, with the operation it is for; a
 * {@link TypedOperation} reads it into its request record.
 */
public final class Args {
    private final String op;
    private final ObjectNode node;

    public Args(String op, ObjectNode node) {
        this.op = op;
        this.node = node == null ? JsonNodeFactory.instance.objectNode() : node;
    }

    public String op() {
        return op;
    }

    public ObjectNode node() {
        return node;
    }
}
