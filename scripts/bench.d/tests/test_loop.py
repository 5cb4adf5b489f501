"""The measurement loop on fake systems and measurements (no process, no sleep: a fake clock):
cold before each workload, warm right after, cold-only peers, --repeat-limit, the warm timeout
of a slow peer, failures, Warp's counters and the cache-files row."""
import types
from dataclasses import replace

from warpbench import loop as L
from warpbench.common import BenchError, Clock
from warpbench.workloads import WORKLOADS


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Env:
    network = None

    def __init__(self):
        self.clock = Clock()
        self.reg = types.SimpleNamespace(procs={})


class Sys:
    daemon_pid = None

    def __init__(self, name, events, missing=None, cold_error=None):
        self.name, self.events, self.missing, self.cold_error = name, events, missing, cold_error

    def cold(self, target="data"):
        self.events.append(("cold", self.name, target))
        if self.cold_error:
            raise BenchError(self.cold_error)

    def warm(self):
        self.events.append(("warm", self.name))

    def stop(self):
        self.events.append(("stop", self.name))


class Warp(Sys):
    restarted = False
    force_restart = False

    def __init__(self, events):
        super().__init__("warp", events)
        self.gets = 100

    def snapshot(self):
        self.gets += 7
        return {"read": {"gets_issued": self.gets}, "gauges": {"indexed_members": 10, "heap_used_bytes": 2000}}


class Helper:
    def __init__(self, name, events, error=None):
        self.name, self.events, self.error = name, events, error

    def start(self):
        self.events.append(("start helper", self.name))
        if self.error:
            raise BenchError(self.error)


class Runner:
    def __init__(self, events=None, helper_error=None):
        self.timeout = 150
        self.events = events if events is not None else []
        self.helper_error = helper_error

    def helper(self, workload):
        return Helper("imagefolder", self.events, self.helper_error) if workload.startswith("img-") else None

    def cache_cat(self, warp):
        return 1500.0, {"files": 2, "bytes": 10}


def make(systems=("warp", "s3fs", "local", "rawget"), runs=1, repeat_limit=30.0, helper_error=None, **sysargs):
    events = []
    sysmap = {n: (Warp(events) if n == "warp" else Sys(n, events, **sysargs.get(n, {}))) for n in
              ("warp", "s3fs", "rclone", "local", "rawget", "getsha", "pget")}
    for n in sysmap:
        if n not in systems:
            sysmap[n].missing = "not selected (--systems)"
    now = FakeClock()
    m = L.Measurements(Env(), Runner(events, helper_error), sysmap, runs, repeat_limit, now=now)
    return m, events, now


def workload(now, name="seq-dd", seconds=None, fail=None):
    """A registry workload whose measurement logs, takes seconds[system] of fake time and raises
    what fail(system) returns, if anything."""
    def measure(runner, s):
        s.events.append(("measure", s.name, runner.timeout))
        now.t += (seconds or {}).get(s.name, 1.0)
        error = fail(s) if fail else None
        if error:
            raise error
        return 100.0, {"bytes": 1 << 30}
    return replace(WORKLOADS[name], measure=measure)


def test_each_system_is_made_cold_measured_then_warm_and_daemons_stop_after_a_run():
    m, events, now = make()
    m.run([workload(now)])
    assert events == [
        ("cold", "warp", "data"), ("measure", "warp", 150), ("warm", "warp"), ("measure", "warp", 150),
        ("cold", "s3fs", "data"), ("measure", "s3fs", 150), ("warm", "s3fs"), ("measure", "s3fs", 150),
        ("cold", "local", "data"), ("measure", "local", 150), ("warm", "local"), ("measure", "local", 150),
        ("cold", "rawget", "data"), ("measure", "rawget", 150),  # a GET has no cache: cold only
        ("stop", "warp"), ("stop", "s3fs"), ("stop", "rclone")]
    assert m.res.vals[("seq-dd", "warm", "local")] == [100.0]
    assert ("seq-dd", "warm", "rawget") not in m.res.vals
    assert m.res.vals[("seq-dd", "warm", "cachecat")] == [1500.0]  # after warm seq-dd on warp


