package io.warpdata.blobcache.s3;

import io.warpdata.blobcache.AuthenticationException;
import io.warpdata.blobcache.BlobNotFoundException;
import io.warpdata.blobcache.BlobStore;
import io.warpdata.blobcache.InvalidRemoteException;
import io.warpdata.blobcache.ObjectTooLargeException;
import io.warpdata.blobcache.PermissionDeniedException;
import io.warpdata.blobcache.PointerMovedException;
import io.warpdata.blobcache.StoreException;
import io.warpdata.blobcache.StoreUnavailableException;
import io.warpdata.blobcache.StoreUnreachableException;
import io.warpdata.blobcache.Versioned;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
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
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;

/**
 * A {@link BlobStore} on an S3 bucket + prefix (AWS or any S3-compatible server). Every SDK
 * exception is translated here into the {@link StoreException} family; no SDK type leaves this
 * package. Retries (exponential backoff with jitter on 5xx, throttling, resets and timeouts)
 * are the SDK's standard strategy, bounded by {@link Config}; attempts beyond the first are
 * counted in {@link #retries()}.
 */
public final class S3BlobStore implements BlobStore {
    private static final String AUTH_ENV = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)";
    private static final ExecutionAttribute<AtomicInteger> ATTEMPTS = new ExecutionAttribute<>("warp.attempts");

    private final S3Client s3;
    private final String bucket;
    private final String root;
    private final Config config;
    private final LongAdder retries = new LongAdder();
    private final ThreadPoolExecutor uploads;
    private final AutoCloseable credentials;
    /** The server, for "cannot connect" messages: the endpoint given, or S3 itself. */
    private final String server;
    /** Set once the server rejected If-None-Match on PUT: then HEAD-then-PUT is all we have. */
    private final AtomicBoolean conditionalPutUnsupported = new AtomicBoolean();

    /**
     * Client settings. Timeouts bound every call so that nothing hangs for ever: one attempt may
     * take {@code attemptTimeout}, all attempts together {@code callTimeout}.
     *
     * @param attemptTimeout one HTTP attempt, headers included (30 s: a healthy 64 MiB ranged GET
     *        finishes well inside it)
     * @param callTimeout all attempts and backoff of one call
     * @param maxAttempts attempts per call, the first included
     * @param backoffBase first backoff delay (doubled per retry, full jitter)
     * @param backoffMax longest backoff delay
     * @param maxConnections HTTP connection pool size (64: prefetch + FUSE threads in parallel)
     * @param multipartThreshold files larger than this are uploaded in parts
     * @param partSize size of each part (S3 needs >= 5 MiB; at most 10,000 parts)
     * @param uploadParallelism parts in flight at once (each holds a connection, not memory)
     * @param credentials explicit credentials (tests); empty = the SDK's default chain
     */
    public record Config(Duration attemptTimeout, Duration callTimeout, int maxAttempts, Duration backoffBase,
                         Duration backoffMax, int maxConnections, long multipartThreshold, long partSize,
                         int uploadParallelism, Optional<Credentials> credentials) {
        public Config {
            if (maxAttempts < 1 || maxConnections < 1 || uploadParallelism < 1) {
                throw new IllegalArgumentException("maxAttempts, maxConnections and uploadParallelism must be >= 1");
            }
            if (partSize < 5L << 20) {
                throw new IllegalArgumentException("partSize must be >= 5 MiB (S3's minimum), was " + partSize);
            }
            if (multipartThreshold < partSize) {
                throw new IllegalArgumentException("multipartThreshold must be >= partSize");
            }
        }

        public static Config defaults() {
            return new Config(Duration.ofSeconds(30), Duration.ofMinutes(2), 4, Duration.ofMillis(100),
                    Duration.ofSeconds(5), 64, 64L << 20, 16L << 20, 4, Optional.empty());
        }

        public Config withTimeouts(Duration attempt, Duration call) {
            return new Config(attempt, call, maxAttempts, backoffBase, backoffMax, maxConnections, multipartThreshold,
                    partSize, uploadParallelism, credentials);
        }

        public Config withRetries(int attempts, Duration base, Duration max) {
            return new Config(attemptTimeout, callTimeout, attempts, base, max, maxConnections, multipartThreshold,
                    partSize, uploadParallelism, credentials);
        }

        public Config withMultipart(long threshold, long part, int parallelism) {
            return new Config(attemptTimeout, callTimeout, maxAttempts, backoffBase, backoffMax, maxConnections,
                    threshold, part, parallelism, credentials);
        }

        public Config withCredentials(String accessKeyId, String secretAccessKey) {
            return new Config(attemptTimeout, callTimeout, maxAttempts, backoffBase, backoffMax, maxConnections,
                    multipartThreshold, partSize, uploadParallelism,
                    Optional.of(new Credentials(accessKeyId, secretAccessKey)));
        }
    }

    /** Static credentials; {@link #toString()} hides the secret. */
    public record Credentials(String accessKeyId, String secretAccessKey) {
        @Override
        public String toString() {
            return "Credentials[" + accessKeyId + ", ***]";
        }
    }

    /** Opens {@code s3://bucket[/prefix]} with default settings. */
    public static S3BlobStore open(String remote, Optional<String> endpoint) {
        return open(remote, endpoint, Config.defaults());
    }

    /**
     * Opens {@code s3://bucket[/prefix]}.
     *
     * @param endpoint a non-AWS server (e.g. {@code http://127.0.0.1:9000}); path-style access
     * @throws InvalidRemoteException if the URI is not of that form
     */
    public static S3BlobStore open(String remote, Optional<String> endpoint, Config config) {
        if (remote == null || !remote.startsWith("s3://")) {
            throw new InvalidRemoteException(String.valueOf(remote), "not an s3:// URI");
        }
        String rest = remote.substring("s3://".length());
        int slash = rest.indexOf('/');
        String bucket = slash < 0 ? rest : rest.substring(0, slash);
        String prefix = slash < 0 ? "" : rest.substring(slash + 1);
        while (prefix.endsWith("/")) {
            prefix = prefix.substring(0, prefix.length() - 1);
        }
        if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
            throw new InvalidRemoteException(remote, "'" + bucket + "' is not a valid bucket name");
        }
        if (prefix.contains("//")) {
            throw new InvalidRemoteException(remote, "the prefix has an empty path segment");
        }
        Optional<URI> endpointUri = endpoint.filter(e -> !e.isBlank()).map(e -> {
            try {
                URI u = URI.create(e);
                if (u.getScheme() == null || u.getHost() == null) {
                    throw new IllegalArgumentException("no scheme or host");
                }
                return u;
            } catch (IllegalArgumentException ex) {
                throw new InvalidRemoteException(e, "the S3 endpoint is not a URL such as http://127.0.0.1:9000");
            }
        });
        return new S3BlobStore(bucket, prefix.isEmpty() ? "" : prefix + "/", endpointUri, config);
    }

    private S3BlobStore(String bucket, String root, Optional<URI> endpoint, Config config) {
        this.bucket = bucket;
        this.root = root;
        this.config = config;
        this.server = endpoint.map(URI::toString).orElse("S3");
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
                        .connectionTimeout(Duration.ofSeconds(10))
                        .socketTimeout(config.attemptTimeout()))
                .overrideConfiguration(o -> o
                        .apiCallAttemptTimeout(config.attemptTimeout())
                        .apiCallTimeout(config.callTimeout())
                        .retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder()
                                .maxAttempts(config.maxAttempts())
                                .backoffStrategy(BackoffStrategy.exponentialDelay(config.backoffBase(), config.backoffMax()))
                                .throttlingBackoffStrategy(BackoffStrategy.exponentialDelay(
                                        config.backoffBase().multipliedBy(5), config.backoffMax().multipliedBy(2)))
                                .build())
                        .addExecutionInterceptor(new AttemptCounter()));
        if (endpoint.isPresent()) {
            b.endpointOverride(endpoint.get()).forcePathStyle(true);
        } else {
            // The region may differ from the bucket's: follow S3's redirects instead of failing.
            b.crossRegionAccessEnabled(true);
        }
        this.s3 = b.build();
        this.uploads = new ThreadPoolExecutor(config.uploadParallelism(), config.uploadParallelism(), 30,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "warp-s3-upload");
                    t.setDaemon(true);
                    return t;
                });
        uploads.allowCoreThreadTimeOut(true);
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

    /** Attempts beyond the first, over all calls of this store. */
    public long retries() {
        return retries.sum();
    }

    @Override
    public OptionalLong length(String key) {
        try {
            HeadObjectResponse r = s3.headObject(h -> h.bucket(bucket).key(root + key));
            return OptionalLong.of(r.contentLength());
        } catch (SdkException e) {
            if (e instanceof AwsServiceException ase && ase.statusCode() == 404 && !isNoSuchBucket(ase)) {
                return OptionalLong.empty();
            }
            throw translate(e, "read the length of", key);
        }
    }

    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len) {
        read(key, offset, dst, dstOff, len, n -> { });
    }

    /**
     * One ranged GET read straight into {@code dst} as the bytes arrive (no intermediate buffer;
     * the SDK validates no checksum on a ranged GET), reporting progress after every socket read.
     */
    @Override
    public void read(String key, long offset, byte[] dst, int dstOff, int len, IntConsumer arrived) {
        if (offset < 0 || len < 0 || dstOff < 0 || dstOff + len > dst.length) {
            throw new IllegalArgumentException("bad range " + offset + "+" + len + " into " + dst.length
                    + "-byte buffer at " + dstOff);
        }
        if (len == 0) {
            long size = length(key).orElseThrow(() -> new BlobNotFoundException(describe(), key));
            if (offset > size) {
                throw beyondEnd(key, offset, len, size);
            }
            arrived.accept(0);
            return;
        }
        String range = "bytes=" + offset + "-" + (offset + len - 1);
        try (ResponseInputStream<GetObjectResponse> in = s3.getObject(g -> g.bucket(bucket).key(root + key).range(range))) {
            String contentRange = in.response().contentRange();
            if (contentRange == null) {
                // A server that ignores Range answers 200 with the whole object: only its first
                // bytes are the ones asked for, and only when reading from offset 0.
                Long whole = in.response().contentLength();
                if (whole != null && whole < len) {
                    throw beyondEnd(key, offset, len, whole);
                }
                if (offset != 0) {
                    throw new StoreException("The server ignored the Range header reading " + describe(key)
                            + " at offset " + offset, "Use an S3 server that supports ranged GETs"
                            + " (AWS, MinIO, Ceph RGW, S3Proxy do).", null);
                }
            }
            long total = totalFromContentRange(contentRange);
            if (total >= 0 && offset + len > total) {
                throw beyondEnd(key, offset, len, total);
            }
            int n = 0;
            while (n < len) {
                int r = in.read(dst, dstOff + n, len - n);
                if (r < 0) {
                    break;
                }
                n += r;
                arrived.accept(n);
            }
            if (n != len) {
                throw new StoreUnavailableException("Short read of " + describe(key) + " at offset " + offset
                        + ": got " + n + " of " + len + " bytes", null);
            }
        } catch (SdkException e) {
            throw translate(e, "read", key);
        } catch (IOException e) {
            throw new StoreUnavailableException("Failed to read " + describe(key) + " at offset " + offset + ": " + e, e);
        }
    }

    private StoreException beyondEnd(String key, long offset, int len, long size) {
        return new StoreException("Range " + offset + "+" + len + " lies beyond the end of " + describe(key)
                + " (" + size + " bytes)", "The manifest and the stored object disagree: re-publish the version,"
                + " or report a bug if the manifest is right.", null);
    }

    /** The total size from {@code bytes a-b/total}, or -1 if absent. */
    private static long totalFromContentRange(String contentRange) {
        if (contentRange == null) {
            return -1;
        }
        int slash = contentRange.lastIndexOf('/');
        if (slash < 0 || contentRange.endsWith("*")) {
            return -1;
        }
        try {
            return Long.parseLong(contentRange.substring(slash + 1).trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    @Override
    public byte[] get(String key) {
        try {
            return s3.getObjectAsBytes(g -> g.bucket(bucket).key(root + key)).asByteArray();
        } catch (SdkException e) {
            throw translate(e, "read", key);
        }
    }

    /**
     * A GET with If-None-Match (S3 answers 304, no body, when the object still has that ETag)
     * of at most the first {@code maxBytes + 1} bytes: an object larger than a pointer can be is
     * refused having read no more than that.
     */
    @Override
    public Versioned getIfChanged(String key, String ifNoneMatch, int maxBytes) {
        try {
            var response = s3.getObjectAsBytes(g -> {
                g.bucket(bucket).key(root + key).range("bytes=0-" + maxBytes);
                if (ifNoneMatch != null) {
                    g.ifNoneMatch(ifNoneMatch);
                }
            });
            byte[] data = bounded(key, response.response().contentRange(), response.asByteArray(), maxBytes);
            String etag = response.response().eTag();
            if (etag == null) {
                return Versioned.ofContent(data);
            }
            if (etag.equals(ifNoneMatch)) {
                // A server that ignores If-None-Match sent the same object again.
                return null;
            }
            return new Versioned(data, etag);
        } catch (SdkException e) {
            if (ifNoneMatch != null && e instanceof AwsServiceException ase && ase.statusCode() == 304) {
                return null;
            }
            throw translate(e, "read", key);
        }
    }

    /** A whole small object: one GET of at most the first {@code maxBytes + 1} bytes. */
    @Override
    public byte[] get(String key, int maxBytes) {
        try {
            var response = s3.getObjectAsBytes(g -> g.bucket(bucket).key(root + key).range("bytes=0-" + maxBytes));
            return bounded(key, response.response().contentRange(), response.asByteArray(), maxBytes);
        } catch (SdkException e) {
            throw translate(e, "read", key);
        }
    }

    /** The bytes of a ranged GET of a small object, or ObjectTooLarge if the object is larger. */
    private byte[] bounded(String key, String contentRange, byte[] data, int maxBytes) {
        long total = data.length;
        if (contentRange != null) {
            int slash = contentRange.lastIndexOf('/');
            String t = slash < 0 ? "*" : contentRange.substring(slash + 1).trim();
            total = t.equals("*") ? -1 : Long.parseLong(t);
        }
        if (data.length > maxBytes || total > maxBytes) {
            throw new ObjectTooLargeException(describe(key), total, maxBytes);
        }
        return data;
    }

    @Override
    public void put(String key, byte[] data) {
        try {
            s3.putObject(p -> p.bucket(bucket).key(root + key).contentLength((long) data.length),
                    RequestBody.fromBytes(data));
        } catch (SdkException e) {
            throw translate(e, "write", key);
        }
    }

    /**
     * A conditional PUT (If-None-Match: * for a new pointer, If-Match with its ETag to move one;
     * S3 answers 412 to the loser), bracketed by a check of the current ETag before and a read
     * back after, so that a server that ignores the conditions still reports a lost race in all
     * but the narrowest interleavings.
     */
    @Override
    public String putIfUnchanged(String key, byte[] data, String expectedTag) {
        String now = etagOrNull(key);
        if (!java.util.Objects.equals(now, expectedTag)) {
            throw new PointerMovedException(describe(key), now == null ? "it is gone" : "it was rewritten");
        }
        try {
            s3.putObject(p -> {
                p.bucket(bucket).key(root + key).contentLength((long) data.length);
                if (expectedTag == null) {
                    p.ifNoneMatch("*");
                } else {
                    p.ifMatch(expectedTag);
                }
            }, RequestBody.fromBytes(data));
        } catch (AwsServiceException e) {
            if (e.statusCode() == 412 || e.statusCode() == 409) {
                throw new PointerMovedException(describe(key), "the store refused the conditional write with "
                        + e.statusCode());
            }
            throw translate(e, "write", key);
        } catch (SdkException e) {
            throw translate(e, "write", key);
        }
        Versioned back = getIfChanged(key, null, Math.max(data.length, POINTER_MAX_BYTES));
        if (!java.util.Arrays.equals(back.data(), data)) {
            throw new PointerMovedException(describe(key), "another write landed at the same time");
        }
        return back.tag();
    }

    private String etagOrNull(String key) {
        try {
            return s3.headObject(h -> h.bucket(bucket).key(root + key)).eTag();
        } catch (AwsServiceException e) {
            if (e.statusCode() == 404 && !isNoSuchBucket(e)) {
                return null;
            }
            throw translate(e, "read the version of", key);
        } catch (SdkException e) {
            throw translate(e, "read the version of", key);
        }
    }

    @Override
    public void delete(String key) {
        try {
            s3.deleteObject(d -> d.bucket(bucket).key(root + key));
        } catch (SdkException e) {
            throw translate(e, "delete", key);
        }
    }

    @Override
    public boolean putIfAbsent(String key, byte[] data) {
        if (length(key).isPresent()) {
            return false;
        }
        return conditionalPut(key, data.length, RequestBody.fromBytes(data));
    }

    /** PUT with If-None-Match: * where the server honours it; 412 means someone else wrote it. */
    private boolean conditionalPut(String key, long length, RequestBody body) {
        if (!conditionalPutUnsupported.get()) {
            try {
                s3.putObject(p -> p.bucket(bucket).key(root + key).contentLength(length).ifNoneMatch("*"), body);
                return true;
            } catch (AwsServiceException e) {
                if (e.statusCode() == 412 || e.statusCode() == 409) {
                    return false;
                }
                if (e.statusCode() != 501 && !"NotImplemented".equals(errorCode(e))) {
                    throw translate(e, "write", key);
                }
                conditionalPutUnsupported.set(true);
            } catch (SdkException e) {
                throw translate(e, "write", key);
            }
        }
        try {
            s3.putObject(p -> p.bucket(bucket).key(root + key).contentLength(length), body);
            return true;
        } catch (SdkException e) {
            throw translate(e, "write", key);
        }
    }

    @Override
    public boolean putIfAbsent(String key, Path source) {
        long size;
        try {
            size = Files.size(source);
        } catch (NoSuchFileException e) {
            throw new StoreException("Cannot upload " + source + " to " + describe(key) + ": the file does not exist",
                    "Check that the file was not moved or deleted during the publish.", e);
        } catch (IOException e) {
            throw new StoreException("Cannot upload " + source + " to " + describe(key) + ": " + e,
                    "Check that the file is readable.", e);
        }
        if (length(key).isPresent()) {
            return false;
        }
        if (size <= config.multipartThreshold()) {
            return conditionalPut(key, size, RequestBody.fromFile(source));
        }
        multipartUpload(key, source, size);
        return true;
    }

    /**
     * Uploads parts in parallel, then completes; on any failure aborts the upload so that no
     * partial object (and no billed orphan parts) remains.
     */
    private void multipartUpload(String key, Path source, long size) {
        String fullKey = root + key;
        String uploadId;
        try {
            uploadId = s3.createMultipartUpload(c -> c.bucket(bucket).key(fullKey)).uploadId();
        } catch (SdkException e) {
            throw translate(e, "start a multipart upload of", key);
        }
        long partSize = config.partSize();
        int parts = (int) ((size + partSize - 1) / partSize);
        List<Future<CompletedPart>> futures = new ArrayList<>(parts);
        try {
            for (int i = 0; i < parts; i++) {
                int partNumber = i + 1;
                long offset = i * partSize;
                long length = Math.min(partSize, size - offset);
                futures.add(uploads.submit(() -> {
                    String etag = s3.uploadPart(u -> u.bucket(bucket).key(fullKey).uploadId(uploadId)
                                    .partNumber(partNumber).contentLength(length),
                            RequestBody.fromContentProvider(() -> slice(source, offset, length), length,
                                    "application/octet-stream")).eTag();
                    return CompletedPart.builder().partNumber(partNumber).eTag(etag).build();
                }));
            }
            List<CompletedPart> done = new ArrayList<>(parts);
            for (Future<CompletedPart> f : futures) {
                done.add(f.get());
            }
            s3.completeMultipartUpload(c -> c.bucket(bucket).key(fullKey).uploadId(uploadId)
                    .multipartUpload(m -> m.parts(done)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abort(fullKey, uploadId, futures);
            throw new StoreUnavailableException("Interrupted while uploading " + describe(key), e);
        } catch (ExecutionException e) {
            abort(fullKey, uploadId, futures);
            Throwable cause = e.getCause();
            if (cause instanceof SdkException se) {
                throw translate(se, "upload a part of", key);
            }
            if (cause instanceof UncheckedIOException io) {
                throw new StoreException("Cannot read " + source + " while uploading it to " + describe(key) + ": "
                        + io.getCause(), "Check that the file is readable and was not changed during the publish.", io);
            }
            throw new StoreException("Upload of " + source + " to " + describe(key) + " failed: " + cause,
                    "Retry the publish; report a bug if it persists.", cause);
        } catch (SdkException e) {
            abort(fullKey, uploadId, futures);
            throw translate(e, "complete the multipart upload of", key);
        } catch (RuntimeException e) {
            abort(fullKey, uploadId, futures);
            throw e;
        }
    }

    private void abort(String fullKey, String uploadId, List<Future<CompletedPart>> futures) {
        futures.forEach(f -> f.cancel(true));
        try {
            s3.abortMultipartUpload(a -> a.bucket(bucket).key(fullKey).uploadId(uploadId));
        } catch (SdkException ignored) {
            // Best effort: the original failure is what the caller must see; a bucket lifecycle
            // rule (AbortIncompleteMultipartUpload) cleans up what remains.
        }
    }

    private static InputStream slice(Path source, long offset, long length) {
        try {
            FileChannel ch = FileChannel.open(source, StandardOpenOption.READ);
            ch.position(offset);
            InputStream in = Channels.newInputStream(ch);
            return new InputStream() {
                private long left = length;

                @Override
                public int read() throws IOException {
                    if (left <= 0) {
                        return -1;
                    }
                    int b = in.read();
                    if (b >= 0) {
                        left--;
                    }
                    return b;
                }

                @Override
                public int read(byte[] buf, int off, int len) throws IOException {
                    if (left <= 0) {
                        return -1;
                    }
                    int n = in.read(buf, off, (int) Math.min(len, left));
                    if (n > 0) {
                        left -= n;
                    }
                    return n;
                }

                @Override
                public void close() throws IOException {
                    in.close();
                }
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public List<String> list(String prefix) {
        String full = root + prefix;
        TreeSet<String> out = new TreeSet<>();
        try {
            ListObjectsV2Request req = ListObjectsV2Request.builder().bucket(bucket).prefix(full).delimiter("/").build();
            for (ListObjectsV2Response page : s3.listObjectsV2Paginator(req)) {
                for (CommonPrefix p : page.commonPrefixes()) {
                    out.add(p.prefix().substring(full.length()));
                }
                for (S3Object o : page.contents()) {
                    String name = o.key().substring(full.length());
                    if (!name.isEmpty()) {
                        out.add(name);
                    }
                }
            }
        } catch (SdkException e) {
            throw translate(e, "list", prefix);
        }
        out.remove("/");
        return new ArrayList<>(out);
    }

    @Override
    public String describe() {
        return root.isEmpty() ? "s3://" + bucket : "s3://" + bucket + "/" + root.substring(0, root.length() - 1);
    }

    private String describe(String key) {
        return "s3://" + bucket + "/" + root + key;
    }

    @Override
    public void close() {
        uploads.shutdownNow();
        s3.close();
        try {
            credentials.close();
        } catch (Exception ignored) {
            // Closing a credentials provider only stops its refresh thread.
        }
    }

    private static String errorCode(AwsServiceException e) {
        return e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    }

    private static boolean isNoSuchBucket(AwsServiceException e) {
        return "NoSuchBucket".equals(errorCode(e));
    }

    /** The one place SDK failures become Warp errors. */
    StoreException translate(SdkException e, String op, String key) {
        String what = "Failed to " + op + " " + describe(key);
        if (e instanceof AwsServiceException ase) {
            String code = errorCode(ase);
            int status = ase.statusCode();
            String detail = ": " + status + (code == null ? "" : " " + code);
            if (code != null) {
                switch (code) {
                    case "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
                         "TokenRefreshRequired", "AuthorizationHeaderMalformed" -> {
                        return new AuthenticationException(what + detail + ": the store rejected the credentials;"
                                + " check " + AUTH_ENV + " and AWS_REGION", e);
                    }
                    case "NoSuchBucket" -> {
                        return new StoreException(what + ": bucket '" + bucket + "' does not exist",
                                "Create the bucket (e.g. 'aws s3 mb s3://" + bucket + "') or fix the bucket name"
                                        + " in the remote URI; with a local S3 server check --endpoint / WARP_S3_ENDPOINT.",
                                e);
                    }
                    case "NoSuchKey" -> {
                        return new BlobNotFoundException(describe(), key);
                    }
                    case "AccessDenied" -> {
                        return new PermissionDeniedException(what + detail, e);
                    }
                    case "InvalidRange" -> {
                        return new StoreException(what + detail + ": the range lies beyond the object's end",
                                "The manifest and the stored object disagree: re-publish the version.", e);
                    }
                    default -> {
                    }
                }
            }
            if (status == 404) {
                return new BlobNotFoundException(describe(), key);
            }
            if (status == 403) {
                return new PermissionDeniedException(what + detail, e);
            }
            if (status == 401) {
                return new AuthenticationException(what + detail + "; check " + AUTH_ENV, e);
            }
            if (status == 416) {
                return new StoreException(what + detail + ": the range lies beyond the object's end",
                        "The manifest and the stored object disagree: re-publish the version.", e);
            }
            if (status >= 500 || status == 429) {
                return new StoreUnavailableException(what + detail + " after " + config.maxAttempts() + " attempts", e);
            }
            return new StoreException(what + detail + ": " + ase.getMessage(),
                    "Check the remote URI and the server; report a bug if the request looks wrong.", e);
        }
        String msg = String.valueOf(e.getMessage());
        if (msg.contains("Unable to load credentials") || msg.contains("Unable to load region")) {
            return new AuthenticationException(what + ": no AWS credentials found; set " + AUTH_ENV
                    + " and AWS_REGION", e);
        }
        if (cannotConnect(e)) {
            return new StoreUnreachableException(what + ": cannot connect to " + server + ": " + msg, e);
        }
        return new StoreUnavailableException(what + ": " + msg, e);
    }

    /**
     * Whether no connection could be made at all (refused, unknown host, no route, connect
     * timeout), as opposed to a connection that failed part way or a server error: nothing is
     * listening, so the read path stops retrying at once.
     */
    static boolean cannotConnect(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.ConnectException || t instanceof java.net.UnknownHostException
                    || t instanceof java.net.NoRouteToHostException
                    || t instanceof org.apache.http.conn.ConnectTimeoutException
                    || t instanceof org.apache.http.conn.HttpHostConnectException) {
                return true;
            }
        }
        return false;
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
