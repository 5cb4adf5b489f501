"""How each workload is measured: one function per workload, (runner, system) -> (value, extra),
for one system in its current state (cold or warm). The Runner holds what they share: the data's
facts, the timeout, and the helpers that load their libraries once (DuckDB, torch, numpy).

Which workloads exist, their units and systems, is in workloads.py."""
import glob
import json
import os
import shlex
import subprocess
import time

from .common import CREDS, HERE, REPO, WARP_BUCKET, WARP_PREFIX, BenchError
from .procs import run_timed
from .systems import PGET_STREAMS


def curl_args():
    return CREDS.curl_args()


class Runner:
    """What the measurements share; the w_* methods are the workloads' measurements."""

    def __init__(self, env, systems, facts):
        self.env = env
        self.sys = systems
        self.facts = facts
        self.timeout = env.args.timeout or env.cfg["timeout"]
        self.duck = env.line_server("duckdb", env.sql_cmd() + ["serve"])
        self.img_server = env.line_server("imagefolder",
                                          ["/usr/bin/python3", os.path.join(HERE, "imagefolder_pass.py"), "--serve"])
        self.tensor_server = env.line_server("tensors",
                                             ["/usr/bin/python3", os.path.join(HERE, "tensor_pass.py"), "--serve"])

    def helper(self, workload):
        """The helper a workload's client runs in (by its name's prefix), or None."""
        for prefix, server in (("img-", self.img_server), ("tensor-", self.tensor_server),
                               ("duck-", self.duck)):
            if workload.startswith(prefix):
                return server
        return None

    def big(self, s):
        if s.name == "warp":
            found = sorted(glob.glob(os.path.join(s.path("big"), "*.parquet")))
            if not found:
                raise BenchError("no big/*.parquet in the Warp mount")
            return found[0]
        return os.path.join(s.path("big"), "big.parquet")

    def table_glob(self, s):
        return os.path.join(s.path("main"), "*.parquet")

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
        argv = ["/usr/bin/python3", "-c", self.PY_ROWS, how, self.env.dataset]
        if how == "csv":
            argv += [self.env.java, "-jar", self.env.warp_jar, "warpctl", "stream", self.env.dataset, "--table", "main",
                     "--format", "csv", "--remote", f"s3://{WARP_BUCKET}/{WARP_PREFIX}",
                     "--endpoint", self.env.endpoint]  # what warpd reads through (the shaper, if any)
        r = subprocess.run(argv, env=env, capture_output=True, timeout=self.timeout * 4)
        if r.returncode != 0:
            raise BenchError(f"py-{how} failed (exit {r.returncode}): {r.stderr.decode(errors='replace')[-300:]}")
        j = json.loads(r.stdout.decode().strip().splitlines()[-1])
        cfg = self.env.cfg
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
    def tensor_request(self, s, mode, plan=False):
        """The tensor helper's request: the same picks (facts' tensor_picks) for every tensor-*
        workload; with plan, on Warp, its control socket, which tensor_pass.py tells the order of
        the .npy files (relative to npy_root) first. The local disk reads without a plan."""
        st_root = s.path("tensors")
        npy_root = s.path("tensors-npy") if s.name == "local" else st_root
        req = {"mode": mode, "st_root": st_root, "npy_root": npy_root, "picks": self.facts["tensor_picks"]}
        if plan and s.name == "warp":
            req["plan_socket"] = s.socket()
        return req

    def _tensors(self, s, mode, plan=False):
        req = self.tensor_request(s, mode, plan)
        j = self.tensor_server.ask(json.dumps(req), self.timeout)
        if (j["tensors"], j["bytes"], j["checksum"]) != (len(self.facts["tensor_picks"]), self.facts["tensor_bytes"],
                                                         self.facts["tensor_checksum"]):
            raise BenchError(f"WRONG DATA: read {j['tensors']} tensors / {j['bytes']} bytes, checksum differs")
        return j["tensors"] / j["seconds"], {"bytes": j["bytes"], "seconds": j["seconds"], "sum": j["sum"]}

    def w_tensor_npy(self, s):
        return self._tensors(s, "npy")

    def w_tensor_npy_planned(self, s):
        return self._tensors(s, "npy", plan=True)

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

