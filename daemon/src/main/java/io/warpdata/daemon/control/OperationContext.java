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

    public boolean cancelled() {
        return cancellation.isCancelled();
    }
}
