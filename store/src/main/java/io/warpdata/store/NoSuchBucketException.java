package io.warpdata.store;

/**
 * The remote names a bucket the server does not have: a configuration error, like credentials the
 * store rejects, that no waiting will mend (warpd refuses to start on it).
 */
public final class NoSuchBucketException extends StoreException {
    public NoSuchBucketException(String message, String nextStep, Throwable cause) {
        super(message, nextStep, cause);
    }

    @Override
    public String type() {
        return "NoSuchBucket";
    }
}
