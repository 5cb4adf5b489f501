package io.warpdata.store.s3;

import io.warpdata.store.AuthenticationException;
import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.NoSuchBucketException;
import io.warpdata.store.PermissionDeniedException;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreNotAnsweringException;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.StoreUnreachableException;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;

/**
 * The one place SDK failures become Warp errors (the {@link StoreException} family), each
 * naming the object and a next step: no SDK exception leaves this package.
 */
final class S3Errors {
    private static final String AUTH_ENV = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)";

    private final S3Location location;
    private final int maxAttempts;
    private final java.time.Duration answerTimeout;

    /**
     * @param location the store, named in every message
     * @param maxAttempts the attempts the client makes per call, for "after N attempts"
     * @param answerTimeout how long the client waits for a byte, for "sent nothing within"
     */
    S3Errors(S3Location location, int maxAttempts, java.time.Duration answerTimeout) {
        this.location = location;
        this.maxAttempts = maxAttempts;
        this.answerTimeout = answerTimeout;
    }

    /** The S3 error code ({@code NoSuchKey}, ...), or null when the answer carried none. */
    static String errorCode(AwsServiceException e) {
        return e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    }

    /** Whether a 404 is about the bucket rather than the key. */
    static boolean isNoSuchBucket(AwsServiceException e) {
        return "NoSuchBucket".equals(errorCode(e));
    }

    /**
     * The Warp error for an SDK failure of {@code op} ("read", "write", ...) on {@code key}.
     *
     * @return the error to throw; never null
     */
    StoreException translate(SdkException e, String op, String key) {
        String what = "Failed to " + op + " " + location.describe(key);
        String bucket = location.bucket();
        if (e instanceof AwsServiceException ase) {
            String code = errorCode(ase);
            int status = ase.statusCode();
            String detail = ": " + status + (code == null ? "" : " " + code);
            if (code != null) {
                switch (code) {
                    case "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
                         "TokenRefreshRequired", "AuthorizationHeaderMalformed" -> {
                        return new AuthenticationException(what + detail + ": the store rejected the credentials;"
                                + " check " + AUTH_ENV + " and AWS_REGION", e);
                    }
                    case "NoSuchBucket" -> {
                        return new NoSuchBucketException(what + ": bucket '" + bucket + "' does not exist",
                                "Create the bucket (e.g. 'aws s3 mb s3://" + bucket + "') or fix the bucket name"
                                        + " in the remote URI; with a local S3 server check --endpoint / WARP_S3_ENDPOINT.",
                                e);
                    }
                    case "NoSuchKey" -> {
                        return new BlobNotFoundException(location.describe(), key);
                    }
                    case "AccessDenied" -> {
                        return new PermissionDeniedException(what + detail, e);
                    }
                    case "InvalidRange" -> {
                        return new StoreException(what + detail + ": the range lies beyond the object's end",
                                "The manifest and the stored object disagree: re-publish the version.", e);
                    }
                    default -> {
                    }
                }
            }
            if (status == 404) {
                return new BlobNotFoundException(location.describe(), key);
            }
            if (status == 403) {
                return new PermissionDeniedException(what + detail, e);
            }
            if (status == 401) {
                return new AuthenticationException(what + detail + "; check " + AUTH_ENV, e);
            }
            if (status == 416) {
                return new StoreException(what + detail + ": the range lies beyond the object's end",
                        "The manifest and the stored object disagree: re-publish the version.", e);
            }
            if (status >= 500 || status == 429) {
                // "Up to": the client's retry quota may have run dry under a burst of failures, and
                // then it tried once (audit 38: every message said "after 4 attempts").
                return unavailable(op, what + detail + " (the S3 client tries a call up to " + maxAttempts + " times)", e);
            }
            return new StoreException(what + detail + ": " + ase.getMessage(),
                    "Check the remote URI and the server; report a bug if the request looks wrong.", e);
        }
        String msg = String.valueOf(e.getMessage());
        if (msg.contains("Unable to load credentials") || msg.contains("Unable to load region")) {
            return new AuthenticationException(what + ": no AWS credentials found; set " + AUTH_ENV
                    + " and AWS_REGION", e);
        }
        if (notAnswering(e)) {
            return notAnswering(what, e);
        }
        if (cannotConnect(e)) {
            return new StoreUnreachableException(what + ": cannot connect to " + location.server() + ": " + msg, e);
        }
        return unavailable(op, what + ": " + msg, e);
    }

    /**
     * The store failed a call worth trying again; a write says so as a publish's step (audit 23:
     * an upload cut short said "the read can be retried").
     */
    private static StoreUnavailableException unavailable(String op, String message, Throwable e) {
        if (op.equals("write") || op.contains("upload")) {
            return new StoreUnavailableException(message, "Check the network and the endpoint (warpctl doctor), then"
                    + " run the publish (or the command) again: what was uploaded is kept and not sent twice.", e);
        }
        return new StoreUnavailableException(message, e);
    }

    /** "not answering": what a call that timed out waiting for the store becomes. */
    StoreNotAnsweringException notAnswering(String what, Throwable e) {
        return new StoreNotAnsweringException(what + ": not answering: " + location.server() + " sent nothing within "
                + answerTimeout.toMillis() + " ms (" + e.getMessage() + ")", e);
    }

    /**
     * Whether the store took (or did not refuse) the connection but sent nothing within the
     * answer timeout: a connect timeout (a blackholed address), a socket read timeout, or an
     * attempt that ran out of time. These are not retried by the SDK ({@link StoreRetries}):
     * the read path decides, knowing whether the store answers anything else.
     */
    static boolean notAnswering(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.SocketTimeoutException
                    || t instanceof org.apache.http.conn.ConnectTimeoutException
                    || t instanceof software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException
                    || t instanceof software.amazon.awssdk.core.exception.ApiCallTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether no connection could be made at all (refused, unknown host, no route; a connect
     * timeout is {@link #notAnswering}), as opposed to a connection that failed part way or a server error: nothing is
     * listening, so the read path stops retrying at once.
     */
    static boolean cannotConnect(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.ConnectException || t instanceof java.net.UnknownHostException
                    || t instanceof java.net.NoRouteToHostException
                    || t instanceof org.apache.http.conn.HttpHostConnectException) {
                return true;
            }
        }
        return false;
    }
}
