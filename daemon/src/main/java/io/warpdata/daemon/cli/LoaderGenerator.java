package io.warpdata.daemon.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
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
 * Writes the Python loader of {@code warpctl init} (the spec's generated loader, section 9.3, but
 * reading through the mount): a PyTorch-style map {@code Dataset} over one table's rows, with
 * bound artifact columns turned into paths under the mount, sharded by RANK/WORLD_SIZE, and a
 * DataLoader helper and a smoke test. Sharding is deterministic at the shard-file level (seed
 * 000, E2): each rank reads one contiguous run of whole Parquet files when there are enough files
 * to split the rows evenly, else one contiguous run of rows; never round-robin, which would make
 * every rank touch every tar shard. No row is read by two ranks and every row by one (checked for
 * world sizes 1 to 16, and with DataLoader workers inside a rank, by LoaderShardingIT).
 *
 * <p>The loader pins the version (name@hash), so every rank and every run sees the same rows.
 * It uses only the standard library plus optional modules: rows come from the Parquet shards
 * via {@code duckdb} or {@code pyarrow} when importable, else from the rows file written next
 * to it (Debian's python3 has neither Parquet reader), else, for a table with a bound artifact,
 * from listing that artifact's directory in the mount (then only the bound column is known).
 * {@code torch} is used when importable; without it the Dataset still works and
 * {@code batches()} replaces the DataLoader.
 */
public final class LoaderGenerator {
    private LoaderGenerator() {
    }

    /** What the loader is for. */
    public record Target(String dataset, String version, Path mount, Optional<String> table,
                         List<String> shardFiles, List<String> columns, long totalRows,
                         Map<String, List<String>> bindings, Optional<String> rowsFile) {
    }

    /**
     * Picks the table ({@code wanted}, else {@code main}, else the first with a binding, else the
     * first) from an {@code info} result.
     *
     * @throws ControlException naming the tables if {@code wanted} is not one of them
     */
    public static Target target(JsonNode info, Path mount, Optional<String> wanted, Optional<String> rowsFile) {
        JsonNode tables = info.path("tables");
        List<String> names = new ArrayList<>();
        tables.fieldNames().forEachRemaining(names::add);
        Optional<String> table;
        if (wanted.isPresent()) {
            if (!tables.has(wanted.get())) {
                throw new ControlException(ControlException.BAD_REQUEST, info.path("dataset").asText() + " has no table '"
                        + wanted.get() + "'", "pick one of: " + (names.isEmpty() ? "(none)" : String.join(", ", names)));
            }
            table = wanted;
        } else if (names.contains("main")) {
            table = Optional.of("main");
        } else {
            Optional<String> bound = Optional.empty();
            for (JsonNode b : info.path("bindings")) {
                bound = bound.or(() -> Optional.of(b.path("table").asText()));
            }
            table = bound.or(() -> names.stream().findFirst());
        }
        List<String> shards = new ArrayList<>();
        List<String> columns = new ArrayList<>();
        long rows = 0;
        Map<String, List<String>> bindings = new LinkedHashMap<>();
        if (table.isPresent()) {
            JsonNode t = tables.path(table.get());
            t.path("shards").forEach(s -> shards.add(s.path("name").asText()));
            t.path("schema").forEach(c -> columns.add(c.path("name").asText()));
            rows = t.path("rows").asLong();
            for (JsonNode b : info.path("bindings")) {
                if (b.path("table").asText().equals(table.get())) {
                    bindings.put(b.path("column").asText(), List.of(b.path("artifact").asText(), b.path("ref_type").asText()));
                }
            }
        } else {
            // No table: the rows are the members of the first artifact.
            Iterator<String> artifacts = info.path("artifacts").fieldNames();
            if (!artifacts.hasNext()) {
                throw new ControlException(ControlException.BAD_REQUEST, info.path("dataset").asText() + " has no tables and no artifacts",
                        "publish something first: warpctl publish ...");
            }
            String a = artifacts.next();
            bindings.put("path", List.of(a, "file"));
            columns.add("path");
            rows = info.path("artifacts").path(a).path("members").asLong();
            rowsFile = Optional.empty();
        }
        return new Target(info.path("dataset").asText(), info.path("version").asText(), mount, table, shards, columns,
                rows, bindings, rowsFile);
    }

    /** The loader's source; it finds warpd's socket as warpctl does ($WARP_SOCKET, else the default for its user). */
    public static String generate(Target t) {
        return generate(t, Optional.empty());
    }

    /**
     * The loader's source, telling warpd each epoch's order over {@code socket} (the one
     * {@code warpctl init} talked to) unless $WARP_SOCKET names another.
     */
    public static String generate(Target t, Optional<Path> socket) {
        String[] ws = t.dataset().split("/", 2);
        StringBuilder b = new StringBuilder("{");
        t.bindings().forEach((col, v) -> b.append(b.length() > 1 ? ", " : "").append(py(col)).append(": (")
                .append(py(v.get(0))).append(", ").append(py(v.get(1))).append(")"));
        b.append("}");
        return TEMPLATE
                .replace("%DATASET%", py(t.dataset()))
                .replace("%DATASET_DOC%", t.dataset())
                .replace("%VERSION%", py(t.version()))
                .replace("%MOUNT%", py(t.mount().toString()))
                .replace("%WS%", py(ws[0]))
                .replace("%NAME%", py(ws[1]))
                .replace("%TABLE%", t.table().map(LoaderGenerator::py).orElse("None"))
                .replace("%SHARDS%", py(t.shardFiles()))
                .replace("%COLUMNS%", py(t.columns()))
                .replace("%TOTAL_ROWS%", Long.toString(t.totalRows()))
                .replace("%BINDINGS%", b.toString())
                .replace("%ROWS_FILE%", t.rowsFile().map(LoaderGenerator::py).orElse("None"))
                .replace("%SOCKET%", socket.map(p -> py(p.toString())).orElse("None"));
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
            \"""PyTorch-style loader for a Warp dataset, reading through the Warp mount.

            Nothing is downloaded up front: warpd fetches and caches what is read (run
            `warpctl warm DATASET` first to read at local-disk speed). The version is pinned, so
            every rank and every run sees exactly the same rows.

            Rows come from the table's Parquet shards in the mount (via duckdb, else pyarrow), else
            from the rows file `warpctl init` wrote next to this file, else (for a table with a
            bound artifact) from listing that artifact in the mount. Bound columns are turned into
            paths under the mount.

            Sharding: RANK / WORLD_SIZE from the environment (defaults 0 / 1); each rank reads one
            contiguous run of the rows (whole Parquet files when they split evenly) -- no duplicates,
            full coverage (see split_rows). DataLoader workers split a rank's rows further as usual.

            Order-aware prefetch: at the start of every epoch, make_loader's sampler (EpochOrder)
            computes the epoch's order (shuffled with a seed and the epoch number, or as stored) and
            tells warpd the files in that order over its control socket, before the first read;
            warpd then fetches ahead in exactly that order, coalescing neighbours in a shard into
            large reads. If warpd cannot be reached, a warning says so and training goes on.

                from this_module import WarpDataset, make_loader
                loader = make_loader(batch_size=64, num_workers=4, shuffle=True)
                for epoch in range(10):
                    loader.sampler.set_epoch(epoch)   # optional: epochs are counted anyway
                    for batch in loader:
                        ...
            \"""
            import gzip
            import json
            import os
            import random
            import socket
            import warnings

            DATASET = %DATASET%
            VERSION = %VERSION%
            MOUNT = os.environ.get("WARP_MOUNT", %MOUNT%)
            VERSION_DIR = %WS% + "/" + %NAME% + "@" + VERSION  # the version, relative to the mount
            ROOT = os.path.join(MOUNT, VERSION_DIR)
            SOCKET = %SOCKET%  # warpd's control socket when this file was written; $WARP_SOCKET wins
            TABLE = %TABLE%
            SHARD_FILES = %SHARDS%
            COLUMNS = %COLUMNS%
            TOTAL_ROWS = %TOTAL_ROWS%
            # column -> (artifact, ref_type): values are member paths inside the artifact
            BINDINGS = %BINDINGS%
            ROWS_FILE = %ROWS_FILE%

            try:
                import torch
                from torch.utils.data import DataLoader, Dataset as _Base, Sampler as _SamplerBase
            except ImportError:  # torch is optional: WarpDataset and batches() work without it
                torch = None
                DataLoader = None
                _Base = _SamplerBase = object


            def rank_and_world():
                \"""(RANK, WORLD_SIZE) from the environment, as torchrun sets them.\"""
                rank = int(os.environ.get("RANK", "0"))
                world = int(os.environ.get("WORLD_SIZE", "1"))
                if world < 1 or not 0 <= rank < world:
                    raise ValueError("RANK=%d WORLD_SIZE=%d: need 0 <= RANK < WORLD_SIZE" % (rank, world))
                return rank, world


            def shard_paths():
                return [os.path.join(ROOT, TABLE, name) for name in SHARD_FILES]


            def _rows_duckdb():
                import duckdb
                con = duckdb.connect()
                con.execute("SET threads TO 1")  # keep file order, so all ranks agree
                rows, file_rows = [], []
                for path in shard_paths():
                    cur = con.execute("SELECT * FROM read_parquet(?)", [path])
                    names = [d[0] for d in cur.description]
                    got = [dict(zip(names, r)) for r in cur.fetchall()]
                    rows.extend(got)
                    file_rows.append(len(got))
                return rows, file_rows


            def _rows_pyarrow():
                import pyarrow.parquet as pq
                rows, file_rows = [], []
                for path in shard_paths():
                    got = pq.read_table(path).to_pylist()
                    rows.extend(got)
                    file_rows.append(len(got))
                return rows, file_rows


            def _rows_file():
                path = ROWS_FILE
                if not os.path.isabs(path):
                    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), path)
                if not os.path.exists(path):
                    raise FileNotFoundError(path)
                with gzip.open(path, "rt", encoding="utf-8") as f:
                    rows = [json.loads(line) for line in f]
                return rows, [len(rows)]


            def _rows_listing():
                column, (artifact, _) = next(iter(BINDINGS.items()))
                base = os.path.join(ROOT, artifact)
                if not os.path.isdir(base):
                    raise FileNotFoundError(base)
                rows = []
                for dirpath, dirnames, filenames in os.walk(base):
                    dirnames.sort()
                    for name in sorted(filenames):
                        rows.append({column: os.path.relpath(os.path.join(dirpath, name), base)})
                return rows, [len(rows)]


            def split_rows(file_rows, rank, world):
                \"""(start, end, how): the rows rank `rank` of `world` reads, numbered in file order.

                Deterministic at the shard-file level: with at least as many files as ranks, each
                file goes to the rank in whose even share of the rows its middle row falls, so a
                rank reads one contiguous run of whole files, provided every rank gets a file and
                none gets more than 25% over its share. Otherwise each rank reads one contiguous
                run of rows. Contiguous runs of rows name contiguous members, which sit one after
                another in the tar shards: each rank reads its part of the shards sequentially.
                \"""
                total = sum(file_rows)
                if world < 1 or not 0 <= rank < world:
                    raise ValueError("rank %d is not in [0, %d)" % (rank, world))
                if world > 1 and len(file_rows) >= world and total > 0:
                    first, last, start = [None] * world, [None] * world, 0
                    for n in file_rows:
                        owner = min(world - 1, (2 * start + n) * world // (2 * total))
                        if first[owner] is None:
                            first[owner] = start
                        last[owner] = start + n
                        start += n
                    share = -(-total // world)
                    if (all(f is not None for f in first)
                            and max(last[r] - first[r] for r in range(world)) * 4 <= share * 5):
                        return first[rank], last[rank], "whole files"
                return total * rank // world, total * (rank + 1) // world, "row range"


            def load_rows():
                \"""(rows, source, rows per file): all rows of the table in a fixed order.\"""
                tried = []
                sources = []
                if TABLE is not None:
                    sources += [("duckdb", _rows_duckdb), ("pyarrow", _rows_pyarrow)]
                    if ROWS_FILE:
                        sources.append(("rows file " + ROWS_FILE, _rows_file))
                if BINDINGS:
                    sources.append(("listing of " + next(iter(BINDINGS.values()))[0], _rows_listing))
                for name, read in sources:
                    try:
                        rows, file_rows = read()
                        return rows, name, file_rows
                    except (ImportError, FileNotFoundError) as e:
                        tried.append("%s: %s" % (name, e))
                raise RuntimeError(
                    "cannot read the rows of %s: %s. Is the mount up (ls %s)? To read Parquet from python,"
                    " install duckdb or pyarrow (pip install duckdb), or run `warpctl init %s --rows file`."
                    % (DATASET, "; ".join(tried), ROOT, DATASET))


            def _socket_path():
                \"""warpd's control socket: $WARP_SOCKET, else the one warpctl init used, else warpctl's default.\"""
                if os.environ.get("WARP_SOCKET"):
                    return os.environ["WARP_SOCKET"]
                if SOCKET:
                    return SOCKET
                if os.geteuid() == 0:
                    return "/run/warp/warpd.sock"
                if os.environ.get("XDG_RUNTIME_DIR"):
                    return os.path.join(os.environ["XDG_RUNTIME_DIR"], "warp", "warpd.sock")
                return "/tmp/warp-%d/warpd.sock" % os.geteuid()


            _PART_BYTES = 512 * 1024  # paths per request, well under the socket's 1 MiB line limit


            def tell_warpd(paths, plan="default", timeout=60):
                \"""Tells warpd the order in which `paths` (relative to this version's folder in the mount)
                will be read, so that it fetches ahead in exactly that order. A new order under the same
                plan name replaces the previous one. Returns warpd's answer (a dict), or None with a
                warning when warpd cannot take it: reading then works as without it.
                \"""
                try:
                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                        s.settimeout(timeout)
                        s.connect(_socket_path())
                        f = s.makefile("rwb")
                        part, i = 0, 0
                        while True:
                            batch, size = [], 0
                            while i < len(paths):
                                n = len(paths[i].encode("utf-8")) + 8
                                if batch and size + n > _PART_BYTES:
                                    break
                                batch.append(paths[i])
                                size += n
                                i += 1
                            more = i < len(paths)
                            request = {"id": part, "op": "prefetch.order", "args": {
                                "plan": plan, "root": VERSION_DIR, "paths": batch, "part": part, "more": more}}
                            f.write(json.dumps(request).encode("utf-8") + b"\\n")
                            f.flush()
                            while True:  # one answer per part (progress events aside)
                                line = f.readline()
                                if not line:
                                    raise OSError("warpd closed the connection")
                                answer = json.loads(line)
                                if answer.get("id") == part and "ok" in answer:
                                    break
                            if not answer["ok"]:
                                e = answer.get("error", {})
                                raise RuntimeError("%s: %s (%s)" % (e.get("type"), e.get("message"), e.get("next_step")))
                            if not more:
                                return answer["result"]
                            part += 1
                except (OSError, ValueError, KeyError, RuntimeError) as e:
                    warnings.warn("warpd did not take the read order (%s); reading on without order-aware prefetch" % e,
                                  stacklevel=2)
                    return None


            def _decode(path, ref_type):
                if ref_type == "image":
                    try:
                        from PIL import Image
                    except ImportError:
                        pass
                    else:
                        with Image.open(path) as im:
                            return im.convert("RGB")
                with open(path, "rb") as f:
                    return f.read()


            class WarpDataset(_Base):
                \"""Map-style dataset over this rank's rows; bound columns become mount paths.

                decode=True adds COLUMN_data: a PIL image for image columns (when PIL is
                installed), else the file's bytes.
                \"""

                def __init__(self, rank=None, world_size=None, transform=None, decode=False):
                    env_rank, env_world = rank_and_world()
                    self.rank = env_rank if rank is None else rank
                    self.world_size = env_world if world_size is None else world_size
                    if not 0 <= self.rank < self.world_size:
                        raise ValueError("rank %d is not in [0, %d)" % (self.rank, self.world_size))
                    rows, self.row_source, file_rows = load_rows()
                    self.total_rows = len(rows)
                    start, end, self.split = split_rows(file_rows, self.rank, self.world_size)
                    self.rows = rows[start:end]
                    self.transform = transform
                    self.decode = decode

                def __len__(self):
                    return len(self.rows)

                def member_paths(self, index):
                    \"""The files row `index` reads, relative to the version's folder (bound columns only).\"""
                    row = self.rows[index]
                    return ["%s/%s" % (artifact, str(row[column]).lstrip("/"))
                            for column, (artifact, _) in BINDINGS.items() if row.get(column) is not None]

                def __getitem__(self, index):
                    row = dict(self.rows[index])
                    for column, (artifact, ref_type) in BINDINGS.items():
                        value = row.get(column)
                        if value is None:
                            continue
                        path = os.path.join(ROOT, artifact, str(value).lstrip("/"))
                        row[column] = path
                        if self.decode:
                            row[column + "_data"] = _decode(path, ref_type)
                    return self.transform(row) if self.transform else row


            def collate_rows(batch):
                \"""A list of row dicts -> a dict of lists (numbers become tensors when torch is there).\"""
                out = {}
                for key in batch[0]:
                    values = [row[key] for row in batch]
                    if torch is not None and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                        values = torch.tensor(values)
                    out[key] = values
                return out


            class EpochOrder(_SamplerBase):
                \"""The rows of one epoch in order: shuffled by `seed` and the epoch number, or as stored.

                Each iteration is one epoch. Before handing out the first index it tells warpd which
                files the epoch reads, in order (tell_warpd), so that warpd fetches them ahead in
                that order. set_epoch(n) picks the epoch as torch's DistributedSampler does; without
                it, epochs are counted from 0.
                \"""

                def __init__(self, dataset, shuffle=False, seed=0, prefetch_order=True):
                    self.dataset = dataset
                    self.shuffle = shuffle
                    self.seed = seed
                    self.prefetch_order = prefetch_order
                    self.epoch = 0
                    self.last_answer = None  # warpd's answer for the last epoch told, or None

                def set_epoch(self, epoch):
                    self.epoch = epoch

                def order(self, epoch):
                    \"""The row indices of `epoch`, in reading order.\"""
                    indices = list(range(len(self.dataset)))
                    if self.shuffle:
                        random.Random(self.seed * 1000003 + epoch).shuffle(indices)
                    return indices

                def __len__(self):
                    return len(self.dataset)

                def __iter__(self):
                    indices = self.order(self.epoch)
                    if self.prefetch_order and BINDINGS and indices:
                        ds = self.dataset
                        paths = [p for i in indices for p in ds.member_paths(i)]
                        plan = "%s@%s rank %d/%d pid %d" % (DATASET, VERSION[:12], ds.rank, ds.world_size, os.getpid())
                        self.last_answer = tell_warpd(paths, plan)
                    self.epoch += 1
                    return iter(indices)


            def make_loader(batch_size=32, num_workers=0, shuffle=False, seed=0, prefetch_order=True, **dataset_args):
                \"""A torch DataLoader over this rank's rows that tells warpd each epoch's order (EpochOrder).\"""
                if DataLoader is None:
                    raise RuntimeError("torch is not importable (apt-get install python3-torch, or pip install torch);"
                                       " use batches() instead")
                ds = WarpDataset(**dataset_args)
                return DataLoader(ds, batch_size=batch_size, num_workers=num_workers, collate_fn=collate_rows,
                                  sampler=EpochOrder(ds, shuffle=shuffle, seed=seed, prefetch_order=prefetch_order))


            def batches(batch_size=32, shuffle=False, seed=0, epoch=0, prefetch_order=True, **dataset_args):
                \"""Batches of this rank's rows for one epoch, without torch (warpd is told the order too).\"""
                ds = WarpDataset(**dataset_args)
                sampler = EpochOrder(ds, shuffle=shuffle, seed=seed, prefetch_order=prefetch_order)
                sampler.set_epoch(epoch)
                indices = list(sampler)
                for start in range(0, len(indices), batch_size):
                    yield collate_rows([ds[i] for i in indices[start:start + batch_size]])


            if __name__ == "__main__":
                ds = WarpDataset()
                print("%s@%s table %s: rank %d/%d has %d of %d rows (rows from %s)"
                      % (DATASET, VERSION[:12], TABLE, ds.rank, ds.world_size, len(ds), ds.total_rows, ds.row_source))
                print("split by %s" % ds.split)
                if TABLE is not None and ds.total_rows != TOTAL_ROWS and not ds.row_source.startswith("listing"):
                    raise SystemExit("expected %d rows, read %d" % (TOTAL_ROWS, ds.total_rows))
                # The smoke test reads three batches: no use telling warpd a whole epoch.
                loader = (make_loader(batch_size=4, prefetch_order=False) if DataLoader is not None
                          else batches(batch_size=4, prefetch_order=False))
                for i, batch in enumerate(loader):
                    print("Batch %d: %d rows" % (i, len(next(iter(batch.values())))))
                    if i >= 2:
                        break
                if len(ds) and BINDINGS:
                    column = next(iter(BINDINGS))
                    path = ds[0][column]
                    with open(path, "rb") as f:
                        print("read %d bytes of %s" % (len(f.read()), path))
                    answer = tell_warpd(ds.member_paths(0), "%s@%s smoke test" % (DATASET, VERSION[:12]))
                    if answer is not None:
                        print("warpd takes read orders (order-aware prefetch): %d file(s) planned" % answer["members"])
                print("Smoke test passed!")
            """;
}
