package io.warpdata.daemon.warpd;

import io.warpdata.daemon.control.ControlServer;
import io.warpdata.daemon.control.ControlSettings;
import io.warpdata.daemon.control.EtcUserDatabase;
import io.warpdata.daemon.control.ops.ControlOperations;

import java.time.Clock;
import java.util.Optional;

/**
 * The control socket of a running {@link WarpDaemon}: the standard operations over its own
 * block cache, catalog and store ({@code warpctl status}, warm, cache, refresh, publish), and
 * {@code prefetch.order} over its mount's tree.
 */
public final class ControlSocket {
    private ControlSocket() {
    }

    /**
     * Serves {@code daemon.config().socket()}.
     *
     * @param socketGroup  group that may connect (socket mode 0660), or empty: only warpd's user and root
     * @param controlGroup group whose members may gc and verify, or empty
     * @throws io.warpdata.daemon.control.ControlException if the socket cannot be created safely,
     *         another warpd serves it, or a configured group does not exist
     */
    public static ControlServer start(WarpDaemon daemon, Optional<String> socketGroup, Optional<String> controlGroup,
                                      Clock clock) {
        return start(daemon, new ControlSettings(daemon.config().socket(), socketGroup.orElse(null),
                controlGroup.orElse(null)), clock);
    }

    /** As {@link #start(WarpDaemon, Optional, Optional, Clock)} with the settings given whole. */
    public static ControlServer start(WarpDaemon daemon, ControlSettings settings, Clock clock) {
        var policy = settings.policy(EtcUserDatabase.system());
        var publishing = new ControlOperations.Publishing(daemon.store(),
                daemon.config().cacheDir().resolve(PrivateDirectories.PUBLISH_STAGING), daemon::retryStoreNow);
        var ops = ControlOperations.standard(daemon, daemon.reader(), daemon.catalog(), daemon::checkLinks,
                Optional.of(publishing), Optional.ofNullable(daemon.tree()), policy, clock);
        return settings.start(ops);
    }
}
