#!/usr/bin/env python3
"""scripts/epochs: shuffled epochs in a row over more data than warpd's cache holds.

Generates WebDataset-style tar shards of small random members (Python's tarfile), publishes
them to S3Proxy on loopback (warpctl, straight to the store), and for each jar and each way of
reading starts warpd with an empty cache of --cache-size and reads --epochs shuffled epochs in
a row (a new order each, the page cache dropped before each, warpd's cache kept), every member
checked against its SHA-256:

  plan      the loader tells warpd each epoch's order first (warpctl prefetch --order), as the
            loader `warpctl init` writes does
  noplan    a plain shuffled reader: no order told

It reports per epoch the bytes warpd fetched over the bytes read, its GETs, files a second and
warpd's peak resident memory so far (VmHWM);
with --before JAR the same for another build, the peer of the run (same data, same machine).
The defaults (120,000 members of 6-14 KB in ten 130 MB shards through a 1,100 MB cache)
hold the shape of ImageNet in the default 100 GB cache at 1/100 the size: data about 1.6x the
cache, shards under an eighth of it. With --network s3like warpd reads through the bench's shaper
(20 ms a request, 25 MB/s a connection), as scripts/bench --network s3like; publish goes to
S3Proxy directly. Needs root (FUSE, dropping the page cache).
"""
import argparse
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scale.d"))
import scale  # noqa: E402  (the S3Proxy, warpd and control plumbing of scripts/scale)

DATASET = "epochs/wds"


def generate(data, members, lo, hi, shards):
    """Members k of shard s, class folders k % 100; their SHA-256s in manifest.json."""
    done = os.path.join(data, "done.json")
    want = {"members": members, "lo": lo, "hi": hi, "shards": shards, "format": 1}
    if os.path.exists(done):
        with open(done) as f:
            if json.load(f) == want:
                scale.log(f"data: {members} members already generated in {data}")
                return
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    scale.log(f"data: writing {members} members of {lo}-{hi} bytes into {shards} tar shards (tarfile)")
    rng = random.Random(40)
    hashes = {}
    per = (members + shards - 1) // shards
    for s in range(shards):
        with tarfile.open(os.path.join(data, f"shard-{s:04d}.tar"), "w", format=tarfile.USTAR_FORMAT) as t:
            for k in range(s * per, min(members, (s + 1) * per)):
                body = rng.randbytes(rng.randrange(lo, hi))
                info = tarfile.TarInfo(f"class{k % 100:03d}/{k:07d}.bin")
                info.size = len(body)
                info.mtime = 1700000000
                t.addfile(info, io.BytesIO(body))
                hashes[info.name] = hashlib.sha256(body).hexdigest()
    with open(os.path.join(data, "manifest.json"), "w") as f:
        json.dump(hashes, f)
    with open(done, "w") as f:
        json.dump(want, f)


