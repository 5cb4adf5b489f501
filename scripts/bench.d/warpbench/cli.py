"""The command line of scripts/bench: flags, --cleanup, signals, exit status."""
import argparse
import os
import signal
import subprocess

from . import procs
from .common import REPO, BenchError, log
from .run import main_bench
from .systems import SYSTEMS
from .workloads import WORKLOADS

DESCRIPTION = "scripts/bench: Warp against s3fs, rclone mount, a raw GET (alone, and verified and written to a"
# --network profiles: RTT added to every request (ms) and the pace of each connection (MB/s).
# s3like: a real bucket answers after 10-50 ms and gives one connection ~85-90 MB/s; the rate is
# scaled down to what this 2-core machine can shape and serve (docs/bench.md).
NETWORKS = {"loopback": None, "s3like": {"rtt_ms": 20.0, "rate_mbps": 25.0}}
# --fleet's store link: all connections to the store together get at most this many MB/s (the
# nodes' shared uplink to the store). Chosen so that one node is bound by the link, not by this
# 2-core machine's CPU, with room for N nodes' reads on the same cores (docs/bench.md, Fleets).
FLEET_STORE_LINK_MBPS = 40.0


def store_link(text):
    """--store-link's value: MB/s > 0, or 0 / none / off for no cap (0.0)."""
    if text.strip().lower() in ("none", "off", "0"):
        return 0.0
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate in MB/s (or none)") from None
    if v < 0:
        raise argparse.ArgumentTypeError("a link rate must be > 0 MB/s (or none)")
    return v


def passes(text):
    """--warp-warm-up-passes' value: a whole number >= 1 (a fresh warpd always gets one pass)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of passes") from None
    if v < 1:
        raise argparse.ArgumentTypeError("at least 1 pass: a fresh warpd's first cold row otherwise measures JVM"
                                         " start-up; --warp-cold-restart measures that on purpose")
    return v


def parser():
    ap = argparse.ArgumentParser(prog="scripts/bench", description=DESCRIPTION)
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
    ap.add_argument("--warp-warm-up-passes", type=passes, default=12, metavar="N",
                    help="cold passes over the big file and the images that warm a fresh warpd's JIT up before "
                         "cold measurements, at most; they stop when a pass costs the JIT compilers under "
                         "0.25 CPU s (default 12; 1 = one pass, as before)")
    ap.add_argument("--warp-cold-restart", action="store_true",
                    help="make Warp cold by restarting warpd on an empty cache (default: empty the running daemon's cache)")
    ap.add_argument("--network", choices=list(NETWORKS), default="loopback",
                    help="loopback (default): S3Proxy as it is; s3like: every system reaches it through "
                         "shaper.py (RTT 20 ms, 25 MB/s per connection) and requests are counted")
    ap.add_argument("--rtt", type=float, help="milliseconds added to every request (implies a shaped network)")
    ap.add_argument("--conn-rate", type=float, help="MB/s per connection (implies a shaped network)")
    ap.add_argument("--store-link", type=store_link, metavar="MBPS",
                    help="cap the shaped store link as a whole: all connections together get at most "
                         f"MBPS MB/s (default {FLEET_STORE_LINK_MBPS:g} with --fleet, else none; 0 or none: "
                         "no cap; implies a shaped network)")
    ap.add_argument("--fleet", type=int, nargs="?", const=4, metavar="N",
                    help="instead of the workloads: N warpd processes (default 4) read the same dataset at "
                         "once, straight to the store and through one nginx mirror (docs/bench.md, Fleets); "
                         "implies --network s3like unless a shaped network is given")
    ap.add_argument("--cleanup", action="store_true", help="only tear down what a dead run left behind")
    return ap


def parse_args(argv=None):
    """The flags, with the derived ones: args.scale ("quick" or "full") and args.shape (the
    shaped network's {"rtt_ms", "rate_mbps"}, plus "link_mbps" when the link as a whole is capped,
    or None on plain loopback)."""
    ap = parser()
    args = ap.parse_args(argv)
    args.shape = dict(NETWORKS[args.network] or {}) if args.network != "loopback" or args.rtt is not None \
        or args.conn_rate is not None or args.store_link else None
    if args.shape is not None:
        args.shape = dict(NETWORKS["s3like"], **args.shape)
        if args.rtt is not None:
            args.shape["rtt_ms"] = args.rtt
        if args.conn_rate is not None:
            args.shape["rate_mbps"] = args.conn_rate
        if args.shape["rtt_ms"] < 0 or args.shape["rate_mbps"] <= 0:
            ap.error("--rtt must be 0 or more and --conn-rate more than 0")
    if args.fleet is not None:
        if args.fleet < 1:
            ap.error("--fleet N needs N >= 1")
        if args.only or args.systems:
            ap.error("--fleet runs the fleet passes only; leave out --only and --systems")
        if args.shape is None:  # the store's bytes and requests are counted at the shaper
            args.shape = dict(NETWORKS["s3like"])
        if args.store_link is None:
            args.store_link = FLEET_STORE_LINK_MBPS
    if args.shape is not None and args.store_link:
        args.shape["link_mbps"] = args.store_link
    args.scale = "quick" if args.quick else "full"
    if args.json:
        args.json = os.path.abspath(args.json)
    return args


def main(argv=None):
    args = parse_args(argv)
    state = os.path.join(os.path.abspath(args.workdir), "run", "state.json")
    if args.cleanup:
        procs.cleanup_from_state(state)
        return 0

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
        procs.cleanup_from_state(state)
