"""ds.to_torch() and the `warpctl init` stub's make_loader() as training code uses them: workers
started with spawn, one dtype per column in every batch, a new shuffled order every epoch, and
DataLoader options passed through (audit 6)."""

import os

import pytest

import warpdata as wd
from conftest import DATASET, FILE_ROWS

TOTAL = sum(FILE_ROWS)
NULLS = "pytest/nulls"


@pytest.fixture(scope="module")
def nulls(warp):
    """A table written by DuckDB with a NULL in a DOUBLE column (row 15) and in a BIGINT one (row 25)."""
    out = os.path.join(warp.source, "nulls.parquet")
    warp.sql("COPY (SELECT i::BIGINT AS id, CASE WHEN i = 15 THEN NULL ELSE i / 3 END::DOUBLE AS y,"
             " (i * 0.5)::FLOAT AS f, CASE WHEN i = 25 THEN NULL ELSE i * 10 END::BIGINT AS label,"
             " (i %% 2 = 0) AS even FROM range(40) t(i) ORDER BY i) TO '%s' (FORMAT PARQUET)" % out)
    warp.warpctl("publish", NULLS, "--table", "main=" + out, "--set-latest")
    return wd.dataset(NULLS)


def test_every_batch_has_the_schemas_dtype_and_a_null_double_is_nan(nulls):
    torch = pytest.importorskip("torch")
    batches = list(nulls.to_torch(batch_size=10, shard=(0, 1), columns=["id", "y", "f", "even"]))
    assert len(batches) == 4
    for b in batches:
        # Before: the batch with the NULL gave y as a list, and DOUBLE came as float32.
        assert b["id"].dtype == torch.int64
        assert b["y"].dtype == torch.float64
        assert b["f"].dtype == torch.float32
        assert b["even"].dtype == torch.bool
    y = torch.cat([b["y"] for b in batches])
    assert torch.isnan(y[15]) and int(torch.isnan(y).sum()) == 1
    assert y[1].item() == 1 / 3  # every digit of the DOUBLE


def test_a_null_in_an_integer_column_names_the_column_and_what_to_do(nulls):
    pytest.importorskip("torch")
    with pytest.raises(wd.BadRequestError, match="'label'") as e:
        list(nulls.to_torch(batch_size=10, shard=(0, 1), columns=["id", "label"]))
    assert "IS NOT NULL" in e.value.next_step
    got = [int(i) for b in nulls.to_torch(batch_size=10, shard=(0, 1), columns=["label"], where="label IS NOT NULL")
           for i in b["label"]]
    assert len(got) == 39


def test_workers_started_with_spawn_read_every_row_once(ds):
    """to_torch's dataset pickles: with spawn (CUDA jobs, macOS) and forkserver it failed at the
    first batch ("Can't pickle local object 'iterable.<locals>.WarpBatches'")."""
    torch = pytest.importorskip("torch")
    for context in ("spawn", "forkserver"):
        seen = []
        for batch in ds.to_torch(batch_size=16, shard=(0, 1), columns=["id"], num_workers=2,
                                 multiprocessing_context=context, timeout=120):
            assert isinstance(batch["id"], torch.Tensor)
            seen.extend(int(i) for i in batch["id"])
        assert sorted(seen) == list(range(TOTAL)), context


def test_shuffle_gives_every_row_once_in_a_new_order_each_epoch(ds):
    pytest.importorskip("torch")
    for workers, persistent in ((0, False), (2, True), (2, False)):
        loader = ds.to_torch(batch_size=8, shard=(0, 1), columns=["id"], shuffle=True, shuffle_buffer=32,
                             num_workers=workers, persistent_workers=persistent)
        epochs = [[int(i) for b in loader for i in b["id"]] for _ in range(2)]
        for order in epochs:
            assert sorted(order) == list(range(TOTAL)), (workers, persistent)
            assert order != list(range(TOTAL)), (workers, persistent)
        assert epochs[0] != epochs[1], (workers, persistent)


def test_to_torch_refuses_a_sampler_saying_why(ds):
    pytest.importorskip("torch")
    with pytest.raises(wd.BadRequestError, match="sampler"):
        ds.to_torch(batch_size=8, sampler=[0, 1])


