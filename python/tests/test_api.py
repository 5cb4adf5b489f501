"""The seed's API surface (seed 000, phases 1-5 and 8): Table.head/select/filter, prefetch=,
DatasetBuilder, wd.publish's options, and a typed error per warpd error code."""

import json
import os
import sys
import types

import pytest

import warpdata as wd
from conftest import expected_row


def test_head_select_and_filter_read_what_they_say(ds):
    table = ds.table("main")
    head = table.head(3)
    # bound columns come as refs, as rows() gives them
    assert [dict(r, path=r["path"].path, sound=r["sound"].path) for r in head] == [expected_row(i) for i in range(3)]
    assert isinstance(head[0]["path"], wd.ImageRef)
    assert table.head(0) == []
    narrow = table.select(["id", "label"])
    assert narrow.head(2) == [{"id": 0, "label": "cat"}, {"id": 1, "label": "dog"}]
    assert table.select("id").head(1) == [{"id": 0}]
    # filters of filters all hold; a trailing comment ends with its line
    dogs = table.filter("label = 'dog'  -- the dogs").filter("id < 20")
    assert [r["id"] for r in dogs.select("id").rows()] == [i for i in range(20) if i % 3 == 1]
    # a where= given to a read of a filtered table holds too
    assert [r["id"] for r in dogs.rows(columns=["id"], where="id > 10")] == [13, 16, 19]
    # the table itself is unchanged: select and filter make new ones
    assert table.head(1)[0]["note"] is None and table.head(1)[0]["score"] == 0.0
    with pytest.raises(wd.BadRequestError):
        table.select([])
    with pytest.raises(wd.BadRequestError):
        table.filter("  ")
    with pytest.raises(wd.BadRequestError):
        table.head(-1)
    with pytest.raises(wd.InvalidFilterError) as e:
        table.filter("1=1) UNION ALL SELECT 1 --").head(1)
    assert "one expression" in str(e.value)


def test_prefetch_auto_is_the_default_and_nothing_else_is_pretended(ds):
    table = ds.table("main")
    assert next(table.batch_dicts(4, columns=["id"], prefetch="auto"))["id"] == [0, 1, 2, 3]
    assert next(iter(table.batches(4, columns=["id"], prefetch="auto")))
    for wrong in (False, None, "off", True):
        with pytest.raises(wd.BadRequestError) as e:
            next(table.batch_dicts(4, prefetch=wrong))
        assert "reads ahead by itself" in str(e.value)


