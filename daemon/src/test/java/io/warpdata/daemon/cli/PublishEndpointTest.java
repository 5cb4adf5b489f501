package io.warpdata.daemon.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** When warpctl publish takes warpd's endpoint for the one it was given (and goes through warpd). */
class PublishEndpointTest {
    @Test
    void oneServerSpelledTwoWaysIsOneEndpointAndAnotherServerIsNot() {
        assertThat(PublishCommand.sameEndpoint("http://127.0.0.1:9000", "http://127.0.0.1:9000/")).isTrue();
        assertThat(PublishCommand.sameEndpoint("HTTPS://S3.Example.com", "https://s3.example.com:443")).isTrue();
        assertThat(PublishCommand.sameEndpoint("http://minio:80/", "http://MINIO")).isTrue();
        assertThat(PublishCommand.sameEndpoint("http://127.0.0.1:18919", "http://127.0.0.1:18920")).isFalse();
        assertThat(PublishCommand.sameEndpoint("http://s3.example.com", "https://s3.example.com")).isFalse();
        assertThat(PublishCommand.sameEndpoint("http://127.0.0.1:9000", "")).as("AWS's own").isFalse();
        // This machine by any of its names (warpd runs here too).
        assertThat(PublishCommand.sameEndpoint("http://localhost:18919", "http://127.0.0.1:18919")).isTrue();
        assertThat(PublishCommand.sameEndpoint("http://[::1]:18919/", "http://LOCALHOST:18919")).isTrue();
        assertThat(PublishCommand.sameEndpoint("http://localhost:18919", "http://127.0.0.1:18920")).isFalse();
        assertThat(PublishCommand.sameEndpoint("http://localhost:9000", "http://minio:9000")).isFalse();
    }
}
