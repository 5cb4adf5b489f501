package io.warpdata.store.s3;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.retries.api.AcquireInitialTokenRequest;
import software.amazon.awssdk.retries.api.RecordSuccessRequest;
import software.amazon.awssdk.retries.api.RefreshRetryTokenRequest;
import software.amazon.awssdk.retries.api.RefreshRetryTokenResponse;
import software.amazon.awssdk.retries.api.RetryToken;
import software.amazon.awssdk.retries.api.TokenAcquisitionFailedException;
import software.amazon.awssdk.retries.api.BackoffStrategy;

import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StoreRetriesTest {
    private static final SdkClientException BROKEN_PIPE = SdkClientException.create(
            "Unable to execute HTTP request: Broken pipe", new SocketException("Broken pipe"));
    private static final SdkClientException RESET = SdkClientException.create(
            "Unable to execute HTTP request: Connection reset", new SocketException("Connection reset"));

    /** Two attempts in all, a fixed 1 ms backoff. */
    private static StoreRetries retries(int pooled) {
        return new StoreRetries(AwsRetryStrategy.standardRetryStrategy().toBuilder()
                .maxAttempts(2)
                .backoffStrategy(BackoffStrategy.fixedDelay(Duration.ofMillis(1)))
                .circuitBreakerEnabled(false)
                .build(), pooled);
    }

    private static RefreshRetryTokenResponse refresh(StoreRetries s, RetryToken token, Throwable failure) {
        return s.refreshRetryToken(RefreshRetryTokenRequest.builder().token(token).failure(failure).build());
    }

    @Test
    void deadPooledConnectionsAreRetriedAtOnceWithoutSpendingAnAttemptUpToThePoolSize() {
        StoreRetries s = retries(3);
        RetryToken token = s.acquireInitialToken(AcquireInitialTokenRequest.create("s3")).token();
        for (int i = 0; i < 3; i++) {
            RefreshRetryTokenResponse r = refresh(s, token, BROKEN_PIPE);
            assertThat(r.delay()).isZero();
            token = r.token();
        }
        // The pool's worth of dead connections is spent: the next one takes the standard path,
        // whose one retry (2 attempts in all) is still unspent, then it gives up.
        RetryToken last = refresh(s, token, BROKEN_PIPE).token();
        assertThatThrownBy(() -> refresh(s, last, BROKEN_PIPE)).isInstanceOf(TokenAcquisitionFailedException.class);
        s.recordSuccess(RecordSuccessRequest.create(last));
    }

    @Test
    void otherFailuresSpendAttemptsAsTheStandardStrategyDoes() {
        StoreRetries s = retries(64);
        RetryToken token = s.acquireInitialToken(AcquireInitialTokenRequest.create("s3")).token();
        RetryToken second = refresh(s, token, RESET).token();
        assertThatThrownBy(() -> refresh(s, second, RESET)).isInstanceOf(TokenAcquisitionFailedException.class);
    }

    @Test
    void silenceIsNotRetriedAtAll() {
        StoreRetries s = retries(64);
        RetryToken token = s.acquireInitialToken(AcquireInitialTokenRequest.create("s3")).token();
        assertThatThrownBy(() -> refresh(s, token, SdkClientException.create("timeout", new SocketTimeoutException("Read timed out"))))
                .isInstanceOf(TokenAcquisitionFailedException.class).hasMessageContaining("answer timeout");
    }

    @Test
    void onlyABrokenPipeIsADeadConnection() {
        assertThat(StoreRetries.deadConnection(BROKEN_PIPE)).isTrue();
        assertThat(StoreRetries.deadConnection(RESET)).isFalse();
        assertThat(StoreRetries.deadConnection(new IllegalStateException("Broken pipe"))).isFalse();
    }
}
