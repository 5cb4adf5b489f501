package io.warpdata.store.s3;

import io.warpdata.store.BlobNotFoundException;
import io.warpdata.store.BlobStore;
import io.warpdata.store.InvalidRemoteException;
import io.warpdata.store.ObjectTooLargeException;
import io.warpdata.store.PointerMovedException;
import io.warpdata.store.StoreException;
import io.warpdata.store.StoreUnavailableException;
import io.warpdata.store.Versioned;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;

/**
 * A {@link BlobStore} on an S3 bucket + prefix (AWS or any S3-compatible server). Every SDK
 * exception is translated by {@link S3Errors} into the {@link StoreException} family; no SDK type
 * leaves this package. Retries (exponential backoff with jitter on 5xx, throttling, resets and
 * timeouts) are the SDK's standard strategy set up by {@link S3Connection}, bounded by
 * {@link Config}; attempts beyond the first are counted in {@link #retries()}. Large files are
 * uploaded by {@link MultipartUploader}.
 */
public final class S3BlobStore implements BlobStore {
    private final S3Connection connection;
    private final S3Client s3;
    private final S3Location location;
    /** The location's bucket and key prefix, which every request names. */
    private final String bucket;
    private final String root;
    private final Config config;
    private final S3Errors errors;
    private final MultipartUploader multipart;
    /** Set once the server rejected If-None-Match on PUT: then HEAD-then-PUT is all we have. */
    private final AtomicBoolean conditionalPutUnsupported = new AtomicBoolean();

    /**
     * Client settings. Timeouts bound every call so that nothing hangs for ever: one attempt may
     * take {@code attemptTimeout}, all attempts together {@code callTimeout}.
     *
     * @param answerTimeout how long a connection may stay silent: to connect, and between any two
     *        bytes of an answer (5 s: S3 answers a request in tens of milliseconds and streams a
     *        body without pauses; a store silent for 5 s is stopped, blackholed or overloaded, and
     *        a mount must not wait for it, see {@link io.warpdata.store.StoreNotAnsweringException})
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
    public record Config(Duration answerTimeout, Duration attemptTimeout, Duration callTimeout, int maxAttempts, Duration backoffBase,
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

        /** 5 s of silence at most, 30 s per attempt, 2 min per call, 4 attempts, 64 connections, 16 MiB parts above 64 MiB. */
        public static Config defaults() {
            return new Config(Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofMinutes(2), 4, Duration.ofMillis(100),
                    Duration.ofSeconds(5), 64, 64L << 20, 16L << 20, 4, Optional.empty());
        }

        /** The same settings with other timeouts. */
        public Config withTimeouts(Duration attempt, Duration call) {
            return new Config(answerTimeout, attempt, call, maxAttempts, backoffBase, backoffMax, maxConnections, multipartThreshold,
                    partSize, uploadParallelism, credentials);
        }

        /** The same settings with another answer timeout (connect, and silence within an answer). */
        public Config withAnswerTimeout(Duration answer) {
            return new Config(answer, attemptTimeout, callTimeout, maxAttempts, backoffBase, backoffMax, maxConnections,
                    multipartThreshold, partSize, uploadParallelism, credentials);
        }

        /** The same settings with other retries. */
        public Config withRetries(int attempts, Duration base, Duration max) {
            return new Config(answerTimeout, attemptTimeout, callTimeout, attempts, base, max, maxConnections, multipartThreshold,
                    partSize, uploadParallelism, credentials);
        }

        /** The same settings with other multipart upload sizes. */
        public Config withMultipart(long threshold, long part, int parallelism) {
            return new Config(answerTimeout, attemptTimeout, callTimeout, maxAttempts, backoffBase, backoffMax, maxConnections,
                    threshold, part, parallelism, credentials);
        }

