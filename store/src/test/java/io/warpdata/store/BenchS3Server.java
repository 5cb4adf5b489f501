package io.warpdata.store;

import java.nio.file.Path;

/**
 * The loopback S3 server of {@link S3ProxyFixture} in a process of its own, for benchmarks that
 * measure the client's CPU time alone (not a test). Prints {@code ENDPOINT <url>}, then serves
 * until its standard input closes.
 *
 * <p>Run: {@code java -cp <test classpath> io.warpdata.store.BenchS3Server <data dir>}
 */
public final class BenchS3Server {
    private BenchS3Server() {
    }

    public static void main(String[] args) throws Exception {
        try (S3ProxyFixture s3 = S3ProxyFixture.start(Path.of(args[0]))) {
            System.out.println("ENDPOINT " + s3.endpoint());
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the parent closes our stdin (or dies)
            }
        }
    }
}
