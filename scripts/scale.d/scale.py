#!/usr/bin/env python3
"""scripts/scale: Warp at ImageNet scale and beyond on one node (issue 26), beside the local disk.

Generates WebDataset-style tar shards of N small members in class folders (Python's tarfile),
extracts the same members to the local disk (the peer), publishes the shards to S3Proxy on
loopback (warpctl, straight to the store), starts warpd with its default settings
(scripts/warpd) and an empty cache, and measures, each beside the local disk in the same run:

  publish           warpctl publish of the shards   | tar -x of the same shards to local disk
  first ls          ls of one class folder of the never-opened version (ms, store GETs, index
                    bytes fetched / whole index)    | ls of the folder, page cache dropped
  find              find -type f | wc -l over the artifact, then again warm, then cold again
                    (index parts kept), with the FUSE requests warpd served | the same on the extracted tree
  ls -lR            ls -lR over the artifact, cold (index parts kept) | the same on the extracted tree
  shuffled read     S members in random order, cold (files/s) | the same, page cache dropped
  peak RSS          warpd's VmHWM at the end

With --network s3like warpd reads through the bench's shaper (20 ms a request, 25 MB/s a
connection); the local disk is the local disk.

Needs root (FUSE, dropping the page cache). Data is kept under --workdir between runs.
"""
import argparse
import io
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUCKET, PREFIX = "warp-scale", "store"
ACCESS_KEY, SECRET_KEY, REGION = "scalekey", "scalesecret", "us-east-1"
# --network s3like, as scripts/bench's (bench.d/warpbench/cli.py NETWORKS).
S3LIKE_RTT_MS, S3LIKE_RATE_MBPS = 20.0, 25.0
DATASET = "scale/train"


