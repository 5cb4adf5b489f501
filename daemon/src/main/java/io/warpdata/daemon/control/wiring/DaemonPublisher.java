package io.warpdata.daemon.control.wiring;

import io.warpdata.blobcache.BlobStore;
import io.warpdata.blobcache.Catalog;
import io.warpdata.daemon.control.ops.PublishRunner;
import io.warpdata.daemon.publish.PublishProgress;
import io.warpdata.daemon.publish.PublishResult;
import io.warpdata.daemon.publish.Publisher;

import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * {@link PublishRunner} over {@link Publisher}, with the daemon's store. Paths arrive absolute and
 * already expanded by the client, so they are passed as literal specs. A publish is not
 * interruptible: a client that goes away does not stop it (it is idempotent; running it again
 * uploads nothing twice).
 */
public final class DaemonPublisher implements PublishRunner {
    private static final int UPLOAD_THREADS = 8;

    private final BlobStore store;
    private final Catalog catalog;
    private final Clock clock;
    private final Path stagingParent;

    public DaemonPublisher(BlobStore store, Catalog catalog, Clock clock, Path stagingParent) {
        this.store = store;
        this.catalog = catalog;
        this.clock = clock;
        this.stagingParent = stagingParent;
    }

    @Override
    public Map<String, Object> publish(PublishRunner.PublishRequest request, Consumer<String> progress, BooleanSupplier cancelled) {
        io.warpdata.daemon.publish.PublishRequest r = new io.warpdata.daemon.publish.PublishRequest(request.dataset(),
                specs(request.tables()), specs(request.artifacts()),
                request.bindings().stream().map(io.warpdata.daemon.publish.PublishRequest::parseBinding).toList(),
                request.setLatest(),
                request.shardSize() > 0 ? request.shardSize() : io.warpdata.daemon.publish.PublishRequest.DEFAULT_SHARD_SIZE,
                Path.of("/"));
        PublishProgress sink = new PublishProgress() {
            @Override
            public void start(String task, long totalBytes) {
                progress.accept(task + " (" + totalBytes + " bytes)");
            }

            @Override
            public void advance(long bytes) {
            }

            @Override
            public void finish() {
            }
        };
        PublishResult res = new Publisher(store, catalog, clock, request.creator(), stagingParent, UPLOAD_THREADS, sink).publish(r);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dataset", res.dataset().toString());
        m.put("version", res.version().hex());
        m.put("tables", res.tables());
        m.put("table_files", res.tableFiles());
        m.put("rows", res.rows());
        m.put("artifacts", res.artifacts());
        m.put("members", res.members());
        m.put("blobs_uploaded", res.blobsUploaded());
        m.put("blobs_skipped", res.blobsSkipped());
        m.put("bytes_uploaded", res.bytesUploaded());
        m.put("bytes_skipped", res.bytesSkipped());
        m.put("manifest_written", res.manifestWritten());
        m.put("latest_set", res.latestSet());
        m.put("summary", res.summary());
        return m;
    }

    private static TreeMap<String, List<String>> specs(Map<String, List<Path>> paths) {
        TreeMap<String, List<String>> out = new TreeMap<>();
        paths.forEach((name, list) -> out.put(name, list.stream().map(Path::toString).toList()));
        return out;
    }
}
