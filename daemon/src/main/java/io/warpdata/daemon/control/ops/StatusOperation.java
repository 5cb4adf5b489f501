package io.warpdata.daemon.control.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warpdata.daemon.control.AccessPolicy;
import io.warpdata.daemon.control.ControlProtocol;
import io.warpdata.daemon.control.Operation;
import io.warpdata.daemon.control.OperationContext;

import java.time.Clock;
import java.time.Duration;

/** {@code status}: version, mount, remote, mode, uptime, open files, recent errors, and who asked. */
public final class StatusOperation implements Operation {
    private final DaemonInfo daemon;
    private final AccessPolicy policy;
    private final Clock clock;

    public StatusOperation(DaemonInfo daemon, AccessPolicy policy, Clock clock) {
        this.daemon = daemon;
        this.policy = policy;
        this.clock = clock;
    }

    @Override
    public String name() {
        return "status";
    }

    @Override
    public AccessPolicy.Access access() {
        return AccessPolicy.Access.OPEN;
    }

    @Override
    public JsonNode run(OperationContext ctx) {
        ObjectNode r = ControlProtocol.object();
        r.put("version", daemon.version());
        r.put("mount", daemon.mountPoint());
        r.put("remote", daemon.remote());
        r.put("mode", daemon.mode());
        r.put("started_at", daemon.startedAt().toString());
        r.put("uptime_seconds", Math.max(0, Duration.between(daemon.startedAt(), clock.instant()).toSeconds()));
        daemon.openFiles().ifPresentOrElse(n -> r.put("open_files", n), () -> r.putNull("open_files"));
        daemon.openDirectories().ifPresentOrElse(n -> r.put("open_directories", n), () -> r.putNull("open_directories"));
        daemon.recentErrors().forEach(r.putArray("recent_errors")::add);
        r.set("store", ControlProtocol.json().valueToTree(daemon.storeStatus()));
        r.set("mirrors", ControlProtocol.json().valueToTree(daemon.mirrors()));
        ObjectNode you = r.putObject("peer");
        you.put("uid", ctx.peer().uid());
        you.put("user", ctx.peer().userName());
        you.put("privileged", policy.privileged(ctx.peer()));
        return r;
    }
}
