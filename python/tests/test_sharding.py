"""The one row split (issue 23 item 3): the Python API, `warpctl stream --shard` and the
`warpctl init` stub give identical row sets, and for world sizes 1-16 with DataLoader workers
every row is read exactly once."""

import json
import pytest

import warpdata as wd
from conftest import DATASET, FILE_ROWS

TOTAL = sum(FILE_ROWS)


def ids(table, shard, batch_size=16):
    out = []
    for b in table.batch_dicts(batch_size, columns=["id"], shard=shard):
        out.extend(b["id"])
    return out


def test_every_row_exactly_once_for_world_sizes_1_to_16_with_workers(ds):
    table = ds.table("main")
    for world in range(1, 17):
        by_rank = [ids(table, (rank, world)) for rank in range(world)]
        seen = [i for rows in by_rank for i in rows]
        assert sorted(seen) == list(range(TOTAL)), ("world", world)
        for rank in range(world):
            parts = [ids(table, (rank, world, k, 3)) for k in range(3)]
            # Three workers split the rank's rows: each one contiguous run, in order, together all of them.
            assert [i for p in parts for i in p] == by_rank[rank], (world, rank)


def test_whole_files_when_they_split_evenly(ds):
    # 4 files (37, 50, 13, 60 rows): 2 ranks get files 0-1 (87 rows) and 2-3 (73 rows).
    table = ds.table("main")
    assert ids(table, (0, 2)) == list(range(0, 87))
    assert ids(table, (1, 2)) == list(range(87, 160))
    assert table.last_result["range"] == {"start": 87, "end": 160, "how": "whole files"}
    # 3 ranks: files 0 / 1-2 / 3 (37, 63, 60 rows: within 25% of the 54-row share).
    assert ids(table, (1, 3)) == list(range(37, 100))
    # 4 ranks: by files one rank would get 60 rows, 50% over its 40: quarters of the rows instead.
    assert ids(table, (3, 4)) == list(range(120, 160))
    assert table.last_result["range"]["how"] == "row range"


def test_stream_and_python_api_split_alike(warp, ds):
    table = ds.table("main")
    # One JVM per run: a few cases that cover whole files (2, 3 ranks) and row ranges (4, 16 ranks).
    for rank, world in ((0, 2), (1, 2), (1, 3), (3, 4), (7, 16)):
        p = warp.warpctl("stream", ds.pinned, "--columns", "id", "--shard", "%d/%d" % (rank, world))
        streamed = [json.loads(line)["id"] for line in p.stdout.decode().splitlines()]
        assert streamed == ids(table, (rank, world)), (rank, world)


def test_shard_auto_reads_rank_and_world_size(ds, monkeypatch):
    table = ds.table("main")
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "5")
    assert ids(table, "auto") == ids(table, (2, 5))


def test_torch_dataloader_workers_read_every_row_once(ds):
    torch = pytest.importorskip("torch")
    for world in (1, 2, 3, 7, 16):
        seen = []
        for rank in range(world):
            loader = ds.to_torch(batch_size=8, shard=(rank, world), columns=["id"], num_workers=3, even=False)
            for batch in loader:
                assert isinstance(batch["id"], torch.Tensor)
                seen.extend(int(i) for i in batch["id"])
        assert sorted(seen) == list(range(TOTAL)), world


