"""The registry of workloads: one Workload per row group of the table, in the order they run and
are shown.

To add a workload (or a family of them, e.g. a new kind of reader): write its measurement, a
function (runner, system) -> (value, extra) (a Runner method in measures.py, or a module of its
own), and add a Workload to REGISTRY below, naming the systems it runs on and its phases. The
run loop (run.py), the table and the JSON (report.py) take everything else from the Workload.
"""
from dataclasses import dataclass, replace

from .common import BenchError
from .measures import Runner as R

ALL = ("warp", "s3fs", "rclone", "local")  # the mounts and the local disk


@dataclass(frozen=True)
class Workload:
    name: str
    label: str            # the table's first column
    unit: str             # MB/s, files/s, s, ms, rows/s, tensors/s
    better: str           # "hi": higher is better (↑), "lo": lower is better (↓)
    systems: tuple        # systems it runs on (names from systems.SYSTEMS)
    phases: tuple         # ("cold",) or ("cold", "warm")
    measure: object       # (runner, system) -> (value, extra dict)
    target: str = "data"  # the peers' bucket it reads: "data" or "tree" (the wide tree's own)
    fresh_warp: bool = False   # Warp is restarted for its cold phase (JVM start-up measured)
    needs: str = None          # a tool it runs; without it the cells say MISSING
    quick_phases: tuple = None  # phases under --quick, when fewer


REGISTRY = [
    Workload("seq-dd", "Sequential read of the big file, dd bs=4M", "MB/s", "hi",
             ("warp", "s3fs", "rclone", "local", "rawget", "getsha", "pget"), ("cold", "warm"), R.w_seq_dd),
    Workload("seq-fio", "Sequential read of the big file, fio psync bs=4M", "MB/s", "hi",
             ALL, ("cold",), R.w_seq_fio, needs="fio"),
    Workload("img-seq", "ImageFolder raw bytes, folder order, 2 workers", "files/s", "hi",
             ALL, ("cold", "warm"), R.w_img_seq),
    # Keeps --quick under 5 minutes: the slow peers' shuffled pass is measured cold only.
    Workload("img-shuffle", "ImageFolder raw bytes, shuffled, 2 workers", "files/s", "hi",
             ALL, ("cold", "warm"), R.w_img_shuffle, quick_phases=("cold",)),
    # Warp only: the same shuffled pass, the order handed to warpd first (prefetch.order), as the
    # loader `warpctl init` writes does every epoch.
    Workload("img-planned", "ImageFolder raw bytes, shuffled, order told to warpd first, 2 workers", "files/s",
             "hi", ("warp",), ("cold",), R.w_img_planned),
    Workload("ls-lR", "ls -lR over the wide tree", "s", "lo",
             ALL, ("cold", "warm"), R.w_ls_lR, target="tree"),
    Workload("find", "find -type f \\| wc -l over the wide tree", "s", "lo",
             ALL, ("cold", "warm"), R.w_find, target="tree"),
    Workload("duck-count", "DuckDB count(*) over the table", "s", "lo",
             ALL, ("cold", "warm"), R.w_duck_count),
    Workload("duck-filter", "DuckDB filtered aggregate over the table", "s", "lo",
             ALL, ("cold", "warm"), R.w_duck_filter),
    Workload("duck-groupby", "DuckDB group-by over the table", "s", "lo",
             ALL, ("cold", "warm"), R.w_duck_groupby),
    Workload("ttfb-image", "Time to first byte, one image file", "ms", "lo",
             ALL, ("cold",), R.w_ttfb_image, fresh_warp=True),
    Workload("ttfb-big", "Time to first byte, the big file", "ms", "lo",
             ALL, ("cold",), R.w_ttfb_big, fresh_warp=True),
    # Warp only: a running daemon (JIT warm, cache empty) and a version published a moment ago
    # that it has never opened: every piece of metadata comes from the store.
    Workload("ttfb-new", "Time to first byte, one image of a version the running daemon never opened", "ms", "lo",
             ("warp",), ("cold",), R.w_ttfb_new),
    # Warp only: every row of the table into Python, two ways in the same run: the Python package
    # (batch_dicts: columnar batches from warpd over its socket) and `warpctl stream --format csv`
    # read by Python's csv module (a JVM started per pass, as a user would run it).
    Workload("py-dicts", "Table rows into Python: warpdata batch_dicts (1024-row batches)", "rows/s", "hi",
             ("warp",), ("cold", "warm"), R.w_py_dicts),
    Workload("py-csv", "Table rows into Python: warpctl stream --format csv, read by csv.reader", "rows/s", "hi",
             ("warp",), ("cold",), R.w_py_csv),
    # The same 1,000 random tensors two ways (tensor_pass.py); the peers have no such files.
    Workload("tensor-npy", "1,000 random tensors, numpy.load(KEY.npy, mmap_mode=r) each", "tensors/s", "hi",
             ("warp", "local"), ("cold", "warm"), R.w_tensor_npy),
    # The same tensors in the same order, the .npy paths told to warpd first (prefetch.order, as
    # img-planned); the local disk reads them without a plan.
    Workload("tensor-npy-planned", "the same 1,000 tensors as .npy, order told to warpd first", "tensors/s", "hi",
             ("warp", "local"), ("cold", "warm"), R.w_tensor_npy_planned),
    Workload("tensor-mmap", "the same 1,000 tensors, one numpy.memmap per .safetensors file", "tensors/s", "hi",
             ("warp", "local"), ("cold", "warm"), R.w_tensor_mmap),
]
WORKLOADS = {w.name: w for w in REGISTRY}
assert len(WORKLOADS) == len(REGISTRY), "two workloads with the same name"


def select(only=None, quick=False):
    """The workloads of a run, in registry order: all, or those --only names (an unknown name is
    an error); under --quick with their quick phases."""
    chosen = [replace(w, phases=w.quick_phases) if quick and w.quick_phases else w for w in REGISTRY]
    if only:
        wanted = [w.strip() for w in only.split(",") if w.strip()]
        bad = [w for w in wanted if w not in WORKLOADS]
        if bad:
            raise BenchError(f"unknown workload(s) {', '.join(bad)}; known: {', '.join(WORKLOADS)}")
        chosen = [w for w in chosen if w.name in wanted]
    return chosen
