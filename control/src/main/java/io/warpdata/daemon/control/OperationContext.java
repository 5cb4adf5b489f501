package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.function.Consumer;

/**
 * What an operation gets: its arguments, the peer that asked, a way to stream progress events
 * and the cancellation flag.
 */
public record OperationContext(Args args, Peer peer, Consumer<ObjectNode> progressSink, Cancellation cancellation) {

    /** Sends one progress event: {@code fields} plus {@code id} and {@code "event":"progress"}. */
    public void progress(ObjectNode fields) {
        progressSink.accept(fields);
    }

    /**
     * Sends one event of another kind than progress, e.g. {@code batch}: {@code fields} plus
     * {@code id} and {@code "event":name}, as many as the operation needs (not throttled).
     */
    public void event(String name, ObjectNode fields) {
        ObjectNode f = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        f.put(ControlProtocol.EVENT, name);
        f.setAll(fields);
        progressSink.accept(f);
    }

    public boolean cancelled() {
        return cancellation.isCancelled();
    }
}
