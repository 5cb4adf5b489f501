package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.function.Consumer;

/**
 * What an operation gets: its arguments, the peer that asked, a way to stream events and the
 * cancellation flag. A {@link TypedOperation} sends its typed events through
 * {@link TypedOperation.Events}.
 */
public record OperationContext(Args args, Peer peer, Consumer<ObjectNode> progressSink, Cancellation cancellation) {

    /**
     * Sends one event named {@code name} ({@code progress}, {@code batch}, ...): {@code fields}
     * plus {@code id} and {@code "event":name}; not throttled.
     */
    public void event(String name, ObjectNode fields) {
        ObjectNode f = JsonNodeFactory.instance.objectNode();
        f.put(ControlProtocol.EVENT, name);
        f.setAll(fields);
        progressSink.accept(f);
    }

    public boolean cancelled() {
        return cancellation.isCancelled();
    }
}
