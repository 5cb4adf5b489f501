package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;

/** One thing the control socket can do, e.g. {@code status} or {@code warm}. */
public interface Operation {

    /** The {@code op} name in requests, e.g. {@code cache.gc}. */
    String name();

    /** What the peer needs to run it. */
    AccessPolicy.Access access();

    /**
     * Runs the operation; may stream progress through {@code ctx} and should stop soon after
     * {@code ctx.cancelled()} turns true.
     *
     * @return the result object sent as {@code result}
     * @throws io.warpdata.manifest.WarpException on failure, sent to the client as a typed error
     * @throws ControlException of type {@link ControlException#BAD_REQUEST} on bad arguments
     */
    JsonNode run(OperationContext ctx);
}