class Epochs(scale.Run):
    def __init__(self, args):
        args.members_tag = args.members
        super().__init__(args)
        self.data = os.path.join(self.work, f"data-epochs-{args.members}-{args.lo}-{args.hi}-{args.shards}")

    def start_warpd_with(self, jar, cache_size):
        """scripts/warpd (warpd's default heap and direct memory) running JAR, an empty cache of CACHE_SIZE."""
        self.start_warpd(["--cache-size", cache_size], jar)

    def stop_warpd(self):
        super().stop_warpd()
        shutil.rmtree(self.cache, ignore_errors=True)

    def epoch(self, jar, root, names, hashes, seed, mode):
        order = names[:]
        random.Random(seed).shuffle(order)
        scale.drop_caches()
        before = self.counters()
        if mode == "plan":
            path = os.path.join(self.run, "order.txt")
            with open(path, "w") as f:
                f.write("\n".join(order) + "\n")
            r = subprocess.run([self.java, "--enable-native-access=ALL-UNNAMED", "-jar", jar, "warpctl", "prefetch",
                                "--order", path, "--root", root, "--plan", "epochs", "--socket", self.socket()],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit("warpctl prefetch failed: " + r.stderr[-2000:])
        nxt = [0]
        lock = threading.Lock()
        bad = []
        read = [0]

        def reader():
            while True:
                with lock:
                    i = nxt[0]
                    nxt[0] += 1
                if i >= len(order):
                    return
                with open(os.path.join(root, order[i]), "rb") as f:
                    b = f.read()
                if hashlib.sha256(b).hexdigest() != hashes[order[i]]:
                    bad.append(order[i])
                with lock:
                    read[0] += len(b)

        t0 = time.monotonic()
        threads = [threading.Thread(target=reader) for _ in range(self.args.readers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        secs = time.monotonic() - t0
        after = self.counters()
        if bad:
            raise SystemExit(f"{len(bad)} members read wrong, e.g. {bad[0]}")
        fetched = after["bytes_fetched"] - before["bytes_fetched"]
        return {"fetched_over_read": round(fetched / read[0], 3), "gets": after["gets_issued"] - before["gets_issued"],
                "files_per_s": round(len(order) / secs), "secs": round(secs, 1),
                "fetched_mb": round(fetched / 1e6, 1), "read_mb": round(read[0] / 1e6, 1)}

    def warm_up(self, version, names):
        """Reads 20,000 members (all, if fewer) through a warpd that is then thrown away, cache
        and all: without it the first configuration measured ran its first epoch 15-25% slower
        than the next, whichever jar it was (S3Proxy's JIT and the store's first reads; 2,000
        members were not enough)."""
        self.start_warpd_with(self.jar, self.args.cache_size)
        try:
            root = os.path.join(self.mnt, f"{DATASET}@{version}", "wds")
            for n in random.Random(7).sample(names, min(20_000, len(names))):
                with open(os.path.join(root, n), "rb") as f:
                    f.read()
        finally:
            self.stop_warpd()

    def main(self):
        a = self.args
        os.makedirs(self.run, exist_ok=True)
        generate(self.data, a.members, a.lo, a.hi, a.shards)
        with open(os.path.join(self.data, "manifest.json")) as f:
            hashes = json.load(f)
        names = sorted(hashes)
        try:
            self.start_s3proxy()
            self.read_endpoint = self.endpoint
            if a.network == "s3like":
                self.start_shaper()
            r = subprocess.run([self.java, "--enable-native-access=ALL-UNNAMED", "-jar", self.jar, "warpctl", "publish",
                                DATASET, "--artifact", "wds=" + os.path.join(self.data, "*.tar"), "--set-latest",
                                "--remote", f"s3://{scale.BUCKET}/{scale.PREFIX}", "--endpoint", self.endpoint,
                                "--no-daemon", "--json"], capture_output=True, text=True, env=self.env())
            if r.returncode != 0:
                raise SystemExit("publish failed: " + r.stderr[-2000:])
            version = json.loads(r.stdout)["version"]
            jars = [("this", self.jar)] + ([("before", a.before)] if a.before else [])
            self.warm_up(version, names)
            results = []
            for label, jar in jars:
                for mode in a.modes.split(","):
                    self.start_warpd_with(jar, a.cache_size)
                    try:
                        root = os.path.join(self.mnt, f"{DATASET}@{version}", "wds")
                        for e in range(a.epochs):
                            row = {"jar": label, "mode": mode, "network": a.network, "epoch": e + 1,
                                   **self.epoch(jar, root, names, hashes, 1000 + e, mode)}
                            # warpd's peak resident memory so far (VmHWM: this warpd, every epoch until now)
                            row["warpd_peak_rss_mib"] = round((scale.hwm_kib(self.procs["warpd"].pid) or 0) / 1024)
                            scale.log(json.dumps(row))
                            results.append(row)
                    finally:
                        self.stop_warpd()
        finally:
            self.stop()
        report(results, a)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(results, f, indent=2)


def report(rows, a):
    print(f"\nshuffled epochs in a row: {a.members} members of {a.lo}-{a.hi} bytes in {a.shards} shards, "
          f"--cache-size {a.cache_size}, {a.readers} readers, network {a.network}; fetched / read (GETs, files a second), warpd's peak RSS")
    keys = sorted({(r["jar"], r["mode"]) for r in rows})
    for jar, mode in keys:
        mine = [r for r in rows if r["jar"] == jar and r["mode"] == mode]
        cells = [f"{r['fetched_over_read']:.2f}x ({r['gets']}, {r['files_per_s']}/s)" for r in mine]
        peak = max((r.get("warpd_peak_rss_mib") or 0) for r in mine)
        print(f"  {jar:6} {mode:6}  " + "  ".join(cells) + f"  peak RSS {peak} MiB")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--members", type=int, default=120_000)
    p.add_argument("--lo", type=int, default=6_000, help="smallest member, bytes")
    p.add_argument("--hi", type=int, default=14_000, help="largest member, bytes (exclusive)")
    p.add_argument("--shards", type=int, default=10)
    p.add_argument("--cache-size", default="1100MB")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--readers", type=int, default=4, help="threads reading, as DataLoader workers")
    p.add_argument("--modes", default="plan,noplan", help="plan, noplan or both")
    p.add_argument("--network", choices=("loopback", "s3like"), default="loopback",
                   help="s3like: warpd reads S3Proxy through the bench's shaper (20 ms a request, 25 MB/s a "
                        "connection, as scripts/bench --network s3like); publish goes to S3Proxy directly")
    p.add_argument("--before", help="another warp.jar, run the same way beside this one (the peer)")
    p.add_argument("--workdir", default=os.path.join(scale.REPO, ".scale"))
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("scripts/epochs mounts a FUSE file system and drops the page cache: run it as root")
    Epochs(args).main()


if __name__ == "__main__":
    main()
