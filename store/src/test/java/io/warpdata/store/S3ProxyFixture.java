package io.warpdata.store;

import io.warpdata.store.s3.S3BlobStore;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.blobstore.options.CreateContainerOptions;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;
import org.gaul.s3proxy.nio2blob.TransientNio2BlobStore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A real S3 server for integration tests: S3Proxy 4 in-process on 127.0.0.1 (ephemeral port),
 * backed by its in-memory "transient-nio2" store or its "filesystem-nio2" store, with AWS v4
 * authentication and one bucket. Conditional PUTs are enforced by the server: a PUT with
 * {@code If-None-Match: *} of a key that exists answers 412 (decided atomically as the object is
 * linked into place), and so does a PUT with {@code If-Match} of a version tag the object no
 * longer has (checked by S3Proxy just before the write: another PUT landing between that check
 * and the write is not caught; see docs/views.md). S3Proxy 2.x ignored both headers. Requests
 * are counted at the server and faults can be injected ({@link #faults()}), so tests can assert
 * what a client really sent over the wire.
 *
 * <pre>
 * try (S3ProxyFixture s3 = S3ProxyFixture.start(); BlobStore store = s3.openStore("ds")) { ... }
 * </pre>
 *
 * <p>{@link #start} also sets the system properties {@code aws.accessKeyId},
 * {@code aws.secretAccessKey} and {@code aws.region} so that the SDK's default provider chain
 * works in this JVM; {@link #env()} gives the same settings for subprocesses.
 */
public final class S3ProxyFixture implements AutoCloseable {
    public static final String ACCESS_KEY = "warp-test-access";
    public static final String SECRET_KEY = "warp-test-secret-key-0123456789";
    public static final String REGION = "us-east-1";
    public static final String BUCKET = "warp-test";

    private final S3Proxy proxy;
    private final ServerBlobStore server;
    private final URI endpoint;

    private S3ProxyFixture(S3Proxy proxy, ServerBlobStore server, URI endpoint) {
        this.proxy = proxy;
        this.server = server;
        this.endpoint = endpoint;
    }

    /** Starts a server backed by memory. */
    public static S3ProxyFixture start() {
        return start(Optional.empty());
    }

    /** Starts a server storing objects under {@code dataDir} (survives a restart on the same dir). */
    public static S3ProxyFixture start(Path dataDir) {
        return start(Optional.of(dataDir), 0);
    }

    /**
     * Starts a server storing objects under {@code dataDir} on a given port: a server "restarted"
     * where clients already point (stop one, then start another on its {@link #port()}).
     */
    public static S3ProxyFixture start(Path dataDir, int port) {
        return start(Optional.of(dataDir), port);
    }

    private static S3ProxyFixture start(Optional<Path> dataDir) {
        return start(dataDir, 0);
    }

    private static S3ProxyFixture start(Optional<Path> dataDir, int port) {
        org.gaul.s3proxy.blobstore.BlobStore backend;
        if (dataDir.isPresent()) {
            try {
                Files.createDirectories(dataDir.get());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            backend = new FilesystemNio2BlobStore(dataDir.get().toAbsolutePath().toString());
        } else {
            backend = new TransientNio2BlobStore();
        }
        ServerBlobStore server = new ServerBlobStore(backend);
        if (!server.containerExists(BUCKET)) {
            server.createContainer(BUCKET, CreateContainerOptions.NONE);
        }
        S3Proxy proxy = S3Proxy.builder()
                .blobStore(server)
                .endpoint(URI.create("http://127.0.0.1:" + port))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
                .build();
        try {
            proxy.start();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!proxy.getState().equals("STARTED")) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("S3Proxy did not start within 10 s: " + proxy.getState());
                }
                Thread.sleep(5);
            }
        } catch (Exception e) {
            server.releaseHangs();
            server.close();
            throw new IllegalStateException("Could not start S3Proxy", e);
        }
        URI endpoint = URI.create("http://127.0.0.1:" + proxy.getPort());
        System.setProperty("aws.accessKeyId", ACCESS_KEY);
        System.setProperty("aws.secretAccessKey", SECRET_KEY);
        System.setProperty("aws.region", REGION);
        return new S3ProxyFixture(proxy, server, endpoint);
    }

    public URI endpoint() {
        return endpoint;
    }

    /** The port the server listens on. */
    public int port() {
        return endpoint.getPort();
    }

    public String bucket() {
        return BUCKET;
    }

    /** {@code s3://bucket/prefix} (or {@code s3://bucket} for an empty prefix). */
    public String remote(String prefix) {
        return prefix.isEmpty() ? "s3://" + BUCKET : "s3://" + BUCKET + "/" + prefix;
    }

    /** A client store on {@code s3://bucket/prefix} with default settings. */
    public BlobStore openStore(String prefix) {
        return S3BlobStore.open(remote(prefix), Optional.of(endpoint.toString()));
    }

    /** A client store with explicit settings (timeouts, retries, credentials). */
    public S3BlobStore openStore(String prefix, S3BlobStore.Config config) {
        return S3BlobStore.open(remote(prefix), Optional.of(endpoint.toString()), config);
    }

    /** Environment for a subprocess (warpd/warpctl) to reach this server. */
    public Map<String, String> env() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("AWS_ACCESS_KEY_ID", ACCESS_KEY);
        env.put("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
        env.put("AWS_REGION", REGION);
        env.put("WARP_S3_ENDPOINT", endpoint.toString());
        return env;
    }

    /** Requests the server saw, and bytes it served. */
    public ServerCounters counters() {
        return server.counters();
    }

    public void resetCounters() {
        server.counters().reset();
    }

    /** Faults to inject into the next requests. */
    public ServerFaults faults() {
        return server.faults();
    }

    /** The server-side store, to inspect or corrupt objects behind the client's back. */
    public org.gaul.s3proxy.blobstore.BlobStore serverStore() {
        return server;
    }

    @Override
    public void close() {
        server.releaseHangs();
        try {
            proxy.stop();
        } catch (Exception e) {
            throw new IllegalStateException("Could not stop S3Proxy", e);
        } finally {
            server.close();
        }
    }
}
