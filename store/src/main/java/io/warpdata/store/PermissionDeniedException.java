package io.warpdata.store;

/** The credentials are valid but not allowed to do this (HTTP 403, EACCES). */
public final class PermissionDeniedException extends StoreException {
    public PermissionDeniedException(String message, Throwable cause) {
        super(message,
                "Ask the bucket's administrator for s3:GetObject/s3:ListBucket (and s3:PutObject to publish)"
                        + " on this prefix, or use credentials that have them.",
                cause);
    }

    /** @param next what to do, where the store is not a bucket (a directory's permissions) */
    public PermissionDeniedException(String message, String next, Throwable cause) {
        super(message, next, cause);
    }

    @Override
    public String type() {
        return "PermissionError";
    }
}
