"""What every part of the bench shares: paths, credentials, sizes, the log, the error, the clock
that says where a run's time went, and the page-cache drop."""
import datetime
import os
import subprocess
import sys
import time

from . import procs

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # scripts/bench.d: the helpers
REPO = os.path.dirname(os.path.dirname(HERE))
# Three buckets: S3Proxy's filesystem backend lists a bucket by walking all of it, and s3fs
# lists its whole bucket when it mounts, so the 100,000-file tree gets a bucket of its own
# (otherwise every s3fs remount would pay for listing it). Warp's store is apart as well.
# The peers' buckets and Warp's dataset are named after the scale: see Names.
WARP_BUCKET, WARP_PREFIX = "warp-bench", "store"
ACCESS_KEY = "benchkey"
SECRET_KEY = "benchsecret"
REGION = "us-east-1"
CREDS = procs.S3Creds(ACCESS_KEY, SECRET_KEY, REGION)
MIB = 1 << 20
GIB = 1 << 30

# A failed step or measurement: the message is shown in the table's failures.
BenchError = procs.HarnessError


class Names:
    """Each scale has its own buckets and dataset, so one size never sees the other's objects."""

    def __init__(self, scale):
        self.scale = scale
        self.dataset = f"bench/{scale}"
        self.buckets = {"data": f"peer-data-{scale}", "tree": f"peer-tree-{scale}"}

    def all_buckets(self):
        return [WARP_BUCKET] + list(self.buckets.values())


def log(msg):
    ts = datetime.datetime.now().strftime("%H:%M:%S")
    print(f"[bench {ts}] {msg}", file=sys.stderr, flush=True)


procs.set_log(log)


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
    """sync and drop the kernel's page cache; warns once when it cannot."""

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


def git_commit():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"
