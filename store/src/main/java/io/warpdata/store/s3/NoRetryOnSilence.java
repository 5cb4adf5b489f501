package io.warpdata.store.s3;

import software.amazon.awssdk.retries.api.AcquireInitialTokenRequest;
import software.amazon.awssdk.retries.api.AcquireInitialTokenResponse;
import software.amazon.awssdk.retries.api.RecordSuccessRequest;
import software.amazon.awssdk.retries.api.RecordSuccessResponse;
import software.amazon.awssdk.retries.api.RefreshRetryTokenRequest;
import software.amazon.awssdk.retries.api.RefreshRetryTokenResponse;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.retries.api.TokenAcquisitionFailedException;

/**
 * The SDK's standard retries, except after a timeout waiting for the store (connect, silence
 * within an answer, an attempt out of time): retried here, a stopped or blackholed store would
 * hold a FUSE request for every attempt (4 x 5 s), and the request could not tell a stuck
 * connection from a store that answers nobody. The failure goes up at once as
 * {@link io.warpdata.store.StoreNotAnsweringException}; the read path retries it only while
 * the store answers other calls ({@link io.warpdata.store.StoreHealth}).
 */
final class NoRetryOnSilence implements RetryStrategy {
    private final RetryStrategy standard;

    NoRetryOnSilence(RetryStrategy standard) {
        this.standard = standard;
    }

    @Override
    public AcquireInitialTokenResponse acquireInitialToken(AcquireInitialTokenRequest request) {
        return standard.acquireInitialToken(request);
    }

    @Override
    public RefreshRetryTokenResponse refreshRetryToken(RefreshRetryTokenRequest request) {
        if (S3Errors.notAnswering(request.failure())) {
            throw new TokenAcquisitionFailedException("not retried: the store sent nothing within its answer timeout",
                    request.token(), request.failure());
        }
        return standard.refreshRetryToken(request);
    }

    @Override
    public RecordSuccessResponse recordSuccess(RecordSuccessRequest request) {
        return standard.recordSuccess(request);
    }

    @Override
    public int maxAttempts() {
        return standard.maxAttempts();
    }

    @Override
    public Builder<?, ?> toBuilder() {
        // A builder of the standard strategy: whoever rebuilds it gets the SDK's own behaviour.
        return standard.toBuilder();
    }
}
