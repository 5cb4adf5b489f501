package io.warpdata.daemon.control.wiring;

import io.warpdata.daemon.control.ops.DaemonInfo;
import io.warpdata.daemon.warpd.WarpDaemon;
import io.warpdata.vfs.Errno;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/** {@link DaemonInfo} over a running {@link WarpDaemon}. */
public final class WarpDaemonInfo implements DaemonInfo {
    private final WarpDaemon daemon;
    private final Instant startedAt;

    public WarpDaemonInfo(WarpDaemon daemon, Instant startedAt) {
        this.daemon = daemon;
        this.startedAt = startedAt;
    }

    @Override
    public String version() {
        return Optional.ofNullable(WarpDaemon.class.getPackage().getImplementationVersion()).orElse("0.1.0");
    }

    @Override
    public String mountPoint() {
        return daemon.config().mountPoint().toString();
    }

    @Override
    public String remote() {
        return daemon.config().remote();
    }

    @Override
    public String mode() {
        return daemon.config().mode().text();
    }

    @Override
    public Instant startedAt() {
        return startedAt;
    }

    @Override
    public OptionalLong openFiles() {
        Object gauges = daemon.stats().get("gauges");
        if (gauges instanceof Map<?, ?> g && g.get("open_handles") instanceof Number n) {
            return OptionalLong.of(n.longValue());
        }
        return OptionalLong.empty();
    }

    @Override
    public Map<String, Object> store() {
        Object store = daemon.stats().get("store");
        if (store instanceof Map<?, ?> m) {
            Map<String, Object> out = new java.util.LinkedHashMap<>();
            m.forEach((k, v) -> out.put(String.valueOf(k), v));
            return out;
        }
        return Map.of();
    }

    /** The mount's error counters by type (the daemon keeps counts, not lines). */
    @Override
    public List<String> recentErrors() {
        List<String> out = new ArrayList<>();
        Errno errno = daemon.errno();
        if (errno != null) {
            errno.ioErrorsByType().forEach((type, n) -> out.add(n + " read error(s) of type " + type
                    + " since start (details in warpd's log)"));
        }
        return out;
    }
}
