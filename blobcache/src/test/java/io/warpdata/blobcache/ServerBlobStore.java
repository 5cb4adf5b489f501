package io.warpdata.blobcache;

import org.jclouds.blobstore.domain.Blob;
import org.jclouds.blobstore.domain.BlobMetadata;
import org.jclouds.blobstore.domain.MultipartPart;
import org.jclouds.blobstore.domain.MultipartUpload;
import org.jclouds.blobstore.domain.PageSet;
import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.domain.internal.BlobImpl;
import org.jclouds.blobstore.options.GetOptions;
import org.jclouds.blobstore.options.ListContainerOptions;
import org.jclouds.blobstore.options.PutOptions;
import org.jclouds.blobstore.util.ForwardingBlobStore;
import org.jclouds.http.HttpResponse;
import org.jclouds.http.HttpResponseException;
import org.jclouds.io.MutableContentMetadata;
import org.jclouds.io.Payload;
import org.jclouds.io.Payloads;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The fixture's server-side storage: the jclouds store S3Proxy serves from, wrapped to count
 * requests and inject faults. S3Proxy turns a jclouds {@link HttpResponseException} into an
 * HTTP error with the exception's status code, which is how 500 and 503 are injected.
 */
final class ServerBlobStore extends ForwardingBlobStore {
    private final ServerCounters counters = new ServerCounters();
    private final ServerFaults faults = new ServerFaults();
    /** S3Proxy stores a stub blob named after the upload id for local providers: not a user put. */
    private final Set<String> uploadIds = ConcurrentHashMap.newKeySet();

    ServerBlobStore(org.jclouds.blobstore.BlobStore delegate) {
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
    public String putBlob(String container, Blob blob) {
        countPut(blob);
        return super.putBlob(container, blob);
    }

    @Override
    public String putBlob(String container, Blob blob, PutOptions options) {
        countPut(blob);
        return super.putBlob(container, blob, options);
    }

    private void countPut(Blob blob) {
        if (uploadIds.contains(blob.getMetadata().getName())) {
            return;
        }
        counters.puts.increment();
        Long len = blob.getMetadata().getContentMetadata().getContentLength();
        if (len != null) {
            counters.bytesReceived.add(len);
        }
    }

    @Override
    public MultipartUpload initiateMultipartUpload(String container, BlobMetadata metadata, PutOptions options) {
        MultipartUpload upload = super.initiateMultipartUpload(container, metadata, options);
        uploadIds.add(upload.id());
        return upload;
    }

    @Override
    public MultipartPart uploadMultipartPart(MultipartUpload mpu, int partNumber, Payload payload) {
        counters.parts.increment();
        if (ServerFaults.takeOne(faults.failParts)) {
            counters.faultsInjected.increment();
            throw new HttpResponseException("injected InternalError on part " + partNumber, null,
                    HttpResponse.builder().statusCode(500).message("Internal Error").build());
        }
        Long len = payload.getContentMetadata().getContentLength();
        if (len != null) {
            counters.bytesReceived.add(len);
        }
        return super.uploadMultipartPart(mpu, partNumber, payload);
    }

    @Override
    public String completeMultipartUpload(MultipartUpload mpu, List<MultipartPart> parts) {
        counters.puts.increment();
        String etag = super.completeMultipartUpload(mpu, parts);
        uploadIds.remove(mpu.id());
        return etag;
    }

    @Override
    public void abortMultipartUpload(MultipartUpload mpu) {
        super.abortMultipartUpload(mpu);
        uploadIds.remove(mpu.id());
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
        }
    }

    @Override
    public Blob getBlob(String container, String name) {
        return getBlob(container, name, GetOptions.NONE);
    }

    @Override
    public Blob getBlob(String container, String name, GetOptions options) {
        long start = System.nanoTime();
        try {
            return countedGet(container, name, options);
        } finally {
            counters.answered((options != null && !options.getRanges().isEmpty() ? "GET (range) " : "GET ") + name, start);
        }
    }

    private Blob countedGet(String container, String name, GetOptions options) {
        counters.gets.increment();
        boolean ranged = options != null && !options.getRanges().isEmpty();
        boolean pointerOrManifest = name.contains("datasets/");
        if (ranged && !pointerOrManifest) {
            counters.rangedGets.increment();
        }
        if (!ranged || pointerOrManifest) {
            counters.metadata((options != null && options.getIfNoneMatch() != null ? "GET (if-none-match) " : "GET ") + name);
        }
        if (options != null && options.getIfNoneMatch() != null) {
            counters.conditionalGets.increment();
        }
        injectFailures();
        Blob blob = super.getBlob(container, name, options);
        if (blob == null) {
            return null;
        }
        boolean corrupt = ServerFaults.takeOne(faults.corrupt);
        if (corrupt) {
            counters.faultsInjected.increment();
        }
        Payload original = blob.getPayload();
        MutableContentMetadata metadata = original.getContentMetadata();
        InputStream in;
        try {
            in = original.openStream();
        } catch (IOException e) {
            throw new IllegalStateException("cannot open payload of " + name, e);
        }
        Payload counted = Payloads.newInputStreamPayload(new ServedStream(in, corrupt));
        counted.setContentMetadata(metadata);
        // A new blob: setPayload on the original would close its payload, and with it the
        // stream we just opened.
        Blob served = new BlobImpl(blob.getMetadata());
        served.setPayload(counted);
        served.setAllHeaders(blob.getAllHeaders());
        return served;
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
            throw new HttpResponseException("injected SlowDown", null,
                    HttpResponse.builder().statusCode(503).message("Slow Down").build());
        }
        if (ServerFaults.takeOne(faults.fail500)) {
            counters.faultsInjected.increment();
            throw new HttpResponseException("injected InternalError", null,
                    HttpResponse.builder().statusCode(500).message("Internal Error").build());
        }
    }

    @Override
    public PageSet<? extends StorageMetadata> list(String container) {
        counters.lists.increment();
        counters.metadata("LIST");
        return super.list(container);
    }

    @Override
    public PageSet<? extends StorageMetadata> list(String container, ListContainerOptions options) {
        long start = System.nanoTime();
        counters.lists.increment();
        counters.metadata("LIST " + (options == null ? "" : options.getPrefix()));
        try {
            return super.list(container, options);
        } finally {
            counters.answered("LIST " + (options == null ? "" : options.getPrefix()), start);
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
