package io.warpdata.daemon.control.ops;

import io.warpdata.manifest.DatasetId;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/** Runs a publish inside the daemon; warpd implements it over Publisher. */
public interface PublishRunner {

    /**
     * Publishes {@code request} to the daemon's remote.
     *
     * @param progress receives one-line progress messages
     * @return the result (at least {@code dataset} and {@code version}), JSON-serialisable
     * @throws io.warpdata.manifest.WarpException naming the bad input or the failed upload
     */
    Map<String, Object> publish(PublishRequest request, Consumer<String> progress, BooleanSupplier cancelled);

    /**
     * What to publish, as the CLI flags say it, with absolute paths (the client resolves them
     * against its working directory).
     *
     * @param tables    table name -> Parquet files ({@code --table main=./data/*.parquet})
     * @param artifacts artifact name -> directory or tar shards ({@code --artifact images=./images/})
     * @param bindings  {@code --bind} values as typed on the command line
     * @param shardSize target tar shard size for packed directories, or 0 for the default
     * @param creator   the peer's user name, recorded as the version's creator
     */
    record PublishRequest(DatasetId dataset, Map<String, List<Path>> tables, Map<String, List<Path>> artifacts,
                          List<String> bindings, boolean setLatest, long shardSize, String creator) {
        public PublishRequest {
            tables = Map.copyOf(tables);
            artifacts = Map.copyOf(artifacts);
            bindings = List.copyOf(bindings);
        }

        /** Every source path named. */
        public List<Path> sources() {
            return java.util.stream.Stream.concat(tables.values().stream(), artifacts.values().stream())
                    .flatMap(List::stream).toList();
        }
    }
}