def test_dataset_builder_publishes_tables_artifacts_and_bindings(warp, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for n in range(2):
        warp.sql("COPY (SELECT i AS id, 'img/' || i || '.bin' AS image FROM range(%d, %d) t(i)) TO '%s' (FORMAT PARQUET)"
                 % (n * 5, n * 5 + 5, data / ("part-%d.parquet" % n)))
    images = tmp_path / "images" / "img"
    images.mkdir(parents=True)
    for i in range(10):
        (images / ("%d.bin" % i)).write_bytes(bytes([i]) * (100 + i))
    result = (wd.DatasetBuilder("pytest/built")
              .add_table("main", str(data / "*.parquet"))
              .add_artifact("raw", str(tmp_path / "images"), kind="tar_shards")
              .bind("main.image", "raw", "file")
              .publish(set_latest=True))
    assert result["dataset"] == "pytest/built" and result["version"]
    built = wd.dataset("pytest/built")
    rows = list(built.table("main").rows())
    assert [r["id"] for r in rows] == list(range(10))
    assert rows[7]["image"].read_bytes() == bytes([7]) * 107

    # a kind the files do not make is refused before anything is published
    st = tmp_path / "st"
    st.mkdir()
    (st / "dataset_manifest.json").write_text(json.dumps({"shards": []}))
    with pytest.raises(wd.InvalidInputError) as e:
        wd.DatasetBuilder("pytest/not-built").add_artifact("emb", str(st), kind="tar_shards").publish()
    assert "'safetensors'" in str(e.value) and "kind='safetensors'" in e.value.next_step
    with pytest.raises(wd.DatasetNotFoundError):
        wd.dataset("pytest/not-built")
    with pytest.raises(wd.BadRequestError):
        wd.DatasetBuilder("pytest/x").add_artifact("a", str(st), kind="zip")
    with pytest.raises(wd.BadRequestError):
        wd.DatasetBuilder("pytest/x").add_table("main", str(tmp_path / "nothing-*.parquet"))


def test_publish_options_and_typed_errors_of_a_refused_input(warp, tmp_path):
    src = tmp_path / "t"
    src.mkdir()
    warp.sql("COPY (SELECT i AS id, 'x/' || i || '.bin' AS f FROM range(3) t(i)) TO '%s' (FORMAT PARQUET)"
             % (src / "part-0.parquet"))
    files = tmp_path / "files" / "x"
    files.mkdir(parents=True)
    (files / "0.bin").write_bytes(b"0")
    table = {"main": [str(src / "part-0.parquet")]}
    artifacts = {"files": [str(tmp_path / "files")]}
    with pytest.raises(wd.InvalidInputError) as e:
        wd.publish("pytest/opts", tables=table, artifacts=artifacts, bindings=["main.f=files:file"])
    assert e.value.code == "InvalidInput" and "name no member" in str(e.value)
    r = wd.publish("pytest/opts", tables=table, artifacts=artifacts, bindings=["main.f=files:file"],
                   allow_missing_members=True, branch="dev", set_latest=False)
    assert r["version"]
    assert wd.dataset("pytest/opts@dev").version == r["version"]
    with pytest.raises(wd.DatasetNotFoundError):
        wd.dataset("pytest/opts")  # no latest: the branch moved, not latest

    # a folder DuckDB's PARTITION_BY wrote, without _SUCCESS: DatasetIncomplete, an InvalidInputError
    parted = tmp_path / "parted"
    warp.sql("COPY (SELECT i AS id, i %% 2 AS k FROM range(4) t(i)) TO '%s' (FORMAT PARQUET, PARTITION_BY (k))" % parted)
    with pytest.raises(wd.InvalidInputError) as e:
        wd.publish("pytest/parted-incomplete", tables={"main": [str(parted)]})
    assert "_SUCCESS" in str(e.value) and "touch" in e.value.next_step


def test_a_publish_to_a_branch_leaves_latest_alone_unless_set_latest_is_passed(warp, tmp_path):
    """branch="dev" moved latest too (set_latest=True was the default and still applied), where
    warpctl publish --branch leaves it; set_latest=True with a branch moves both, as warpctl's
    --branch --set-latest does."""
    def one_row_table(n):
        out = tmp_path / ("part-%d.parquet" % n)
        warp.sql("COPY (SELECT %d AS id) TO '%s' (FORMAT PARQUET)" % (n, out))
        return {"main": [str(out)]}
    first = wd.publish("pytest/branches", tables=one_row_table(1))
    assert wd.dataset("pytest/branches").version == first["version"]
    dev = wd.publish("pytest/branches", tables=one_row_table(2), branch="dev")
    assert wd.dataset("pytest/branches@dev").version == dev["version"]
    assert wd.dataset("pytest/branches").version == first["version"]
    built = wd.DatasetBuilder("pytest/branches").add_table("main", one_row_table(3)["main"]).publish(branch="dev")
    assert wd.dataset("pytest/branches@dev").version == built["version"]
    assert wd.dataset("pytest/branches").version == first["version"]
    both = wd.publish("pytest/branches", tables=one_row_table(4), branch="dev", set_latest=True)
    assert wd.dataset("pytest/branches@dev").version == both["version"]
    assert wd.dataset("pytest/branches").version == both["version"]


def test_a_manifest_damaged_in_the_store_is_a_manifest_corrupted_error(warp, tmp_path):
    src = tmp_path / "m"
    src.mkdir()
    warp.sql("COPY (SELECT 1 AS id) TO '%s' (FORMAT PARQUET)" % (src / "part-0.parquet"))
    r = wd.publish("pytest/damaged", tables={"main": [str(src / "part-0.parquet")]})
    key = os.path.join(warp.store, "datasets", "pytest", "damaged", "versions", r["version"] + ".json")
    assert os.path.isfile(key), os.listdir(os.path.dirname(key))
    text = open(key).read()
    with open(key, "w") as f:
        f.write(text.replace('"main"', '"mane"', 1))
    with pytest.raises(wd.ManifestCorruptedError) as e:
        wd.dataset("pytest/damaged@" + r["version"])
    assert e.value.code == "ManifestCorrupted"
    # publishing the same input again puts it right
    again = wd.publish("pytest/damaged", tables={"main": [str(src / "part-0.parquet")]})
    assert again["version"] == r["version"] and any("written again" in n for n in again.get("notes", []))
    assert wd.dataset("pytest/damaged@" + r["version"]).table("main").head(1) == [{"id": 1}]


def test_pandas_gives_the_rows_as_a_dataframe_and_refuses_more_than_max_rows_without_a_limit(ds, monkeypatch):
    pandas = pytest.importorskip("pandas", reason="python3-pandas (scripts/test installs it)")
    table = ds.table("main")
    total = table.num_rows
    df = table.pandas()
    assert isinstance(df, pandas.DataFrame) and len(df) == total
    assert list(df.columns) == list(table.schema())
    # bound columns as their stored strings; NULLs as None; integers stay integers
    assert df.to_dict("records")[:8] == [expected_row(i) for i in range(8)]
    assert str(df["id"].dtype) == "int64" and df["note"][0] is None

    narrow = table.select(["id", "label"]).filter("label = 'bird'")
    assert narrow.pandas(limit=3).to_dict("list") == {"id": [2, 5, 8], "label": ["bird"] * 3}
    empty = table.pandas(columns=["id", "score", "label"], where="id < 0")
    assert list(empty.columns) == ["id", "score", "label"] and len(empty) == 0
    # no row to infer from: the dtypes rows would have had, not float64 for all
    assert [str(t) for t in empty.dtypes] == ["int64", "float64", "object"]
    assert len(table.filter("id < 10").pandas()) == 10

    # the guard: a whole table over max_rows is refused before a row is read ...
    with pytest.raises(wd.TooManyRowsError) as e:
        table.pandas(max_rows=total - 1)
    assert "has %d rows" % total in str(e.value) and "limit=" in e.value.next_step
    assert isinstance(e.value, wd.BadRequestError)
    # ... a filtered one once it gives more than max_rows
    with pytest.raises(wd.TooManyRowsError) as e:
        table.pandas(where="label = 'dog'", max_rows=20)
    assert "gives more than 20 rows" in str(e.value)
    # exactly max_rows passes; a limit or max_rows=None lifts the guard
    assert len(table.pandas(max_rows=total)) == total
    assert len(table.pandas(limit=total, max_rows=5)) == total
    assert len(table.pandas(max_rows=None)) == total
    for wrong in (-1, 1.5, True, "10"):
        with pytest.raises(wd.BadRequestError):
            table.pandas(max_rows=wrong)

    # without pandas: a typed ImportError naming the package
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError) as e:
        table.pandas(limit=1)
    assert isinstance(e.value, wd.MissingDependencyError) and "python3-pandas" in e.value.next_step


