"""tensor-npy-planned: tensor-npy's picks, in its order, the .npy paths told to warpd first
(prefetch.order, as img-planned), on Warp only; its fetched/read figures as tensor-npy's. The
helper side (tensor_pass.py) runs against a fake warpd on a UNIX socket and .npy files in a
temporary directory."""
import json
import os
import socketserver
import tempfile
import threading
import types
import zlib

import pytest

import warpd_order
from warpbench import cli
from warpbench import loop as L
from warpbench import report as R
from warpbench.common import Clock
from warpbench.measures import Runner
from warpbench.systems import SYSTEMS
from warpbench.workloads import WORKLOADS, select

PICKS = [["part-00002.safetensors", "emb/17"], ["part-00000.safetensors", "emb/3"],
         ["part-00001.safetensors", "emb/9"], ["part-00000.safetensors", "emb/1"]]
PATHS = ["part-00002.tensors/emb/17.npy", "part-00000.tensors/emb/3.npy",
         "part-00001.tensors/emb/9.npy", "part-00000.tensors/emb/1.npy"]


# -- the registry and --only ---------------------------------------------------------------------

def test_the_workload_is_registered_beside_tensor_npy_with_its_units_systems_and_phases():
    w, npy = WORKLOADS["tensor-npy-planned"], WORKLOADS["tensor-npy"]
    names = list(WORKLOADS)
    assert names.index("tensor-npy-planned") == names.index("tensor-npy") + 1
    assert (w.unit, w.better, w.systems, w.phases, w.target) == (npy.unit, npy.better, npy.systems, npy.phases, npy.target)
    assert w.measure == Runner.w_tensor_npy_planned
    assert not w.fresh_warp and not w.needs and w.quick_phases is None


def test_only_accepts_it_alone_and_with_tensor_npy():
    args = cli.parse_args(["--only", "tensor-npy-planned"])
    assert [w.name for w in select(args.only)] == ["tensor-npy-planned"]
    assert [w.name for w in select("tensor-npy-planned,tensor-npy", quick=True)] == ["tensor-npy", "tensor-npy-planned"]


# -- the harness's requests ----------------------------------------------------------------------

class TensorServer:
    """The tensor helper (procs.LineServer) as the Runner uses it: records each request and
    answers as tensor_pass.py would for the facts' picks."""

    def __init__(self, facts):
        self.facts, self.requests, self.starts = facts, [], 0

    def start(self):
        self.starts += 1

    def ask(self, line, timeout):
        self.requests.append(json.loads(line))
        return {"tensors": len(self.facts["tensor_picks"]), "bytes": self.facts["tensor_bytes"], "seconds": 0.5,
                "checksum": self.facts["tensor_checksum"], "sum": 1.5}


class Sys:
    daemon_pid = None
    restarted = False
    force_restart = False
    missing = None

    def __init__(self, name, root):
        self.name, self.root = name, root

    def path(self, what):
        return os.path.join(self.root, what)

    def socket(self):
        return "/run/warpd.sock"

    def cold(self, target="data"):
        pass

    def warm(self):
        pass

    def stop(self):
        pass

    def snapshot(self):  # Warp's read counters: 1 MiB more fetched at each ask
        self.fetched = getattr(self, "fetched", 0) + (1 << 20)
        return {"read": {"bytes_fetched": self.fetched, "gets_issued": 1}}


def runner(picks=PICKS):
    r = object.__new__(Runner)  # no helper processes
    r.timeout = 60
    r.facts = {"tensor_picks": picks, "tensor_bytes": len(picks) * 1024, "tensor_checksum": 12345}
    r.tensor_server = TensorServer(r.facts)
    r.img_server = r.duck = None
    return r


def test_its_picks_and_roots_are_tensor_npys_and_only_warp_is_given_warpds_socket():
    r = runner()
    warp, local = Sys("warp", "/mnt/warp/bench/full"), Sys("local", "/data")
    for s in (warp, local):
        r.w_tensor_npy(s)
        value, extra = r.w_tensor_npy_planned(s)
        assert value == len(PICKS) / 0.5
        assert extra["bytes"] == len(PICKS) * 1024  # what Warp's fetched/read divides by
    npy_warp, planned_warp, npy_local, planned_local = r.tensor_server.requests
    assert planned_warp == dict(npy_warp, plan_socket="/run/warpd.sock")
    assert planned_warp["picks"] == npy_warp["picks"] == PICKS
    assert planned_warp["npy_root"] == planned_warp["st_root"] == "/mnt/warp/bench/full/tensors"
    assert planned_local == npy_local  # the local disk reads without a plan
    assert npy_local["npy_root"] == "/data/tensors-npy"
    # the loop starts this helper before each tensor-* measurement's window
    assert r.helper("tensor-npy-planned") is r.tensor_server and r.helper("seq-dd") is None


