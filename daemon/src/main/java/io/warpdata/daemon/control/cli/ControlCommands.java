package io.warpdata.daemon.control.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The warpctl subcommands of the control area, for the warpctl root to register. */
public final class ControlCommands {
    private ControlCommands() {
    }

    /**
     * status, warm, cache (stats|gc|verify), refresh, doctor, init.
     *
     * @param env environment (WARP_SOCKET, WARP_REMOTE, WARP_CACHE_DIR, ...)
     * @param err where the warm progress bar goes (stderr)
     * @param cwd working directory for relative -o paths
     */
    public static List<Object> all(Map<String, String> env, PrintStream err, Path cwd) {
        return List.of(
                new StatusCommand(env),
                new WarmCommand(env, err),
                new CacheCommand(env),
                new RefreshCommand(env),
                new DoctorCommand(env),
                new InitCommand(env, cwd));
    }
}