        /** The same settings with explicit credentials instead of the SDK's default chain. */
        public Config withCredentials(String accessKeyId, String secretAccessKey) {
            return new Config(answerTimeout, attemptTimeout, callTimeout, maxAttempts, backoffBase, backoffMax, maxConnections,
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
        return new S3BlobStore(S3Location.parse(remote, endpoint), config);
    }

    private S3BlobStore(S3Location location, Config config) {
        this.location = location;
        this.bucket = location.bucket();
        this.root = location.root();
        this.config = config;
        this.errors = new S3Errors(location, config.maxAttempts(), config.answerTimeout());
        this.connection = new S3Connection(location.endpoint(), config);
        this.s3 = connection.client();
        this.multipart = new MultipartUploader(s3, location, errors, config.partSize(), config.uploadParallelism());
    }

    /** Attempts beyond the first, over all calls of this store. */
    public long retries() {
        return connection.retries();
    }

    @Override
    public long clientRetries() {
        return connection.retries();
    }

    @Override
    public OptionalLong length(String key) {
        try {
            HeadObjectResponse r = s3.headObject(h -> h.bucket(bucket).key(root + key));
            return OptionalLong.of(r.contentLength());
        } catch (SdkException e) {
            if (e instanceof AwsServiceException ase && ase.statusCode() == 404 && !S3Errors.isNoSuchBucket(ase)) {
                return OptionalLong.empty();
            }
            throw errors.translate(e, "read the length of", key);
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
            long size = length(key).orElseThrow(() -> new BlobNotFoundException(location.describe(), key));
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
            throw errors.translate(e, "read", key);
        } catch (IOException e) {
            if (S3Errors.notAnswering(e)) {
                throw errors.notAnswering("Failed to read " + describe(key) + " at offset " + offset, e);
            }
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
            throw errors.translate(e, "read", key);
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
            throw errors.translate(e, "read", key);
        }
    }

    /** A whole small object: one GET of at most the first {@code maxBytes + 1} bytes. */
    @Override
    public byte[] get(String key, int maxBytes) {
        // Read into one array of the answer's length: the SDK's byte transformer grows a buffer
        // and copies it twice more (index parts of ~0.8 MB are humongous for G1 three times over),
        // and would read a whole object from a server that ignored the Range before refusing it.
        try (ResponseInputStream<GetObjectResponse> in = s3.getObject(g -> g.bucket(bucket).key(root + key)
                .range("bytes=0-" + maxBytes))) {
            String contentRange = in.response().contentRange();
            Long length = in.response().contentLength();
            if (length == null || length < 0) {
                return bounded(key, contentRange, in.readAllBytes(), maxBytes);
            }
            long total = totalFromContentRange(contentRange);
            if (length > maxBytes || total > maxBytes) {
                in.abort();
                throw new ObjectTooLargeException(describe(key), total >= 0 ? total : length, maxBytes);
            }
            byte[] data = new byte[(int) (long) length];
            int n = in.readNBytes(data, 0, data.length);
            if (n != data.length) {
                throw new StoreUnavailableException("Short read of " + describe(key) + ": got " + n + " of "
                        + data.length + " bytes", null);
            }
            return data; // within the bound: checked above, before the body was read
        } catch (SdkException e) {
            throw errors.translate(e, "read", key);
        } catch (IOException e) {
            if (S3Errors.notAnswering(e)) {
                throw errors.notAnswering("Failed to read " + describe(key), e);
            }
            throw new StoreUnavailableException("Failed to read " + describe(key) + ": " + e, e);
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
            throw errors.translate(e, "write", key);
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
            throw errors.translate(e, "write", key);
        } catch (SdkException e) {
            throw errors.translate(e, "write", key);
        }
        Versioned back = getIfChanged(key, null, Math.max(data.length, POINTER_MAX_BYTES));
        if (!java.util.Arrays.equals(back.data(), data)) {
            throw new PointerMovedException(describe(key), "another write landed at the same time");
        }
        return back.tag();
    }

    /** Puts {@code probeKey}, then PUTs it again with If-None-Match: * (must be refused: 412), then deletes it. */
    @Override
    public java.util.Optional<Boolean> enforcesConditionalWrites(String probeKey) {
        put(probeKey, "warp conditional-write probe\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        try {
            s3.putObject(p -> p.bucket(bucket).key(root + probeKey).ifNoneMatch("*"),
                    RequestBody.fromBytes("second\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            return java.util.Optional.of(false);
        } catch (AwsServiceException e) {
            if (e.statusCode() == 412 || e.statusCode() == 409) {
                return java.util.Optional.of(true);
            }
            throw errors.translate(e, "write", probeKey);
        } catch (SdkException e) {
            throw errors.translate(e, "write", probeKey);
        } finally {
            try {
                delete(probeKey);
            } catch (StoreException e) {
                // a leftover probe object is harmless: nothing reads warp-probe/
            }
        }
    }

    private String etagOrNull(String key) {
        try {
            return s3.headObject(h -> h.bucket(bucket).key(root + key)).eTag();
        } catch (AwsServiceException e) {
            if (e.statusCode() == 404 && !S3Errors.isNoSuchBucket(e)) {
                return null;
            }
            throw errors.translate(e, "read the version of", key);
        } catch (SdkException e) {
            throw errors.translate(e, "read the version of", key);
        }
    }

    @Override
    public void delete(String key) {
        try {
            s3.deleteObject(d -> d.bucket(bucket).key(root + key));
        } catch (SdkException e) {
            throw errors.translate(e, "delete", key);
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
                if (e.statusCode() != 501 && !"NotImplemented".equals(S3Errors.errorCode(e))) {
                    throw errors.translate(e, "write", key);
                }
                conditionalPutUnsupported.set(true);
            } catch (SdkException e) {
                throw errors.translate(e, "write", key);
            }
        }
        try {
            s3.putObject(p -> p.bucket(bucket).key(root + key).contentLength(length), body);
            return true;
        } catch (SdkException e) {
            throw errors.translate(e, "write", key);
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
        multipart.upload(key, source, size);
        return true;
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
            throw errors.translate(e, "list", prefix);
        }
        out.remove("/");
        return new ArrayList<>(out);
    }

    @Override
    public String describe() {
        return location.describe();
    }

    private String describe(String key) {
        return location.describe(key);
    }

    @Override
    public void close() {
        multipart.close();
        connection.close();
    }
}
