package io.warpdata.daemon.cli;

import io.warpdata.daemon.control.protocol.InfoCall;
import com.fasterxml.jackson.core.JsonProcessingException;
import io.warpdata.daemon.control.ControlException;
import io.warpdata.daemon.control.ControlProtocol;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Writes the Python stub of {@code warpctl init}: the seed's generated loader (section 9.3), a few
 * lines importing the package {@code warpdata} (python/), pinned to one version (name@hash), so
 * every rank and every run sees the same rows. The loading itself (rows from warpd's
 * {@code table.batches}, refs through the mount, the one row split, torch's DataLoader with
 * order-aware prefetch) lives in the package, where pytest tests it.
 */
public final class LoaderGenerator {
    private LoaderGenerator() {
    }

    /** The column of a loader over an artifact's members (no table): each row is one member's path. */
    static final String MEMBER_COLUMN = "path";

    /** What the loader is for. */
    public record Target(String dataset, String version, Path mount, Optional<String> table,
                         List<String> shardFiles, List<String> columns, long totalRows,
                         Map<String, List<String>> bindings, boolean samplesByKey) {
    }

    /**
     * Picks the table ({@code wanted}, else {@code main}, else the first with a binding, else the
     * first) from an {@code info} result.
     *
     * @throws ControlException naming the tables if {@code wanted} is not one of them
     */
    public static Target target(InfoCall.Reply info, Path mount, Optional<String> wanted) {
        List<String> names = new ArrayList<>(info.tables().keySet());
        Optional<String> table;
        if (wanted.isPresent()) {
            if (!info.tables().containsKey(wanted.get())) {
                throw new ControlException(ControlException.BAD_REQUEST, info.dataset() + " has no table '"
                        + wanted.get() + "'", "pick one of: " + (names.isEmpty() ? "(none)" : String.join(", ", names)));
            }
            table = wanted;
        } else if (names.contains("main")) {
            table = Optional.of("main");
        } else {
            table = info.bindings().stream().map(InfoCall.BindingInfo::table).findFirst().or(() -> names.stream().findFirst());
        }
        List<String> shards = new ArrayList<>();
        List<String> columns = new ArrayList<>();
        long rows;
        Map<String, List<String>> bindings = new LinkedHashMap<>();
        if (table.isPresent()) {
            InfoCall.TableInfo t = info.tables().get(table.get());
            t.shards().forEach(s -> shards.add(s.name()));
            t.schema().forEach(c -> columns.add(c.name()));
            rows = t.rows();
            for (InfoCall.BindingInfo b : info.bindings()) {
                if (b.table().equals(table.get())) {
                    bindings.put(b.column(), List.of(b.artifact(), b.refType()));
                }
            }
        } else {
            // No table: the rows are the members of the first artifact, in a column named path.
            Iterator<Map.Entry<String, InfoCall.ArtifactInfo>> artifacts = info.artifacts().entrySet().iterator();
            if (!artifacts.hasNext()) {
                throw new ControlException(ControlException.BAD_REQUEST, info.dataset() + " has no tables and no artifacts",
                        "publish something first: warpctl publish ...");
            }
            Map.Entry<String, InfoCall.ArtifactInfo> a = artifacts.next();
            bindings.put(MEMBER_COLUMN, List.of(a.getKey(), "file"));
            columns.add(MEMBER_COLUMN);
            rows = a.getValue().members();
        }
        // WebDataset shards without a table: a row is a sample (the files sharing a key), as
        // webdataset yields them; member by member split one sample's files across ranks (audit 22).
        boolean samplesByKey = table.isEmpty() && info.artifacts().values().stream().findFirst()
                .map(a -> "webdataset_shards".equals(a.kind())).orElse(false);
        return new Target(info.dataset(), info.version(), mount, table, shards, columns, rows, bindings, samplesByKey);
    }

    /** The stub's source; warpdata finds warpd's socket as warpctl does ($WARP_SOCKET, else the default). */
    public static String generate(Target t) {
        return generate(t, Optional.empty(), Optional.empty());
    }

    /**
     * The stub's source: the seed's generated loader (section 9.3), a few lines importing
     * {@code warpdata}, pinned to the version.
     *
     * @param socket    warpd's socket {@code warpctl init} talked to (used unless $WARP_SOCKET is set)
     * @param warpdata  a folder holding the package {@code warpdata}, used when it is not installed
     */
    public static String generate(Target t, Optional<Path> socket, Optional<Path> warpdata) {
        return TEMPLATE
                .replace("%DATASET_DOC%", t.dataset())
                .replace("%PINNED%", py(t.dataset() + "@" + t.version()))
                .replace("%MOUNT%", py(t.mount().toString()))
                .replace("%TABLE%", t.table().map(LoaderGenerator::py).orElse("None"))
                .replace("%ARTIFACT%", t.table().isPresent() ? "None" : py(t.bindings().values().iterator().next().get(0)))
                .replace("%SAMPLES_BY_KEY%", t.samplesByKey() ? "True" : "False")
                .replace("%SOCKET%", socket.map(p -> py(p.toString())).orElse("None"))
                .replace("%WARPDATA%", warpdata.map(p -> py(p.toString())).orElse("None"));
    }

