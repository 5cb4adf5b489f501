package io.warpdata.daemon.control;

import io.warpdata.manifest.WarpException;

import java.util.Objects;

/**
 * An error of the control socket: a bad request, a refused peer, a cancelled operation, or an
 * error the daemon reported to a client. The type travels over the socket as the error's
 * {@code type} field, so a client re-raises exactly what the daemon said.
 */
public final class ControlException extends WarpException {
    /** Request line is not JSON or lacks a field. */
    public static final String BAD_REQUEST = "BadRequest";
    /** Request line longer than the limit. */
    public static final String REQUEST_TOO_LARGE = "RequestTooLarge";
    /** No operation of that name. */
    public static final String UNKNOWN_OPERATION = "UnknownOperation";
    /** The peer may not run the operation. */
    public static final String ACCESS_DENIED = "AccessDenied";
    /** The operation was cancelled (client went away or asked). */
    public static final String CANCELLED = "Cancelled";
    /** No daemon answers on the socket. */
    public static final String DAEMON_UNAVAILABLE = "DaemonUnavailable";
    /** The socket could not be created safely. */
    public static final String SOCKET_UNSAFE = "SocketUnsafe";
    /** A feature the running daemon was not wired with. */
    public static final String UNSUPPORTED = "Unsupported";
    /** Too many clients or requests at once. */
    public static final String BUSY = "Busy";
    /** A publish holds more files than warpd's heap can pack; warpctl then publishes in its own process. */
    public static final String PUBLISH_TOO_LARGE = "PublishTooLarge";
    /** Anything unexpected inside the daemon. */
    public static final String INTERNAL = "InternalError";

    private final String type;
    private final java.util.Map<String, String> details;

    public ControlException(String type, String message, String nextStep) {
        this(type, message, nextStep, null);
    }

    public ControlException(String type, String message, String nextStep, Throwable cause) {
        this(type, message, nextStep, cause, java.util.Map.of());
    }

    /** An error warpd reported, with its {@link #details()} as they came. */
    public ControlException(String type, String message, String nextStep, Throwable cause,
                            java.util.Map<String, String> details) {
        super(message, nextStep, cause);
        this.type = Objects.requireNonNull(type, "type");
        this.details = java.util.Map.copyOf(details);
    }

    @Override
    public java.util.Map<String, String> details() {
        return details;
    }

    @Override
    public String type() {
        return type;
    }
}
