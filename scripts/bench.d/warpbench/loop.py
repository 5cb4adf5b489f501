"""The measurement loop: N runs of every workload x system, each system made cold before its
workload (and measured warm right after, where the workload has a warm phase), interleaved so
that every system meets the same machine. What it measured is left in Results and the fields
below for the report."""
import math
import os
import shutil
import time

from . import procs
from .common import GIB, BenchError, log
from .report import Results, counter_delta
from .systems import COLD_ONLY, DAEMONS, PEERS

# The helpers a workload's client runs in (procs.LineServer names, measures.Runner).
CLIENT_HELPERS = ("imagefolder", "tensors", "duckdb")


def cpu_split_delta(before, after, wall):
    """CPU seconds each part used between two Measurements.cpu_snapshot's, the machine's busy
    seconds and what is left of them (the kernel's threads, the harness, anything else)."""
    d = {k: round(max(0.0, after[k] - before[k]), 3) for k in before if k != "helpers"}
    d["rest"] = round(max(0.0, d["busy"] - d["daemon"] - d["store"] - d["shaper"] - d["client"]), 3)
    # A helper started during the measurement (its first use) counts its imports as the client's.
    d["helper_started"] = any(before.get("helpers", {}).get(n) != pid for n, pid in after.get("helpers", {}).items())
    d["wall"] = round(wall, 6)
    d["cores"] = os.cpu_count() or 1
    return d


