package io.warpdata.daemon.cli;

/** The warpctl client (placeholder until the publish/inspect work lands). */
public final class WarpctlCommand {
    private WarpctlCommand() {
    }

    /** Runs warpctl with {@code args}; returns the exit code (0 ok, 1 failed, 2 usage). */
    public static int run(String[] args) {
        System.err.println("warpctl: not built yet");
        return 2;
    }
}
