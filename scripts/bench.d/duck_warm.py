#!/usr/bin/env python3
"""Warm DuckDB queries over warpd against the local disk, one pair at a time.

usage: sudo scripts/bench.d/duck_warm.py [--workdir DIR] [--size full|quick] [--query filter|groupby|count]
                                        [--runs N] [--jar JAR]

Uses what a `scripts/bench` run left in its workdir (default .bench): the generated table
(data-SIZE/main/*.parquet), the store S3Proxy served, read here as a file:// store
(s3/warp-bench/store), and the bench's DuckDB driver and BenchSql helper (tools/). Starts its own
warpd on a fresh cache in a temporary directory, fills the cache with three queries, then for
each run drops the page cache and times the query over warpd, drops it again and times it on
the local disk. Prints each pair with warpd's CPU (user+sys, 10 ms ticks) and the FUSE reads and
bytes warpd served for the query (stats.json), then the medians. Needs root (FUSE, dropping the
page cache). docs/bench.md, "Why DuckDB warm over Warp trails the local disk".
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# Processes and mounts are handled as the bench handles them: its module.
sys.path.insert(0, HERE)
from warpbench import procs  # noqa: E402


def find_java():
    """The Java the other scripts use (scripts/lib/common.sh's find_java: JAVA_HOME, then java on PATH,
    then the newest JDK under /usr/lib/jvm, each only if it is 21 or newer)."""
    found = subprocess.run(["bash", "-c", f'source "{REPO}/scripts/lib/common.sh" && find_java && echo "$JAVA"'],
                           capture_output=True, text=True)
    if found.returncode != 0 or not found.stdout.strip():
        sys.exit(found.stderr.strip() or "no Java 21 or newer found")
    return found.stdout.strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default=os.path.join(REPO, ".bench"))
    ap.add_argument("--size", choices=("full", "quick"), default="full")
    ap.add_argument("--query", choices=("filter", "groupby", "count"), default="filter")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--jar", default=os.path.join(REPO, "daemon", "target", "warp.jar"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("duck_warm.py mounts a FUSE file system and drops the page cache: run it as root")
    work = os.path.abspath(args.workdir)
    store = os.path.join(work, "s3", "warp-bench", "store")
    local = os.path.join(work, "data-" + args.size, "main")
    tools = os.path.join(work, "tools")
    for need in (store, local, os.path.join(tools, "classes", "BenchSql.class"), os.path.join(tools, "duckdb.jar"), args.jar):
        if not os.path.exists(need):
            sys.exit(f"{need} is missing: run scripts/bench{' --quick' if args.size == 'quick' else ''} first"
                     f" (with --workdir {work}), and build the jar")
    java = find_java()
    tmp = tempfile.mkdtemp(prefix="warp-duckwarm.")
    mnt, cache = os.path.join(tmp, "mnt"), os.path.join(tmp, "cache")
    os.makedirs(mnt)
    os.makedirs(cache)
    log = open(os.path.join(tmp, "warpd.log"), "w")
    warpd = subprocess.Popen([java, "-jar", args.jar, "warpd", "--mount", mnt, "--remote", "file://" + store,
                              "--cache-dir", cache, "--socket", os.path.join(tmp, "sock")], stdout=log, stderr=log)
    sql = None
    try:
        for _ in range(150):
            if os.path.isdir(os.path.join(mnt, "bench")):
                break
            if warpd.poll() is not None:
                log.close()
                with open(log.name) as f:
                    sys.exit("warpd exited at start; its log:\n" + f.read()[-4000:])
            time.sleep(0.2)
        sql = subprocess.Popen([java, "-cp", os.path.join(tools, "classes") + ":" + os.path.join(tools, "duckdb.jar"),
                                "BenchSql", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        if not json.loads(sql.stdout.readline()).get("ready"):
            sys.exit("BenchSql did not start")

        def ask(glob):
            sql.stdin.write(f"{args.query} {glob}\n")
            sql.stdin.flush()
            answer = json.loads(sql.stdout.readline())
            if "seconds" not in answer:
                sys.exit(f"query failed: {answer}")
            return answer

        def drop():
            subprocess.run(["sync"], check=True)
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")


        def served():
            try:
                d = json.load(open(os.path.join(cache, "stats.json")))
            except (OSError, ValueError):
                return 0, 0, 0
            return (d.get("fuse_requests", {}).get("read", 0), sum(d.get("read_bytes_by_dataset", {}).values()),
                    d.get("read", {}).get("disk_read_ahead_blocks", 0))

        over_warp = os.path.join(mnt, "bench", args.size, "main", "*.parquet")
        on_disk = os.path.join(local, "*.parquet")
        for _ in range(3):
            if ask(over_warp)["result"] != ask(on_disk)["result"]:
                sys.exit("WRONG DATA: the query over warpd differs from the local disk")
        time.sleep(3)
        pairs = []
        for _ in range(args.runs):
            drop()
            time.sleep(0.5)
            c0, (r0, b0, h0) = procs.proc_cpu_seconds(warpd.pid), served()
            w = ask(over_warp)["seconds"]
            time.sleep(2.2)  # stats.json is written each second
            c1, (r1, b1, h1) = procs.proc_cpu_seconds(warpd.pid), served()
            drop()
            time.sleep(0.5)
            loc = ask(on_disk)["seconds"]
            pairs.append((w, loc))
            print(f"{args.query}: warp {w * 1000:.0f} ms, local disk {loc * 1000:.0f} ms, {w / loc:.2f}x;"
                  f" warpd CPU {(c1 - c0) * 1000:.0f} ms, {r1 - r0} FUSE reads, {(b1 - b0) / 2 ** 20:.1f} MiB,"
                  f" {h1 - h0} block files read ahead", flush=True)
        ws, ls = sorted(p[0] for p in pairs), sorted(p[1] for p in pairs)
        mw, ml = ws[len(ws) // 2], ls[len(ls) // 2]
        print(f"median: warp {mw * 1000:.0f} ms, local disk {ml * 1000:.0f} ms, {mw / ml:.2f}x")
    finally:
        if sql is not None:
            sql.stdin.close()
            sql.wait()
        procs.unmount(mnt)
        procs.stop_pid(warpd.pid)
        warpd.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