class Measurements:
    def __init__(self, env, runner, systems, runs, repeat_limit, now=time.perf_counter):
        self.env, self.runner, self.systems = env, runner, systems
        self.runs, self.repeat_limit = runs, repeat_limit
        self.now = now  # the clock measurements are timed with
        self.base_timeout = runner.timeout
        self.res = Results()
        self.peak_rss = {}         # system -> VmHWM KiB, max over the run
        self.warp_stats = {}       # "workload/phase" -> warpd's stats after it
        self.slow = set()          # (workload, system) measured once: one run took longer than --repeat-limit
        self.warp_last = {}        # (workload, phase) -> Warp's read counters during that measurement (last run)
        self.heap_per_member = {}  # workload -> warpd heap bytes per indexed member after it

    def run(self, workloads):
        env = self.env
        for r in range(self.runs):
            log(f"run {r + 1}/{self.runs}")
            for wl in workloads:
                for sn in wl.systems:
                    self.cell(r, wl, sn)
            # Daemons are not left running between runs.
            with env.clock.timed("overhead: stop daemons after a run"):
                for s in (self.systems[n] for n in DAEMONS):
                    s.stop()

    def cell(self, r, wl, sn):
        """One workload on one system in run r: made cold, then each phase measured."""
        env, res, s, w = self.env, self.res, self.systems[sn], wl.name
        if s.missing or (w, sn) in self.slow:
            return
        if wl.needs and shutil.which(wl.needs) is None:
            res.err((w, "cold", sn), f"MISSING ({wl.needs} not installed)")
            return
        t_reset = self.now()
        if sn == "warp":
            s.force_restart = wl.fresh_warp
        try:
            with env.clock.timed(f"reset {sn}: cold start (incl. drop)"):
                s.cold(wl.target)
        except BenchError as e:
            for ph in wl.phases:
                res.err((w, ph, sn), str(e))
            log(f"{w} {sn}: {e}")
            return
        # Warp's counters start at zero after a restart, else at the gc that made it cold.
        self.warp_prev = {}
        if sn == "warp" and not s.restarted:
            with env.clock.timed("overhead: warp counters"):
                self.warp_prev = s.snapshot() or {}
        self.spent = 0.0
        self.cold_secs = None
        for ph in wl.phases:
            if sn in COLD_ONLY and ph == "warm":
                continue
            if ph == "warm":
                with env.clock.timed(f"reset {sn}: warm (drop)"):
                    s.warm()
            self.phase(wl, ph, s, t_reset)
        # Only a peer is measured once when slow: Warp is what the bench measures, and
        # its cells keep their N runs even when a loaded machine slows them down.
        if r == 0 and self.runs > 1 and self.spent > self.repeat_limit and sn in PEERS:
            self.slow.add((w, sn))
            log(f"{w} {sn}: {self.spent:.0f}s > --repeat-limit {self.repeat_limit}s, measured once")
        if sn in DAEMONS:
            pid = s.daemon_pid
            hwm = procs.proc_hwm_kib(pid) if pid else None
            if hwm:
                self.peak_rss[sn] = max(self.peak_rss.get(sn, 0), hwm)

    def timeout(self, ph, sn):
        """A peer that took longer than --repeat-limit cold gets twice its cold time warm: a
        warm pass slower than that is shown as TIMEOUT (s3fs's warm ls -lR of 100,000 files
        overflows its stat cache and runs for minutes)."""
        base = self.base_timeout
        if ph == "warm" and sn in PEERS and self.cold_secs is not None and self.cold_secs > self.repeat_limit:
            return math.ceil(min(base, max(self.repeat_limit, 2 * self.cold_secs)))
        return base

    def phase(self, wl, ph, s, t_reset):
        env, res, runner, w, sn = self.env, self.res, self.runner, wl.name, s.name
        key = (w, ph, sn)
        # The client's helper is started before anything is counted (its imports are not the
        # pass's work; a start failure is the measurement's error).
        helper = runner.helper(w)
        if helper is not None:
            try:
                helper.start()
            except BenchError as e:
                res.err(key, str(e))
                log(f"{w} {ph} {sn}: {e}")
                return
        pid = getattr(s, "daemon_pid", None)
        cpu0 = procs.proc_cpu_seconds(pid) if pid else None
        runner.timeout = self.timeout(ph, sn)
        req0 = env.requests_settled() if env.network else None
        # The CPU split covers the measurement's own window: from here to its end, not the
        # settling before it (the last one's read-ahead still arriving) nor after it.
        split0 = self.cpu_snapshot(pid)
        t_m = self.now()
        try:
            value, extra = wl.measure(runner, s)
        except (BenchError, OSError, ValueError, KeyError) as e:
            msg = str(e)
            if runner.timeout != self.base_timeout and msg.startswith("timeout"):
                msg += " (twice its cold time)"
            res.err(key, msg)
            log(f"{w} {ph} {sn}: {msg}")
            return
        finally:
            self.spent += self.now() - t_m
            env.clock.add(f"measure {sn}: {w}", self.now() - t_m)
            runner.timeout = self.base_timeout
        split1 = self.cpu_snapshot(pid)
        extra["cpu_split"] = cpu_split_delta(split0, split1, self.now() - t_m)
        if ph == "cold":
            self.cold_secs = self.now() - t_m
        if req0 is not None:
            req1 = env.requests_settled() or {}
            extra["requests"] = {k: req1.get(k, 0) - req0.get(k, 0) for k in req1}
        if pid:
            cpu1 = procs.proc_cpu_seconds(pid)
            hwm = procs.proc_hwm_kib(pid)
            if hwm:
                self.peak_rss[sn] = max(self.peak_rss.get(sn, 0), hwm)
            if cpu0 is not None and cpu1 is not None and extra.get("bytes"):
                extra["daemon_cpu_s"] = cpu1 - cpu0
                res.cpu.setdefault(key, []).append((cpu1 - cpu0) / (extra["bytes"] / GIB))
        if sn == "warp":
            self.warp_counters(w, ph, s, extra)
        res.add(key, value, extra)
        log(f"{w} {ph} {sn}: {value:.3f} {wl.unit}"
            + (f" (cold start took {t_m - t_reset:.1f}s)" if ph == "cold" else ""))
        if w == "seq-dd" and sn == "warp" and ph == "warm":
            self.cache_cat(s)

    def cpu_snapshot(self, daemon_pid):
        """CPU seconds so far of the whole machine and of the processes a measurement runs on:
        the system's daemon, S3Proxy, the shaper, and the client (the harness's children it has
        waited for, such as dd and curl, and the helpers that run ImageFolder, numpy and DuckDB,
        with their DataLoader workers). A helper started during the measurement counts from 0."""
        reg = self.env.reg.procs

        def tree(name):
            p = reg.get(name)
            return (procs.proc_tree_cpu_seconds(p.pid) or 0.0) if p is not None else 0.0

        t = os.times()
        return {"busy": procs.machine_busy_seconds(),
                "daemon": (procs.proc_tree_cpu_seconds(daemon_pid) or 0.0) if daemon_pid else 0.0,
                "store": tree("s3proxy"), "shaper": tree("shaper"),
                "client": t.children_user + t.children_system + sum(tree(n) for n in CLIENT_HELPERS),
                "helpers": {n: reg[n].pid for n in CLIENT_HELPERS if n in reg}}

    def warp_counters(self, w, ph, warp, extra):
        """Warp's counters during the measurement, into its extra and the report's tables."""
        with self.env.clock.timed("overhead: warp counters"):
            st = warp.snapshot()
        if st is None:
            return
        extra["warp_stats"] = st
        extra["warp_read_delta"] = counter_delta(st.get("read", {}), self.warp_prev.get("read", {}))
        self.warp_prev = st
        self.warp_stats[f"{w}/{ph}"] = st
        self.warp_last[(w, ph)] = dict(extra["warp_read_delta"], client_bytes=extra.get("bytes"))
        g = st.get("gauges", {})
        if g.get("indexed_members") and g.get("heap_used_bytes"):
            self.heap_per_member[w] = g["heap_used_bytes"] / g["indexed_members"]

    def cache_cat(self, warp):
        """After warm seq-dd on Warp: cat of its cache's block files, the reference row."""
        key = ("seq-dd", "warm", "cachecat")
        try:
            with self.env.clock.timed("measure warp: cat of cache files"):
                v, ex = self.runner.cache_cat(warp)
            self.res.add(key, v, ex)
            log(f"seq-dd warm cat-of-cache-files: {v:.0f} MB/s ({ex['files']} files)")
        except (BenchError, OSError) as e:
            self.res.err(key, str(e))
            log(f"cache cat: {e}")