def test_torch_ranks_make_as_many_batches_by_default_and_read_every_row(ds):
    """Distributed training runs a step per batch on every rank, and a rank with fewer batches left
    the others waiting at the end of the epoch (audit 24: 120 against 81 batches, a hang). By default
    on more than one rank, every rank makes as many batches (a rank one row short reads its first row
    again, as DistributedSampler pads), with or without workers."""
    pytest.importorskip("torch")
    for world in (2, 3, 7):
        for workers in (0, 3):
            counts, seen = [], []
            for rank in range(world):
                loader = ds.to_torch(batch_size=8, shard=(rank, world), columns=["id"], num_workers=workers)
                batches = [[int(i) for i in b["id"]] for b in loader]
                counts.append((len(batches), sum(len(b) for b in batches)))
                seen.extend(i for b in batches for i in b)
            assert len(set(counts)) == 1, (world, workers, counts)
            assert counts[0][1] == -(-TOTAL // world)
            assert sorted(set(seen)) == list(range(TOTAL)), (world, workers)
            assert len(seen) - TOTAL < world
    # drop_last: no short batch; and the ranks still agree.
    full = [[len(b["id"]) for b in ds.to_torch(batch_size=8, shard=(r, 3), columns=["id"], drop_last=True)]
            for r in range(3)]
    assert all(n == 8 for ns in full for n in ns) and len({len(ns) for ns in full}) == 1, full


DDP_SCRIPT = """
import datetime, sys, torch, torch.distributed as dist
import warpdata as wd
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
loader = wd.dataset(sys.argv[1]).to_torch(batch_size=16, columns=["id"], num_workers=int(sys.argv[2]))
model = DDP(torch.nn.Linear(1, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.001)
for epoch in range(2):
    steps = 0
    for b in loader:
        loss = model(b["id"].float().unsqueeze(1)).mean()
        opt.zero_grad(); loss.backward(); opt.step(); steps += 1
    print("epoch", epoch, "steps", steps, flush=True)
dist.barrier()
print("done", flush=True)
"""


def test_a_ddp_job_over_to_torch_defaults_runs_every_epoch_to_the_end(ds, tmp_path):
    """audit 24's job, for real: two gloo ranks training on to_torch() with its defaults (RANK and
    WORLD_SIZE from the environment, as torchrun sets them). With unequal batches rank 0's last
    steps all-reduced with rank 1's next epoch and the job then hung until the collective timeout."""
    pytest.importorskip("torch")
    import os
    import socket
    import subprocess
    import sys
    script = tmp_path / "ddp.py"
    script.write_text(DDP_SCRIPT)
    for workers in ("0", "2"):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = []
        for rank in range(3):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE="3",
                       PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(wd.__file__))))
            procs.append(subprocess.Popen([sys.executable, str(script), ds.pinned, workers], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        outs = []
        try:
            for p in procs:
                outs.append(p.communicate(timeout=180)[0].decode())
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        for p, out in zip(procs, outs):
            assert p.returncode == 0 and "done" in out, out
        steps = {tuple(line for line in out.splitlines() if line.startswith("epoch")) for out in outs}
        assert len(steps) == 1, outs


def test_make_loader_ranks_hold_as_many_rows(ds):
    pytest.importorskip("torch")
    from warpdata.loader import make_loader
    for world in (2, 3):
        lengths = [len(make_loader(ds, "main", batch_size=4, rank=r, world_size=world, columns=["id"]))
                   for r in range(world)]
        assert lengths == [-(-(-(-TOTAL // world)) // 4)] * world, lengths
        rows = [len(make_loader(ds, "main", rank=r, world_size=world, columns=["id"]).dataset) for r in range(world)]
        assert rows == [-(-TOTAL // world)] * world, rows
    once = [len(make_loader(ds, "main", rank=r, world_size=3, columns=["id"], even=False).dataset) for r in range(3)]
    assert sum(once) == TOTAL


def test_ranks_seeded_alike_do_not_shuffle_alike(ds):
    """audit 24: with one seed on every rank (DDP's usual setup), each rank's order was the same
    permutation shifted by its first row."""
    torch = pytest.importorskip("torch")
    orders = []
    for rank in range(2):
        torch.manual_seed(7)
        loader = ds.to_torch(batch_size=8, shard=(rank, 2), columns=["id"], shuffle=True, shuffle_buffer=32)
        ids_ = [int(i) for b in loader for i in b["id"]]
        orders.append([i - min(ids_) for i in ids_])
    assert orders[0] != orders[1]


def test_member_batches_of_an_artifact_that_is_not_there_or_an_absent_mount_say_so(warp, ds):
    """audit 24: both yielded no batch and no error, so training ran epochs of no step."""
    with pytest.raises(wd.ArtifactNotFoundError) as e:
        list(wd.member_batches(ds, "imagez"))
    assert "images" in e.value.next_step
    away = wd.dataset(ds.pinned, mount=str(warp.mount) + "-not-there")
    with pytest.raises(wd.MountUnavailableError):
        list(wd.member_batches(away, "images"))


def test_member_batches_of_a_mount_that_cannot_be_listed_is_a_typed_error_not_an_empty_epoch(ds, monkeypatch):
    """os.walk swallowed a folder it could not list: a mount left by a warpd killed -9 (ENOTCONN)
    gave an epoch of no batch, and a subfolder warpd could not serve (EIO) was left out."""
    import errno
    import os
    scandir = os.scandir
    base = os.path.join(ds.root, "images")
    for failing, err, typed in ((base, errno.ENOTCONN, wd.MountUnavailableError),
                                (os.path.join(base, "dog"), errno.EIO, wd.StoreError)):
        def refusing(path=".", failing=failing, err=err):
            if os.fspath(path) == failing:
                raise OSError(err, os.strerror(err), path)
            return scandir(path)
        monkeypatch.setattr(os, "scandir", refusing)
        with pytest.raises(typed) as e:
            next(wd.member_batches(ds, "images", shard=None))
        assert failing in e.value.message and "warpctl status" in e.value.next_step
    monkeypatch.setattr(os, "scandir", scandir)
    assert sum(len(b["path"]) for b in wd.member_batches(ds, "images", shard=None)) == TOTAL


def test_member_batches_after_warpd_was_killed_is_a_mount_unavailable_error(warp):
    """A warpd killed -9 leaves its mount behind ('Transport endpoint is not connected')."""
    import os
    import shutil
    import signal
    import tempfile
    from conftest import Warp, mounted
    base = tempfile.mkdtemp(prefix="warpdata-killed-")
    killed = Warp(base)
    try:
        images = os.path.join(base, "images", "a")
        os.makedirs(images)
        for i in range(3):
            with open(os.path.join(images, "%d.bin" % i), "wb") as f:
                f.write(bytes([i]) * 10)
        killed.warpctl("publish", "pytest/killed", "--artifact", "images=" + os.path.dirname(images), "--set-latest")
        killed.start_warpd()
        gone = wd.dataset("pytest/killed", socket=killed.socket, mount=killed.mount)
        refs = [r for b in wd.member_batches(gone, "images", shard=None) for r in b["path"]]
        assert [r.read_bytes() for r in refs[:2]] == [bytes([0]) * 10, bytes([1]) * 10]  # the last one unread
        os.killpg(killed.proc.pid, signal.SIGKILL)
        killed.proc.wait(30)
        with pytest.raises(wd.MountUnavailableError) as e:
            next(wd.member_batches(gone, "images", shard=None))
        assert "not connected" in e.value.message and "fusermount -u" in e.value.next_step
        with pytest.raises(wd.MountUnavailableError) as e:  # a ref made before (a plain OSError 107)
            refs[2].read_bytes()
        assert "fusermount -u %s" % killed.mount in e.value.next_step
    finally:
        killed.stop()
        if not mounted(killed.mount):
            shutil.rmtree(base, ignore_errors=True)


def _write_safetensors(path, tensors):
    """A safetensors file of float32 tensors {key: [values]}."""
    import json
    import struct
    header, data = {}, b""
    for key, values in tensors.items():
        raw = struct.pack("<%df" % len(values), *values)
        header[key] = {"dtype": "F32", "shape": [len(values)], "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def test_member_batches_of_safetensors_are_its_members_not_the_mounts_tensor_folders(warp, tmp_path):
    """The mount shows F.tensors/KEY.npy beside each F.safetensors; member_batches yielded those
    .npy files as members too (19 paths for 5 members)."""
    import os
    src = tmp_path / "emb"
    (src / "sub").mkdir(parents=True)
    files = ["part-00000.safetensors", "sub/part-00001.safetensors"]
    for n, f in enumerate(files):
        _write_safetensors(src / f, {"emb/%d" % k: [float(n), float(k)] for k in range(3)})
    shards = [{"file": f, "samples_count": 3, "bytes": os.path.getsize(src / f)} for f in files]
    (src / "dataset_manifest.json").write_text(json.dumps({
        "format_version": "1", "total_samples": 6, "total_bytes": sum(s["bytes"] for s in shards), "shards": shards}))
    wd.publish("pytest/emb", artifacts={"emb": str(src)})
    emb = wd.dataset("pytest/emb")
    assert emb.artifacts["emb"]["kind"] == "safetensors"
    # what publish's check learned, as warpctl inspect shows it (audit 40: Python had no way to it)
    facts = emb.artifacts["emb"]["facts"]
    assert facts["format"] == "safetensors" and facts["files"] == "2" and facts["tensors"] == "6", facts
    assert facts["dtypes"].startswith("F"), facts
    # the mount's tensor folders are there, beside each file
    assert sorted(os.listdir(os.path.join(emb.root, "emb", "part-00000.tensors", "emb"))) == ["0.npy", "1.npy", "2.npy"]
    assert os.path.isdir(os.path.join(emb.root, "emb", "sub", "part-00001.tensors"))
    paths = [r.path for b in wd.member_batches(emb, "emb", shard=None) for r in b["path"]]
    assert paths == ["dataset_manifest.json", "part-00000.safetensors", "sub/part-00001.safetensors"]
    assert len(paths) == emb.artifacts["emb"]["members"]


def test_torch_dataloader_workers_send_refs_of_bound_columns(ds, warp):
    """The README's to_torch(num_workers=4) over every column: the image and audio refs of bound
    columns cross from the workers to the main process (they were not picklable: every batch was
    dropped by the workers' queue feeder, and the epoch was silently empty)."""
    pytest.importorskip("torch")
    import os
    seen = []
    # timeout: a batch lost by a worker must fail the test, not hang it (it hung before the fix).
    for batch in ds.to_torch(batch_size=16, shard=(0, 1), num_workers=3, timeout=120):
        for i, ref in zip(batch["id"], batch["path"]):
            seen.append(int(i))
            if int(i) % 50 == 0:
                with open(os.path.join(warp.source, "images", ref.path), "rb") as f:
                    assert ref.read_bytes() == f.read()
    assert sorted(seen) == list(range(TOTAL))


def test_init_stub_splits_as_the_api(warp, ds, tmp_path, monkeypatch):
    """The stub `warpctl init` writes (seed 000, 9.3) imports warpdata and splits by RANK/WORLD_SIZE alike."""
    import importlib.util
    stub = tmp_path / "pets_loader.py"
    warp.warpctl("init", DATASET, "-o", str(stub), "--mount", warp.mount)
    text = stub.read_text()
    assert "import warpdata as wd" in text and '"%s@%s"' % (DATASET, ds.version) in text
    spec = importlib.util.spec_from_file_location("pets_loader", str(stub))
    loader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loader)
    table = ds.table("main")
    for world in range(1, 17):
        seen = []
        for rank in range(world):
            monkeypatch.setenv("RANK", str(rank))
            monkeypatch.setenv("WORLD_SIZE", str(world))
            got = [int(i) for b in loader.train_stream(batch_size=32) for i in b["id"]]
            assert got == ids(table, (rank, world)), (rank, world)
            seen.extend(got)
        assert sorted(seen) == list(range(TOTAL))


def test_init_stub_of_an_artifact_only_dataset_splits_its_members_by_rank(warp, tmp_path, monkeypatch):
    """Without a table the stub's rows are the artifact's members: RANK/WORLD_SIZE split them too
    (every rank got every member before), and make_loader() says it needs a table."""
    import importlib.util
    import os
    warp.warpctl("publish", "pytest/media", "--artifact", "images=" + os.path.join(warp.source, "images"),
                 "--set-latest")
    stub = tmp_path / "media_loader.py"
    warp.warpctl("init", "pytest/media", "-o", str(stub), "--mount", warp.mount)
    spec = importlib.util.spec_from_file_location("media_loader", str(stub))
    loader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loader)
    expected = sorted(os.path.relpath(os.path.join(d, f), os.path.join(warp.source, "images"))
                      for d, _, fs in os.walk(os.path.join(warp.source, "images")) for f in fs)
    for world in (1, 2, 3, 7):
        seen = []
        for rank in range(world):
            monkeypatch.setenv("RANK", str(rank))
            monkeypatch.setenv("WORLD_SIZE", str(world))
            got = [ref.path for b in loader.train_stream(batch_size=16) for ref in b["path"]]
            seen.extend(got)
        assert sorted(seen) == expected, world
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    first = [ref for b in loader.train_stream(batch_size=16) for ref in b["path"]][0]
    with open(os.path.join(warp.source, "images", first.path), "rb") as f:
        assert first.read_bytes() == f.read()
    with pytest.raises(wd.BadRequestError, match="only artifacts"):
        loader.make_loader(batch_size=8)


def test_init_stub_of_webdataset_shards_yields_whole_samples_split_by_rank(warp, tmp_path, monkeypatch):
    """WebDataset shards published as tars, no table: a row is a sample (the files sharing a key),
    and ranks split samples, never one sample's files (audit 22: .jpg on rank 1, .cls on rank 0)."""
    import importlib.util
    import io
    import os
    import tarfile
    shards = tmp_path / "shards"
    shards.mkdir()
    keys = []
    for s in range(3):
        with tarfile.open(str(shards / ("shard-%06d.tar" % s)), "w") as t:
            for i in range(7):
                key = "%06d" % (s * 7 + i)
                keys.append(key)
                for ext, data in (("jpg", b"jpeg " + key.encode()), ("txt", b"caption " + key.encode()),
                                  ("cls", str(i % 2).encode())):
                    info = tarfile.TarInfo("%s.%s" % (key, ext))
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
    warp.warpctl("publish", "pytest/wds", "--artifact", "images=%s/*.tar" % shards, "--set-latest")
    stub = tmp_path / "wds_loader.py"
    warp.warpctl("init", "pytest/wds", "-o", str(stub), "--mount", warp.mount)
    spec = importlib.util.spec_from_file_location("wds_loader", str(stub))
    loader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loader)
    for world in (1, 2, 4):
        seen = []
        for rank in range(world):
            monkeypatch.setenv("RANK", str(rank))
            monkeypatch.setenv("WORLD_SIZE", str(world))
            for batch in loader.train_stream(batch_size=5):
                assert sorted(batch) == ["__key__", "cls", "jpg", "txt"]
                for k, jpg, txt in zip(batch["__key__"], batch["jpg"], batch["txt"]):
                    assert jpg.read_bytes() == b"jpeg " + k.encode() and txt.read_bytes() == b"caption " + k.encode()
                seen.extend(batch["__key__"])
        assert sorted(seen) == sorted(keys), world
    # even=True (distributed training): as many samples, so batches, on every rank (audit 25: 31 and
    # 32 batches on 4 ranks, and the DDP job hung).
    for world in (2, 4):
        counts, seen = [], set()
        for rank in range(world):
            monkeypatch.setenv("RANK", str(rank))
            monkeypatch.setenv("WORLD_SIZE", str(world))
            batches = list(loader.train_stream(batch_size=2, even=True))
            counts.append((len(batches), sum(len(b["__key__"]) for b in batches)))
            seen.update(k for b in batches for k in b["__key__"])
        assert counts == [counts[0]] * world and counts[0][1] == -(-len(keys) // world), counts
        assert seen == set(keys)


def test_an_even_split_with_a_filter_warns_that_ranks_may_differ(ds):
    """audit 25: batch_dicts(even=True, where=...) gave ranks 26, 25 and 26 rows and said nothing
    (to_torch and make_loader warned)."""
    table = ds.table("main")
    with pytest.warns(UserWarning, match="publish the filtered rows as a view"):
        list(table.batch_dicts(10, shard=(0, 3), even=True, where="id % 2 = 0"))


def test_an_even_split_a_warpd_ignored_is_an_error_not_a_hang(ds, monkeypatch):
    """An older warpd drops the `even` it does not know and splits as before: ranks would make
    different numbers of batches and a DDP job would hang at the epoch's end. The reply says how
    it split, and warpdata refuses a split that is not the even one it asked for."""
    table = ds.table("main")
    list(table.batch_dicts(10, shard=(0, 3), even=True))
    assert table.last_result["range"]["how"] == "even"
    real = ds._client.stream

    def older_warpd(op, args, **kw):
        yield from real(op, {k: v for k, v in args.items() if k != "even"}, **kw)
    monkeypatch.setattr(ds._client, "stream", older_warpd)
    with pytest.raises(wd.WarpError) as e:
        list(table.batch_dicts(10, shard=(0, 3), even=True))
    assert e.value.code == "EvenSplitUnsupported" and "upgrade warpd" in e.value.next_step


def test_a_safetensors_publish_from_a_client_before_format_5_is_noted(warp, tmp_path):
    """Format 5 (deflated headers beside the tensor hashes): a warpdata or warpctl of the release
    before names tensor_hashes but not the format it reads, and would get, silently, a version
    its own release refuses; warpd notes it. This release's clients say they read 5."""
    import os
    src = tmp_path / "emb5"
    src.mkdir()
    _write_safetensors(src / "part-00000.safetensors", {"emb/%d" % k: [float(k), 1.0] for k in range(4)})
    (src / "dataset_manifest.json").write_text(json.dumps({
        "format_version": "1", "total_samples": 4, "total_bytes": os.path.getsize(src / "part-00000.safetensors"),
        "shards": [{"file": "part-00000.safetensors", "samples_count": 4,
                    "bytes": os.path.getsize(src / "part-00000.safetensors")}]}))
    older = wd.Client(warp.socket).call("publish", {"dataset": "pytest/emb5old", "artifacts": {"emb": [str(src)]},
                                                    "set_latest": True, "shard_files": True, "tensor_hashes": True})
    assert older["format_version"] == 5, older
    assert any("manifest format 5" in n and "--no-daemon" in n for n in older["notes"]), older["notes"]
    newer = wd.publish("pytest/emb5new", artifacts={"emb": str(src)})
    assert newer["format_version"] == 5, newer
    assert not any("manifest format" in n for n in newer["notes"]), newer["notes"]
    plain = wd.publish("pytest/emb5plain", artifacts={"emb": str(src)}, tensor_hashes=False)
    assert plain["format_version"] == 1, plain
    # As the release before: a shard under 64 MiB gets no hashes, and the version its readers read.
    before = wd.publish("pytest/emb5before", artifacts={"emb": str(src)}, tensor_headers=False)
    assert before["format_version"] == 1, before
    manifest = json.loads(open(os.path.join(warp.mount, "pytest", "emb5before@" + before["version"], ".warp",
                                            "manifest.json")).read())
    assert "tensor_headers" not in manifest["artifacts"]["emb"], manifest