def log(msg):
    print(f"[scale {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def name(c, k):
    return f"n{c:05d}/n{c:05d}_{k:08d}.jpg"


def payload(rng):
    return rng.randbytes(rng.randint(64, 320))


def generate(data, members, classes, shards):
    """Class c's members are contiguous; shards cut the sequence evenly (WebDataset writes
    samples in order)."""
    done = os.path.join(data, "done.json")
    want = {"members": members, "classes": classes, "shards": shards, "format": 1}
    if os.path.exists(done):
        with open(done) as f:
            if json.load(f) == want:
                log(f"data: {members} members already generated in {data}")
                return
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    log(f"data: writing {members} members in {classes} folders into {shards} tar shards (tarfile)")
    t0 = time.time()
    rng = random.Random(26)
    per_shard = (members + shards - 1) // shards
    k = 0
    for s in range(shards):
        with tarfile.open(os.path.join(data, f"shard-{s:04d}.tar"), "w", format=tarfile.USTAR_FORMAT) as t:
            for _ in range(min(per_shard, members - k)):
                c = k * classes // members
                body = payload(rng)
                info = tarfile.TarInfo(name(c, k))
                info.size = len(body)
                info.mtime = 1700000000
                t.addfile(info, io.BytesIO(body))
                k += 1
    with open(done, "w") as f:
        json.dump(want, f)
    log(f"data: generated in {time.time() - t0:.0f} s")


def drop_caches():
    subprocess.run(["sync"])
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def timed(argv, **kw):
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed ({r.returncode}): {r.stderr[-2000:]}")
    return dt, r.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_kib(pid, field):
    """A size field of /proc/PID/status (VmHWM: peak resident, VmRSS: resident now), in KiB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            m = re.search(field + r":\s+(\d+) kB", f.read())
            return int(m.group(1)) if m else None
    except OSError:
        return None


def hwm_kib(pid):
    return status_kib(pid, "VmHWM")


class Run:
    def __init__(self, args):
        self.args = args
        self.work = os.path.abspath(args.workdir)
        self.data = os.path.join(self.work, f"data-{args.members}")
        self.local = os.path.join(self.work, f"local-{args.members}")
        self.run = os.path.join(self.work, "run")
        self.s3 = os.path.join(self.run, "s3")
        self.cache = os.path.join(self.run, "cache")
        self.mnt = os.path.join(self.run, "mnt")
        self.java = os.environ.get("SCALE_JAVA", "java")
        # The jar scripts/warpd runs (WARP_JAR names another, e.g. a build kept for a before/after).
        self.jar = os.environ.get("WARP_JAR") or os.path.join(REPO, "daemon", "target", "warp.jar")
        self.procs = {}
        self.read_endpoint = None  # what warpd reads through: S3Proxy, or the shaper in front of it

    def start_shaper(self):
        """--network s3like: warpd reaches S3Proxy through the bench's shaper.py (each request
        delayed by 20 ms, each connection paced at 25 MB/s, as scripts/bench --network s3like);
        publishing goes to S3Proxy directly."""
        port = free_port()
        lf = open(os.path.join(self.run, "shaper.log"), "ab")
        self.procs["shaper"] = subprocess.Popen(
            ["/usr/bin/python3", os.path.join(REPO, "scripts", "bench.d", "shaper.py"), "--listen", f"127.0.0.1:{port}",
             "--upstream", self.endpoint.removeprefix("http://"), "--rtt-ms", str(S3LIKE_RTT_MS),
             "--rate-mbps", str(S3LIKE_RATE_MBPS)], stdout=lf, stderr=lf, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    self.read_endpoint = f"http://127.0.0.1:{port}"
                    log(f"network: s3like, warpd reads through shaper.py on {self.read_endpoint} "
                        f"(RTT {S3LIKE_RTT_MS} ms, {S3LIKE_RATE_MBPS} MB/s a connection)")
                    return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("shaper.py did not listen within 20 s; see " + self.run + "/shaper.log")

    def env(self):
        e = dict(os.environ)
        e.pop("AWS_PROFILE", None)
        e.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_REGION=REGION,
                 AWS_DEFAULT_REGION=REGION)
        return e

    def start_s3proxy(self):
        shutil.rmtree(self.s3, ignore_errors=True)
        os.makedirs(self.s3)
        port = free_port()
        self.endpoint = f"http://127.0.0.1:{port}"
        conf = os.path.join(self.run, "s3proxy.conf")
        with open(conf, "w") as f:
            f.write(f"s3proxy.endpoint={self.endpoint}\ns3proxy.authorization=aws-v2-or-v4\n"
                    f"s3proxy.identity={ACCESS_KEY}\ns3proxy.credential={SECRET_KEY}\n"
                    f"jclouds.identity={ACCESS_KEY}\njclouds.credential={SECRET_KEY}\n"
                    f"jclouds.provider=filesystem\njclouds.filesystem.basedir={self.s3}\n")
        lf = open(os.path.join(self.run, "s3proxy.log"), "ab")
        self.procs["s3proxy"] = subprocess.Popen([self.java, "-Xmx1g", "-jar", os.environ["SCALE_S3PROXY_JAR"],
                                                  "--properties", conf], stdout=lf, stderr=lf,
                                                 start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT",
                                "--aws-sigv4", f"aws:amz:{REGION}:s3", "--user", f"{ACCESS_KEY}:{SECRET_KEY}",
                                # curl sends no payload hash, which S3Proxy requires
                                "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                                f"{self.endpoint}/{BUCKET}"], capture_output=True, text=True)
            if r.stdout.strip() in ("200", "409"):
                log(f"server: S3Proxy on {self.endpoint}")
                return
            time.sleep(0.5)
        raise SystemExit("S3Proxy did not answer within 60 s; see " + self.run + "/s3proxy.log")

    def socket(self):
        return os.path.join(self.run, "warpd.sock")

    def start_warpd(self, extra=(), jar=None):
        """scripts/warpd with an empty cache and the options in extra; jar, if given, is another warp.jar to run."""
        shutil.rmtree(self.cache, ignore_errors=True)
        os.makedirs(self.cache)
        os.makedirs(self.mnt, exist_ok=True)
        lf = open(os.path.join(self.run, "warpd.log"), "ab")
        env = self.env()
        if jar:
            env["WARP_JAR"] = jar
        # scripts/warpd: warpd's default settings (heap, direct memory), execs the JVM.
        self.procs["warpd"] = subprocess.Popen(
            [os.path.join(REPO, "scripts", "warpd"), "--mount", self.mnt, "--remote", f"s3://{BUCKET}/{PREFIX}",
             "--endpoint", self.read_endpoint, "--cache-dir", self.cache, "--socket", self.socket(), *extra],
            stdout=lf, stderr=lf, env=env, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.procs["warpd"].poll() is not None:
                raise SystemExit("warpd exited; see " + self.run + "/warpd.log")
            if os.path.ismount(self.mnt) and os.path.exists(self.socket()):
                log(f"warpd: mounted on {self.mnt} (pid {self.procs['warpd'].pid})")
                return
            time.sleep(0.3)
        raise SystemExit("warpd did not mount within 120 s")

    def control(self, op, args=None):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(120)
            s.connect(self.socket())
            f = s.makefile("rwb")
            f.write((json.dumps({"id": 1, "op": op, **({"args": args} if args else {})}) + "\n").encode())
            f.flush()
            while True:
                j = json.loads(f.readline())
                if j.get("event") == "progress":
                    continue
                return j.get("result") if j.get("ok") else None

    def counters(self):
        st = self.control("cache.stats") or {}
        return st.get("counters") or {}

    def gets(self):
        return self.counters().get("gets_issued")

    def fuse_requests(self):
        """FUSE requests warpd served so far, by kind (lookup, readdirplus, getattr, ...)."""
        st = self.control("stats") or {}
        return dict(st.get("fuse_requests") or {})

    def requests_since(self, before):
        now = self.fuse_requests()
        return {k: v - before.get(k, 0) for k, v in sorted(now.items()) if v - before.get(k, 0)}

    def index_bytes_kept(self):
        d = os.path.join(self.cache, "catalog", "v1", "blobs")
        if not os.path.isdir(d):
            return 0, 0
        files = [os.path.join(d, n) for n in os.listdir(d)]
        return len(files), sum(os.path.getsize(p) for p in files)

    def rss(self, res, phase):
        """warpd's resident MiB now, after a phase (before any drop of the page cache, which
        makes the kernel forget its inodes and warpd its entries for them)."""
        kib = status_kib(self.procs["warpd"].pid, "VmRSS")
        res[f"warpd_rss_after_{phase}_mib"] = round(kib / 1024) if kib else None

    def stop(self):
        self.stop_warpd()
        self.end("shaper", 10)
        self.end("s3proxy", 20)

    def stop_warpd(self):
        """Stops warpd (SIGTERM, then SIGKILL after 60 s) and unmounts what it left mounted."""
        w = self.procs.pop("warpd", None)
        if w is not None:
            w.send_signal(signal.SIGTERM)
            try:
                w.wait(timeout=60)
            except subprocess.TimeoutExpired:
                w.kill()
        if os.path.ismount(self.mnt):
            subprocess.run(["fusermount3", "-u", "-z", self.mnt], capture_output=True)

    def end(self, name, timeout):
        """Stops a server this run started (SIGTERM, then SIGKILL after timeout seconds)."""
        p = self.procs.pop(name, None)
        if p is not None:
            p.terminate()
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()

    def main(self):
        a = self.args
        os.makedirs(self.run, exist_ok=True)
        generate(self.data, a.members, a.classes, a.shards)
        shards = sorted(os.path.join(self.data, n) for n in os.listdir(self.data) if n.endswith(".tar"))
        res = {"members": a.members, "classes": a.classes, "shards": len(shards),
               "shard_bytes": sum(os.path.getsize(s) for s in shards)}

        # Peer of publish: make the same members usable on the local disk.
        shutil.rmtree(self.local, ignore_errors=True)
        os.makedirs(self.local)
        t0 = time.monotonic()
        for s in shards:
            subprocess.run(["tar", "-xf", s, "-C", self.local], check=True)
        subprocess.run(["sync"])
        res["local_extract_s"] = round(time.monotonic() - t0, 1)
        log(f"local: tar -x of the shards took {res['local_extract_s']} s")

        self.start_s3proxy()
        staging = os.path.join(self.run, "staging")
        os.makedirs(staging, exist_ok=True)
        dt, out = timed([self.java, "-jar", self.jar, "warpctl", "publish", DATASET, "--artifact",
                         "train=" + os.path.join(self.data, "shard-*.tar"), "--staging-dir", staging, "--set-latest",
                         "--remote", f"s3://{BUCKET}/{PREFIX}", "--endpoint", self.endpoint, "--json"], env=self.env())
        version = json.loads(out)["version"]
        res["publish_s"] = round(dt, 1)
        log(f"publish: {dt:.1f} s, version {version[:12]}")

        self.read_endpoint = self.endpoint
        if a.network == "s3like":
            self.start_shaper()
        res["network"] = a.network
        self.start_warpd()
        root = os.path.join(self.mnt, DATASET.split("/")[0], DATASET.split("/")[1] + "@" + version, "train")
        folder_class = a.classes // 2
        folder = os.path.join(root, f"n{folder_class:05d}")
        local_folder = os.path.join(self.local, f"n{folder_class:05d}")

        # First ls of one folder of the never-opened version (the manifest, the index's top, the
        # folder's parts), against the local disk with its page cache dropped.
        drop_caches()
        g0 = self.gets()
        t0 = time.monotonic()
        n = len(os.listdir(folder))
        res["first_ls_ms"] = round((time.monotonic() - t0) * 1000, 1)
        res["first_ls_entries"] = n
        res["first_ls_gets"] = (self.gets() or 0) - (g0 or 0) if g0 is not None else None
        res["first_ls_index_blobs"], res["first_ls_index_bytes"] = self.index_bytes_kept()
        self.rss(res, "first_ls")
        drop_caches()
        t0 = time.monotonic()
        ln = len(os.listdir(local_folder))
        res["local_ls_ms"] = round((time.monotonic() - t0) * 1000, 1)
        assert ln == n, f"warp lists {n} entries in {folder}, the local disk {ln}"
        log(f"first ls: {res['first_ls_ms']} ms, {res['first_ls_gets']} GETs, {res['first_ls_index_blobs']} index "
            f"blobs of {res['first_ls_index_bytes']} bytes; local {res['local_ls_ms']} ms")

        # find over the whole artifact, cold then warm, against the extracted tree.
        for label, path in (("warp", root), ("local", self.local)):
            drop_caches()
            r0 = self.fuse_requests() if label == "warp" else None
            gc0 = self.gets() if label == "warp" else None
            dt, out = timed(["bash", "-c", f"find '{path}' -type f | wc -l"])
            res[f"{label}_find_cold_s"] = round(dt, 2)
            if label == "warp":
                res["warp_find_cold_requests"] = self.requests_since(r0)
                res["warp_find_cold_gets"] = (self.gets() or 0) - (gc0 or 0) if gc0 is not None else None
            res[f"{label}_find_files"] = int(out.strip())
            if label == "warp":
                self.rss(res, "find_cold")
            dt, out = timed(["bash", "-c", f"find '{path}' -type f | wc -l"])
            res[f"{label}_find_warm_s"] = round(dt, 2)
            if label == "warp":
                self.rss(res, "find_warm")
                # Cold again: the page cache dropped, the index parts the first walk fetched kept
                # in warpd's cache directory. What is left of cold without the store's GETs.
                drop_caches()
                g0 = self.gets()
                r0 = self.fuse_requests()
                dt, _ = timed(["bash", "-c", f"find '{path}' -type f | wc -l"])
                res["warp_find_recold_s"] = round(dt, 2)
                res["warp_find_recold_requests"] = self.requests_since(r0)
                res["warp_find_recold_gets"] = (self.gets() or 0) - (g0 or 0) if g0 is not None else None
            log(f"find {label}: {res[f'{label}_find_files']} files, cold {res[f'{label}_find_cold_s']} s, "
                f"warm {res[f'{label}_find_warm_s']} s")
        assert res["warp_find_files"] == a.members, res

        # ls -lR (a listing that stats every entry), cold, the index parts kept, against the local disk.
        for label, path in (("warp", root), ("local", self.local)):
            drop_caches()
            r0 = self.fuse_requests() if label == "warp" else None
            dt, out = timed(["bash", "-c", f"ls -lR '{path}' | wc -l"])
            res[f"{label}_lslr_cold_s"] = round(dt, 2)
            res[f"{label}_lslr_lines"] = int(out.strip())
            if label == "warp":
                res["warp_lslr_cold_requests"] = self.requests_since(r0)
        log(f"ls -lR cold: warp {res['warp_lslr_cold_s']} s, local {res['local_lslr_cold_s']} s")
        res["index_blobs"], res["index_bytes"] = self.index_bytes_kept()
        if res["index_bytes"]:
            res["first_ls_index_fraction"] = round(res["first_ls_index_bytes"] / res["index_bytes"], 5)

        # Shuffled cold read: S members in random order, first touch of their data.
        rng = random.Random(7)
        picks = sorted(rng.sample(range(a.members), a.sample))
        rng.shuffle(picks)
        rel = [name(k * a.classes // a.members, k) for k in picks]
        def read(path):
            with open(path, "rb") as f:
                return len(f.read())

        for label, base in (("warp", root), ("local", self.local)):
            drop_caches()
            before = self.counters() if label == "warp" else {}
            t0 = time.monotonic()
            with ThreadPoolExecutor(a.readers) as pool:
                total = sum(pool.map(read, [os.path.join(base, r) for r in rel]))
            dt = time.monotonic() - t0
            res[f"{label}_shuffled_files_per_s"] = round(len(rel) / dt)
            res[f"{label}_shuffled_bytes"] = total
            if label == "warp":
                after = self.counters()
                res["warp_shuffled_gets"] = after.get("gets_issued", 0) - before.get("gets_issued", 0)
                res["warp_shuffled_fetched_bytes"] = after.get("bytes_fetched", 0) - before.get("bytes_fetched", 0)
        assert res["warp_shuffled_bytes"] == res["local_shuffled_bytes"], res
        self.rss(res, "shuffled_read")
        log(f"shuffled read of {a.sample}: warp {res['warp_shuffled_files_per_s']} files/s, "
            f"local {res['local_shuffled_files_per_s']} files/s")

        res["readers"] = a.readers
        res["warpd_peak_rss_mib"] = round((hwm_kib(self.procs["warpd"].pid) or 0) / 1024)
        res["warpd_heap"] = os.environ.get("SCALE_WARP_HEAP", "?")
        print(json.dumps(res, indent=1))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(res, f, indent=1)
        report(res)


def report(r):
    def x(a, b):
        return f"{a / b:.2f}x" if a and b else "-"
    print(f"""