def test_the_clients_helper_starts_before_each_measurements_window_and_a_failed_start_is_its_error():
    m, events, now = make(systems=("warp",))
    m.run([workload(now, "img-seq")])
    assert events[:5] == [("cold", "warp", "data"), ("start helper", "imagefolder"), ("measure", "warp", 150),
                          ("warm", "warp"), ("start helper", "imagefolder")]
    m, events, now = make(systems=("warp",), helper_error="the imagefolder helper did not start")
    m.run([workload(now, "img-seq")])
    assert not [e for e in events if e[0] == "measure"]
    assert m.res.errors[("img-seq", "cold", "warp")] == ["the imagefolder helper did not start"]
    m, events, now = make(systems=("warp",))
    m.run([workload(now, "seq-dd")])
    assert not [e for e in events if e[0] == "start helper"]  # dd runs in no helper


def test_the_wide_tree_workloads_remount_the_peers_on_the_tree_bucket():
    m, events, now = make(systems=("s3fs",))
    m.run([workload(now, "ls-lR")])
    assert events[0] == ("cold", "s3fs", "tree")


def test_time_to_first_byte_restarts_warpd_and_other_workloads_do_not():
    m, _events, now = make(systems=("warp",))
    m.run([workload(now, "ttfb-big")])
    assert m.systems["warp"].force_restart is True
    m.run([workload(now, "img-seq")])
    assert m.systems["warp"].force_restart is False


def test_runs_repeat_warp_always_and_a_slow_peer_once():
    m, _events, now = make(systems=("warp", "s3fs", "local"), runs=3)
    m.run([workload(now, "img-seq", seconds={"warp": 40.0, "s3fs": 20.0, "local": 5.0})])
    assert len(m.res.vals[("img-seq", "cold", "warp")]) == 3   # 80 s a run, never limited
    assert len(m.res.vals[("img-seq", "cold", "s3fs")]) == 1   # 40 s (cold + warm) > 30 s
    assert len(m.res.vals[("img-seq", "warm", "s3fs")]) == 1
    assert len(m.res.vals[("img-seq", "cold", "local")]) == 3  # 10 s
    assert m.slow == {("img-seq", "s3fs")}


def made(s):
    """The cold and warm resets so far (what phase a measurement is in)."""
    return [e for e in s.events if e[0] in ("cold", "warm")]


def test_a_peer_slow_cold_gets_twice_its_cold_time_warm_and_its_timeout_says_so():
    m, events, now = make(systems=("warp", "s3fs", "local"))
    timeout = BenchError("timeout after 100s")
    m.run([workload(now, "img-seq", seconds={"warp": 50.0, "s3fs": 50.0, "local": 20.0},
                    fail=lambda s: timeout if s.name == "s3fs" and made(s)[-1] == ("warm", "s3fs") else None)])
    measured = [e for e in events if e[0] == "measure"]
    assert measured == [("measure", "warp", 150), ("measure", "warp", 150),   # Warp: never shortened
                        ("measure", "s3fs", 150), ("measure", "s3fs", 100),   # ceil(min(150, max(30, 2 x 50)))
                        ("measure", "local", 150), ("measure", "local", 150)]  # 20 s cold: under the limit
    assert m.res.errors[("img-seq", "warm", "s3fs")] == ["timeout after 100s (twice its cold time)"]
    assert m.runner.timeout == 150  # restored after each measurement


def test_a_failed_cold_start_fails_every_phase_of_that_cell_only():
    m, events, now = make(systems=("s3fs", "local"), s3fs={"cold_error": "s3fs did not mount within 90s"})
    m.run([workload(now, "img-seq")])
    assert m.res.errors == {("img-seq", "cold", "s3fs"): ["s3fs did not mount within 90s"],
                            ("img-seq", "warm", "s3fs"): ["s3fs did not mount within 90s"]}
    assert ("measure", "s3fs", 150) not in events
    assert m.res.vals[("img-seq", "warm", "local")] == [100.0]


def test_a_failed_measurement_is_recorded_and_the_next_phase_still_runs():
    m, _events, now = make(systems=("local",))
    m.run([workload(now, "img-seq", fail=lambda s: OSError("Input/output error") if not m.res.errors else None)])
    assert m.res.errors[("img-seq", "cold", "local")] == ["Input/output error"]
    assert m.res.vals[("img-seq", "warm", "local")] == [100.0]


