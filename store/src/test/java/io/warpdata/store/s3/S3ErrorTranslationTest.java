package io.warpdata.store.s3;

import io.warpdata.store.AuthenticationException;
import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.PermissionDeniedException;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreNotAnsweringException;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.StoreUnreachableException;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.S3Exception;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** Every SDK failure becomes the right Warp error, naming the object and a next step. */
class S3ErrorTranslationTest {
    // No client: only the translation is exercised.
    private static final S3Errors ERRORS =
            new S3Errors(S3Location.parse("s3://bucket/pre", Optional.of("http://127.0.0.1:9")), 4,
                    java.time.Duration.ofSeconds(5));

    private static S3Exception s3(int status, String code) {
        return (S3Exception) S3Exception.builder().statusCode(status)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(code).build()).build();
    }

    private static StoreException translate(Exception e) {
        return ERRORS.translate((software.amazon.awssdk.core.exception.SdkException) e, "read", "blobs/x");
    }

    @Test
    void anUploadCutShortSaysToPublishAgainAndAReadThatItCanBeRetried() {
        // audit 23: a publish whose upload failed said "the read can be retried".
        SdkClientException reset = SdkClientException.create("Unable to execute HTTP request: Connection reset");
        StoreException upload = ERRORS.translate(reset, "upload a part of", "blobs/x");
        assertThat(upload).isInstanceOf(StoreUnavailableException.class);
        assertThat(upload.nextStep()).contains("publish", "not sent twice").doesNotContain("read");
        assertThat(ERRORS.translate(reset, "write", "blobs/x").nextStep()).contains("publish");
        assertThat(ERRORS.translate(reset, "read", "blobs/x").nextStep()).contains("the read can be retried");
    }

    @Test
    void anEndpointWithoutASchemeIsSaidAsAnEndpoint() {
        // audit 23: warpd --endpoint 127.0.0.1:19301 was an "Invalid remote" and advised --remote.
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> S3Location.parse("s3://bucket", Optional.of("127.0.0.1:19301")))
                .isInstanceOf(io.warpdata.store.InvalidRemoteException.class)
                .hasMessageContaining("Invalid S3 endpoint '127.0.0.1:19301'")
                .satisfies(e -> assertThat(((StoreException) e).nextStep()).contains("--endpoint http://127.0.0.1:19301"));
    }

    @Test
    void missingCredentialsAreAnAuthenticationErrorNamingTheVariables() {
        StoreException e = translate(SdkClientException.create(
                "Unable to load credentials from any of the providers in the chain AwsCredentialsProviderChain"));
        assertThat(e).isInstanceOf(AuthenticationException.class).hasMessageContaining("AWS_ACCESS_KEY_ID");
        assertThat(e.nextStep()).contains("AWS_SECRET_ACCESS_KEY");
    }

    @Test
    void rejectedCredentialsAreAuthenticationErrors() {
        for (String code : new String[] {"InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken"}) {
            assertThat(translate(s3(403, code))).as(code).isInstanceOf(AuthenticationException.class)
                    .hasMessageContaining(code).hasMessageContaining("s3://bucket/pre/blobs/x");
        }
    }

    @Test
    void accessDeniedIsAPermissionError() {
        assertThat(translate(s3(403, "AccessDenied"))).isInstanceOf(PermissionDeniedException.class);
        assertThat(translate(s3(403, null))).isInstanceOf(PermissionDeniedException.class);
    }

    @Test
    void missingKeyIsBlobNotFound() {
        assertThat(translate(s3(404, "NoSuchKey"))).isInstanceOf(BlobNotFoundException.class)
                .hasMessageContaining("blobs/x");
        assertThat(translate(s3(404, null))).isInstanceOf(BlobNotFoundException.class);
    }

    @Test
    void missingBucketSaysToCreateIt() {
        StoreException e = translate(s3(404, "NoSuchBucket"));
        assertThat(e).isInstanceOf(io.warpdata.store.NoSuchBucketException.class).hasMessageContaining("bucket");
        assertThat(e.nextStep()).contains("Create the bucket");
    }

    @Test
    void serverErrorsThrottlingAndTimeoutsAreUnavailable() {
        assertThat(translate(s3(500, "InternalError"))).isInstanceOf(StoreUnavailableException.class);
        assertThat(translate(s3(503, "SlowDown"))).isInstanceOf(StoreUnavailableException.class);
        assertThat(translate(ApiCallTimeoutException.create(120_000))).isInstanceOf(StoreUnavailableException.class);
        assertThat(translate(SdkClientException.create("Connection reset"))).isInstanceOf(StoreUnavailableException.class)
                .isNotInstanceOf(StoreNotAnsweringException.class);
    }

    @Test
    void silenceIsNotAnsweringNamingTheServerAndTheTimeout() {
        for (Exception silent : new Exception[] {
            ApiCallTimeoutException.create(120_000),
            SdkClientException.create("Unable to execute HTTP request: Read timed out",
                    new java.net.SocketTimeoutException("Read timed out")),
            SdkClientException.create("Connect timed out",
                    new org.apache.http.conn.ConnectTimeoutException("Connect to 127.0.0.1:9 timed out"))}) {
            StoreException e = translate(silent);
            assertThat(e).as(silent.toString()).isInstanceOf(StoreNotAnsweringException.class)
                    .hasMessageContaining("not answering").hasMessageContaining("127.0.0.1:9")
                    .hasMessageContaining("5000 ms");
            assertThat(e.nextStep()).contains("does not answer");
        }
        assertThat(translate(SdkClientException.create("refused", new java.net.ConnectException("Connection refused"))))
                .isInstanceOf(StoreUnreachableException.class);
    }
}