Scale: {r['members']:,} members in {r['classes']} folders, {r['shards']} tar shards ({r['shard_bytes'] / 2**20:.0f} MiB), network {r.get('network', 'loopback')}
| measure | Warp | local disk | Warp / local |
|---|---|---|---|
| publish (s) / tar -x (s) | {r['publish_s']} | {r['local_extract_s']} | {x(r['publish_s'], r['local_extract_s'])} |
| first ls of one folder, never-opened version (ms) | {r['first_ls_ms']} | {r['local_ls_ms']} | {x(r['first_ls_ms'], r['local_ls_ms'])} |
| first ls: store GETs counted by warpd | {r['first_ls_gets']} | | |
| first ls: index bytes fetched / whole index | {r['first_ls_index_bytes']:,} / {r['index_bytes']:,} ({100 * r.get('first_ls_index_fraction', 0):.2f}%) | | |
| find -type f, cold (s; store GETs) | {r['warp_find_cold_s']} ({r.get('warp_find_cold_gets')} GETs) | {r['local_find_cold_s']} | {x(r['warp_find_cold_s'], r['local_find_cold_s'])} |
| find -type f, warm (s) | {r['warp_find_warm_s']} | {r['local_find_warm_s']} | {x(r['warp_find_warm_s'], r['local_find_warm_s'])} |
| find -type f, cold again, index parts kept (s; store GETs) | {r.get('warp_find_recold_s')} ({r.get('warp_find_recold_gets')} GETs) | {r['local_find_cold_s']} | {x(r.get('warp_find_recold_s'), r['local_find_cold_s'])} |
| ls -lR, cold, index parts kept (s) | {r.get('warp_lslr_cold_s')} | {r.get('local_lslr_cold_s')} | {x(r.get('warp_lslr_cold_s'), r.get('local_lslr_cold_s'))} |
| FUSE requests: find cold / cold again / ls -lR cold | {r.get('warp_find_cold_requests')} / {r.get('warp_find_recold_requests')} / {r.get('warp_lslr_cold_requests')} | | |
| shuffled cold read (files/s), {r.get('readers', 1)} reader(s) | {r['warp_shuffled_files_per_s']} | {r['local_shuffled_files_per_s']} | {x(r['warp_shuffled_files_per_s'], r['local_shuffled_files_per_s'])} |
| shuffled cold read: GETs, bytes fetched / bytes read | {r.get('warp_shuffled_gets')}, {r.get('warp_shuffled_fetched_bytes', 0):,} / {r['warp_shuffled_bytes']:,} | | |
| warpd RSS (MiB) after first ls / find cold / find warm / shuffled read | {r.get('warpd_rss_after_first_ls_mib')} / {r.get('warpd_rss_after_find_cold_mib')} / {r.get('warpd_rss_after_find_warm_mib')} / {r.get('warpd_rss_after_shuffled_read_mib')} | | |
| warpd peak RSS (MiB), heap {r['warpd_heap']} | {r['warpd_peak_rss_mib']} | | |
""")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--members", type=int, default=1_281_000)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--shards", type=int, default=10)
    p.add_argument("--sample", type=int, default=2000, help="members read in the shuffled cold read")
    p.add_argument("--readers", type=int, default=1, help="threads reading in the shuffled cold read")
    p.add_argument("--workdir", default=os.path.join(REPO, ".scale"))
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--keep-local", action="store_true", help="keep the extracted local tree after the run")
    p.add_argument("--network", choices=("loopback", "s3like"), default="loopback",
                   help="s3like: warpd reads S3Proxy through the bench's shaper (20 ms a request, 25 MB/s a "
                        "connection, as scripts/bench --network s3like); publish goes to S3Proxy directly")
    args = p.parse_args()
    run = Run(args)
    try:
        run.main()
    finally:
        run.stop()
        if not args.keep_local:
            shutil.rmtree(run.local, ignore_errors=True)
        shutil.rmtree(run.s3, ignore_errors=True)


if __name__ == "__main__":
    main()
