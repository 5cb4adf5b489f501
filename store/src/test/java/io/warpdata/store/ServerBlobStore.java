package io.warpdata.store;

import com.google.common.hash.HashCode;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import org.gaul.s3proxy.blobstore.HttpResponse;
import org.gaul.s3proxy.blobstore.HttpResponseException;
import org.gaul.s3proxy.blobstore.domain.Blob;
import org.gaul.s3proxy.blobstore.domain.BlobMetadata;
import org.gaul.s3proxy.blobstore.domain.MultipartPart;
import org.gaul.s3proxy.blobstore.domain.MultipartUpload;
import org.gaul.s3proxy.blobstore.domain.PageSet;
import org.gaul.s3proxy.blobstore.domain.StorageMetadata;
import org.gaul.s3proxy.blobstore.options.GetOptions;
import org.gaul.s3proxy.blobstore.options.ListContainerOptions;
import org.gaul.s3proxy.blobstore.options.PutOptions;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;

/**
 * The fixture's server-side storage: the store S3Proxy serves from, wrapped to count requests
 * and inject faults. S3Proxy turns an {@link HttpResponseException} into an HTTP error with the
 * exception's status code, which is how 500 and 503 are injected.
 *
 * <p>S3Proxy recognises the backend through this wrapper ({@link ForwardingBlobStore}), so the
 * nio2 stores keep their own handling of conditional writes: {@code If-None-Match: *} is decided
 * by the store as it writes (a hard link that fails if the key exists), {@code If-Match} by
 * S3Proxy reading the object's metadata before the write, which is counted here as a HEAD.
 */
final class ServerBlobStore extends ForwardingBlobStore {
    private final ServerCounters counters = new ServerCounters();
    private final ServerFaults faults = new ServerFaults();
    /** S3Proxy's own objects (the stub it writes when a multipart upload begins): not a user put. */
    private static final String S3PROXY_INTERNAL = ".s3proxy-";

    ServerBlobStore(org.gaul.s3proxy.blobstore.BlobStore delegate) {
        super(delegate);
    }

    ServerCounters counters() {
        return counters;
    }

    ServerFaults faults() {
        return faults;
    }

    void releaseHangs() {
        faults.clear();
    }

    @Override
    public String putBlob(String container, Blob blob, PutOptions options) {
        // Counted once stored: a conditional PUT the store refuses (412) wrote nothing.
        String etag = super.putBlob(container, blob, options);
        if (!blob.getMetadata().name().startsWith(S3PROXY_INTERNAL)) {
            counters.puts.increment();
            Long len = blob.getMetadata().contentMetadata().contentLength();
            if (len != null) {
                counters.bytesReceived.add(len);
            }
        }
        return etag;
    }

    @Override
    public MultipartPart uploadMultipartPart(MultipartUpload mpu, int partNumber, InputStream is, long contentLength,
                                             HashCode contentMD5) {
        counters.parts.increment();
        if (ServerFaults.takeOne(faults.failParts)) {
            counters.faultsInjected.increment();
            try {
                is.close();
            } catch (IOException ignored) {
                // the injected failure is what the client sees
            }
            throw new HttpResponseException("injected InternalError on part " + partNumber, new HttpResponse(500));
        }
        counters.bytesReceived.add(contentLength);
        return super.uploadMultipartPart(mpu, partNumber, is, contentLength, contentMD5);
    }

    @Override
    public String completeMultipartUpload(MultipartUpload mpu, List<MultipartPart> parts) {
        counters.puts.increment();
        return super.completeMultipartUpload(mpu, parts);
    }

    @Override
    public BlobMetadata blobMetadata(String container, String name) {
        long start = System.nanoTime();
        counters.heads.increment();
        counters.metadata("HEAD " + name);
        try {
            return super.blobMetadata(container, name);
        } finally {
            counters.answered("HEAD " + name, start);
            Runnable after = faults.takeAfterHead(name);
            if (after != null) {
                after.run();
            }
        }
    }

    @Override
    public Blob getBlob(String container, String name, GetOptions options) {
        long start = System.nanoTime();
        boolean ranged = options != null && !options.ranges().isEmpty();
        try {
            return countedGet(container, name, options, ranged);
        } finally {
            counters.answered((ranged ? "GET (range) " : "GET ") + name, start);
        }
    }

    private Blob countedGet(String container, String name, GetOptions options, boolean ranged) {
        counters.gets.increment();
        boolean pointerOrManifest = name.contains("datasets/");
        boolean conditional = options != null && options.ifNoneMatch() != null;
        if (ranged && !pointerOrManifest) {
            counters.rangedGets.increment();
        }
        if (!ranged || pointerOrManifest) {
            counters.metadata((conditional ? "GET (if-none-match) " : "GET ") + name);
        }
        if (conditional) {
            counters.conditionalGets.increment();
        }
        injectFailures();
        Blob blob = super.getBlob(container, name, options);
        if (blob == null || blob.getPayload() == null) {
            return blob;
        }
        boolean corrupt = ServerFaults.takeOne(faults.corrupt);
        if (corrupt) {
            counters.faultsInjected.increment();
        }
        return blob.toBuilder().payload(new ServedStream(blob.getPayload(), corrupt)).build();
    }

    private void injectFailures() {
        Duration delay = faults.delay.get();
        if (!delay.isZero()) {
            try {
                Thread.sleep(delay.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (faults.hang) {
            counters.faultsInjected.increment();
            faults.awaitUnhung();
        }
        if (ServerFaults.takeOne(faults.fail503)) {
            counters.faultsInjected.increment();
            throw new HttpResponseException("injected SlowDown", new HttpResponse(503));
        }
        if (ServerFaults.takeOne(faults.fail500)) {
            counters.faultsInjected.increment();
            throw new HttpResponseException("injected InternalError", new HttpResponse(500));
        }
    }

    @Override
    public PageSet<? extends StorageMetadata> list() {
        counters.lists.increment();
        counters.metadata("LIST");
        return super.list();
    }

    @Override
    public PageSet<? extends StorageMetadata> list(String container, ListContainerOptions options) {
        long start = System.nanoTime();
        String prefix = options == null || options.prefix() == null ? "" : options.prefix();
        counters.lists.increment();
        counters.metadata("LIST " + prefix);
        try {
            return super.list(container, options);
        } finally {
            counters.answered("LIST " + prefix, start);
        }
    }

    /** Counts bytes as S3Proxy streams them out; optionally flips the first byte. */
    private final class ServedStream extends FilterInputStream {
        private boolean flipNext;

        ServedStream(InputStream in, boolean corrupt) {
            super(in);
            this.flipNext = corrupt;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                counters.bytesServed.increment();
                if (flipNext) {
                    flipNext = false;
                    b ^= 0xFF;
                }
            }
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            Duration trickle = faults.trickle.get();
            if (!trickle.isZero() && len > 0) {
                try {
                    Thread.sleep(trickle.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("trickle interrupted");
                }
                len = 1;
            }
            int n = super.read(buf, off, len);
            if (n > 0) {
                counters.bytesServed.add(n);
                if (flipNext) {
                    flipNext = false;
                    buf[off] ^= (byte) 0xFF;
                }
            }
            return n;
        }
    }
}
