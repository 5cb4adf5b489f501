#!/usr/bin/env python3
"""The soak behind scripts/soak (see docs/reliability.md, "Soak").

One warpd over S3Proxy on 127.0.0.1 with a cache smaller than the data, read for --minutes by
four readers at once, each comparing every byte with the source:
  seq      the big file start to end, its SHA-256 against the source's
  images   an ImageFolder-style pass (walk the class folders, read every file whole)
  duckdb   a group-by over the table's Parquet shards (DuckDB through the bench's helper),
           its result against the same query over the source files
  random   random ranges of random members (images and the big file)
Every --churn-minutes a new version of a second dataset is published (through warpd) and read
back, and 'warpctl cache gc' evicts down to half the cache limit. Each minute it prints warpd's
resident memory, open descriptors, threads and the cache directory's size. It exits 1 on a
wrong byte or a failed read, 0 otherwise, and stops everything it started by pid.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# Processes, mounts, S3Proxy and warpd are handled as the bench handles them: its module.
sys.path.insert(0, os.path.join(REPO, "scripts", "bench.d"))
from warpbench import procs  # noqa: E402

MIB = 1 << 20
ACCESS_KEY, SECRET_KEY, REGION = "soak", "soak-secret", "us-east-1"
CREDS = procs.S3Creds(ACCESS_KEY, SECRET_KEY, REGION)
BUCKET = "warp-soak"
DATASET = "soak/mixed"
CHURN = "soak/churn"
DUCK_TIMEOUT = 600  # seconds one DuckDB query over the mount may take before it counts as failed


def log(msg):
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


procs.set_log(log)

# A failed step: the harness's error (procs raises it too).
SoakFailure = procs.HarnessError


def cleanup(run):
    """Stops what the state file names, newest first (warpd, which unmounts on SIGTERM, then the
    DuckDB helper and S3Proxy), each by its recorded pid and start time (warpbench/procs.py)."""
    procs.cleanup_from_state(os.path.join(run, "state.json"))


# ----------------------------------------------------------------------------------------
# Data: a pure function of fixed seeds, so a run's bytes can always be checked.
# ----------------------------------------------------------------------------------------

def drop_cached(fd):
    """Drops the kernel's cached pages of one open file, so the next read reaches warpd: without
    it the readers would mostly measure the page cache (the mount's files are immutable)."""
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def sha256_file(path, chunk=MIB):
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while True:
            b = f.read(chunk)
            if not b:
                return h.hexdigest()
            h.update(b)


def generate(data, args, sql_cmd):
    marker = os.path.join(data, ".complete.json")
    params = {"big_mib": args.big_mib, "images": args.images, "table_shards": 4, "table_rows": 250_000, "v": 1}
    try:
        with open(marker) as f:
            if json.load(f) == params:
                log(f"data: reusing {data}")
                return
    except (OSError, ValueError):
        pass
    shutil.rmtree(data, ignore_errors=True)
    for d in ("blob", "images", "table"):
        os.makedirs(os.path.join(data, d))
    r = random.Random(1)
    with open(os.path.join(data, "blob", "big.bin"), "wb") as f:
        for _ in range(args.big_mib):
            f.write(r.randbytes(MIB))
    for i in range(args.images):
        cls = f"class{i % 10:02d}"
        os.makedirs(os.path.join(data, "images", cls), exist_ok=True)
        with open(os.path.join(data, "images", cls, f"img_{i:06d}.jpg"), "wb") as f:
            f.write(r.randbytes(r.randint(4 * 1024, 96 * 1024)))
    subprocess.run(sql_cmd + ["table", os.path.join(data, "table"), str(params["table_shards"]),
                              str(params["table_rows"])], check=True, stderr=subprocess.DEVNULL)
    with open(marker, "w") as f:
        json.dump(params, f)


def du(path):
    total = 0
    for root, _dirs, names in os.walk(path):
        for n in names:
            try:
                total += os.lstat(os.path.join(root, n)).st_blocks * 512
            except OSError:
                pass
    return total


# ----------------------------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------------------------

class Soak:
    def __init__(self, args):
        self.args = args
        self.work = os.path.abspath(args.workdir)
        self.data = os.path.join(self.work, "data")
        self.run = os.path.join(self.work, "run")
        self.logs = os.path.join(self.run, "logs")
        self.mnt = os.path.join(self.run, "mnt")
        self.cache = os.path.join(self.run, "cache")
        self.sock = os.path.join(self.run, "warpd.sock")
        self.java = os.environ.get("SOAK_JAVA", "java")
        self.jar = os.environ.get("SOAK_WARP_JAR", os.path.join(REPO, "daemon", "target", "warp.jar"))
        tools = os.path.join(self.work, "tools")
        self.sql_cmd = [self.java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp",
                        os.path.join(tools, "duckdb.jar") + ":" + os.path.join(tools, "classes"), "BenchSql"]
        self.s3proxy_jar = os.path.join(tools, "s3proxy.jar")
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.verified = {}      # reader -> bytes compared with the source
        self.passes = {}        # reader -> completed passes
        self.wrong = []         # (reader, what) of every mismatch
        self.errors = []        # (reader, what) of every failed read
        self.publishes = 0
        self.gcs = 0

    def env(self):
        return CREDS.env(WARP_JAR=self.jar, JAVA_HOME=os.path.dirname(os.path.dirname(self.java)))

    def warpctl(self, *argv, timeout=600):
        r = subprocess.run([os.path.join(REPO, "scripts", "warpctl")] + list(argv)
                           + ["--remote", self.remote, "--endpoint", self.endpoint, "--socket", self.sock],
                           env=self.env(), capture_output=True, timeout=timeout)
        with open(os.path.join(self.logs, "warpctl.log"), "ab") as f:
            f.write(b"$ warpctl " + " ".join(argv).encode() + b"\n" + r.stdout + r.stderr)
        if r.returncode != 0:
            raise SoakFailure(f"warpctl {argv[0]} {argv[1] if len(argv) > 1 else ''} failed "
                              f"(exit {r.returncode}): {r.stderr.decode(errors='replace')[-300:]}")
        return r.stdout.decode(errors="replace")

    # -- set-up ------------------------------------------------------------------------
    def start(self):
        for d in (self.logs, self.mnt, self.cache):
            os.makedirs(d, exist_ok=True)
        shutil.rmtree(self.cache)
        os.makedirs(self.cache)
        s3dir = os.path.join(self.run, "s3")
        shutil.rmtree(s3dir, ignore_errors=True)
        os.makedirs(s3dir)
        self.reg = procs.Registry(os.path.join(self.run, "state.json"))
        self.remote = f"s3://{BUCKET}/warp"
        self.endpoint = procs.start_s3proxy(self.reg, CREDS, java=self.java, jar=self.s3proxy_jar, basedir=s3dir,
                                            port=procs.free_port(), run_dir=self.run, log_dir=self.logs,
                                            buckets=[BUCKET], heap="512m")
        log(f"server: S3Proxy on {self.endpoint}")

        generate(self.data, self.args, self.sql_cmd)
        log("publish: the mixed dataset (blob, images, table) through warpctl --no-daemon")
        self.warpctl("publish", DATASET, "--no-daemon", "--set-latest",
                     "--artifact", "blob=" + os.path.join(self.data, "blob"),
                     "--artifact", "images=" + os.path.join(self.data, "images"),
                     "--table", "table=" + os.path.join(self.data, "table", "*.parquet"),
                     "--staging-dir", os.path.join(self.run, "staging"))
        self.source_hashes()

        argv = procs.warpd_argv([os.path.join(REPO, "scripts", "warpd")], mnt=self.mnt, remote=self.remote,
                                endpoint=self.endpoint, cache_dir=self.cache, socket_path=self.sock,
                                cache_size=self.args.cache_size)
        procs.start_mount(self.reg, "warpd", argv, self.mnt, os.path.join(self.logs, "warpd.log"),
                          lambda: procs.is_mounted(self.mnt) and os.path.exists(self.sock), env=self.env(),
                          timeout=120)
        self.warpd_pid = procs.java_descendant(self.reg.procs["warpd"].pid)  # the launcher execs it
        log(f"warpd: mounted at {self.mnt} (pid {self.warpd_pid}), cache limit {self.args.cache_size}, "
            f"data {du(self.data) / MIB:.0f} MiB")

    def source_hashes(self):
        self.big_src = os.path.join(self.data, "blob", "big.bin")
        self.big_sha = sha256_file(self.big_src)
        self.images = {}
        root = os.path.join(self.data, "images")
        for cls in sorted(os.listdir(root)):
            for n in sorted(os.listdir(os.path.join(root, cls))):
                self.images[f"{cls}/{n}"] = sha256_file(os.path.join(root, cls, n))
        self.duck = procs.LineServer(self.reg, self.logs, "duckdb", self.sql_cmd + ["serve"])
        glob = os.path.join(self.data, "table", "*.parquet")
        self.duck_expected = self.duck.ask(f"groupby {glob}", DUCK_TIMEOUT)["result"]

    def query(self, glob):
        """The group-by over glob; a failure is a failed read (OSError), as the readers count it."""
        try:
            return self.duck.ask(f"groupby {glob}", DUCK_TIMEOUT)["result"]
        except SoakFailure as e:
            raise OSError(str(e)) from e

    def mpath(self, *parts):
        return os.path.join(self.mnt, DATASET, *parts)

    # -- readers -----------------------------------------------------------------------
    def count(self, reader, nbytes):
        with self.lock:
            self.verified[reader] = self.verified.get(reader, 0) + nbytes

    def wrong_byte(self, reader, what):
        with self.lock:
            self.wrong.append((reader, what))
        log(f"WRONG BYTES: {reader}: {what}")
        self.stop.set()

    def reader(self, name, one_pass):
        self.passes[name] = 0
        while not self.stop.is_set():
            try:
                one_pass()
                with self.lock:
                    self.passes[name] += 1
            except OSError as e:
                with self.lock:
                    self.errors.append((name, str(e)))
                log(f"READ ERROR: {name}: {e}")
                self.stop.set()

    def seq_pass(self):
        h = hashlib.sha256()
        n = 0
        with open(self.mpath("blob", "big.bin"), "rb", buffering=0) as f:
            while not self.stop.is_set():
                b = f.read(MIB)
                if not b:
                    break
                h.update(b)
                n += len(b)
            drop_cached(f.fileno())
        if self.stop.is_set():
            return
        if h.hexdigest() != self.big_sha:
            self.wrong_byte("seq", f"blob/big.bin sha256 {h.hexdigest()} != {self.big_sha}")
        self.count("seq", n)

    def images_pass(self):
        root = self.mpath("images")
        seen = 0
        for cls in sorted(os.listdir(root)):
            for n in sorted(os.listdir(os.path.join(root, cls))):
                if self.stop.is_set():
                    return
                rel = f"{cls}/{n}"
                with open(os.path.join(root, cls, n), "rb") as f:
                    b = f.read()
                    drop_cached(f.fileno())
                if hashlib.sha256(b).hexdigest() != self.images.get(rel):
                    self.wrong_byte("images", f"images/{rel}")
                    return
                self.count("images", len(b))
                seen += 1
        if seen != len(self.images):
            self.wrong_byte("images", f"the mount lists {seen} images, the source {len(self.images)}")

    def duckdb_pass(self):
        got = self.query(self.mpath("table", "*.parquet"))
        if got != self.duck_expected:
            self.wrong_byte("duckdb", f"group-by result differs: {str(got)[:200]}")
        for name in os.listdir(self.mpath("table")):
            fd = os.open(os.path.join(self.mpath("table"), name), os.O_RDONLY)
            try:
                drop_cached(fd)
            finally:
                os.close(fd)
        # DuckDB reads only the column chunks it needs: its check is the query's result (counted
        # in passes), not a byte count.

    def random_pass(self):
        r = random.Random()
        names = list(self.images)
        for _ in range(200):
            if self.stop.is_set():
                return
            if r.random() < 0.3:
                src, dst = self.big_src, self.mpath("blob", "big.bin")
            else:
                rel = r.choice(names)
                src, dst = os.path.join(self.data, "images", rel), self.mpath("images", rel)
            size = os.path.getsize(src)
            off = r.randrange(size)
            ln = min(size - off, r.randint(1, 256 * 1024))
            fd = os.open(dst, os.O_RDONLY)
            try:
                got = os.pread(fd, ln, off)
                drop_cached(fd)
            finally:
                os.close(fd)
            with open(src, "rb") as f:
                f.seek(off)
                want = f.read(ln)
            if got != want:
                self.wrong_byte("random", f"{dst} [{off}, {off + ln})")
                return
            self.count("random", ln)

    # -- churn: publishes and gc -------------------------------------------------------
    def churn(self, k):
        d = os.path.join(self.run, "churn", f"v{k}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        r = random.Random(1000 + k)
        want = {}
        for i in range(64):
            b = r.randbytes(r.randint(1024, 128 * 1024))
            want[f"f{i:03d}.bin"] = b
            with open(os.path.join(d, f"f{i:03d}.bin"), "wb") as f:
                f.write(b)
        out = self.warpctl("publish", CHURN, "--set-latest", "--artifact", "files=" + d,
                           "--staging-dir", os.path.join(self.run, "staging"))
        self.publishes += 1
        # Published through warpd: the new version shows in the mount at once.
        deadline = time.monotonic() + 60
        while True:
            try:
                for n, b in want.items():
                    with open(os.path.join(self.mnt, CHURN, "files", n), "rb") as f:
                        if f.read() != b:
                            raise ValueError(n)
                break
            except (OSError, ValueError) as e:
                if time.monotonic() > deadline:
                    self.wrong_byte("churn", f"version {k} not served byte-exact 60 s after publish: {e}")
                    return
                time.sleep(1)
        self.count("churn", sum(len(b) for b in want.values()))
        shutil.rmtree(d, ignore_errors=True)
        half = max(1, parse_size(self.args.cache_size) // 2 // MIB)
        self.warpctl("cache", "gc", "--limit", f"{half}MiB")
        self.gcs += 1
        log(f"churn: published {CHURN} v{k} ({out.strip().splitlines()[-1][:80] if out.strip() else ''}), "
            f"gc to {half} MiB")

    def churn_loop(self):
        k = 0
        while not self.stop.wait(self.args.churn_minutes * 60):
            k += 1
            try:
                self.churn(k)
            except (SoakFailure, subprocess.TimeoutExpired) as e:
                with self.lock:
                    self.errors.append(("churn", str(e)))
                log(f"CHURN FAILED: {e}")
                self.stop.set()

    # -- main loop ---------------------------------------------------------------------
    def sample(self):
        st = procs.proc_status(self.warpd_pid)
        return {"rss_mib": int(st["VmRSS"].split()[0]) / 1024, "fds": len(os.listdir(f"/proc/{self.warpd_pid}/fd")),
                "threads": int(st["Threads"]), "cache_mib": du(self.cache) / MIB}

    def go(self):
        readers = [("seq", self.seq_pass), ("images", self.images_pass), ("duckdb", self.duckdb_pass),
                   ("random", self.random_pass)]
        threads = [threading.Thread(target=self.reader, args=rd, daemon=True) for rd in readers]
        for t in threads:
            t.start()
        t0 = time.monotonic()
        end = t0 + self.args.minutes * 60
        rows = []
        churner = threading.Thread(target=self.churn_loop, daemon=True)
        churner.start()
        threads.append(churner)
        print(f"{'min':>4} {'rss_mib':>8} {'fds':>5} {'threads':>7} {'cache_mib':>9} {'verified_mib':>12} "
              f"{'passes seq/img/duck/rand':>25}", flush=True)
        minute = 1
        # Until the last minute's figures are printed (or a failure stops the run).
        while not self.stop.is_set() and minute <= self.args.minutes:
            if self.reg.procs["warpd"].poll() is not None:
                with self.lock:
                    self.errors.append(("warpd", f"exited with {self.reg.procs['warpd'].returncode}"))
                self.stop.set()
                break
            if time.monotonic() >= min(t0 + minute * 60, end):
                s = self.sample()
                with self.lock:
                    s["verified_mib"] = sum(self.verified.values()) / MIB
                    p = "/".join(str(self.passes.get(n, 0)) for n, _ in readers)
                s["min"] = minute
                rows.append(s)
                print(f"{minute:>4} {s['rss_mib']:>8.0f} {s['fds']:>5} {s['threads']:>7} {s['cache_mib']:>9.0f} "
                      f"{s['verified_mib']:>12.0f} {p:>25}", flush=True)
                minute += 1
            time.sleep(0.5)
        self.stop.set()
        for t in threads:
            t.join(timeout=120)
        return rows


def parse_size(s):
    units = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30}
    s = s.strip().upper()
    i = len(s.rstrip("KMGIB"))
    return int(float(s[:i]) * units[s[i:]])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--workdir", default=os.path.join(REPO, ".soak"))
    ap.add_argument("--cache-size", default="128MiB", help="warpd's cache limit (smaller than the data)")
    ap.add_argument("--churn-minutes", type=float, default=3, help="minutes between publish + gc rounds")
    ap.add_argument("--big-mib", type=int, default=256)
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--json", help="write the per-minute rows and totals here")
    ap.add_argument("--cleanup", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    run = os.path.join(os.path.abspath(args.workdir), "run")
    if args.cleanup:
        cleanup(run)
        return 0
    if args.minutes <= 0 or args.minutes > 24 * 60:
        ap.error("--minutes must be in (0, 1440]")
    os.makedirs(run, exist_ok=True)
    cleanup(run)  # what an earlier run that died hard left behind
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    soak = Soak(args)
    rows = []
    try:
        soak.start()
        rows = soak.go()
    except KeyboardInterrupt:
        log("interrupted")
        soak.errors.append(("soak", "interrupted"))
    except SoakFailure as e:
        log(str(e))
        soak.errors.append(("soak", str(e)))
    finally:
        soak.stop.set()
        cleanup(run)
    total = sum(soak.verified.values())
    summary = {"minutes": len(rows), "verified_bytes": total, "verified_by_reader": soak.verified,
               "passes": soak.passes, "publishes": soak.publishes, "gcs": soak.gcs,
               "wrong_reads": len(soak.wrong), "read_errors": len(soak.errors), "rows": rows,
               "wrong": soak.wrong, "errors": soak.errors}
    if len(rows) >= 4:
        warm = rows[2:]
        summary["after_warmup"] = {k: [min(r[k] for r in warm), max(r[k] for r in warm)]
                                   for k in ("rss_mib", "fds", "threads", "cache_mib")}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    print(f"verified {total / MIB:.0f} MiB against the source (and {soak.passes.get('duckdb', 0)} DuckDB results); "
          f"passes {soak.passes}; publishes {soak.publishes}; "
          f"gc {soak.gcs}; wrong {len(soak.wrong)}; failed reads {len(soak.errors)}", flush=True)
    if "after_warmup" in summary:
        print("after warm-up (minute 3 on), min..max: " + ", ".join(
            f"{k} {lo:.0f}..{hi:.0f}" for k, (lo, hi) in summary["after_warmup"].items()), flush=True)
    for who, what in soak.wrong + soak.errors:
        print(f"  {who}: {what}", flush=True)
    return 1 if soak.wrong or soak.errors else 0


if __name__ == "__main__":
    sys.exit(main())
