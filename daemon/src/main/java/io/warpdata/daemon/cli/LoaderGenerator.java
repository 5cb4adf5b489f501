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

    /** The loader's source. */
    public static String generate(Target t) {
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
                .replace("%ROWS_FILE%", t.rowsFile().map(LoaderGenerator::py).orElse("None"));
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

            Sharding: RANK / WORLD_SIZE from the environment (defaults 0 / 1); rank r takes rows
            r, r+W, r+2W, ... -- no duplicates, full coverage. DataLoader workers split a rank's
            rows further as usual.

                from this_module import WarpDataset, make_loader
                loader = make_loader(batch_size=64, num_workers=4)
            \"""
            import gzip
            import json
            import os

            DATASET = %DATASET%
            VERSION = %VERSION%
            MOUNT = os.environ.get("WARP_MOUNT", %MOUNT%)
            ROOT = os.path.join(MOUNT, %WS%, %NAME% + "@" + VERSION)
            TABLE = %TABLE%
            SHARD_FILES = %SHARDS%
            COLUMNS = %COLUMNS%
            TOTAL_ROWS = %TOTAL_ROWS%
            # column -> (artifact, ref_type): values are member paths inside the artifact
            BINDINGS = %BINDINGS%
            ROWS_FILE = %ROWS_FILE%

            try:
                import torch
                from torch.utils.data import DataLoader, Dataset as _Base
            except ImportError:  # torch is optional: WarpDataset and batches() work without it
                torch = None
                DataLoader = None
                _Base = object


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


            def make_loader(batch_size=32, num_workers=0, shuffle=False, **dataset_args):
                \"""A torch DataLoader over this rank's rows.\"""
                if DataLoader is None:
                    raise RuntimeError("torch is not importable (apt-get install python3-torch, or pip install torch);"
                                       " use batches() instead")
                return DataLoader(WarpDataset(**dataset_args), batch_size=batch_size, num_workers=num_workers,
                                  shuffle=shuffle, collate_fn=collate_rows)


            def batches(batch_size=32, **dataset_args):
                \"""Batches of this rank's rows without torch.\"""
                ds = WarpDataset(**dataset_args)
                for start in range(0, len(ds), batch_size):
                    yield collate_rows([ds[i] for i in range(start, min(start + batch_size, len(ds)))])


            if __name__ == "__main__":
                ds = WarpDataset()
                print("%s@%s table %s: rank %d/%d has %d of %d rows (rows from %s)"
                      % (DATASET, VERSION[:12], TABLE, ds.rank, ds.world_size, len(ds), ds.total_rows, ds.row_source))
                print("split by %s" % ds.split)
                if TABLE is not None and ds.total_rows != TOTAL_ROWS and not ds.row_source.startswith("listing"):
                    raise SystemExit("expected %d rows, read %d" % (TOTAL_ROWS, ds.total_rows))
                loader = make_loader(batch_size=4) if DataLoader is not None else batches(batch_size=4)
                for i, batch in enumerate(loader):
                    print("Batch %d: %d rows" % (i, len(next(iter(batch.values())))))
                    if i >= 2:
                        break
                if len(ds) and BINDINGS:
                    column = next(iter(BINDINGS))
                    path = ds[0][column]
                    with open(path, "rb") as f:
                        print("read %d bytes of %s" % (len(f.read()), path))
                print("Smoke test passed!")
            """;
}