def test_polars_is_given_the_same_columns_and_is_named_when_missing(ds, monkeypatch):
    table = ds.table("main").select(["id", "note"])
    # polars is not packaged by Debian: a stand-in module records what polars.DataFrame is given
    given = []
    monkeypatch.setitem(sys.modules, "polars", types.SimpleNamespace(DataFrame=lambda data: given.append(data) or "df"))
    assert table.polars(limit=8) == "df"
    assert given == [{"id": list(range(8)), "note": [expected_row(i)["note"] for i in range(8)]}]
    with pytest.raises(wd.TooManyRowsError):
        table.polars(max_rows=3)
    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(wd.MissingDependencyError) as e:
        table.polars(limit=1)
    assert "polars" in str(e.value)


def test_a_publish_too_large_for_warpds_heap_is_made_by_warpctl_in_its_own_process(tmp_path, monkeypatch):
    """warpd refuses, before reading anything, a folder of more files than its heap packs
    (PublishTooLarge); wd.publish then runs warpctl publish in its own process, as warpctl does by
    itself (audit 21). warpd's refusal and warpctl are stand-ins here: the refusal is tested with
    a real warpd in PublishHeapTest, warpctl's own fallback in PublishChecksIT."""
    import json
    import os
    from warpdata import client as client_module
    from warpdata.errors import WarpError

    def refuse(self, op, args=None, on_event=None):
        if op == "status":
            return {"remote": "s3://warp/store", "endpoint": "http://127.0.0.1:9000"}
        raise WarpError("this publish holds more than 98304 files", "Publish in your own process: warpctl publish",
                        code="PublishTooLarge")
    monkeypatch.setattr(client_module.Client, "call", refuse)
    argv = tmp_path / "argv.json"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "warpctl"
    fake.write_text("#!/usr/bin/python3\nimport json, os, sys\n"
                    "json.dump([sys.argv[1:], os.environ.get('WARP_SOCKET')], open(%r, 'w'))\n"
                    "print(json.dumps({'dataset': sys.argv[2], 'version': 'ab' * 32}))\n" % str(argv))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("WARP_REMOTE", "s3://another/store")  # warpd's store is meant, not this one
    result = wd.publish("pytest/huge", tables={"main": ["a.parquet"]}, artifacts={"images": "imgs/"},
                        bindings=["main.path=images:image"], branch="dev", shard_size=1 << 20,
                        allow_missing_members=True, shard_files=False, socket=str(tmp_path / "warpd.sock"))
    assert result == {"dataset": "pytest/huge", "version": "ab" * 32}
    args, socket = json.loads(argv.read_text())
    assert args == ["publish", "pytest/huge", "--json", "--table", "main=" + os.path.abspath("a.parquet"),
                    "--artifact", "images=" + os.path.abspath("imgs/"), "--bind", "main.path=images:image",
                    "--branch", "dev", "--shard-size", str(1 << 20), "--allow-missing-members",
                    "--no-shard-files", "--remote", "s3://warp/store", "--endpoint", "http://127.0.0.1:9000"]
    assert socket == str(tmp_path / "warpd.sock")
    # latest moves with a branch only when asked, as with warpctl's own --branch --set-latest
    wd.publish("pytest/huge", tables={"main": ["a.parquet"]}, branch="dev", set_latest=True,
               socket=str(tmp_path / "warpd.sock"))
    assert json.loads(argv.read_text())[0][4:] == ["main=" + os.path.abspath("a.parquet"), "--set-latest", "--branch",
                                                   "dev", "--remote", "s3://warp/store", "--endpoint",
                                                   "http://127.0.0.1:9000"]
    # No warpctl on PATH: warpd's refusal, saying where warpctl comes from.
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(WarpError) as e:
        wd.publish("pytest/huge", artifacts={"images": "imgs/"}, socket=str(tmp_path / "warpd.sock"))
    assert e.value.code == "PublishTooLarge" and "scripts/install" in e.value.next_step