def test_a_workload_whose_tool_is_missing_is_missing_on_every_system(monkeypatch):
    monkeypatch.setattr(L.shutil, "which", lambda tool: None)
    m, events, now = make(systems=("warp", "local"))
    m.run([workload(now, "seq-fio")])
    assert m.res.errors == {("seq-fio", "cold", "warp"): ["MISSING (fio not installed)"],
                            ("seq-fio", "cold", "local"): ["MISSING (fio not installed)"]}
    assert [e for e in events if e[0] != "stop"] == []


def test_missing_systems_are_not_touched():
    m, events, now = make(systems=("local",))
    m.run([workload(now, "img-seq")])
    assert {e[1] for e in events if e[0] in ("cold", "measure")} == {"local"}


def test_warps_counters_are_the_change_during_each_measurement():
    m, _events, now = make(systems=("warp",))
    m.run([workload(now, "img-seq")])
    # snapshots: 107 after cold (the start), 114 after the cold pass, 121 after the warm one
    assert m.warp_last[("img-seq", "cold")] == {"gets_issued": 7, "client_bytes": 1 << 30}
    assert m.warp_last[("img-seq", "warm")] == {"gets_issued": 7, "client_bytes": 1 << 30}
    assert m.warp_stats["img-seq/warm"]["read"]["gets_issued"] == 121
    assert m.heap_per_member == {"img-seq": 200.0}
    assert m.res.extra[("img-seq", "cold", "warp")][0]["warp_read_delta"] == {"gets_issued": 7}


def test_each_measurement_says_where_the_machines_cpu_went():
    m, _events, now = make(systems=("warp",))
    m.run([workload(now, "seq-dd", seconds={"warp": 2.0})])
    split = m.res.extra[("seq-dd", "cold", "warp")][0]["cpu_split"]
    assert set(split) == {"busy", "daemon", "store", "shaper", "client", "rest", "wall", "cores", "helper_started"}
    assert split["helper_started"] is False
    assert split["wall"] == 2.0
    assert split["cores"] >= 1
    # no daemon, store or shaper here: the machine's busy time is all the client's and the rest's
    assert split["daemon"] == split["store"] == split["shaper"] == 0.0


def test_the_client_is_the_harness_children_and_the_helpers_with_their_workers(monkeypatch):
    m, _events, _now = make(systems=("warp",))
    m.env.reg.procs = {"imagefolder": types.SimpleNamespace(pid=101), "s3proxy": types.SimpleNamespace(pid=102),
                       "shaper": types.SimpleNamespace(pid=103), "other": types.SimpleNamespace(pid=104)}
    tree = {101: 7.0, 102: 3.0, 103: 2.0, 104: 50.0, 200: 11.0}
    monkeypatch.setattr(L.procs, "proc_tree_cpu_seconds", lambda pid: tree.get(pid))
    monkeypatch.setattr(L.procs, "machine_busy_seconds", lambda: 99.0)
    monkeypatch.setattr(L.os, "times", lambda: types.SimpleNamespace(children_user=1.5, children_system=0.5))
    snap = m.cpu_snapshot(200)
    assert snap == {"busy": 99.0, "daemon": 11.0, "store": 3.0, "shaper": 2.0, "client": 2.0 + 7.0,
                    "helpers": {"imagefolder": 101}}


def test_a_cpu_split_is_the_change_of_each_part_with_the_rest_what_no_part_used():
    before = {"busy": 10.0, "daemon": 1.0, "store": 2.0, "shaper": 0.5, "client": 3.0}
    after = {"busy": 16.0, "daemon": 2.5, "store": 3.0, "shaper": 1.0, "client": 4.5}
    d = L.cpu_split_delta(before, after, 3.5)
    assert d == {"busy": 6.0, "daemon": 1.5, "store": 1.0, "shaper": 0.5, "client": 1.5, "rest": 1.5,
                 "wall": 3.5, "cores": d["cores"], "helper_started": False}
    # the ImageFolder helper started (or restarted) inside the measurement: its imports are in "client"
    started = L.cpu_split_delta(dict(before, helpers={}), dict(after, helpers={"imagefolder": 42}), 3.5)
    assert started["helper_started"] is True
    restarted = L.cpu_split_delta(dict(before, helpers={"imagefolder": 41}), dict(after, helpers={"imagefolder": 42}), 3.5)
    assert restarted["helper_started"] is True
    same = L.cpu_split_delta(dict(before, helpers={"imagefolder": 42}), dict(after, helpers={"imagefolder": 42}), 3.5)
    assert same["helper_started"] is False