def test_its_read_counters_give_fetched_over_read_like_tensor_npy():
    facts_runner = runner()
    sysmap = {n: Sys(n, "/r") for n in SYSTEMS}
    for n in SYSTEMS:
        if n not in ("warp", "local"):
            sysmap[n].missing = "not selected (--systems)"
    env = types.SimpleNamespace(network=None, clock=Clock(), reg=types.SimpleNamespace(procs={}))
    m = L.Measurements(env, facts_runner, sysmap, 1, 30.0)
    m.run([WORKLOADS["tensor-npy-planned"]])
    assert m.warp_last[("tensor-npy-planned", "cold")] == {"bytes_fetched": 1 << 20, "gets_issued": 0,
                                                          "client_bytes": len(PICKS) * 1024}
    assert ("tensor-npy-planned", "warm", "local") in m.res.vals
    meta = {"warp_read_counters": {f"{w}/{ph}": v for (w, ph), v in m.warp_last.items()}}
    text, _ = R.render(dict(_meta(), **meta), m.res, {}, {}, [WORKLOADS["tensor-npy-planned"]],
                       {n: types.SimpleNamespace(missing=s.missing) for n, s in sysmap.items()})
    assert "| tensor-npy-planned | cold | 0 | 1.0 | 0.0 | 256.00 |" in text


def _meta():
    return {"date": "d", "commit": "c", "scale": "quick", "runs": 1, "cpus": 2, "kernel": "6.1", "mem_gib": 8,
            "load_start": [0, 0, 0], "load_end": [0, 0, 0], "elapsed_s": 1, "page_cache_dropped": True,
            "rclone_vfs_cache_mode": "full", "missing": {}, "network": None,
            "data": {"big_bytes": 1, "table_shards": 1, "table_rows": 1, "images": 1, "image_bytes": 1,
                     "tree_files": 1, "tensors": 4, "tensor_files": 3}}


# -- the helper: the plan it tells warpd, then the reads -----------------------------------------

class FakeWarpd(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """warpd's control socket, for prefetch.order only: records each request, answers ok."""
    daemon_threads = True

    def __init__(self, path):
        self.requests = []

        server = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                for line in self.rfile:
                    q = json.loads(line)
                    server.requests.append(q)
                    a = q["args"]
                    result = ({"plan": a["plan"], "part": a["part"]} if a["more"] else
                              {"plan": a["plan"], "root": a["root"], "members": 0})
                    self.wfile.write((json.dumps({"id": q["id"], "ok": True, "result": result}) + "\n").encode())
                    self.wfile.flush()

        super().__init__(path, Handler)


@pytest.fixture
def warpd():
    with tempfile.TemporaryDirectory(prefix="wb") as d:  # short: a UNIX socket path is at most 107 bytes
        server = FakeWarpd(os.path.join(d, "warpd.sock"))
        t = threading.Thread(target=server.serve_forever, daemon=True)
        t.start()
        try:
            yield server
        finally:
            server.shutdown()
            server.server_close()


def sent_order(requests):
    """(root, paths in order) of one prefetch.order, its parts checked and joined."""
    assert [q["op"] for q in requests] == ["prefetch.order"] * len(requests)
    args = [q["args"] for q in requests]
    assert [a["part"] for a in args] == list(range(len(args)))
    assert [a["more"] for a in args] == [True] * (len(args) - 1) + [False]
    assert {a["plan"] for a in args} == {"bench"}  # img-planned's plan name
    assert len({a["root"] for a in args}) == 1
    return args[0]["root"], [p for a in args for p in a["paths"]]


def test_npy_paths_are_the_stems_tensor_folders_in_the_picks_order():
    tp = pytest.importorskip("tensor_pass")  # numpy
    assert tp.npy_paths(PICKS) == PATHS


def test_a_planned_pass_tells_warpd_the_npy_paths_in_order_under_its_root_then_reads_them(warpd, tmp_path):
    np = pytest.importorskip("numpy")
    tp = pytest.importorskip("tensor_pass")
    root = tmp_path / "tensors"
    crc = 0
    for i, (file, key) in enumerate(PICKS):
        values = np.arange(8, dtype="<f4") + i
        path = root / (file[:-len(".safetensors")] + ".tensors") / (key + ".npy")
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, values)
        crc = (crc + zlib.crc32(values.tobytes())) & 0xFFFFFFFFFFFF
    req = {"mode": "npy", "st_root": str(root), "npy_root": str(root), "picks": PICKS}
    unplanned = tp.one_pass(req)
    assert warpd.requests == []
    planned = tp.one_pass(dict(req, plan_socket=warpd.server_address))
    assert sent_order(warpd.requests) == (str(root), PATHS)
    for j in (planned, unplanned):
        assert (j["tensors"], j["bytes"], j["checksum"]) == (len(PICKS), len(PICKS) * 32, crc)
    # the paths sent are the files read, relative to the root sent
    assert all((root / p).is_file() for p in sent_order(warpd.requests)[1])


def test_a_plan_is_only_for_npy_reads(warpd):
    tp = pytest.importorskip("tensor_pass")
    with pytest.raises(ValueError):
        tp.one_pass({"mode": "mmap", "st_root": "/x", "npy_root": "/x", "picks": PICKS,
                     "plan_socket": warpd.server_address})
    assert warpd.requests == []


def test_a_long_order_goes_in_parts_that_join_to_the_order(warpd):
    paths = [f"part-{i % 4:05d}.tensors/emb/{i}.npy".ljust(60, "x") for i in range(20_000)]  # ~1.3 MB
    result = warpd_order.tell_warpd(warpd.server_address, "/mnt/warp/bench/full/tensors", paths)
    assert result["root"] == "/mnt/warp/bench/full/tensors"
    assert len(warpd.requests) == 3
    assert all(len(json.dumps(q)) < 1 << 20 for q in warpd.requests)  # warpd's request line limit
    assert sent_order(warpd.requests) == ("/mnt/warp/bench/full/tensors", paths)
