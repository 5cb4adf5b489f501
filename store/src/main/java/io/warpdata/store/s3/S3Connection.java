package io.warpdata.store.s3;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.AwsProfileRegionProvider;
import software.amazon.awssdk.regions.providers.AwsRegionProvider;
import software.amazon.awssdk.regions.providers.AwsRegionProviderChain;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.regions.providers.SystemSettingsRegionProvider;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;

import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The SDK client of one store and what it owns: credentials, region, the HTTP connection pool,
 * timeouts and the retry strategy (exponential backoff with jitter on 5xx, throttling and resets,
 * bounded by {@link S3BlobStore.Config}; a store that sends nothing is not retried here, see
 * {@link StoreRetries}), and the count of retries it made.
 */
final class S3Connection implements AutoCloseable {
    private static final ExecutionAttribute<AtomicInteger> ATTEMPTS = new ExecutionAttribute<>("warp.attempts");

    private final S3Client client;
    private final AutoCloseable credentials;
    private final LongAdder retries = new LongAdder();

    /** Builds the client for {@code endpoint} (path-style) or for AWS S3 (cross-region). */
    S3Connection(Optional<URI> endpoint, S3BlobStore.Config config) {
        AwsCredentialsProvider creds = config.credentials()
                .<AwsCredentialsProvider>map(c -> StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(c.accessKeyId(), c.secretAccessKey())))
                .orElseGet(() -> DefaultCredentialsProvider.builder().build());
        this.credentials = creds instanceof AutoCloseable c ? c : () -> { };
        S3ClientBuilder b = S3Client.builder()
                .credentialsProvider(creds)
                .region(region(endpoint.isPresent()))
                .httpClientBuilder(ApacheHttpClient.builder()
                        .maxConnections(config.maxConnections())
                        .connectionTimeout(config.answerTimeout())
                        .socketTimeout(config.answerTimeout()))
                .overrideConfiguration(o -> o
                        .apiCallAttemptTimeout(config.attemptTimeout())
                        .apiCallTimeout(config.callTimeout())
                        .retryStrategy(new StoreRetries(AwsRetryStrategy.standardRetryStrategy().toBuilder()
                                .maxAttempts(config.maxAttempts())
                                .backoffStrategy(BackoffStrategy.exponentialDelay(config.backoffBase(), config.backoffMax()))
                                .throttlingBackoffStrategy(BackoffStrategy.exponentialDelay(
                                        config.backoffBase().multipliedBy(5), config.backoffMax().multipliedBy(2)))
                                .build(), config.maxConnections()))
                        .addExecutionInterceptor(new AttemptCounter()));
        if (endpoint.isPresent()) {
            b.endpointOverride(endpoint.get()).forcePathStyle(true);
        } else {
            // The region may differ from the bucket's: follow S3's redirects instead of failing.
            b.crossRegionAccessEnabled(true);
        }
        this.client = b.build();
    }

    /**
     * The configured region (AWS_REGION, aws.region, the profile); on AWS also the instance
     * metadata service. us-east-1 when none is set: any S3-compatible server accepts it, and on
     * AWS cross-region access follows the bucket. The metadata service is not asked for a custom
     * endpoint because, off EC2, it costs seconds of timeouts at every start.
     */
    private static Region region(boolean customEndpoint) {
        AwsRegionProvider chain = customEndpoint
                ? new AwsRegionProviderChain(new SystemSettingsRegionProvider(), new AwsProfileRegionProvider())
                : new DefaultAwsRegionProviderChain();
        try {
            return chain.getRegion();
        } catch (SdkClientException e) {
            return Region.US_EAST_1;
        }
    }

    /** The SDK client; its calls throw SDK exceptions, which {@link S3Errors} translates. */
    S3Client client() {
        return client;
    }

    /** Attempts beyond the first, over all calls of this client. */
    long retries() {
        return retries.sum();
    }

    /** Closes the client, then the credentials provider (which stops its refresh thread). */
    @Override
    public void close() {
        client.close();
        closeCredentials();
    }

    private void closeCredentials() {
        try {
            credentials.close();
        } catch (Exception ignored) {
            // Closing a credentials provider only stops its refresh thread: nothing to report.
        }
    }

    /** Counts attempts beyond the first of each call: the SDK's retries. */
    private final class AttemptCounter implements ExecutionInterceptor {
        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            attributes.putAttribute(ATTEMPTS, new AtomicInteger());
        }

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            AtomicInteger attempts = attributes.getAttribute(ATTEMPTS);
            if (attempts != null && attempts.incrementAndGet() > 1) {
                retries.increment();
            }
        }
    }
}
