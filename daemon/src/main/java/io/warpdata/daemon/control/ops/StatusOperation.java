package io.warpdata.daemon.control.ops;

import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.TypedOperation;
import io.warpdata.daemon.control.protocol.Calls;
import io.warpdata.daemon.control.protocol.Empty;
import io.warpdata.daemon.control.protocol.StatusCall;

import java.time.Clock;
import java.time.Duration;
import java.util.OptionalLong;

/** {@code status}: version, mount, remote, mode, uptime, open files, recent errors, and who asked. */
public final class StatusOperation extends TypedOperation<Empty, StatusCall.Reply, Empty> {
    private final DaemonInfo daemon;
    private final AccessPolicy policy;
    private final Clock clock;

    public StatusOperation(DaemonInfo daemon, AccessPolicy policy, Clock clock) {
        super(Calls.STATUS, AccessPolicy.Access.OPEN);
        this.daemon = daemon;
        this.policy = policy;
        this.clock = clock;
    }

    @Override
    protected StatusCall.Reply run(Empty request, Events<Empty> events) {
        var peer = events.context().peer();
        return new StatusCall.Reply(daemon.version(), daemon.mountPoint(), daemon.remote(), daemon.mode(),
                daemon.startedAt().toString(), Math.max(0, Duration.between(daemon.startedAt(), clock.instant()).toSeconds()),
                boxed(daemon.openFiles()), boxed(daemon.openDirectories()), daemon.recentErrors(),
                daemon.storeStatus().orElse(null), daemon.mirrors(),
                new StatusCall.Asker(peer.uid(), peer.userName(), policy.privileged(peer)),
                daemon.passthrough().orElse(null), daemon.endpoint().orElse(""));
    }

    private static Long boxed(OptionalLong n) {
        return n.isPresent() ? n.getAsLong() : null;
    }
}
