package io.warpdata.daemon.control.protocol;

import com.fasterxml.jackson.annotation.JsonProperty;

import java.util.List;

/** {@code status}: what the running warpd is and who asked. */
public final class StatusCall {
    private StatusCall() {
    }

    /**
     * @param openFiles       files open in the mount, null if the daemon cannot count them
     * @param openDirectories directories open in the mount, null if not counted
     * @param recentErrors    the last few errors logged, newest last, one line each
     * @param store           whether the store answers; null if the daemon does not know
     * @param passthrough     FUSE passthrough's state; null from a warpd that does not report it
     * @param endpoint        the S3-compatible endpoint warpd reaches the store at; "" for AWS's
     *                        own; null from a warpd that does not report it
     */
    public record Reply(@JsonProperty(required = true) String version,
                        @JsonProperty(required = true) String mount,
                        String remote,
                        String mode,
                        String startedAt,
                        long uptimeSeconds,
                        Long openFiles,
                        Long openDirectories,
                        List<String> recentErrors,
                        StoreStatus store,
                        List<MirrorStatus> mirrors,
                        Asker peer,
                        PassthroughStatus passthrough,
                        String endpoint) {
        public Reply {
            recentErrors = recentErrors == null ? List.of() : List.copyOf(recentErrors);
            mirrors = mirrors == null ? List.of() : List.copyOf(mirrors);
        }
    }

    /** The peer that asked, as the daemon saw it, and whether it may run privileged operations. */
    public record Asker(int uid, String user, boolean privileged) {
    }
}
