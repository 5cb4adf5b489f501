package io.warpdata.store;

/** No credentials, or the store rejected them (missing, invalid, expired). */
public final class AuthenticationException extends StoreException {
    public AuthenticationException(String message, Throwable cause) {
        super(message,
                "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE with ~/.aws/credentials),"
                        + " and AWS_REGION; for a non-AWS server also pass --endpoint / WARP_S3_ENDPOINT.",
                cause);
    }

    @Override
    public String type() {
        return "AuthenticationError";
    }
}
