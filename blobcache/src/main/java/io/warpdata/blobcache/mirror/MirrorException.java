package io.warpdata.blobcache.mirror;

/**
 * A mirror failed to answer a read: an HTTP error status, a reset or broken connection, an
 * answer that does not match the request, or a mirror silent for its timeout. Never
 * reaches a reader: the read plan ({@code Remotes}) counts it, skips the mirror for a backoff and the read goes
 * on to the next source.
 */
public final class MirrorException extends Exception {
    /** What went wrong, for counters and log lines. */
    public enum Kind {
        /** Nothing from the mirror for one timeout, or an answer still coming at the ceiling. */
        TIMEOUT,
        /** An HTTP status other than 200/206/404, or an S3 error. */
        STATUS,
        /** Connection refused, reset, closed early. */
        CONNECTION,
        /** An answer that does not match the request (wrong Content-Range, wrong length). */
        BAD_ANSWER
    }

    private final Kind kind;

    public MirrorException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public MirrorException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
