package io.warpdata.store.s3;

import software.amazon.awssdk.retries.api.AcquireInitialTokenRequest;
import software.amazon.awssdk.retries.api.AcquireInitialTokenResponse;
import software.amazon.awssdk.retries.api.RecordSuccessRequest;
import software.amazon.awssdk.retries.api.RecordSuccessResponse;
import software.amazon.awssdk.retries.api.RefreshRetryTokenRequest;
import software.amazon.awssdk.retries.api.RefreshRetryTokenResponse;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.retries.api.RetryToken;
import software.amazon.awssdk.retries.api.TokenAcquisitionFailedException;

import java.time.Duration;

/**
 * The SDK's standard retries, with two exceptions.
 *
 * <ul>
 *   <li><b>Silence is not retried.</b> After a timeout waiting for the store (connect, silence
 *       within an answer, an attempt out of time), a retry here would hold a FUSE request for
 *       every attempt (4 x 5 s), and the request could not tell a stuck connection from a store
 *       that answers nobody. The failure goes up at once as
 *       {@link io.warpdata.store.StoreNotAnsweringException}; the read path retries it only
 *       while the store answers other calls ({@link io.warpdata.store.StoreHealth}).</li>
 *   <li><b>A dead pooled connection costs no attempt.</b> A request that fails with "Broken
 *       pipe" was written to a connection the server had already reset while it sat in the
 *       pool (the pool checks a connection only after 2 s idle). The retry takes the next
 *       pooled connection, which may be dead too: after a burst of refused conditional PUTs
 *       from 8 racing writers on a loaded machine, S3Proxy had reset more connections than the
 *       4 attempts, and a plain GET failed four times without reaching the server. Such a
 *       retry is immediate and free, at most {@code pooled} times per call (each one drops
 *       a dead connection, so the pool runs out of them by then).</li>
 * </ul>
 */
final class StoreRetries implements RetryStrategy {
    private final RetryStrategy standard;
    private final int pooled;

    /** Counts the free retries of one call beside the standard strategy's own token. */
    private record Token(RetryToken standard, int deadConnections) implements RetryToken {
    }

    /**
     * @param standard the SDK's strategy, which decides every other retry
     * @param pooled the connection pool's size: the most dead connections one call can meet
     */
    StoreRetries(RetryStrategy standard, int pooled) {
        this.standard = standard;
        this.pooled = pooled;
    }

    @Override
    public AcquireInitialTokenResponse acquireInitialToken(AcquireInitialTokenRequest request) {
        AcquireInitialTokenResponse first = standard.acquireInitialToken(request);
        return AcquireInitialTokenResponse.create(new Token(first.token(), 0), first.delay());
    }

    @Override
    public RefreshRetryTokenResponse refreshRetryToken(RefreshRetryTokenRequest request) {
        Token token = (Token) request.token();
        if (S3Errors.notAnswering(request.failure())) {
            throw new TokenAcquisitionFailedException("not retried: the store sent nothing within its answer timeout",
                    token.standard(), request.failure());
        }
        if (deadConnection(request.failure()) && token.deadConnections() < pooled) {
            return RefreshRetryTokenResponse.create(new Token(token.standard(), token.deadConnections() + 1),
                    Duration.ZERO);
        }
        RefreshRetryTokenResponse next = standard.refreshRetryToken(RefreshRetryTokenRequest.builder()
                .token(token.standard())
                .failure(request.failure())
                .suggestedDelay(request.suggestedDelay().orElse(null))
                .build());
        return RefreshRetryTokenResponse.create(new Token(next.token(), token.deadConnections()), next.delay());
    }

    @Override
    public RecordSuccessResponse recordSuccess(RecordSuccessRequest request) {
        standard.recordSuccess(RecordSuccessRequest.create(((Token) request.token()).standard()));
        return RecordSuccessResponse.create(request.token());
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

    /** Whether the request was written to a connection the server had reset ("Broken pipe"). */
    static boolean deadConnection(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.SocketException && t.getMessage() != null
                    && t.getMessage().contains("Broken pipe")) {
                return true;
            }
        }
        return false;
    }
}
