package io.warpdata.daemon.control.wiring;

import io.warpdata.blobcache.cache.BlockCache;
import io.warpdata.daemon.control.ControlServer;
import io.warpdata.daemon.control.ControlSettings;
import io.warpdata.daemon.control.EtcUserDatabase;
import io.warpdata.daemon.control.ops.CacheControl;
import io.warpdata.daemon.control.ops.ControlOperations;
import io.warpdata.daemon.control.ops.PublishRunner;
import io.warpdata.daemon.warpd.WarpDaemon;

import java.time.Clock;
import java.util.Optional;

/**
 * Starts the control socket for a running {@link WarpDaemon}: in WarpdCommand, after the daemon
 * started, {@code daemon.addService(DaemonControl.start(daemon, control, Clock.systemUTC()))}.
 */
public final class DaemonControl {
    private DaemonControl() {
    }

    /**
     * Serves the socket of {@code daemon.config().socket()}.
     *
     * @param socketGroup  group that may connect (socket mode 0660), or empty: only warpd's user and root
     * @param controlGroup group whose members may gc, verify and publish, or empty
     * @throws io.warpdata.daemon.control.ControlException as {@link #start(WarpDaemon, ControlSettings, Clock)}
     */
    public static ControlServer start(WarpDaemon daemon, Optional<String> socketGroup, Optional<String> controlGroup, Clock clock) {
        return start(daemon, new ControlSettings(daemon.config().socket(), socketGroup.orElse(null), controlGroup.orElse(null)), clock);
    }

    /**
     * @throws io.warpdata.daemon.control.ControlException if the socket cannot be created safely,
     *         another warpd serves it, or a configured group does not exist
     */
    public static ControlServer start(WarpDaemon daemon, ControlSettings settings, Clock clock) {
        CacheControl cache = daemon.reader() instanceof BlockCache bc ? new BlockCacheControl(bc) : new NoDiskCache(daemon.reader());
        var policy = settings.policy(EtcUserDatabase.system());
        var ops = ControlOperations.standard(new WarpDaemonInfo(daemon, clock.instant()), cache, new CatalogAdapter(daemon.catalog(), daemon::checkLinks),
                Optional.of(publishNow(daemon, new DaemonPublisher(daemon.store(), daemon.catalog(), clock,
                        daemon.config().cacheDir().resolve("publish-staging")))),
                policy, clock);
        return settings.start(ops);
    }

    /** A publish tries the store at once, even if it was found unreachable moments ago. */
    private static PublishRunner publishNow(WarpDaemon daemon, PublishRunner publisher) {
        return (request, progress, cancelled) -> {
            daemon.retryStoreNow();
            return publisher.publish(request, progress, cancelled);
        };
    }
}
