package io.warpdata.daemon.publish;

/**
 * Where the publisher reports progress (a terminal progress bar in the CLI, nothing in tests).
 * Called from several threads during upload.
 */
public interface PublishProgress {
    /** Does nothing. */
    PublishProgress NONE = new PublishProgress() {
    };

    /** A new phase ("pack images", "upload") of {@code totalBytes} bytes of work begins. */
    default void start(String task, long totalBytes) {
    }

    /** {@code bytes} more bytes of the current phase are done. */
    default void advance(long bytes) {
    }

    /** The current phase is over. */
    default void finish() {
    }

    /** A line to show between phases (what a long step without a byte count is doing). */
    default void note(String text) {
    }

    /**
     * Called before each blob is uploaded and before each step that cannot be taken back
     * ({@code next}: writing the manifest, moving the pointers); throws to stop the publish there
     * (warpd: the client that asked for it went away, e.g. Ctrl-C on warpctl). Does nothing by default.
     */
    default void checkpoint(String next) {
    }
}
