package io.warpdata.daemon.warpd;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Writes the daemon's counters as JSON to a file every second (temp file + atomic rename, so a
 * reader never sees half a document). Tests and scripts/bench read it; the control socket
 * serves the same snapshot.
 */
public final class StatsWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StatsWriter.class);

    private final Path file;
    private final Supplier<?> snapshot;
    private final ObjectMapper json = io.warpdata.daemon.control.protocol.Wire.json();
    private final ScheduledExecutorService timer;
    private volatile boolean warned;

    public StatsWriter(Path file, Supplier<?> snapshot) {
        this.file = file;
        this.snapshot = snapshot;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "warpd-stats");
            t.setDaemon(true);
            return t;
        });
    }

    public StatsWriter start() {
        timer.scheduleWithFixedDelay(this::writeNow, 0, 1, TimeUnit.SECONDS);
        return this;
    }

    /** Writes one snapshot now. */
    public void writeNow() {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.write(tmp, json.writerWithDefaultPrettyPrinter().writeValueAsBytes(snapshot.get()));
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException e) {
            if (!warned) {
                warned = true;
                LOG.warn("cannot write {}: {} (counters stay available on the control socket)", file, e.toString());
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
