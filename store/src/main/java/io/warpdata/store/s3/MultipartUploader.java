package io.warpdata.store.s3;

import io.warpdata.store.StoreException;
import io.warpdata.store.StoreUnavailableException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Uploads a large file as an S3 multipart upload: parts of {@code partSize} read straight from
 * the file, {@code parallelism} of them in flight at once (each holds a connection, not memory).
 */
final class MultipartUploader implements AutoCloseable {
    private final S3Client s3;
    private final S3Location location;
    private final S3Errors errors;
    private final long partSize;
    private final ThreadPoolExecutor uploads;

    /**
     * @param partSize bytes per part (S3 needs >= 5 MiB; at most 10,000 parts)
     * @param parallelism parts in flight at once; the threads end when idle for 30 s
     */
    MultipartUploader(S3Client s3, S3Location location, S3Errors errors, long partSize, int parallelism) {
        this.uploads = new ThreadPoolExecutor(parallelism, parallelism, 30,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "warp-s3-upload");
                    t.setDaemon(true);
                    return t;
                });
        uploads.allowCoreThreadTimeOut(true);
        this.s3 = s3;
        this.location = location;
        this.errors = errors;
        this.partSize = partSize;
    }

    /**
     * Uploads parts in parallel, then completes; on any failure aborts the upload so that no
     * partial object (and no billed orphan parts) remains.
     *
     * @throws StoreException naming the object and the file if any part fails
     */
    void upload(String key, Path source, long size) {
        String fullKey = location.key(key);
        String bucket = location.bucket();
        String uploadId;
        try {
            uploadId = s3.createMultipartUpload(c -> c.bucket(bucket).key(fullKey)).uploadId();
        } catch (SdkException e) {
            throw errors.translate(e, "start a multipart upload of", key);
        }
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
            throw new StoreUnavailableException("Interrupted while uploading " + location.describe(key), e);
        } catch (ExecutionException e) {
            abort(fullKey, uploadId, futures);
            Throwable cause = e.getCause();
            if (cause instanceof SdkException se) {
                throw errors.translate(se, "upload a part of", key);
            }
            if (cause instanceof UncheckedIOException io) {
                throw new StoreException("Cannot read " + source + " while uploading it to " + location.describe(key)
                        + ": " + io.getCause(), "Check that the file is readable and was not changed during the publish.",
                        io);
            }
            throw new StoreException("Upload of " + source + " to " + location.describe(key) + " failed: " + cause,
                    "Retry the publish; report a bug if it persists.", cause);
        } catch (SdkException e) {
            abort(fullKey, uploadId, futures);
            throw errors.translate(e, "complete the multipart upload of", key);
        } catch (RuntimeException e) {
            abort(fullKey, uploadId, futures);
            throw e;
        }
    }

    private void abort(String fullKey, String uploadId, List<Future<CompletedPart>> futures) {
        futures.forEach(f -> f.cancel(true));
        try {
            s3.abortMultipartUpload(a -> a.bucket(location.bucket()).key(fullKey).uploadId(uploadId));
        } catch (SdkException ignored) {
            // Best effort: the original failure is what the caller must see; a bucket lifecycle
            // rule (AbortIncompleteMultipartUpload) cleans up what remains.
        }
    }

    /** {@code length} bytes of {@code source} from {@code offset}: one part's body. */
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

    /** Stops the upload threads; an upload in progress fails and is aborted. */
    @Override
    public void close() {
        uploads.shutdownNow();
    }
}
