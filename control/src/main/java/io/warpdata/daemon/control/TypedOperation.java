package io.warpdata.daemon.control;

import com.fasterxml.jackson.databind.JsonNode;
import io.warpdata.daemon.control.protocol.Call;
import io.warpdata.daemon.control.protocol.Wire;

/**
 * An operation over the records of its {@link Call}: the request's {@code args} are read into
 * {@code Q} (a bad one is a BadRequest naming the argument), the {@code R} returned is the
 * result, and the events it sends are {@code E}s.
 */
public abstract class TypedOperation<Q, R, E> implements Operation {
    private final Call<Q, R, E> call;
    private final AccessPolicy.Access access;

    /** @param access what the peer needs to run it */
    protected TypedOperation(Call<Q, R, E> call, AccessPolicy.Access access) {
        this.call = call;
        this.access = access;
    }

    @Override
    public final String name() {
        return call.op();
    }

    @Override
    public final AccessPolicy.Access access() {
        return access;
    }

    @Override
    public final JsonNode run(OperationContext ctx) {
        Q request = Wire.request(call.op(), ctx.args().node(), call.request());
        return Wire.tree(run(request, new Events<>(call, ctx)));
    }

    /**
     * Runs the operation on its typed request; sends events through {@code events}, and should
     * stop soon after {@code events.context().cancelled()} turns true.
     */
    protected abstract R run(Q request, Events<E> events);

    /** A bad argument of this operation, e.g. {@code warm: argument 'shards' must be ...}. */
    protected final ControlException bad(String field, String problem) {
        return Wire.badArgument(call.op(), field, problem);
    }

    /** Where an operation's events go, typed as its {@link Call} says. */
    public static final class Events<E> {
        private final Call<?, ?, E> call;
        private final OperationContext ctx;

        Events(Call<?, ?, E> call, OperationContext ctx) {
            this.call = call;
            this.ctx = ctx;
        }

        /** Sends one event line: {@code event}'s fields plus {@code id} and the call's {@code "event"} name. */
        public void send(E event) {
            ctx.event(call.event(), Wire.tree(event));
        }

        public OperationContext context() {
            return ctx;
        }
    }
}
