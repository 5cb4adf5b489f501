"""scripts/bench: Warp against s3fs, rclone mount, a raw GET (alone, and verified and written to a
file by standard tools) and the local disk, in one run.

Run through scripts/bench (which finds a JDK, fetches S3Proxy and DuckDB and builds warp.jar);
this file is the harness and uses only the Python standard library (Debian's /usr/bin/python3).
See docs/bench.md for what each workload means and how to read the table.

Everything it starts (S3Proxy, warpd, s3fs, rclone, the DuckDB helper) and every mount it makes
is recorded in <workdir>/run/state.json and torn down on exit, on SIGINT/SIGTERM, and by
`bench.py --cleanup` (which scripts/bench's EXIT trap runs in case this process died hard).
"""
import argparse
import datetime
import glob
import hashlib
import json
import math
import multiprocessing
import os
import platform
import random
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# Three buckets: S3Proxy's filesystem backend lists a bucket by walking all of it, and s3fs
# lists its whole bucket when it mounts, so the 100,000-file tree gets a bucket of its own
# (otherwise every s3fs remount would pay for listing it). Warp's store is apart as well.
WARP_BUCKET, WARP_PREFIX = "warp-bench", "store"
PEER_BUCKETS = {"data": "peer-data", "tree": "peer-tree"}  # suffixed with the scale: -quick, -full
TREE_WORKLOADS = ("ls-lR", "find")
DATASET = "bench/data"  # replaced by bench/<scale> in main()
ACCESS_KEY = "benchkey"
SECRET_KEY = "benchsecret"
REGION = "us-east-1"
MIB = 1 << 20
GIB = 1 << 30

SYSTEMS = ["warp", "s3fs", "rclone", "local", "rawget", "getsha", "pget"]
SYSTEM_LABEL = {"warp": "warp", "s3fs": "s3fs", "rclone": "rclone", "local": "local disk",
                "rawget": "raw GET", "getsha": "GET+SHA-256+file", "pget": "8 ranged GETs"}
DAEMONS = ["warp", "s3fs", "rclone"]
PEERS = ("s3fs", "rclone", "local", "rawget", "getsha", "pget")  # --repeat-limit applies to these, never to warp
PGET_STREAMS = 8  # the parallel ranged GET peer: this many concurrent curls, one range each
# --network profiles: RTT added to every request (ms) and the pace of each connection (MB/s).
# s3like: a real bucket answers after 10-50 ms and gives one connection ~85-90 MB/s; the rate is
# scaled down to what this 2-core machine can shape and serve (docs/bench.md).
NETWORKS = {"loopback": None, "s3like": {"rtt_ms": 20.0, "rate_mbps": 25.0}}
S3_GET_USD_PER_1000 = 0.0004   # S3 Standard, us-east-1: GET and HEAD per 1,000 requests
S3_LIST_USD_PER_1000 = 0.005   # LIST (like PUT) per 1,000 requests
IMAGENET_IMAGES = 1_281_167    # ImageNet-1k training images

# name -> (label, unit, better, systems, phases)
WORKLOADS = {
    "seq-dd": ("Sequential read of the big file, dd bs=4M", "MB/s", "hi",
               ["warp", "s3fs", "rclone", "local", "rawget", "getsha", "pget"], ["cold", "warm"]),
    "seq-fio": ("Sequential read of the big file, fio psync bs=4M", "MB/s", "hi",
                ["warp", "s3fs", "rclone", "local"], ["cold"]),
    "img-seq": ("ImageFolder raw bytes, folder order, 2 workers", "files/s", "hi",
                ["warp", "s3fs", "rclone", "local"], ["cold", "warm"]),
    "img-shuffle": ("ImageFolder raw bytes, shuffled, 2 workers", "files/s", "hi",
                    ["warp", "s3fs", "rclone", "local"], ["cold", "warm"]),
    # Warp only: the same shuffled pass, the order handed to warpd first (prefetch.order), as the
    # loader `warpctl init` writes does every epoch.
    "img-planned": ("ImageFolder raw bytes, shuffled, order told to warpd first, 2 workers", "files/s", "hi",
                    ["warp"], ["cold"]),
    "ls-lR": ("ls -lR over the wide tree", "s", "lo",
              ["warp", "s3fs", "rclone", "local"], ["cold", "warm"]),
    "find": ("find -type f \\| wc -l over the wide tree", "s", "lo",
             ["warp", "s3fs", "rclone", "local"], ["cold", "warm"]),
    "duck-count": ("DuckDB count(*) over the table", "s", "lo",
                   ["warp", "s3fs", "rclone", "local"], ["cold", "warm"]),
    "duck-filter": ("DuckDB filtered aggregate over the table", "s", "lo",
                    ["warp", "s3fs", "rclone", "local"], ["cold", "warm"]),
    "duck-groupby": ("DuckDB group-by over the table", "s", "lo",
                     ["warp", "s3fs", "rclone", "local"], ["cold", "warm"]),
    "ttfb-image": ("Time to first byte, one image file", "ms", "lo",
                   ["warp", "s3fs", "rclone", "local"], ["cold"]),
    "ttfb-big": ("Time to first byte, the big file", "ms", "lo",
                 ["warp", "s3fs", "rclone", "local"], ["cold"]),
    # Warp only: a running daemon (JIT warm, cache empty) and a version published a moment ago
    # that it has never opened: every piece of metadata comes from the store.
    "ttfb-new": ("Time to first byte, one image of a version the running daemon never opened", "ms", "lo",
                 ["warp"], ["cold"]),
    # Warp only: every row of the table into Python, two ways in the same run: the Python package
    # (batch_dicts: columnar batches from warpd over its socket) and `warpctl stream --format csv`
    # read by Python's csv module (a JVM started per pass, as a user would run it).
    "py-dicts": ("Table rows into Python: warpdata batch_dicts (1024-row batches)", "rows/s", "hi",
                 ["warp"], ["cold", "warm"]),
    "py-csv": ("Table rows into Python: warpctl stream --format csv, read by csv.reader", "rows/s", "hi",
               ["warp"], ["cold"]),
    # The same 1,000 random tensors two ways (tensor_pass.py); the peers have no such files.
    "tensor-npy": ("1,000 random tensors, numpy.load(KEY.npy, mmap_mode=r) each", "tensors/s", "hi",
                   ["warp", "local"], ["cold", "warm"]),
    "tensor-mmap": ("the same 1,000 tensors, one numpy.memmap per .safetensors file", "tensors/s", "hi",
                    ["warp", "local"], ["cold", "warm"]),
}
TENSOR_PICKS = 1000   # tensors read per tensor-* measurement
TENSOR_FLOATS = 256   # F32 values per tensor (1 KiB): one embedding

SCALES = {
    "quick": {"big_bytes": 256 * MIB, "table_shards": 4, "table_rows": 250_000,
              "images": 2000, "classes": 10, "tree_files": 20_000, "tensors": 20_000, "tensor_files": 4,
              "runs": 1, "timeout": 120},
    "full": {"big_bytes": 1 * GIB, "table_shards": 8, "table_rows": 500_000,
             "images": 5000, "classes": 10, "tree_files": 100_000, "tensors": 100_000, "tensor_files": 4,
             "runs": 3, "timeout": 150},
}