    /** A Python literal: JSON strings and lists of strings are valid Python. */
    private static String py(Object value) {
        try {
            return ControlProtocol.json().writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static final String TEMPLATE = """
            #!/usr/bin/env python3
            # Generated by `warpctl init` for the Warp dataset %DATASET_DOC%. Safe to edit.
            \"""Loader for a Warp dataset, pinned to one version: every rank and every run sees the same rows.

            Rows come from warpd (its DuckDB reads the table's Parquet shards through its cache); bound
            columns hold refs (ref.read_bytes(), ref.as_pil(), ref.local_path()) read through the mount.
            shard="auto" splits the rows by RANK / WORLD_SIZE (and DataLoader workers) with the one row
            split of `warpctl stream --shard`: every row exactly once (even=True: as many rows on every
            rank, as distributed training needs). make_loader() is a torch DataLoader that tells warpd
            each epoch's read order (order-aware prefetch), every rank as many rows. See README "Python".
            \"""
            import os
            import sys

            DATASET = %PINNED%
            TABLE = %TABLE%
            ARTIFACT = %ARTIFACT%  # without a table: the artifact whose members are the rows
            SAMPLES_BY_KEY = %SAMPLES_BY_KEY%  # WebDataset shards: a row is a sample, the files sharing a key
            MOUNT = os.environ.get("WARP_MOUNT", %MOUNT%)
            SOCKET = %SOCKET%  # the warpd `warpctl init` talked to; $WARP_SOCKET wins
            WARPDATA = %WARPDATA%  # where warpctl's copy of the package is, if warpdata is not installed
            ROOT = os.path.join(MOUNT, DATASET)  # this version's folder in the mount

            if SOCKET and not os.environ.get("WARP_SOCKET"):
                os.environ["WARP_SOCKET"] = SOCKET
            try:
                import warpdata as wd
            except ImportError:  # not installed (pip install ./python, or scripts/install): the copy beside warpctl
                if not WARPDATA:
                    raise
                sys.path.append(WARPDATA)
                import warpdata as wd


            def get_dataset():
                return wd.dataset(DATASET, mount=MOUNT)


            def train_stream(batch_size=1000, shard="auto", even=False):
                ds = get_dataset()
                if TABLE is None:  # no table: the artifact's member paths (or samples), this rank's part
                    yield from wd.member_batches(ds, ARTIFACT, batch_size, shard=shard, by_key=SAMPLES_BY_KEY, even=even)
                    return
                for batch in ds.table(TABLE).batch_dicts(batch_size, shard=shard, even=even):
                    # Bound columns hold refs: batch[col][i].read_bytes(), .as_pil(), .local_path()
                    yield batch


            def make_loader(batch_size=32, num_workers=0, shuffle=False, seed=0, prefetch_order=True, **args):
                \"""A torch DataLoader over this rank's rows (bound columns as mount paths) that tells warpd each
                epoch's read order; loader.sampler.set_epoch(n) as with DistributedSampler. rank, world_size,
                transform, decode, columns and where go to the dataset; other keywords (persistent_workers,
                pin_memory, multiprocessing_context, ...) to torch's DataLoader.\"""
                if TABLE is None:
                    raise wd.BadRequestError("make_loader() reads a table's rows, and %s has only artifacts" % DATASET,
                                             "use train_stream(), or torchvision's ImageFolder on %s"
                                             % os.path.join(ROOT, ARTIFACT))
                from warpdata.loader import make_loader as make
                return make(get_dataset(), TABLE, batch_size=batch_size, num_workers=num_workers, shuffle=shuffle,
                            seed=seed, prefetch_order=prefetch_order, **args)


            if __name__ == "__main__":
                # Smoke test
                batches = 0
                for batch in train_stream(batch_size=10):
                    print(f"Batch {batches}: {len(next(iter(batch.values())))} rows")
                    batches += 1
                    if batches >= 3:
                        break
                if not batches:
                    sys.exit("Smoke test failed: %s gave this rank no batch" % DATASET)
                print("Smoke test passed!")
            """;
}
