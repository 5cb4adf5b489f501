"""Warp as a system under test: warpd over the bench's store, made cold through its control
socket, its counters read there; publishing the bench's data to the store."""
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import time

from . import procs
from .common import REPO, WARP_BUCKET, WARP_PREFIX, BenchError, log
from .systems import MountSystem


class Warp(MountSystem):
    name = "warp"

    def launcher(self):
        """How warpd is started: scripts/warpd, or java -jar warp.jar warpd (--warp-via-jar)."""
        launcher = os.path.join(REPO, "scripts", "warpd")
        return ([self.env.java, "-jar", self.env.warp_jar, "warpd"]
                if self.env.args.warp_via_jar or not os.access(launcher, os.X_OK) else [launcher])

    def argv(self):
        return procs.warpd_argv(self.launcher(), mnt=self.mnt, remote=f"s3://{WARP_BUCKET}/{WARP_PREFIX}",
                                endpoint=self.env.endpoint, cache_dir=self.cache, socket_path=self.socket(),
                                extra=["--mode", "auto"], cache_size=self.env.args.warp_cache_size)

    def fuse_pid(self, p):
        return procs.java_descendant(p.pid)

    restarted = True       # whether the last cold() restarted warpd (its counters then start at 0)
    force_restart = False  # set per workload: time-to-first-byte rows measure a fresh daemon

    def socket(self):
        return os.path.join(self.env.run, "warpd.sock")

    def ready(self):
        # The control socket comes up just after the mount; the harness needs both.
        return super().ready() and os.path.exists(self.socket())

    def control(self, op, args=None, timeout=120):
        """One request on warpd's control socket: the harness talks to it directly, as warpctl
        would, without starting a JVM per call."""
        return procs.warpd_control(self.socket(), op, args, timeout)

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
        started first reads the big file and the images cold until its JIT settles (warm_up: the
        JIT compiles the read path, as it has in any daemon that ran for a while), then is
        emptied the same way.
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
                raise BenchError(f"warp: cache gc after the warm-up passes did not empty the cache ({why[:200]})")

    jit_warm = False  # whether this warpd has served the warm-up passes since it started
    warm_ups = []     # per warpd start: the compiler CPU s of each warm-up pass
    JIT_SETTLED_CPU_S = 0.25  # a pass whose JIT compiler threads used less than this ends the warm-up

    def warm_up(self):
        """Brings a fresh warpd to where a daemon that ran for a while is: its read path compiled
        by C2. One pass over the data is not enough: the AWS SDK's request path runs once per GET
        (70 times per 256 MiB under s3like) and reaches C2 only after several GiB, so C2 compiles
        during the measured cold read and takes CPU from it (2026-11-30, 2 cores, s3like: a fifth
        of the machine; cold sequential 0.63x the 8 ranged GETs after one pass, 0.87x after
        eleven or twelve). So the big file and the images are read cold, the cache emptied after
        each pass, until a pass costs the JIT compiler threads less than JIT_SETTLED_CPU_S, at
        most --warp-warm-up-passes times (default 12; 1 is the single pass of before). The
        passes' compiler seconds are logged; --warp-cold-restart measures a daemon that has served
        nothing instead."""
        files = [os.path.join(r, n) for what in ("big", "images")
                 for r, _d, names in os.walk(self.path(what)) for n in names]
        buf = bytearray(1 << 20)
        spent = []
        with self.env.clock.timed("  warp: JIT warm-up passes after start (big file, images)"):
            passes = self.env.args.warp_warm_up_passes
            for n in range(passes):
                before = self.jit_cpu_seconds()
                for f in files:
                    with open(f, "rb", buffering=0) as fh:
                        while fh.readinto(buf):
                            pass
                spent.append(procs.jit_cpu_delta(before, self.jit_cpu_seconds()))
                if spent[-1] < self.JIT_SETTLED_CPU_S or n == passes - 1:
                    break
                why = self.empty_cache()
                if why is not None:
                    raise BenchError(f"warp: cache gc between warm-up passes did not empty the cache ({why[:200]})")
        log(f"warp: JIT warm-up: {len(spent)} pass(es), compiler CPU s per pass: "
            + ", ".join(f"{s:.2f}" for s in spent))
        self.warm_ups = self.warm_ups + [spent]  # per start, for the report's header
        self.jit_warm = True

    def jit_cpu_seconds(self):
        try:
            return procs.jit_cpu_seconds(self.daemon_pid)
        except OSError as e:
            raise BenchError(f"warp: cannot read warpd's threads (pid {self.daemon_pid}): {e}") from e

    def empty_cache(self):
        """Empties warpd's cache (gc --limit 0) and drops the page cache: None, or why not. A
        block still being written when gc ran (read ahead by the pass just ended: a file in the
        cache's tmp/) is not gc's to delete, so gc runs again after it lands, up to 3 times
        (2026-11-30: a warm-up pass failed the whole measurement on one such file)."""
        try:
            for attempt in range(3):
                with self.env.clock.timed("  warp: cache gc --limit 0 (control socket)"):
                    gc = self.control("cache.gc", {"limit": 0})
                left = self.cache_block_files()
                if not left:
                    self.restarted = False
                    self.env.drop()
                    return None
                time.sleep(0.5)
            return f"{len(left)} block files left (first: {left[0]}), gc said {gc}"
        except BenchError as e:
            return str(e)

    def path(self, what):
        # Table shards keep their file names; find them whatever the directory holds.
        return os.path.join(self.mnt, self.env.dataset, what)

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
        argv = ([self.env.java, "-jar", self.env.warp_jar, "warpctl", "publish", self.env.dataset,
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
            log(f"warp: {self.env.dataset}@{version[:12]} is already published from the same data by the same "
                "publish code; not republished")
            return
        t0 = time.time()
        with open(os.path.join(self.env.logs, "publish.log"), "ab") as lf:
            r = subprocess.run(argv, env=self.env.aws_env(), stdout=subprocess.PIPE, stderr=lf)
            lf.write(r.stdout)
        if r.returncode != 0:
            raise BenchError(f"warpctl publish failed (exit {r.returncode}); see {self.env.logs}/publish.log")
        log(f"warp: published {self.env.dataset} in {time.time() - t0:.0f}s")
        m = re.search(re.escape(self.env.dataset) + r"@([0-9a-f]{64})", r.stdout.decode(errors="replace"))
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
        name = self.env.dataset.replace("bench/", "bench/fresh-")
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
                    "io/warpdata/catalog/", "io/warpdata/store/s3/")

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
        store = os.path.join(self.env.s3_dir, WARP_BUCKET, WARP_PREFIX, "datasets", *self.env.dataset.split("/"))
        try:
            with open(os.path.join(store, "latest.json")) as f:
                latest = f.read()
        except OSError:
            return None
        if version not in latest or not os.path.isfile(os.path.join(store, "versions", version + ".json")):
            return None
        return version