def log(msg):
    ts = datetime.datetime.now().strftime("%H:%M:%S")
    print(f"[bench {ts}] {msg}", file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


# ----------------------------------------------------------------------------------------
# Processes and mounts: everything started is recorded so it can always be torn down.
# ----------------------------------------------------------------------------------------

def is_mounted(path):
    path = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                if line.split()[4] == path:
                    return True
    except OSError:
        pass
    return False


def unmount(path):
    """fusermount -u, then a lazy -z if the mount is busy; returns when it is gone."""
    if not is_mounted(path):
        return
    for args in (["-u"], ["-u", "-z"]):
        for tool in ("fusermount", "fusermount3", "umount"):
            if shutil.which(tool) is None:
                continue
            argv = [tool] + args + [path] if tool != "umount" else ["umount", "-l", path]
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
            if not is_mounted(path):
                return
            break
        time.sleep(0.5)
    if is_mounted(path):
        log(f"warning: could not unmount {path}")


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def pid_start_time(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except OSError:
        return None


def stop_pid(pid, sig=signal.SIGTERM, grace=15.0):
    if not pid_alive(pid):
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Registry:
    """Processes and mounts this run owns, mirrored to state.json for --cleanup."""

    def __init__(self, state_path):
        self.state_path = state_path
        self.procs = {}   # name -> Popen
        self.mounts = {}  # name -> path

    def _save(self):
        state = {"pids": {n: [p.pid, pid_start_time(p.pid)] for n, p in self.procs.items()},
                 "mounts": self.mounts}
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, self.state_path)

    def start(self, name, argv, logpath, env=None, stdin=None, stdout=None):
        logf = open(logpath, "ab")
        # A new session: Ctrl-C in the terminal reaches only the harness, which then stops
        # its children in order (warpd gets SIGTERM so it unmounts itself).
        p = subprocess.Popen(argv, stdout=stdout if stdout is not None else logf, stderr=logf,
                             stdin=stdin if stdin is not None else subprocess.DEVNULL,
                             env=env, start_new_session=True)
        logf.close()
        self.procs[name] = p
        self._save()
        return p

    def add_mount(self, name, path):
        self.mounts[name] = path
        self._save()

    def stop(self, name, grace=15.0):
        """Stops one process and its mount: SIGTERM first, then unmount, then SIGKILL."""
        p = self.procs.pop(name, None)
        mount = self.mounts.pop(name, None)
        if p is not None:
            if name.startswith(("s3fs", "rclone")) and mount:
                unmount(mount)  # the FUSE client exits by itself once unmounted
            stop_pid(p.pid, signal.SIGTERM, grace)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if mount:
            unmount(mount)
        self._save()

    def stop_all(self):
        for name in list(self.procs):
            if name not in ("s3proxy", "duckdb"):
                self.stop(name)
        for name in list(self.mounts):
            unmount(self.mounts.pop(name))
        for name in list(self.procs):
            self.stop(name, grace=10.0)
        self._save()


def cleanup_from_state(state_path):
    """Tears down what a dead harness left: used by scripts/bench's EXIT trap."""
    try:
        with open(state_path) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return
    # Newest first: the FUSE daemons go before the server they read from.
    for name, (pid, start) in reversed(list(state.get("pids", {}).items())):
        if pid_alive(pid) and pid_start_time(pid) == start:  # same process, not a reused pid
            if name in state.get("mounts", {}):
                unmount(state["mounts"][name])
            stop_pid(pid, signal.SIGTERM, 15.0)
    for path in state.get("mounts", {}).values():
        unmount(path)
    try:
        os.remove(state_path)
    except OSError:
        pass


# ----------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------

class Clock:
    """Where the bench's wall time goes: seconds per category, logged at the end, so a run
    that is over its budget shows what to cut (setup, a slow peer's cells, cache drops...)."""

    def __init__(self):
        self.spent = {}   # category -> [seconds, count]

    def add(self, category, secs):
        e = self.spent.setdefault(category, [0.0, 0])
        e[0] += secs
        e[1] += 1

    def timed(self, category):
        clock = self

        class _Span:
            def __enter__(self):
                self.t0 = time.perf_counter()
                return self

            def __exit__(self, *_exc):
                clock.add(category, time.perf_counter() - self.t0)
                return False
        return _Span()

    def summary(self, total):
        lines = [f"time: {total:.0f}s in all; by category (seconds, count):"]
        for cat, (secs, n) in sorted(self.spent.items(), key=lambda kv: -kv[1][0]):
            if secs >= 0.5:
                lines.append(f"  {secs:7.1f}s {n:4d}x  {cat}")
        return "\n".join(lines)


class Dropper:
    def __init__(self, clock=None):
        self.ok = True
        self.warned = False
        self.clock = clock

    def __call__(self):
        t0 = time.perf_counter()
        try:
            self._drop()
        finally:
            if self.clock:
                self.clock.add("overhead: sync + drop page cache", time.perf_counter() - t0)

    def _drop(self):
        os.sync()
        try:
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
        except OSError as e:
            self.ok = False
            if not self.warned:
                log(f"warning: cannot drop the page cache ({e}); cold runs are not truly cold")
                self.warned = True


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        tck = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / tck  # utime + stime
    except OSError:
        return None


def proc_hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def java_descendant(pid):
    """The java process that is pid or its descendant (a launcher script may not exec)."""
    frontier = [pid]
    seen = set()
    while frontier:
        p = frontier.pop(0)
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/comm") as f:
                if f.read().strip() == "java":
                    return p
        except OSError:
            continue
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == p:
                            frontier.append(int(d))
                except (OSError, ValueError, IndexError):
                    pass
    return pid


def run_timed(argv, timeout, shell=False, cwd=None):
    """Runs a command, returns (seconds, stdout). Raises BenchError on failure or timeout."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=cwd, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        raise BenchError(f"timeout after {timeout}s")
    secs = time.perf_counter() - t0
    if p.returncode != 0:
        msg = (err or b"").decode(errors="replace").strip().splitlines()
        raise BenchError(f"exit {p.returncode}: {msg[-1] if msg else ''}"[:200])
    return secs, out.decode(errors="replace")


def curl_args():
    return ["curl", "-sS", "--fail", "--aws-sigv4", f"aws:amz:{REGION}:s3",
            "-u", f"{ACCESS_KEY}:{SECRET_KEY}",
            # curl does not send the payload hash S3Proxy requires; UNSIGNED-PAYLOAD is valid v4.
            "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]


def git_commit():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


# ----------------------------------------------------------------------------------------
# Data: generated once per scale, deterministic, reused by later runs.
# ----------------------------------------------------------------------------------------

def _pool_worker_init():
    # The harness turns SIGTERM into KeyboardInterrupt; the pool's workers are ended with it.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _make_image(job):
    path, seed = job
    from PIL import Image  # imported in the worker: only data generation needs PIL
    import io
    r = random.Random(seed)
    target = r.randint(50_000, 150_000)
    # Noise JPEGs at quality 85 take about 0.6 byte a pixel: choose a 4:3 size near target.
    pixels = target / 0.6
    w = max(64, int((pixels * 4 / 3) ** 0.5))
    h = max(48, int(pixels / w))
    im = Image.frombytes("RGB", (w, h), r.randbytes(w * h * 3))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=85)
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def generate_data(cfg, data_dir, java_cmd):
    params = {k: cfg[k] for k in ("big_bytes", "table_shards", "table_rows", "images", "classes",
                                  "tree_files")}
    params["format"] = 1
    marker = os.path.join(data_dir, ".complete.json")
    try:
        with open(marker) as f:
            if json.load(f) == params:
                log(f"data: reusing {data_dir}")
                return
    except (OSError, ValueError):
        pass
    if os.path.isdir(data_dir):
        shutil.rmtree(data_dir)
    t0 = time.time()
    for d in ("big", "main", "images", "tree"):
        os.makedirs(os.path.join(data_dir, d))
    log(f"data: big file ({cfg['big_bytes'] // MIB} MiB Parquet, 4 random BIGINT columns, uncompressed)")
    subprocess.run(java_cmd + ["big", os.path.join(data_dir, "big", "big.parquet"),
                               str(cfg["big_bytes"])], check=True, stderr=subprocess.DEVNULL)
    log(f"data: table ({cfg['table_shards']} shards x {cfg['table_rows']} rows)")
    subprocess.run(java_cmd + ["table", os.path.join(data_dir, "main"), str(cfg["table_shards"]),
                               str(cfg["table_rows"])], check=True, stderr=subprocess.DEVNULL)
    log(f"data: {cfg['images']} JPEG images in {cfg['classes']} classes")
    jobs = []
    for i in range(cfg["images"]):
        cls = f"n{1440764 + 7919 * (i % cfg['classes']):08d}"
        d = os.path.join(data_dir, "images", cls)
        os.makedirs(d, exist_ok=True)
        jobs.append((os.path.join(d, f"{cls}_{i:06d}.JPEG"), 1_000_003 * i + 17))
    with multiprocessing.Pool(2, initializer=_pool_worker_init) as pool:
        pool.map(_make_image, jobs, chunksize=64)
    log(f"data: wide tree of {cfg['tree_files']} small files")
    r = random.Random(99)
    for i in range(cfg["tree_files"]):
        d = os.path.join(data_dir, "tree", f"d{i // 1000:03d}")
        if i % 1000 == 0:
            os.makedirs(d)
        with open(os.path.join(d, f"f{i:06d}.txt"), "wb") as f:
            f.write(r.randbytes(r.randint(64, 512)))
    with open(marker, "w") as f:
        json.dump(params, f)
    log(f"data: generated in {time.time() - t0:.0f}s")


def tensor_params(cfg):
    return {"tensors": cfg["tensors"], "tensor_files": cfg["tensor_files"], "floats": TENSOR_FLOATS,
            "format": 1}


def generate_tensors(cfg, data_dir):
    """A safetensors dataset (tensors/: dataset_manifest.json and part-NNNNN.safetensors, F32
    tensors "emb/<i>" of TENSOR_FLOATS values, written byte by byte as the format says) and, for
    the local disk's .npy path, each tensor saved by numpy.save under tensors-npy/<stem>.tensors/
    (where Warp's mount shows them). Kept apart from generate_data's marker, so adding it did
    not regenerate the rest; numpy is imported here only (the harness is otherwise stdlib)."""
    import numpy as np
    params = tensor_params(cfg)
    marker = os.path.join(data_dir, ".tensors-complete.json")
    try:
        with open(marker) as f:
            if json.load(f) == params:
                return
    except (OSError, ValueError):
        pass
    t0 = time.time()
    root, npy_root = os.path.join(data_dir, "tensors"), os.path.join(data_dir, "tensors-npy")
    for d in (root, npy_root):
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
    files, total = cfg["tensor_files"], cfg["tensors"]
    log(f"data: {total} F32 tensors of {TENSOR_FLOATS} values in {files} safetensors files, and as .npy files")
    shards = []
    per = -(-total // files)
    for f in range(files):
        first, last = f * per, min(total, (f + 1) * per)
        values = np.random.default_rng(1500 + f).standard_normal((last - first, TENSOR_FLOATS), dtype=np.float32)
        header = {"__metadata__": {"writer": "scripts/bench", "file": str(f)}}
        nbytes = TENSOR_FLOATS * 4
        for j in range(last - first):
            header[f"emb/{first + j}"] = {"dtype": "F32", "shape": [TENSOR_FLOATS],
                                          "data_offsets": [j * nbytes, (j + 1) * nbytes]}
        h = json.dumps(header).encode()
        h += b" " * (-len(h) % 8)
        name = f"part-{f:05d}.safetensors"
        with open(os.path.join(root, name), "wb") as out:
            out.write(len(h).to_bytes(8, "little") + h + values.astype("<f4").tobytes())
        shards.append({"file": name, "samples_count": last - first,
                       "bytes": os.path.getsize(os.path.join(root, name))})
        emb = os.path.join(npy_root, name[:-len(".safetensors")] + ".tensors", "emb")
        os.makedirs(emb)
        for j in range(last - first):
            np.save(os.path.join(emb, f"{first + j}.npy"), values[j])
    with open(os.path.join(root, "dataset_manifest.json"), "w") as m:
        json.dump({"format_version": "1.0", "total_samples": total,
                   "total_bytes": sum(s["bytes"] for s in shards), "shards": shards}, m)
    with open(marker, "w") as f:
        json.dump(params, f)
    log(f"data: tensors generated in {time.time() - t0:.0f}s")


def tensor_facts(cfg, data_dir):
    """The TENSOR_PICKS tensors every tensor-* measurement reads (seeded, random order, as
    [file, key]) and the checksum of their bytes (sum of CRC-32s mod 2^48), from the source
    safetensors files."""
    import zlib
    files, total = cfg["tensor_files"], cfg["tensors"]
    per = -(-total // files)
    picks = [[f"part-{i // per:05d}.safetensors", f"emb/{i}"]
             for i in random.Random(15).sample(range(total), min(TENSOR_PICKS, total))]
    crc = 0
    headers = {}
    for file, key in picks:
        path = os.path.join(data_dir, "tensors", file)
        if file not in headers:
            with open(path, "rb") as f:
                n = int.from_bytes(f.read(8), "little")
                headers[file] = (8 + n, json.loads(f.read(n)))
        base, header = headers[file]
        begin, end = header[key]["data_offsets"]
        with open(path, "rb") as f:
            f.seek(base + begin)
            crc = (crc + zlib.crc32(f.read(end - begin))) & 0xFFFFFFFFFFFF
    return {"tensor_picks": picks, "tensor_checksum": crc, "tensor_bytes": len(picks) * TENSOR_FLOATS * 4}


def data_facts(data_dir):
    """Sizes, counts and checksums the workloads check their results against (cached)."""
    import zlib
    cached = os.path.join(data_dir, ".facts.json")
    try:
        if os.path.getmtime(cached) >= os.path.getmtime(os.path.join(data_dir, ".complete.json")):
            with open(cached) as f:
                facts = json.load(f)
            if "big_sha256" in facts:  # written by an older bench without it: recomputed
                return facts
    except (OSError, ValueError):
        pass
    facts = {"big_bytes": os.path.getsize(os.path.join(data_dir, "big", "big.parquet"))}
    sha = hashlib.sha256()
    with open(os.path.join(data_dir, "big", "big.parquet"), "rb") as f:
        while chunk := f.read(MIB):
            sha.update(chunk)
    facts["big_sha256"] = sha.hexdigest()
    files = total = crc = 0
    for root, _dirs, names in os.walk(os.path.join(data_dir, "images")):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                b = f.read()
            files += 1
            total += len(b)
            crc = (crc + zlib.crc32(b)) & 0xFFFFFFFFFFFF
    facts.update(image_files=files, image_bytes=total, image_checksum=crc)
    classes = sorted(os.listdir(os.path.join(data_dir, "images")))
    last = sorted(os.listdir(os.path.join(data_dir, "images", classes[-1])))[-1]
    facts["ttfb_image"] = f"{classes[-1]}/{last}"
    facts["tree_files"] = sum(len(n) for _r, _d, n in os.walk(os.path.join(data_dir, "tree")))
    with open(cached, "w") as f:
        json.dump(facts, f)
    return facts


def seed_peer_objects(data_dir, s3_dir):
    """Places one object per file under s3://bench/peer/ for s3fs, rclone and the raw GET.

    Written straight into S3Proxy's filesystem backend (hard links plus the same xattrs
    S3Proxy stores on a PUT: content MD5, type, tier), which is what an upload would leave
    there, in seconds instead of the many minutes 100,000 PUTs take. GETs, HEADs and
    listings then behave exactly as for uploaded objects (ETag included).
    """
    t0 = time.time()
    n = 0
    for sub in ("big", "main", "images", "tree"):
        dst_root = os.path.join(s3_dir, PEER_BUCKETS["tree" if sub == "tree" else "data"])
        src_root = os.path.join(data_dir, sub)
        for root, _dirs, names in os.walk(src_root):
            rel = os.path.relpath(root, data_dir)
            os.makedirs(os.path.join(dst_root, rel), exist_ok=True)
            for name in names:
                src = os.path.join(root, name)
                dst = os.path.join(dst_root, rel, name)
                if os.path.exists(dst) and os.path.samefile(src, dst):
                    continue
                if os.path.exists(dst):
                    os.remove(dst)
                os.link(src, dst)
                md5 = hashlib.md5()
                with open(src, "rb") as f:
                    for chunk in iter(lambda: f.read(4 * MIB), b""):
                        md5.update(chunk)
                os.setxattr(dst, "user.user.content-md5", md5.digest())
                os.setxattr(dst, "user.user.content-type", b"application/octet-stream")
                os.setxattr(dst, "user.user.storage-tier", b"STANDARD")
                n += 1
    log(f"peers: {n} objects placed in s3://{PEER_BUCKETS['data']}/ and s3://{PEER_BUCKETS['tree']}/ "
        f"in {time.time() - t0:.0f}s")


# ----------------------------------------------------------------------------------------
# The systems under test
# ----------------------------------------------------------------------------------------

class Env:
    """Everything the systems share: directories, the server, the registry."""

    def __init__(self, args, cfg):
        self.args = args
        self.cfg = cfg
        self.work = os.path.abspath(args.workdir)
        self.data = os.path.join(self.work, f"data-{args.scale}")
        self.s3_dir = os.path.join(self.work, "s3")
        self.run = os.path.join(self.work, "run")
        self.logs = os.path.join(self.run, "logs")
        self.java = os.environ.get("BENCH_JAVA", "java")
        self.tools = os.path.join(self.work, "tools")
        self.warp_jar = os.environ.get("BENCH_WARP_JAR", os.path.join(REPO, "daemon", "target", "warp.jar"))
        self.reg = Registry(os.path.join(self.run, "state.json"))
        self.clock = Clock()
        self.drop = Dropper(self.clock)
        self.port = None
        self.endpoint = None         # what the systems read through (the shaper under --network)
        self.direct_endpoint = None  # S3Proxy itself: setup (buckets, seeding, publishing) only
        self.network = args.shape    # {"rtt_ms", "rate_mbps"} when shaped, else None
        self.shaper_stats = os.path.join(self.run, "shaper.json")

    def sql_cmd(self):
        return [self.java, "--enable-native-access=ALL-UNNAMED", "-Xmx1g",
                "-cp", os.path.join(self.tools, "duckdb.jar") + ":" + os.path.join(self.tools, "classes"),
                "BenchSql"]

    def aws_env(self):
        env = dict(os.environ)
        # A CA bundle is meaningless for the http:// loopback endpoint, and rclone 1.60 refuses
        # to start when AWS_CA_BUNDLE is set ("LoadCustomCABundleError").
        env.pop("AWS_CA_BUNDLE", None)
        env.pop("AWS_PROFILE", None)
        env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY,
                   AWS_REGION=REGION, AWS_DEFAULT_REGION=REGION)
        return env

    def start_server(self):
        os.makedirs(self.s3_dir, exist_ok=True)
        self.port = self.args.port or free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        conf = os.path.join(self.run, "s3proxy.conf")
        with open(conf, "w") as f:
            f.write(f"s3proxy.endpoint={self.endpoint}\n"
                    "s3proxy.authorization=aws-v2-or-v4\n"
                    f"s3proxy.identity={ACCESS_KEY}\ns3proxy.credential={SECRET_KEY}\n"
                    f"jclouds.identity={ACCESS_KEY}\njclouds.credential={SECRET_KEY}\n"
                    # The jclouds "filesystem" provider, as in the project's S3ProxyFixture: the
                    # newer filesystem-nio2 fails CompleteMultipartUpload of the 1 GiB file with an
                    # NPE in S3Proxy 2.6.0 (AbstractNio2BlobStore$MultiBlobInputStream.read).
                    "jclouds.provider=filesystem\n"
                    f"jclouds.filesystem.basedir={self.s3_dir}\n")
        self.reg.start("s3proxy", [self.java, "-Xmx1g", "-jar", os.path.join(self.tools, "s3proxy.jar"),
                                   "--properties", conf], os.path.join(self.logs, "s3proxy.log"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.reg.procs["s3proxy"].poll() is not None:
                raise BenchError(f"S3Proxy exited; see {self.logs}/s3proxy.log")
            ok = True
            for bucket in [WARP_BUCKET] + list(PEER_BUCKETS.values()):
                # The HTTP status, not curl's message: that names the port, which may hold "409".
                r = subprocess.run(curl_args() + ["-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT",
                                                  f"{self.endpoint}/{bucket}"],
                                   capture_output=True, text=True)
                ok = ok and r.stdout.strip() in ("200", "409")
            if ok:
                log(f"server: S3Proxy on {self.endpoint}, backend {self.s3_dir}")
                self.direct_endpoint = self.endpoint
                if self.network:
                    self.start_shaper()
                return
            time.sleep(0.5)
        raise BenchError("S3Proxy did not answer within 60s")

    def start_shaper(self):
        """Every system reaches S3Proxy through shaper.py: each request delayed by the RTT, each
        connection paced at the rate, and the requests counted (GET/HEAD/LIST)."""
        port = free_port()
        n = self.network
        try:
            os.remove(self.shaper_stats)
        except FileNotFoundError:
            pass
        self.reg.start("shaper", ["/usr/bin/python3", os.path.join(HERE, "shaper.py"),
                                  "--listen", f"127.0.0.1:{port}", "--upstream", f"127.0.0.1:{self.port}",
                                  "--rtt-ms", str(n["rtt_ms"]), "--rate-mbps", str(n["rate_mbps"]),
                                  "--stats", self.shaper_stats], os.path.join(self.logs, "shaper.log"))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise BenchError(f"shaper.py did not listen within 20s; see {self.logs}/shaper.log")
        self.endpoint = f"http://127.0.0.1:{port}"
        log(f"network: shaper on {self.endpoint}: RTT {n['rtt_ms']:g} ms, {n['rate_mbps']:g} MB/s per connection")

    def shaper(self):
        """The shaper's counters (requests by kind, bytes, its CPU seconds); None when unshaped."""
        if not self.network:
            return None
        try:
            with open(self.shaper_stats) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def requests_settled(self):
        """The shaper's request counts once they stopped moving (read-ahead a client started may
        still be arriving when it is done; it belongs to its measurement)."""
        prev = (self.shaper() or {}).get("requests")
        if prev is None:
            return None
        deadline = time.monotonic() + 5
        while True:
            time.sleep(0.5)
            now = (self.shaper() or {}).get("requests", {})
            if now == prev or time.monotonic() > deadline:
                return now
            prev = now

    def sanity(self, rel):
        """What the profile delivers, measured through it: time to first byte of a small object
        (median of 5 GETs on new connections) and one GET's rate on the big object."""
        ttfb = []
        for _ in range(5):
            r = subprocess.run(curl_args() + ["-o", "/dev/null", "-w", "%{time_starttransfer}",
                                              f"{self.endpoint}/{PEER_BUCKETS['data']}/{rel}"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                ttfb.append(float(r.stdout) * 1000)
        return {"ttfb_ms": round(statistics.median(ttfb), 1) if ttfb else None,
                "ttfb_ms_all": [round(x, 1) for x in ttfb]}


class System:
    name = "?"
    daemon_pid = None

    def __init__(self, env):
        self.env = env
        self.missing = None   # reason this system cannot run, shown in the table

    def path(self, what):
        raise NotImplementedError

    def cold(self, target="data"):
        """Caches of this system emptied, restarted, page cache dropped. target: the peers'
        bucket the next workload reads ("data" or "tree")."""
        self.env.drop()

    def warm(self):
        """This system's own caches kept, page cache dropped."""
        self.env.drop()

    def stop(self):
        pass


class Local(System):
    name = "local"

    def path(self, what):
        return os.path.join(self.env.data, what)


class RawGet(System):
    name = "rawget"

    def url(self, rel):
        return f"{self.env.endpoint}/{PEER_BUCKETS['data']}/{rel}"


class PGet(RawGet):
    """The link's practical limit for one file: PGET_STREAMS concurrent ranged GETs (curl -r),
    one contiguous range each, to /dev/null."""
    name = "pget"


class GetSha(RawGet):
    """The same GET as the raw GET, doing what a verifying cache must do with the bytes as they
    arrive, with the standard tools: curl | tee <file> | openssl dgst -sha256. Warp's cold read
    does this work and more (it also serves every byte through FUSE), so this row is the floor
    that warp's cold sequential read is measured against beside the raw GET."""
    name = "getsha"

    def file(self):
        return os.path.join(self.env.run, "getsha.out")

    def cold(self, target="data"):
        self.remove()
        super().cold(target)

    def remove(self):
        try:
            os.remove(self.file())
        except FileNotFoundError:
            pass


class MountSystem(System):
    root_sub = ""

    def __init__(self, env):
        super().__init__(env)
        self.mnt = os.path.join(env.run, "mnt", self.name)
        self.cache = os.path.join(env.run, "cache", self.name)

    def path(self, what):
        return os.path.join(self.mnt, self.root_sub, what)

    def argv(self):
        raise NotImplementedError

    target = "data"

    def ready(self):
        return is_mounted(self.mnt) and os.path.exists(self.path("tree" if self.target == "tree" else "big"))

    def start(self):
        os.makedirs(self.mnt, exist_ok=True)
        os.makedirs(self.cache, exist_ok=True)
        if is_mounted(self.mnt):
            unmount(self.mnt)
        p = self.env.reg.start(self.name, self.argv(), os.path.join(self.env.logs, f"{self.name}.log"),
                               env=self.env.aws_env())
        self.env.reg.add_mount(self.name, self.mnt)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if p.poll() is not None:
                self.env.reg.stop(self.name)
                raise BenchError(f"{self.name} exited with {p.returncode}; see {self.env.logs}/{self.name}.log")
            if self.ready():
                self.daemon_pid = java_descendant(p.pid) if self.name == "warp" else p.pid
                return
            time.sleep(0.2)
        self.env.reg.stop(self.name)
        raise BenchError(f"{self.name} did not mount within 90s; see {self.env.logs}/{self.name}.log")

    def stop(self):
        self.env.reg.stop(self.name)
        self.daemon_pid = None

    def clear_cache(self):
        if os.path.isdir(self.cache):
            shutil.rmtree(self.cache)
        os.makedirs(self.cache)

    def cold(self, target="data"):
        with self.env.clock.timed(f"  {self.name}: stop"):
            self.stop()
        with self.env.clock.timed(f"  {self.name}: clear cache"):
            self.clear_cache()
        self.env.drop()
        self.target = target
        with self.env.clock.timed(f"  {self.name}: start until mounted"):
            self.start()


class S3fs(MountSystem):
    name = "s3fs"

    def argv(self):
        pw = os.path.join(self.env.run, "s3fs.passwd")
        with open(pw, "w") as f:
            f.write(f"{ACCESS_KEY}:{SECRET_KEY}\n")
        os.chmod(pw, 0o600)
        # s3fs's defaults otherwise: no disk cache (use_cache off), in-memory stat cache.
        return ["s3fs", PEER_BUCKETS[self.target], self.mnt, "-f",
                "-o", f"url={self.env.endpoint},use_path_request_style,passwd_file={pw},"
                      f"endpoint={REGION},ro"]


class Rclone(MountSystem):
    name = "rclone"

    def argv(self):
        conf = os.path.join(self.env.run, "rclone.conf")
        with open(conf, "w") as f:
            f.write(f"[bench]\ntype = s3\nprovider = Other\naccess_key_id = {ACCESS_KEY}\n"
                    f"secret_access_key = {SECRET_KEY}\nendpoint = {self.env.endpoint}\n"
                    f"region = {REGION}\nforce_path_style = true\n")
        return ["rclone", "mount", f"bench:{PEER_BUCKETS[self.target]}", self.mnt, "--config", conf,
                "--read-only", "--vfs-cache-mode", self.env.args.rclone_cache_mode,
                "--cache-dir", self.cache]


class Warp(MountSystem):
    name = "warp"

    def argv(self):
        launcher = os.path.join(REPO, "scripts", "warpd")
        base = ([self.env.java, "-jar", self.env.warp_jar, "warpd"]
                if self.env.args.warp_via_jar or not os.access(launcher, os.X_OK) else [launcher])
        argv = base + ["--mount", self.mnt, "--remote", f"s3://{WARP_BUCKET}/{WARP_PREFIX}",
                       "--endpoint", self.env.endpoint, "--cache-dir", self.cache,
                       "--socket", self.socket(), "--mode", "auto"]
        if self.env.args.warp_cache_size:
            argv += ["--cache-size", self.env.args.warp_cache_size]
        return argv

    restarted = True       # whether the last cold() restarted warpd (its counters then start at 0)
    force_restart = False  # set per workload: time-to-first-byte rows measure a fresh daemon

    def socket(self):
        return os.path.join(self.env.run, "warpd.sock")

    def ready(self):
        # The control socket comes up just after the mount; the harness needs both.
        return super().ready() and os.path.exists(self.socket())

    def control(self, op, args=None, timeout=120):
        """One request on warpd's control socket (newline-delimited JSON, docs/control.md):
        the harness talks to it directly, as warpctl would, without starting a JVM per call."""
        req = {"id": 1, "op": op}
        if args:
            req["args"] = args
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(timeout)
                sock.connect(self.socket())
                f = sock.makefile("rwb")
                f.write((json.dumps(req) + "\n").encode())
                f.flush()
                while True:
                    line = f.readline()
                    if not line:
                        raise BenchError(f"warpd closed the control socket during {op}")
                    j = json.loads(line)
                    if j.get("event") == "progress":
                        continue
                    if not j.get("ok"):
                        raise BenchError(f"{op}: {json.dumps(j.get('error'))[:200]}")
                    return j["result"]
        except (OSError, ValueError) as e:
            raise BenchError(f"{op} on {self.socket()}: {e}") from e

    def counters(self):
        """Warp's read counters once they stopped moving: read-ahead started by the last
        measurement may still be landing when the client is done, and belongs to it. Asked on
        the control socket (the same counters as stats.json's "read", without waiting for its
        once-a-second rewrite)."""
        keys = ("gets_issued", "bytes_fetched", "prefetched_blocks")
        prev = self.control("cache.stats")["counters"]
        deadline = time.monotonic() + 5
        while True:
            time.sleep(0.2)
            now = self.control("cache.stats")["counters"]
            if all(now.get(k) == prev.get(k) for k in keys) or time.monotonic() > deadline:
                return now
            prev = now

    def snapshot(self):
        """stats.json (gauges, mount errors: at most a second old) with the read counters as
        they are now; None when neither can be read."""
        st = self.stats()
        try:
            read = self.counters()
        except BenchError as e:
            log(f"warp: {e}; waiting for stats.json instead")
            time.sleep(1.1)  # warpd rewrites stats.json every second
            return self.stats()
        st = dict(st or {})
        st["read"] = read
        return st

    def cold(self, target="data"):
        """A production warpd runs for days, so "cold" means its disk cache is empty, not its
        JVM: the running daemon's cache is emptied through its control socket (warpctl cache gc
        --limit 0) and the page cache dropped. A daemon that has not served anything since it
        started first reads the big file and the images once (the JIT compiles the read path,
        as it has in any daemon that ran for a while), then is emptied the same way.
        Time-to-first-byte rows (and --warp-cold-restart) restart warpd instead, so JVM
        start-up and JIT warm-up are measured there."""
        self.target = target
        fresh = self.force_restart or self.env.args.warp_cold_restart
        if not fresh and self.daemon_pid and self.ready():
            if not self.jit_warm:
                self.warm_up()
            why = self.empty_cache()
            if why is None:
                return
            log(f"warp: cache gc did not empty the cache ({why[:200]}); restarting warpd instead")
        self.restarted = True
        self.jit_warm = False
        super().cold(target)
        if not fresh:
            self.warm_up()
            why = self.empty_cache()
            if why is not None:
                raise BenchError(f"warp: cache gc after the warm-up pass did not empty the cache ({why[:200]})")

    jit_warm = False  # whether this warpd has served the warm-up pass since it started

    def warm_up(self):
        with self.env.clock.timed("  warp: JIT warm-up pass after start (big file, images)"):
            files = [os.path.join(r, n) for what in ("big", "images")
                     for r, _d, names in os.walk(self.path(what)) for n in names]
            buf = bytearray(1 << 20)
            for f in files:
                with open(f, "rb", buffering=0) as fh:
                    while fh.readinto(buf):
                        pass
        self.jit_warm = True

    def empty_cache(self):
        """Empties warpd's cache (gc --limit 0) and drops the page cache: None, or why not."""
        try:
            with self.env.clock.timed("  warp: cache gc --limit 0 (control socket)"):
                gc = self.control("cache.gc", {"limit": 0})
            left = self.cache_block_files()
            if not left:
                self.restarted = False
                self.env.drop()
                return None
            return f"{len(left)} block files left (first: {left[0]}), gc said {gc}"
        except BenchError as e:
            return str(e)

    def path(self, what):
        # Table shards keep their file names; find them whatever the directory holds.
        return os.path.join(self.mnt, DATASET, what)

    def stats(self):
        try:
            with open(os.path.join(self.cache, "stats.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def cache_block_files(self):
        """Data block files in warpd's cache directory. The catalog's last known good state
        (<cache>/catalog: manifests, pointers, member indexes, kept for outages) is metadata that
        gc leaves alone by design, so it is not counted, however large a member index is."""
        out = []
        for root, dirs, names in os.walk(self.cache):
            if root == self.cache:
                dirs[:] = [d for d in dirs if d != "catalog"]
            for n in names:
                p = os.path.join(root, n)
                if n == "stats.json" or os.path.islink(p):
                    continue
                try:
                    if os.path.getsize(p) >= 64 * 1024:
                        out.append(p)
                except OSError:
                    pass
        return sorted(out)

    def publish(self):
        d = self.env.data
        staging = os.path.join(self.env.run, "staging")
        os.makedirs(staging, exist_ok=True)
        argv = ([self.env.java, "-jar", self.env.warp_jar, "warpctl", "publish", DATASET,
                 "--table", "big=" + os.path.join(d, "big", "big.parquet"),
                 "--table", "main=" + os.path.join(d, "main", "*.parquet"),
                 "--staging-dir", staging,
                 "--artifact", "images=" + os.path.join(d, "images"),
                 "--artifact", "tree=" + os.path.join(d, "tree"),
                 "--artifact", "tensors=" + os.path.join(d, "tensors"),
                 "--set-latest", "--remote", f"s3://{WARP_BUCKET}/{WARP_PREFIX}",
                 "--endpoint", self.env.direct_endpoint])
        marker = os.path.join(self.env.run, f"published-{self.env.args.scale}.json")
        key = {"argv": argv[3:-1], "data": self._data_params(), "code": self._publish_code_fingerprint()}
        version = self._still_published(marker, key)
        if version:
            log(f"warp: {DATASET}@{version[:12]} is already published from the same data by the same "
                "publish code; not republished")
            return
        t0 = time.time()
        with open(os.path.join(self.env.logs, "publish.log"), "ab") as lf:
            r = subprocess.run(argv, env=self.env.aws_env(), stdout=subprocess.PIPE, stderr=lf)
            lf.write(r.stdout)
        if r.returncode != 0:
            raise BenchError(f"warpctl publish failed (exit {r.returncode}); see {self.env.logs}/publish.log")
        log(f"warp: published {DATASET} in {time.time() - t0:.0f}s")
        m = re.search(re.escape(DATASET) + r"@([0-9a-f]{64})", r.stdout.decode(errors="replace"))
        if m and key["code"]:
            with open(marker, "w") as f:
                json.dump(dict(key, version=m.group(1)), f)

    def publish_fresh(self, image):
        """A new version of bench/fresh-<scale> holding one image (a copy of `image`) and a nonce,
        published straight to the store (not through warpd, not through the shaper): a version
        the running daemon has never seen. Returns the image's path through <name>@<hash>/, which
        names the version without reading a pointer."""
        src = os.path.join(self.env.run, "fresh")
        shutil.rmtree(src, ignore_errors=True)
        os.makedirs(os.path.join(src, "c0"))
        shutil.copyfile(image, os.path.join(src, "c0", "first.jpg"))
        with open(os.path.join(src, "nonce.txt"), "w") as f:
            f.write(f"{time.time_ns()} {random.random()}\n")
        name = DATASET.replace("bench/", "bench/fresh-")
        argv = [self.env.java, "-jar", self.env.warp_jar, "warpctl", "publish", name,
                "--artifact", "images=" + src, "--staging-dir", os.path.join(self.env.run, "staging"),
                "--remote", f"s3://{WARP_BUCKET}/{WARP_PREFIX}", "--endpoint", self.env.direct_endpoint]
        r = subprocess.run(argv, env=self.env.aws_env(), capture_output=True, text=True)
        m = re.search(re.escape(name) + r"@([0-9a-f]{64})", r.stdout)
        if r.returncode != 0 or not m:
            raise BenchError(f"warpctl publish {name} failed (exit {r.returncode}): {(r.stderr or r.stdout)[-300:]}")
        return os.path.join(self.mnt, f"{name}@{m.group(1)}", "images", "c0", "first.jpg")

    # Publishing is deterministic: the same files published by the same publish code give the same
    # version, and republishing uploads nothing, but it still reads, hashes and packs every input
    # (about a minute for the full data). The bench skips it when its last publish had the same
    # inputs, the same code and the version is still the store's latest.
    PUBLISH_CODE = ("io/warpdata/manifest/", "io/warpdata/daemon/publish/", "io/warpdata/daemon/cli/",
                    # where and how objects land in the store (not the read path's BlobReader)
                    "io/warpdata/store/BlobStore", "io/warpdata/store/StoreLayout",
                    "io/warpdata/catalog/Catalog", "io/warpdata/store/s3/")

    def _data_params(self):
        try:
            with open(os.path.join(self.env.data, ".complete.json")) as f:
                params = json.load(f)
            with open(os.path.join(self.env.data, ".tensors-complete.json")) as f:
                params["tensors"] = json.load(f)
            return params
        except (OSError, ValueError):
            return None

    def _publish_code_fingerprint(self):
        """A digest of the jar's classes that decide what a publish writes (CRC and size of each
        entry, from the jar's directory: nothing is decompressed); None if unreadable. Changes
        elsewhere (the read path, the control socket) do not force a republish."""
        import zipfile
        try:
            with zipfile.ZipFile(self.env.warp_jar) as z:
                h = hashlib.sha256()
                for i in sorted(z.infolist(), key=lambda i: i.filename):
                    n = i.filename
                    if n.startswith(self.PUBLISH_CODE):
                        h.update(f"{n}:{i.CRC}:{i.file_size}\n".encode())
                return h.hexdigest()
        except (OSError, zipfile.BadZipFile):
            return None

    def _still_published(self, marker, key):
        try:
            with open(marker) as f:
                last = json.load(f)
        except (OSError, ValueError):
            return None
        version = last.pop("version", None)
        if not version or last != key or not key["code"] or not key["data"]:
            return None
        store = os.path.join(self.env.s3_dir, WARP_BUCKET, WARP_PREFIX, "datasets", *DATASET.split("/"))
        try:
            with open(os.path.join(store, "latest.json")) as f:
                latest = f.read()
        except OSError:
            return None
        if version not in latest or not os.path.isfile(os.path.join(store, "versions", version + ".json")):
            return None
        return version


# ----------------------------------------------------------------------------------------
# Workloads: each returns (value, extra) for one system in its current state.
# ----------------------------------------------------------------------------------------

class LineServer:
    """A helper process that loads its libraries once (DuckDB, torch) and then answers one
    JSON line per request line, so start-up never lands inside a timing."""

    def __init__(self, env, name, argv):
        self.env, self.name, self.argv = env, name, argv
        self.p = None

    def ask(self, line, timeout):
        import select
        if self.p is None or self.p.poll() is not None:
            self.p = self.env.reg.start(self.name, self.argv, os.path.join(self.env.logs, f"{self.name}.log"),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            r, _, _ = select.select([self.p.stdout], [], [], 120)
            if not r or b"ready" not in self.p.stdout.readline():
                self.close()
                raise BenchError(f"the {self.name} helper did not start; see {self.name}.log")
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            self.close()
            raise BenchError(f"timeout after {timeout}s")
        out = self.p.stdout.readline()
        if not out:
            self.close()
            raise BenchError(f"the {self.name} helper died; see {self.name}.log")
        j = json.loads(out)
        if "error" in j:
            raise BenchError(j["error"][:200])
        return j

    def close(self):
        if self.p is not None:
            self.env.reg.stop(self.name, grace=5.0)
            self.p = None


class Runner:
    def __init__(self, env, systems, facts):
        self.env = env
        self.sys = systems
        self.facts = facts
        self.timeout = env.args.timeout or env.cfg["timeout"]
        self.duck = LineServer(env, "duckdb", env.sql_cmd() + ["serve"])
        self.img_server = LineServer(env, "imagefolder",
                                     ["/usr/bin/python3", os.path.join(HERE, "imagefolder_pass.py"), "--serve"])
        self.tensor_server = LineServer(env, "tensors",
                                        ["/usr/bin/python3", os.path.join(HERE, "tensor_pass.py"), "--serve"])

    def big(self, s):
        if s.name == "warp":
            found = sorted(glob.glob(os.path.join(s.path("big"), "*.parquet")))
            if not found:
                raise BenchError("no big/*.parquet in the Warp mount")
            return found[0]
        return os.path.join(s.path("big"), "big.parquet")

    def table_glob(self, s):
        return os.path.join(s.path("main"), "*.parquet")

    def measure(self, w, s):
        fn = getattr(self, "w_" + w.replace("-", "_"))
        return fn(s)

    # sequential
    def w_seq_dd(self, s):
        size = self.facts["big_bytes"]
        if s.name == "rawget":
            secs, _ = run_timed(curl_args() + ["-o", "/dev/null", s.url("big/big.parquet")], self.timeout)
        elif s.name == "pget":
            step = -(-size // PGET_STREAMS)
            ranges = [(i * step, min(size, (i + 1) * step) - 1) for i in range(PGET_STREAMS)]
            # Each curl's own exit status counts: one failed range fails the measurement.
            script = ("pids=(); " + "; ".join(
                " ".join(shlex.quote(a) for a in curl_args() + ["-r", f"{a}-{b}", "-o", "/dev/null",
                                                                s.url("big/big.parquet")]) + " & pids+=($!)"
                for a, b in ranges) + '; rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done; exit $rc')
            secs, _ = run_timed(["bash", "-c", script], self.timeout)
        elif s.name == "getsha":
            pipe = (" ".join(shlex.quote(a) for a in curl_args() + [s.url("big/big.parquet")])
                    + f" | tee {shlex.quote(s.file())} | openssl dgst -sha256 -r")
            try:
                secs, out = run_timed(["bash", "-o", "pipefail", "-c", pipe], self.timeout)
                written = os.path.getsize(s.file())
            finally:
                s.remove()
            digest = out.split()[0] if out.split() else ""
            if digest != self.facts["big_sha256"] or written != size:
                raise BenchError(f"WRONG DATA: GET+SHA-256 wrote {written} bytes with SHA-256 {digest[:16]}...,"
                                 f" expected {size} bytes, {self.facts['big_sha256'][:16]}...")
        else:
            secs, _ = run_timed(["dd", f"if={self.big(s)}", "of=/dev/null", "bs=4M"], self.timeout)
        return size / secs / 1e6, {"bytes": size, "seconds": secs}

    def w_seq_fio(self, s):
        size = self.facts["big_bytes"]
        _secs, out = run_timed(["fio", "--name=seq", f"--filename={self.big(s)}", "--readonly",
                                "--rw=read", "--bs=4M", "--ioengine=psync", f"--size={size}",
                                "--invalidate=0", "--output-format=json"], self.timeout)
        j = json.loads(out[out.index("{"):])
        bw = j["jobs"][0]["read"]["bw_bytes"]
        return bw / 1e6, {"bytes": size}

    def cache_cat(self, s):
        files = s.cache_block_files()
        total = sum(os.path.getsize(p) for p in files)
        if not files:
            raise BenchError("no block files found under the Warp cache dir")
        self.env.drop()
        t0 = time.perf_counter()
        for i in range(0, len(files), 500):
            subprocess.run(["cat"] + files[i:i + 500], stdout=subprocess.DEVNULL, check=True)
        secs = time.perf_counter() - t0
        return total / secs / 1e6, {"bytes": total, "files": len(files)}

    # ImageFolder
    def _img(self, s, shuffle, plan=False):
        line = f"{s.path('images')}\t{1 if shuffle else 0}" + (f"\t{s.socket()}" if plan else "")
        j = self.img_server.ask(line, self.timeout)
        if (j["files"], j["bytes"], j["checksum"]) != (self.facts["image_files"], self.facts["image_bytes"],
                                                       self.facts["image_checksum"]):
            raise BenchError(f"WRONG DATA: read {j['files']} files / {j['bytes']} bytes, checksum differs")
        return j["files"] / j["seconds"], {"bytes": j["bytes"], "seconds": j["seconds"]}

    def w_img_seq(self, s):
        return self._img(s, False)

    def w_img_shuffle(self, s):
        return self._img(s, True)

    def w_img_planned(self, s):
        return self._img(s, True, plan=True)

    # metadata
    def w_ls_lR(self, s):
        secs, _ = run_timed(["ls", "-lR", s.path("tree")], self.timeout)
        return secs, {}

    def w_find(self, s):
        secs, out = run_timed(f"find '{s.path('tree')}' -type f | wc -l", self.timeout, shell=True)
        n = int(out.strip() or 0)
        if n != self.facts["tree_files"]:
            raise BenchError(f"WRONG DATA: find counted {n} files, expected {self.facts['tree_files']}")
        return secs, {}

    # DuckDB
    def _duck(self, s, q):
        j = self.duck.ask(f"{q} {self.table_glob(s)}", self.timeout)
        expected = self.facts.get("duck_" + q)
        if expected is not None and expected != j["result"]:
            raise BenchError("WRONG DATA: query result differs from local disk")
        return j["seconds"], {"result": j["result"]}

    def w_duck_count(self, s):
        return self._duck(s, "count")

    def w_duck_filter(self, s):
        return self._duck(s, "filter")

    def w_duck_groupby(self, s):
        return self._duck(s, "groupby")

    # rows into Python (py-dicts / py-csv)
    PY_ROWS = (
        "import csv, json, os, subprocess, sys, time\n"
        "how, ds = sys.argv[1], sys.argv[2]\n"
        "t0 = time.perf_counter(); rows = 0\n"
        "if how == 'dicts':\n"
        "    import warpdata as wd\n"
        "    for b in wd.dataset(ds).table('main').batch_dicts(1024):\n"
        "        rows += len(b['id']) if 'id' in b else len(next(iter(b.values())))\n"
        "else:\n"
        "    p = subprocess.Popen(sys.argv[3:], stdout=subprocess.PIPE)\n"
        "    r = csv.reader(open(p.stdout.fileno(), newline='', encoding='utf-8'))\n"
        "    next(r)\n"
        "    for _ in r:\n"
        "        rows += 1\n"
        "    if p.wait() != 0:\n"
        "        sys.exit('warpctl stream failed')\n"
        "print(json.dumps({'rows': rows, 'seconds': time.perf_counter() - t0}))\n")

    def _py_rows(self, s, how):
        env = dict(self.env.aws_env(), WARP_SOCKET=s.socket(), PYTHONPATH=os.path.join(REPO, "python"))
        argv = ["/usr/bin/python3", "-c", self.PY_ROWS, how, DATASET]
        if how == "csv":
            argv += [self.env.java, "-jar", self.env.warp_jar, "warpctl", "stream", DATASET, "--table", "main",
                     "--format", "csv", "--remote", f"s3://{WARP_BUCKET}/{WARP_PREFIX}",
                     "--endpoint", self.env.endpoint]  # what warpd reads through (the shaper, if any)
        r = subprocess.run(argv, env=env, capture_output=True, timeout=self.timeout * 4)
        if r.returncode != 0:
            raise BenchError(f"py-{how} failed (exit {r.returncode}): {r.stderr.decode(errors='replace')[-300:]}")
        j = json.loads(r.stdout.decode().strip().splitlines()[-1])
        cfg = SCALES[self.env.args.scale]
        expected = cfg["table_shards"] * cfg["table_rows"]
        if j["rows"] != expected:
            raise BenchError(f"WRONG DATA: py-{how} read {j['rows']} rows, expected {expected}")
        return j["rows"] / j["seconds"], {"rows": j["rows"], "seconds": j["seconds"]}

    def w_py_dicts(self, s):
        return self._py_rows(s, "dicts")

    def w_py_csv(self, s):
        return self._py_rows(s, "csv")

    # single tensors: Warp's mount shows <stem>.tensors/<key>.npy beside each file; the local
    # disk has the same .npy files (numpy.save) in a tree of their own beside the dataset's.
    def _tensors(self, s, mode):
        st_root = s.path("tensors")
        npy_root = s.path("tensors-npy") if s.name == "local" else st_root
        req = {"mode": mode, "st_root": st_root, "npy_root": npy_root, "picks": self.facts["tensor_picks"]}
        j = self.tensor_server.ask(json.dumps(req), self.timeout)
        if (j["tensors"], j["bytes"], j["checksum"]) != (len(self.facts["tensor_picks"]), self.facts["tensor_bytes"],
                                                         self.facts["tensor_checksum"]):
            raise BenchError(f"WRONG DATA: read {j['tensors']} tensors / {j['bytes']} bytes, checksum differs")
        return j["tensors"] / j["seconds"], {"bytes": j["bytes"], "seconds": j["seconds"], "sum": j["sum"]}

    def w_tensor_npy(self, s):
        return self._tensors(s, "npy")

    def w_tensor_mmap(self, s):
        return self._tensors(s, "mmap")

    # time to first byte
    def _ttfb(self, path):
        t0 = time.perf_counter()
        fd = os.open(path, os.O_RDONLY)
        try:
            b = os.read(fd, 1)
        finally:
            os.close(fd)
        if len(b) != 1:
            raise BenchError("read returned no byte")
        return (time.perf_counter() - t0) * 1000, {}

    def w_ttfb_image(self, s):
        return self._ttfb(os.path.join(s.path("images"), self.facts["ttfb_image"]))

    def w_ttfb_big(self, s):
        return self._ttfb(self.big(s))

    def w_ttfb_new(self, s):
        path = s.publish_fresh(os.path.join(self.env.data, "images", self.facts["ttfb_image"]))
        value, extra = self._ttfb(path)
        if self.env.network:
            extra["rtts"] = round(value / self.env.network["rtt_ms"], 2)
        return value, extra


def median_cell(vals, unit, runs=1):
    if not vals:
        return None
    fmt = (lambda v: f"{v:.0f}") if unit in ("MB/s", "files/s", "tensors/s") else \
        (lambda v: f"{v:.1f}") if unit == "ms" else (lambda v: f"{v:.3f}" if v < 10 else f"{v:.1f}")
    med = statistics.median(vals)
    if len(vals) == 1:
        return fmt(med) + (" (n=1)" if runs > 1 else "")
    n = f", n={len(vals)}" if len(vals) < runs else ""
    return f"{fmt(med)} ({fmt(min(vals))}–{fmt(max(vals))}{n})"


class Results:
    def __init__(self):
        self.vals = {}     # (workload, phase, system) -> [values]
        self.errors = {}   # (workload, phase, system) -> [messages]
        self.extra = {}    # (workload, phase, system) -> [extra dicts]
        self.cpu = {}      # (workload, phase, system) -> [cpu seconds per GiB]

    def add(self, key, value, extra):
        self.vals.setdefault(key, []).append(value)
        self.extra.setdefault(key, []).append(extra)

    def err(self, key, msg):
        self.errors.setdefault(key, []).append(msg)

    def median(self, key):
        v = self.vals.get(key)
        return statistics.median(v) if v else None


def main_bench(args):
    global DATASET
    # Each scale has its own buckets and dataset, so one size never sees the other's objects.
    for k in list(PEER_BUCKETS):
        PEER_BUCKETS[k] = f"peer-{k}-{args.scale}"
    DATASET = f"bench/{args.scale}"
    cfg = dict(SCALES[args.scale])
    runs = args.runs or cfg["runs"]
    env = Env(args, cfg)
    os.makedirs(env.logs, exist_ok=True)
    cleanup_from_state(env.reg.state_path)  # a previous run that died hard
    for name in ("warp", "s3fs", "rclone"):
        unmount(os.path.join(env.run, "mnt", name))

    if args.scale == "quick":
        # Keeps --quick under 5 minutes: the slow peers' shuffled pass is measured cold only.
        WORKLOADS["img-shuffle"] = WORKLOADS["img-shuffle"][:4] + (["cold"],)
    workloads = list(WORKLOADS)
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        bad = [w for w in wanted if w not in WORKLOADS]
        if bad:
            raise BenchError(f"unknown workload(s) {', '.join(bad)}; known: {', '.join(WORKLOADS)}")
        workloads = [w for w in WORKLOADS if w in wanted]
    system_names = SYSTEMS if not args.systems else [x.strip() for x in args.systems.split(",")]

    started = time.time()
    load_start = os.getloadavg()
    with env.clock.timed("setup: data generation"):
        generate_data(cfg, env.data, env.sql_cmd())
    with env.clock.timed("setup: data generation"):
        generate_tensors(cfg, env.data)
    with env.clock.timed("setup: data facts"):
        facts = data_facts(env.data)
        facts.update(tensor_facts(cfg, env.data))

    local, rawget, getsha, pget = Local(env), RawGet(env), GetSha(env), PGet(env)
    warp, s3fs, rclone = Warp(env), S3fs(env), Rclone(env)
    systems = {"warp": warp, "s3fs": s3fs, "rclone": rclone, "local": local, "rawget": rawget, "getsha": getsha,
               "pget": pget}
    for name, tool in (("s3fs", "s3fs"), ("rclone", "rclone")):
        if shutil.which(tool) is None:
            systems[name].missing = f"MISSING ({tool} not installed)"
    if shutil.which("curl") is None:
        rawget.missing = getsha.missing = pget.missing = "MISSING (curl not installed)"
    elif shutil.which("openssl") is None:
        getsha.missing = "MISSING (openssl not installed)"
    if shutil.which("fio") is None:
        log("fio is not installed: the seq-fio workload is reported as MISSING")
    if os.environ.get("BENCH_WARP_MISSING"):
        warp.missing = "MISSING (" + os.environ["BENCH_WARP_MISSING"] + ")"
    elif not os.path.isfile(env.warp_jar):
        warp.missing = f"MISSING (no {env.warp_jar})"
    for name in SYSTEMS:
        if name not in system_names and not systems[name].missing:
            systems[name].missing = "not selected (--systems)"

    with env.clock.timed("setup: S3Proxy start"):
        env.start_server()
    with env.clock.timed("setup: peers' objects"):
        seed_peer_objects(env.data, env.s3_dir)
    if not warp.missing:
        try:
            with env.clock.timed("setup: warp publish"):
                warp.publish()
        except BenchError as e:
            warp.missing = f"ERROR ({e})"
            log(f"warp: {e}")

    network = None
    if env.network:
        with env.clock.timed("setup: network sanity"):
            network = dict(env.network, **env.sanity(os.path.join("images", facts["ttfb_image"])))
        log(f"network: time to first byte of a small GET through the shaper {network['ttfb_ms']} ms "
            f"(RTT {env.network['rtt_ms']:g} ms)")
    runner = Runner(env, systems, facts)
    base_timeout = runner.timeout
    if any(w.startswith("duck-") for w in workloads):
        # The local files' answers, which every mount's answer must equal (not timed).
        with env.clock.timed("setup: DuckDB reference answers"):
            for q in ("count", "filter", "groupby"):
                facts["duck_" + q] = runner.duck.ask(f"{q} {runner.table_glob(local)}", runner.timeout)["result"]
    res = Results()
    peak_rss = {}
    warp_stats = {}
    slow = set()   # (workload, system) measured once: one run took longer than --repeat-limit
    warp_last = {}  # (workload, phase) -> Warp's read counters during that measurement (last run)
    heap_per_member = {}
    for r in range(runs):
        log(f"run {r + 1}/{runs}")
        for w in workloads:
            label, unit, _better, wsystems, phases = WORKLOADS[w]
            for sn in wsystems:
                s = systems[sn]
                if s.missing:
                    continue
                if (w, sn) in slow:
                    continue
                spent = 0.0
                if w == "seq-fio" and shutil.which("fio") is None:
                    res.err((w, "cold", sn), "MISSING (fio not installed)")
                    continue
                t_reset = time.perf_counter()
                if sn == "warp":
                    s.force_restart = w in ("ttfb-image", "ttfb-big")
                try:
                    with env.clock.timed(f"reset {sn}: cold start (incl. drop)"):
                        s.cold("tree" if w in TREE_WORKLOADS else "data")
                except BenchError as e:
                    for ph in phases:
                        res.err((w, ph, sn), str(e))
                    log(f"{w} {sn}: {e}")
                    continue
                # Warp's counters start at zero after a restart, else at the gc that made it cold.
                warp_prev = {}
                if sn == "warp" and not s.restarted:
                    with env.clock.timed("overhead: warp counters"):
                        warp_prev = s.snapshot() or {}
                cold_secs = None
                for ph in phases:
                    if sn in ("rawget", "getsha", "pget") and ph == "warm":
                        continue
                    if ph == "warm":
                        with env.clock.timed(f"reset {sn}: warm (drop)"):
                            s.warm()
                    key = (w, ph, sn)
                    pid = getattr(s, "daemon_pid", None)
                    cpu0 = proc_cpu_seconds(pid) if pid else None
                    # A peer that took longer than --repeat-limit cold gets twice its cold time
                    # warm: a warm pass slower than that is shown as TIMEOUT (s3fs's warm ls -lR
                    # of 100,000 files overflows its stat cache and runs for minutes).
                    runner.timeout = base_timeout
                    if ph == "warm" and sn in PEERS and cold_secs is not None and cold_secs > args.repeat_limit:
                        runner.timeout = math.ceil(min(base_timeout, max(args.repeat_limit, 2 * cold_secs)))
                    req0 = env.requests_settled() if env.network else None
                    t_m = time.perf_counter()
                    try:
                        value, extra = runner.measure(w, s)
                    except (BenchError, OSError, ValueError, KeyError) as e:
                        msg = str(e)
                        if runner.timeout != base_timeout and msg.startswith("timeout"):
                            msg += " (twice its cold time)"
                        res.err(key, msg)
                        log(f"{w} {ph} {sn}: {msg}")
                        continue
                    finally:
                        spent += time.perf_counter() - t_m
                        env.clock.add(f"measure {sn}: {w}", time.perf_counter() - t_m)
                        runner.timeout = base_timeout
                    if ph == "cold":
                        cold_secs = time.perf_counter() - t_m
                    if req0 is not None:
                        req1 = env.requests_settled() or {}
                        extra["requests"] = {k: req1.get(k, 0) - req0.get(k, 0) for k in req1}
                        cpu1 = proc_cpu_seconds(pid)
                        hwm = proc_hwm_kib(pid)
                        if hwm:
                            peak_rss[sn] = max(peak_rss.get(sn, 0), hwm)
                        if cpu0 is not None and cpu1 is not None and extra.get("bytes"):
                            extra["daemon_cpu_s"] = cpu1 - cpu0
                            res.cpu.setdefault(key, []).append((cpu1 - cpu0) / (extra["bytes"] / GIB))
                    if sn == "warp":
                        with env.clock.timed("overhead: warp counters"):
                            st = warp.snapshot()
                        if st is not None:
                            extra["warp_stats"] = st
                            extra["warp_read_delta"] = counter_delta(st.get("read", {}), warp_prev.get("read", {}))
                            warp_prev = st
                            warp_stats[f"{w}/{ph}"] = st
                            warp_last[(w, ph)] = dict(extra["warp_read_delta"], client_bytes=extra.get("bytes"))
                            g = st.get("gauges", {})
                            if g.get("indexed_members") and g.get("heap_used_bytes"):
                                heap_per_member[w] = g["heap_used_bytes"] / g["indexed_members"]
                    res.add(key, value, extra)
                    log(f"{w} {ph} {sn}: {value:.3f} {unit}"
                        + (f" (cold start took {t_m - t_reset:.1f}s)" if ph == "cold" else ""))
                    if w == "seq-dd" and sn == "warp" and ph == "warm":
                        try:
                            with env.clock.timed("measure warp: cat of cache files"):
                                v, ex = runner.cache_cat(warp)
                            res.add(("seq-dd", "warm", "cachecat"), v, ex)
                            log(f"seq-dd warm cat-of-cache-files: {v:.0f} MB/s ({ex['files']} files)")
                        except (BenchError, OSError) as e:
                            res.err(("seq-dd", "warm", "cachecat"), str(e))
                            log(f"cache cat: {e}")
                # Only a peer is measured once when slow: Warp is what the bench measures, and
                # its cells keep their N runs even when a loaded machine slows them down.
                if r == 0 and runs > 1 and spent > args.repeat_limit and sn in PEERS:
                    slow.add((w, sn))
                    log(f"{w} {sn}: {spent:.0f}s > --repeat-limit {args.repeat_limit}s, measured once")
                if sn in ("warp", "s3fs", "rclone"):
                    pid = s.daemon_pid
                    hwm = proc_hwm_kib(pid) if pid else None
                    if hwm:
                        peak_rss[sn] = max(peak_rss.get(sn, 0), hwm)
        # Daemons are not left running between runs.
        with env.clock.timed("overhead: stop daemons after a run"):
            for s in (warp, s3fs, rclone):
                s.stop()
    elapsed = time.time() - started
    log(env.clock.summary(elapsed))
    load_end = os.getloadavg()
    env.reg.stop_all()

    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_commit(), "scale": args.scale, "runs": runs,
        "cpus": os.cpu_count(), "kernel": platform.release(),
        "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB, 1),
        "load_start": [round(x, 2) for x in load_start], "load_end": [round(x, 2) for x in load_end],
        "elapsed_s": round(elapsed), "page_cache_dropped": env.drop.ok,
        "rclone_vfs_cache_mode": args.rclone_cache_mode,
        "data": {"big_bytes": facts["big_bytes"], "table_shards": cfg["table_shards"],
                 "table_rows": cfg["table_shards"] * cfg["table_rows"],
                 "images": facts["image_files"], "image_bytes": facts["image_bytes"],
                 "tree_files": facts["tree_files"], "tensors": cfg["tensors"],
                 "tensor_files": cfg["tensor_files"]},
        "missing": {n: s.missing for n, s in systems.items() if s.missing},
        "network": network,
    }
    if network:
        sh = env.shaper() or {}
        network["shaper_cpu_s"] = sh.get("cpu_seconds")
        network["shaper_bytes_down"] = sh.get("bytes_down")
    meta["warp_read_counters"] = {f"{w}/{ph}": v for (w, ph), v in warp_last.items()}
    meta["warp_heap_bytes_per_indexed_member"] = heap_per_member
    report(meta, res, peak_rss, warp_stats, workloads, systems, args)


# ----------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------

def counter_delta(now, before):
    """now - before for the numeric counters of one stats.json section."""
    return {k: v - before.get(k, 0) for k, v in now.items() if isinstance(v, (int, float))}


def targets(res):
    """The issue-4 and DESIGN section 11 targets, from medians of this run."""
    m = res.median
    out = []

    def ratio(name, a, b, goal, how, invert=False):
        va, vb = m(a), m(b)
        if va is None or vb is None or va == 0 or vb == 0:
            out.append({"target": name, "ratio": None, "goal": f"{how} {goal}", "met": None})
            return
        r = vb / va if invert else va / vb
        met = r >= goal if how == ">=" else r <= goal
        out.append({"target": name, "ratio": round(r, 3), "goal": f"{how} {goal}", "met": met})

    ratio("cold sequential: warp / raw GET (MB/s)", ("seq-dd", "cold", "warp"), ("seq-dd", "cold", "rawget"), 0.8, ">=")
    ratio("cold sequential: warp / GET+SHA-256+file (MB/s)", ("seq-dd", "cold", "warp"), ("seq-dd", "cold", "getsha"),
          1.0, ">=")
    ratio("warm sequential: warp / cat of warpd's cache block files (MB/s)", ("seq-dd", "warm", "warp"),
          ("seq-dd", "warm", "cachecat"), 0.8, ">=")
    ratio("ImageFolder cold, folder order: warp / local disk (files/s)", ("img-seq", "cold", "warp"),
          ("img-seq", "cold", "local"), 0.5, ">=")
    ratio("ImageFolder warm, folder order: warp / local disk (files/s)", ("img-seq", "warm", "warp"),
          ("img-seq", "warm", "local"), 0.8, ">=")
    ratio("ImageFolder cold, folder order: warp / rclone (files/s)", ("img-seq", "cold", "warp"),
          ("img-seq", "cold", "rclone"), 5.0, ">=")
    for w in ("ls-lR", "find"):
        ratio(f"{w} cold: warp time / local disk time", (w, "cold", "warp"), (w, "cold", "local"), 2.0, "<=")
    for w in ("duck-count", "duck-filter", "duck-groupby"):
        ratio(f"{w} warm: warp time / local disk time", (w, "warm", "warp"), (w, "warm", "local"), 1.2, "<=")
    return out


def tensor_table(res, workloads, systems, runs):
    """The tensor-npy and tensor-mmap rows beside each other: the same 1,000 tensors through
    .npy files and through one mmap of each .safetensors file, per system and phase."""
    if "tensor-npy" not in workloads and "tensor-mmap" not in workloads:
        return []
    lines = ["", f"Single tensors, {TENSOR_PICKS} random ones (tensors/s ↑; mmap/npy above 1: the mmap is faster):", "",
             "| phase | warp .npy | warp mmap | warp mmap/npy | local .npy | local mmap | local mmap/npy "
             "| .npy warp/local | mmap warp/local |", "|---|---|---|---|---|---|---|---|---|"]
    for ph in ("cold", "warm"):
        cells = []
        for sn in ("warp", "local"):
            for w in ("tensor-npy", "tensor-mmap"):
                if systems[sn].missing:
                    cells.append(systems[sn].missing.split(" (")[0])
                elif w not in workloads:
                    cells.append("")
                else:
                    key = (w, ph, sn)
                    cells.append(median_cell(res.vals.get(key, []), "tensors/s", runs)
                                 or ("FAILED" if res.errors.get(key) else "—"))
            npy, mm = res.median(("tensor-npy", ph, sn)), res.median(("tensor-mmap", ph, sn))
            cells.append(f"{mm / npy:.2f}" if npy and mm else "")
        for w in ("tensor-npy", "tensor-mmap"):
            a, b = res.median((w, ph, "warp")), res.median((w, ph, "local"))
            cells.append(f"{a / b:.2f}" if a and b else "")
        lines.append("| " + " | ".join([ph] + cells) + " |")
    return lines


def s3like_targets(res, meta, peak_rss):
    """Issue 16's targets under a shaped network, from medians of this run."""
    m = res.median
    out = []

    def add(name, r, goal, how):
        met = None if r is None else (r >= goal if how == ">=" else r <= goal)
        out.append({"target": name, "ratio": None if r is None else round(r, 3), "goal": f"{how} {goal}", "met": met})

    def ratio(a, b):
        va, vb = m(a), m(b)
        return va / vb if va and vb else None

    add("cold sequential: warp / raw GET (MB/s)", ratio(("seq-dd", "cold", "warp"), ("seq-dd", "cold", "rawget")), 6, ">=")
    add(f"cold sequential: warp / {PGET_STREAMS} ranged GETs (MB/s)",
        ratio(("seq-dd", "cold", "warp"), ("seq-dd", "cold", "pget")), 0.7, ">=")
    for p in ("rclone", "s3fs"):
        add(f"ImageFolder cold, folder order: warp / {p} (files/s)",
            ratio(("img-seq", "cold", "warp"), ("img-seq", "cold", p)), 20, ">=")
    add("ImageFolder cold, shuffled: warp / s3fs (files/s)",
        ratio(("img-shuffle", "cold", "warp"), ("img-shuffle", "cold", "s3fs")), 5, ">=")
    add("ImageFolder cold, shuffled with the order told to warpd: warp img-planned / warp img-seq (files/s)",
        ratio(("img-planned", "cold", "warp"), ("img-seq", "cold", "warp")), 0.8, ">=")
    t = m(("ttfb-new", "cold", "warp"))
    one = meta["network"].get("ttfb_ms")
    add(f"time to first byte, version never opened, running daemon: warp ms / one request's round trip"
        f" ({one} ms: a small GET's first byte through the shaper)", t / one if t and one else None, 3, "<=")
    for w in ("duck-count", "duck-filter", "duck-groupby"):
        peers = [x for x in (m((w, "cold", "s3fs")), m((w, "cold", "rclone"))) if x]
        mw = m((w, "cold", "warp"))
        add(f"{w} cold: warp time / the faster of s3fs and rclone", mw / min(peers) if mw and peers else None, 1.0, "<=")
    rss = peak_rss.get("warp")
    add("warpd peak RSS over the bench, MiB", rss / 1024 if rss else None, 512, "<=")
    return out


def request_table(res, workloads, images):
    """GET/HEAD/LIST counted at the shaper per measurement (median over runs), and what one
    ImageNet-1k epoch (1.28 M images) would cost in requests on S3 at each system's rate per image
    in the cold ImageFolder passes (Warp: tar shards; the peers: one object per image)."""
    rows = []
    for w in workloads:
        _label, _unit, _better, wsystems, phases = WORKLOADS[w]
        for ph in phases:
            for sn in wsystems:
                ex = [e["requests"] for e in res.extra.get((w, ph, sn), []) if e.get("requests") is not None]
                if ex:
                    rows.append((w, ph, sn, {k: statistics.median([e.get(k, 0) for e in ex])
                                             for k in ("GET", "HEAD", "LIST")}))
    if not rows:
        return []
    lines = ["", "Requests reaching the store per measurement (counted at the shaper; median of the runs):", "",
             "| workload | phase | system | GET | HEAD | LIST |", "|---|---|---|---|---|---|"]
    for w, ph, sn, med in rows:
        lines.append(f"| {w} | {ph} | {SYSTEM_LABEL[sn]} | {med['GET']:.0f} | {med['HEAD']:.0f} | {med['LIST']:.0f} |")
    epoch = [(w, sn, med) for w, ph, sn, med in rows if w in ("img-seq", "img-shuffle", "img-planned") and ph == "cold"]
    if epoch and images:
        lines += ["", f"One ImageNet-1k epoch ({IMAGENET_IMAGES:,} images) at each cold pass's requests per image, "
                      f"S3 Standard prices (${S3_GET_USD_PER_1000} per 1,000 GET/HEAD, ${S3_LIST_USD_PER_1000} per 1,000 LIST):",
                  "", "| pass | system | requests per image | requests per epoch | USD per epoch |", "|---|---|---|---|---|"]
        for w, sn, med in epoch:
            per = (med["GET"] + med["HEAD"] + med["LIST"]) / images
            usd = IMAGENET_IMAGES / images * ((med["GET"] + med["HEAD"]) * S3_GET_USD_PER_1000
                                             + med["LIST"] * S3_LIST_USD_PER_1000) / 1000
            lines.append(f"| {w} | {SYSTEM_LABEL[sn]} | {per:.4f} | {per * IMAGENET_IMAGES:,.0f} | {usd:.2f} |")
    return lines


def report(meta, res, peak_rss, warp_stats, workloads, systems, args):
    cols = ["warp", "s3fs", "rclone", "local", "rawget", "getsha", "pget"]
    peers = ["s3fs", "rclone", "local", "rawget", "getsha", "pget"]
    lines = []
    d = meta["data"]
    lines.append(f"Warp bench, {meta['date']}, commit {meta['commit']}, scale {meta['scale']}, "
                 f"median of {meta['runs']} run(s) (min–max in brackets)  ")
    net = meta.get("network")
    where = ("S3Proxy on loopback" if not net else
             f"S3Proxy on loopback behind shaper.py: RTT {net['rtt_ms']:g} ms added to every request, "
             f"{net['rate_mbps']:g} MB/s per connection (measured: first byte of a small GET {net.get('ttfb_ms')} ms; "
             f"the shaper used {net.get('shaper_cpu_s')} CPU s for {(net.get('shaper_bytes_down') or 0) / 1e9:.1f} GB)")
    lines.append(f"Machine: {meta['cpus']} cores, {meta['mem_gib']} GiB RAM, Linux {meta['kernel']}, "
                 f"{where}; load average {meta['load_start'][0]} at start, "
                 f"{meta['load_end'][0]} at end; {meta['elapsed_s']} s in all  ")
    lines.append(f"Data: big file {d['big_bytes'] / MIB:.0f} MiB; table {d['table_shards']} shards, "
                 f"{d['table_rows']} rows; {d['images']} images ({d['image_bytes'] / MIB:.0f} MiB); "
                 f"wide tree {d['tree_files']} files; {d['tensors']} F32 tensors of {TENSOR_FLOATS} values "
                 f"in {d['tensor_files']} safetensors files. rclone --vfs-cache-mode {meta['rclone_vfs_cache_mode']}; "
                 "s3fs defaults (no disk cache)."
                 + ("" if meta["page_cache_dropped"] else " PAGE CACHE COULD NOT BE DROPPED."))
    lines.append("")
    lines.append("Ratios are warp/peer of the number shown: for ↑ rows above 1 means Warp is faster, "
                 "for ↓ rows below 1 means Warp is faster.")
    lines.append("")
    head = ["workload", "phase", "unit"] + [SYSTEM_LABEL[c] for c in cols] + \
           [f"warp/{SYSTEM_LABEL[p]}" for p in peers]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    rows_json = []
    for w in workloads:
        label, unit, better, wsystems, phases = WORKLOADS[w]
        for ph in phases:
            cells = []
            for c in cols:
                key = (w, ph, c)
                if c not in wsystems or (c in ("rawget", "getsha", "pget") and ph == "warm"):
                    cells.append("")
                    continue
                if systems[c].missing:
                    cells.append(systems[c].missing.split(" (")[0])
                    continue
                cell = median_cell(res.vals.get(key, []), unit, meta["runs"])
                errs = res.errors.get(key, [])
                if cell is None:
                    cell = "FAILED" if errs else "—"
                    if errs and errs[0].startswith(("MISSING", "timeout")):
                        cell = errs[0].split(" (")[0].split(" after")[0].upper()
                elif errs:
                    cell += f" ({len(errs)} failed)"
                cells.append(cell)
                rows_json.append({"workload": w, "label": label, "phase": ph, "unit": unit,
                                  "better": "higher" if better == "hi" else "lower", "system": c,
                                  "values": res.vals.get(key, []),
                                  "median": res.median(key),
                                  "min": min(res.vals[key]) if res.vals.get(key) else None,
                                  "max": max(res.vals[key]) if res.vals.get(key) else None,
                                  "errors": errs, "extra": res.extra.get(key, []),
                                  "daemon_cpu_s_per_gib": res.cpu.get(key, [])})
            ratios = []
            mw = res.median((w, ph, "warp"))
            for p in peers:
                mp = res.median((w, ph, p))
                ratios.append(f"{mw / mp:.2f}" if mw and mp else "")
            if w == "ttfb-new" and net and mw and net.get("ttfb_ms"):
                ratios[0] = f"{mw / net['ttfb_ms']:.1f} round trips"
            arrow = "↑" if better == "hi" else "↓"
            lines.append("| " + " | ".join([label, ph, f"{unit} {arrow}"] + cells + ratios) + " |")
        if w == "seq-dd" and ("seq-dd", "warm", "cachecat") in res.vals or res.errors.get(("seq-dd", "warm", "cachecat")):
            if w == "seq-dd":
                key = ("seq-dd", "warm", "cachecat")
                cell = median_cell(res.vals.get(key, []), "MB/s") or "FAILED"
                mw = res.median(("seq-dd", "warm", "warp"))
                mc = res.median(key)
                lines.append("| " + " | ".join(
                    ["cat of warpd's own cache block files (reference for warm warp)", "warm", "MB/s ↑", cell]
                    + [""] * (len(cols) - 1 + len(peers) - 1)
                    + [f"warp/cache files: {mw / mc:.2f}" if mw and mc else ""]) + " |")
                rows_json.append({"workload": "seq-dd", "phase": "warm", "system": "warp-cache-files",
                                  "unit": "MB/s", "values": res.vals.get(key, []),
                                  "median": mc, "errors": res.errors.get(key, []),
                                  "extra": res.extra.get(key, [])})
    lines += tensor_table(res, workloads, systems, meta["runs"])
    # daemon resources
    lines.append("")
    lines.append("Daemon resources (the FUSE process: warpd's JVM, s3fs, rclone):")
    lines.append("")
    lines.append("| measure | warp | s3fs | rclone |")
    lines.append("|---|---|---|---|")
    lines.append("| peak RSS, MiB (VmHWM, max over the run) | " + " | ".join(
        f"{peak_rss[s] / 1024:.0f}" if s in peak_rss else "" for s in DAEMONS) + " |")
    cpu_rows = {}
    for w, ph in (("seq-dd", "cold"), ("seq-dd", "warm"), ("img-seq", "cold"), ("img-seq", "warm")):
        if w not in workloads:
            continue
        cells = []
        for s in DAEMONS:
            v = res.cpu.get((w, ph, s))
            cells.append(f"{statistics.median(v):.2f}" if v else "")
            if v:
                cpu_rows[f"{w}/{ph}/{s}"] = statistics.median(v)
        lines.append(f"| CPU s per GiB read, {w} {ph} | " + " | ".join(cells) + " |")
    hpm = meta.get("warp_heap_bytes_per_indexed_member") or {}
    if hpm:
        lines.append("| warpd heap bytes per indexed member, upper bound (heap used incl. garbage / indexed_members, after the workload) | "
                     + ", ".join(f"{v:.0f} ({w})" for w, v in hpm.items()) + " | | |")
    wrc = meta.get("warp_read_counters") or {}
    if wrc:
        lines.append("")
        lines.append("Warp's read counters during each measurement (stats.json deltas, last run; "
                     "fetched/read = bytes fetched from S3 per byte the client read):")
        lines.append("")
        lines.append("| workload | phase | GETs | fetched MiB | client read MiB | fetched/read | hit blocks "
                     "| miss blocks | prefetch hit blocks | prefetch wasted MiB | retries | verification failures |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for key, c in wrc.items():
            w, ph = key.split("/")
            cb = c.get("client_bytes")
            fetched = c.get("bytes_fetched", 0)
            lines.append("| " + " | ".join([
                w, ph, str(c.get("gets_issued", "")), f"{fetched / MIB:.1f}",
                f"{cb / MIB:.1f}" if cb else "", f"{fetched / cb:.2f}" if cb else "",
                str(c.get("hit_blocks", "")), str(c.get("miss_blocks", "")),
                str(c.get("prefetch_hit_blocks", "")), f"{c.get('prefetch_wasted_bytes', 0) / MIB:.1f}",
                str(c.get("retries", "")), str(c.get("verification_failures", ""))]) + " |")
    lines += request_table(res, workloads, d.get("images"))
    # targets
    tg = targets(res) if not net else s3like_targets(res, meta, peak_rss)
    lines.append("")
    lines.append("Targets (issue 4, DESIGN §11), from the medians above:" if not net else
                 "Targets under this network (issue 16), from the medians above:")
    lines.append("")
    lines.append("| target | measured | goal | met |")
    lines.append("|---|---|---|---|")
    for t in tg:
        met = "n/a" if t["met"] is None else ("yes" if t["met"] else "NO")
        lines.append(f"| {t['target']} | {'' if t['ratio'] is None else t['ratio']} | {t['goal']} | {met} |")
    if meta["missing"]:
        lines.append("")
        for n, why in meta["missing"].items():
            lines.append(f"- {SYSTEM_LABEL[n]}: {why}")
    by_msg = {}
    for (w, ph, s), msgs in res.errors.items():
        for msg in msgs:
            by_msg.setdefault(msg, []).append(f"{w}/{ph}/{s}")
    if by_msg:
        lines.append("")
        lines.append("Failures:")
        for msg, where in by_msg.items():
            shown = ", ".join(where[:4]) + (f" and {len(where) - 4} more" if len(where) > 4 else "")
            lines.append(f"- {msg}: {shown}")
    text = "\n".join(lines)
    print(text, flush=True)
    if args.json:
        doc = {"meta": meta, "results": rows_json, "targets": tg,
               "daemon": {"peak_rss_kib": peak_rss, "cpu_s_per_gib": cpu_rows},
               "warp_stats": warp_stats, "markdown": text}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
        log(f"JSON written to {args.json}")


def main():
    ap = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small data, 1 run: under 5 minutes")
    ap.add_argument("--runs", type=int, help="runs per measurement (default 3; 1 with --quick)")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    ap.add_argument("--only", help="comma-separated workloads: " + ",".join(WORKLOADS))
    ap.add_argument("--systems", help="comma-separated subset of " + ",".join(SYSTEMS))
    ap.add_argument("--workdir", default=os.path.join(REPO, ".bench"))
    ap.add_argument("--port", type=int, default=0, help="S3Proxy port (default: a free one)")
    ap.add_argument("--timeout", type=int, default=0, help="seconds per measurement before it counts as failed")
    ap.add_argument("--repeat-limit", type=float, default=30.0,
                    help="a workload x peer whose first run took longer than this many seconds "
                         "is not repeated (default 30; Warp's cells always get every run)")
    ap.add_argument("--rclone-cache-mode", default="full", help="rclone --vfs-cache-mode (default full)")
    ap.add_argument("--warp-cache-size", default="20GB", help="warpd --cache-size (default 20GB)")
    ap.add_argument("--warp-via-jar", action="store_true", help="run java -jar warp.jar warpd, not scripts/warpd")
    ap.add_argument("--warp-cold-restart", action="store_true",
                    help="make Warp cold by restarting warpd on an empty cache (default: empty the running daemon's cache)")
    ap.add_argument("--network", choices=list(NETWORKS), default="loopback",
                    help="loopback (default): S3Proxy as it is; s3like: every system reaches it through "
                         "shaper.py (RTT 20 ms, 25 MB/s per connection) and requests are counted")
    ap.add_argument("--rtt", type=float, help="milliseconds added to every request (implies a shaped network)")
    ap.add_argument("--conn-rate", type=float, help="MB/s per connection (implies a shaped network)")
    ap.add_argument("--cleanup", action="store_true", help="only tear down what a dead run left behind")
    args = ap.parse_args()
    args.shape = dict(NETWORKS[args.network] or {}) if args.network != "loopback" or args.rtt is not None \
        or args.conn_rate is not None else None
    if args.shape is not None:
        args.shape = dict(NETWORKS["s3like"], **args.shape)
        if args.rtt is not None:
            args.shape["rtt_ms"] = args.rtt
        if args.conn_rate is not None:
            args.shape["rate_mbps"] = args.conn_rate
        if args.shape["rtt_ms"] < 0 or args.shape["rate_mbps"] <= 0:
            ap.error("--rtt must be 0 or more and --conn-rate more than 0")
    args.scale = "quick" if args.quick else "full"
    state = os.path.join(os.path.abspath(args.workdir), "run", "state.json")
    if args.cleanup:
        cleanup_from_state(state)
        return 0
    if args.json:
        args.json = os.path.abspath(args.json)

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        main_bench(args)
        return 0
    except KeyboardInterrupt:
        log("interrupted: cleaning up")
        return 130
    except (BenchError, subprocess.CalledProcessError) as e:
        log(f"error: {e}")
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        cleanup_from_state(state)


if __name__ == "__main__":
    sys.exit(main())
