package io.warpdata.daemon.warpd;

/** The warpd daemon (placeholder until the mount work lands). */
public final class WarpdCommand {
    private WarpdCommand() {
    }

    /** Runs warpd with {@code args} in the foreground; returns the exit code. */
    public static int run(String[] args) {
        System.err.println("warpd: not built yet");
        return 2;
    }
}