def test_the_init_stubs_make_loader_passes_dataloader_options_through(warp, ds, tmp_path):
    """make_loader(persistent_workers=..., multiprocessing_context=...) went to WarpDataset, which
    refused them ("unexpected keyword argument")."""
    pytest.importorskip("torch")
    import importlib.util
    stub = tmp_path / "pets_loader.py"
    warp.warpctl("init", DATASET, "-o", str(stub), "--mount", warp.mount)
    spec = importlib.util.spec_from_file_location("pets_loader", str(stub))
    loader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loader)
    dl = loader.make_loader(batch_size=16, num_workers=2, shuffle=True, columns=["id", "path"],
                            persistent_workers=True, drop_last=False, timeout=120)
    assert dl.persistent_workers
    orders = []
    for epoch in range(2):
        dl.sampler.set_epoch(epoch)
        orders.append([int(i) for b in dl for i in b["id"]])
    for order in orders:
        assert sorted(order) == list(range(TOTAL))
    assert orders[0] != orders[1]


def test_make_loader_collates_each_column_by_its_schema_type_in_every_batch(nulls):
    """make_loader's collate made y a tensor in three batches and a list in the one with its NULL,
    and gave BOOLEAN as lists: a column's batches now take its schema's dtype, as to_torch's do."""
    torch = pytest.importorskip("torch")
    from warpdata.loader import make_loader
    batches = list(make_loader(nulls, batch_size=10, columns=["id", "y", "f", "even"], rank=0, world_size=1,
                               prefetch_order=False))
    assert len(batches) == 4
    for b in batches:
        assert b["id"].dtype == torch.int64 and b["y"].dtype == torch.float64
        assert b["f"].dtype == torch.float32 and b["even"].dtype == torch.bool
    y = torch.cat([b["y"] for b in batches])
    assert torch.isnan(y[15]) and int(torch.isnan(y).sum()) == 1
    with pytest.raises(wd.BadRequestError, match="'label'") as e:
        list(make_loader(nulls, batch_size=10, columns=["id", "label"], rank=0, world_size=1, prefetch_order=False))
    assert "IS NOT NULL" in e.value.next_step and "collate_fn" in e.value.next_step


def test_make_loader_keeps_text_columns_lists_and_collates_a_transforms_keys_by_value(ds):
    pytest.importorskip("torch")
    from warpdata.loader import make_loader
    loader = make_loader(ds, batch_size=7, columns=["id", "note"], rank=0, world_size=1, prefetch_order=False,
                         transform=lambda row: dict(row, twice=row["id"] * 2))
    for b in loader:
        assert isinstance(b["note"], list)  # VARCHAR with NULLs in some batches: a list in all of them
        assert b["twice"].tolist() == [2 * i for i in b["id"].tolist()]


def test_make_loader_stacks_a_numeric_column_a_transform_made_tensors(ds):
    """A transform that one-hot encodes a numeric column got a BadRequestError from the schema rule:
    its tensors are stacked, as torch's default_collate would."""
    torch = pytest.importorskip("torch")
    from warpdata.loader import make_loader
    loader = make_loader(ds, batch_size=7, columns=["id"], rank=0, world_size=1, prefetch_order=False,
                         transform=lambda row: dict(row, id=torch.nn.functional.one_hot(torch.tensor(row["id"] % 3), 3)))
    batches = list(loader)
    assert batches and all(b["id"].shape == (len(b["id"]), 3) for b in batches)
    assert all(int(b["id"].sum()) == len(b["id"]) for b in batches)


def test_tell_warpd_asks_warpd_for_blocks_or_files_and_refuses_anything_else(ds):
    """Issue 26: a reader told ahead may ask warpd for each file on its own (the fewest bytes) or
    for the blocks (the fewest GETs); warpd says which it does."""
    from conftest import expected_row
    from warpdata.loader import EpochOrder, tell_warpd
    paths = ["images/" + expected_row(i)["path"] for i in range(6)]
    assert tell_warpd(ds, paths, plan="pytest fetch", fetch="files")["fetches"] == "files"
    assert tell_warpd(ds, paths, plan="pytest fetch", fetch="blocks")["fetches"] == "blocks"
    assert tell_warpd(ds, [], plan="pytest fetch")["stopped"] is True
    with pytest.raises(wd.BadRequestError) as e:
        tell_warpd(ds, paths, fetch="some")
    assert "'blocks'" in e.value.next_step
    with pytest.raises(wd.BadRequestError):
        EpochOrder(None, prefetch_order="some")
