"""One bench run: set up (data, server, peers' objects, Warp's publish), then every selected
workload x system x phase, N runs, interleaved; then the report."""
import datetime
import math
import os
import platform
import shutil
import time

from . import procs, systems as systems_mod, workloads as workloads_mod
from .common import GIB, BenchError, git_commit, log
from .data import SCALES, data_facts, generate_data, generate_tensors, seed_peer_objects, tensor_facts
from .env import Env
from .measures import Runner
from .report import Results, counter_delta, report
from .systems import COLD_ONLY, DAEMONS, PEERS, SYSTEMS


def main_bench(args):
    # Each scale has its own buckets and dataset (env.names), so one size never sees the other's objects.
    cfg = dict(SCALES[args.scale])
    runs = args.runs or cfg["runs"]
    env = Env(args, cfg)
    os.makedirs(env.logs, exist_ok=True)
    procs.cleanup_from_state(env.reg.state_path)  # a previous run that died hard
    for name in DAEMONS:
        procs.unmount(os.path.join(env.run, "mnt", name))

    workloads = workloads_mod.select(args.only, quick=args.scale == "quick")
    system_names = systems_mod.parse_systems(args.systems)

    started = time.time()
    load_start = os.getloadavg()
    with env.clock.timed("setup: data generation"):
        generate_data(cfg, env.data, env.sql_cmd())
    with env.clock.timed("setup: data generation"):
        generate_tensors(cfg, env.data)
    with env.clock.timed("setup: data facts"):
        facts = data_facts(env.data)
        facts.update(tensor_facts(cfg, env.data))

    systems = systems_mod.build(env)
    warp, local = systems["warp"], systems["local"]
    rawget, getsha, pget = systems["rawget"], systems["getsha"], systems["pget"]
    for name, tool in (("s3fs", "s3fs"), ("rclone", "rclone")):
        if shutil.which(tool) is None:
            systems[name].missing = f"MISSING ({tool} not installed)"
    if shutil.which("curl") is None:
        rawget.missing = getsha.missing = pget.missing = "MISSING (curl not installed)"
    elif shutil.which("openssl") is None:
        getsha.missing = "MISSING (openssl not installed)"
    for tool in dict.fromkeys(wl.needs for wl in workloads_mod.REGISTRY if wl.needs):
        if shutil.which(tool) is None:
            which = ", ".join(wl.name for wl in workloads_mod.REGISTRY if wl.needs == tool)
            log(f"{tool} is not installed: the {which} workload is reported as MISSING")
    if os.environ.get("BENCH_WARP_MISSING"):
        warp.missing = "MISSING (" + os.environ["BENCH_WARP_MISSING"] + ")"
    elif not os.path.isfile(env.warp_jar):
        warp.missing = f"MISSING (no {env.warp_jar})"
    for name in SYSTEMS:
        if name not in system_names and not systems[name].missing:
            systems[name].missing = "not selected (--systems)"

    with env.clock.timed("setup: S3Proxy start"):
        env.start_server()
    with env.clock.timed("setup: peers' objects"):
        seed_peer_objects(env.data, env.s3_dir, env.names.buckets)
    if not warp.missing:
        try:
            with env.clock.timed("setup: warp publish"):
                warp.publish()
        except BenchError as e:
            warp.missing = f"ERROR ({e})"
            log(f"warp: {e}")

    network = None
    if env.network:
        with env.clock.timed("setup: network sanity"):
            network = dict(env.network, **env.sanity(os.path.join("images", facts["ttfb_image"])))
        log(f"network: time to first byte of a small GET through the shaper {network['ttfb_ms']} ms "
            f"(RTT {env.network['rtt_ms']:g} ms)")
    runner = Runner(env, systems, facts)
    base_timeout = runner.timeout
    if any(wl.name.startswith("duck-") for wl in workloads):
        # The local files' answers, which every mount's answer must equal (not timed).
        with env.clock.timed("setup: DuckDB reference answers"):
            for q in ("count", "filter", "groupby"):
                facts["duck_" + q] = runner.duck.ask(f"{q} {runner.table_glob(local)}", runner.timeout)["result"]
    res = Results()
    peak_rss = {}
    warp_stats = {}
    slow = set()   # (workload, system) measured once: one run took longer than --repeat-limit
    warp_last = {}  # (workload, phase) -> Warp's read counters during that measurement (last run)
    heap_per_member = {}
    for r in range(runs):
        log(f"run {r + 1}/{runs}")
        for wl in workloads:
            w, unit, phases = wl.name, wl.unit, wl.phases
            for sn in wl.systems:
                s = systems[sn]
                if s.missing:
                    continue
                if (w, sn) in slow:
                    continue
                spent = 0.0
                if wl.needs and shutil.which(wl.needs) is None:
                    res.err((w, "cold", sn), f"MISSING ({wl.needs} not installed)")
                    continue
                t_reset = time.perf_counter()
                if sn == "warp":
                    s.force_restart = wl.fresh_warp
                try:
                    with env.clock.timed(f"reset {sn}: cold start (incl. drop)"):
                        s.cold(wl.target)
                except BenchError as e:
                    for ph in phases:
                        res.err((w, ph, sn), str(e))
                    log(f"{w} {sn}: {e}")
                    continue
                # Warp's counters start at zero after a restart, else at the gc that made it cold.
                warp_prev = {}
                if sn == "warp" and not s.restarted:
                    with env.clock.timed("overhead: warp counters"):
                        warp_prev = s.snapshot() or {}
                cold_secs = None
                for ph in phases:
                    if sn in COLD_ONLY and ph == "warm":
                        continue
                    if ph == "warm":
                        with env.clock.timed(f"reset {sn}: warm (drop)"):
                            s.warm()
                    key = (w, ph, sn)
                    pid = getattr(s, "daemon_pid", None)
                    cpu0 = procs.proc_cpu_seconds(pid) if pid else None
                    # A peer that took longer than --repeat-limit cold gets twice its cold time
                    # warm: a warm pass slower than that is shown as TIMEOUT (s3fs's warm ls -lR
                    # of 100,000 files overflows its stat cache and runs for minutes).
                    runner.timeout = base_timeout
                    if ph == "warm" and sn in PEERS and cold_secs is not None and cold_secs > args.repeat_limit:
                        runner.timeout = math.ceil(min(base_timeout, max(args.repeat_limit, 2 * cold_secs)))
                    req0 = env.requests_settled() if env.network else None
                    t_m = time.perf_counter()
                    try:
                        value, extra = wl.measure(runner, s)
                    except (BenchError, OSError, ValueError, KeyError) as e:
                        msg = str(e)
                        if runner.timeout != base_timeout and msg.startswith("timeout"):
                            msg += " (twice its cold time)"
                        res.err(key, msg)
                        log(f"{w} {ph} {sn}: {msg}")
                        continue
                    finally:
                        spent += time.perf_counter() - t_m
                        env.clock.add(f"measure {sn}: {w}", time.perf_counter() - t_m)
                        runner.timeout = base_timeout
                    if ph == "cold":
                        cold_secs = time.perf_counter() - t_m
                    if req0 is not None:
                        req1 = env.requests_settled() or {}
                        extra["requests"] = {k: req1.get(k, 0) - req0.get(k, 0) for k in req1}
                        cpu1 = procs.proc_cpu_seconds(pid)
                        hwm = procs.proc_hwm_kib(pid)
                        if hwm:
                            peak_rss[sn] = max(peak_rss.get(sn, 0), hwm)
                        if cpu0 is not None and cpu1 is not None and extra.get("bytes"):
                            extra["daemon_cpu_s"] = cpu1 - cpu0
                            res.cpu.setdefault(key, []).append((cpu1 - cpu0) / (extra["bytes"] / GIB))
                    if sn == "warp":
                        with env.clock.timed("overhead: warp counters"):
                            st = warp.snapshot()
                        if st is not None:
                            extra["warp_stats"] = st
                            extra["warp_read_delta"] = counter_delta(st.get("read", {}), warp_prev.get("read", {}))
                            warp_prev = st
                            warp_stats[f"{w}/{ph}"] = st
                            warp_last[(w, ph)] = dict(extra["warp_read_delta"], client_bytes=extra.get("bytes"))
                            g = st.get("gauges", {})
                            if g.get("indexed_members") and g.get("heap_used_bytes"):
                                heap_per_member[w] = g["heap_used_bytes"] / g["indexed_members"]
                    res.add(key, value, extra)
                    log(f"{w} {ph} {sn}: {value:.3f} {unit}"
                        + (f" (cold start took {t_m - t_reset:.1f}s)" if ph == "cold" else ""))
                    if w == "seq-dd" and sn == "warp" and ph == "warm":
                        try:
                            with env.clock.timed("measure warp: cat of cache files"):
                                v, ex = runner.cache_cat(warp)
                            res.add(("seq-dd", "warm", "cachecat"), v, ex)
                            log(f"seq-dd warm cat-of-cache-files: {v:.0f} MB/s ({ex['files']} files)")
                        except (BenchError, OSError) as e:
                            res.err(("seq-dd", "warm", "cachecat"), str(e))
                            log(f"cache cat: {e}")
                # Only a peer is measured once when slow: Warp is what the bench measures, and
                # its cells keep their N runs even when a loaded machine slows them down.
                if r == 0 and runs > 1 and spent > args.repeat_limit and sn in PEERS:
                    slow.add((w, sn))
                    log(f"{w} {sn}: {spent:.0f}s > --repeat-limit {args.repeat_limit}s, measured once")
                if sn in DAEMONS:
                    pid = s.daemon_pid
                    hwm = procs.proc_hwm_kib(pid) if pid else None
                    if hwm:
                        peak_rss[sn] = max(peak_rss.get(sn, 0), hwm)
        # Daemons are not left running between runs.
        with env.clock.timed("overhead: stop daemons after a run"):
            for s in (systems[n] for n in DAEMONS):
                s.stop()
    elapsed = time.time() - started
    log(env.clock.summary(elapsed))
    load_end = os.getloadavg()
    env.reg.stop_all()

    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_commit(), "scale": args.scale, "runs": runs,
        "cpus": os.cpu_count(), "kernel": platform.release(),
        "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB, 1),
        "load_start": [round(x, 2) for x in load_start], "load_end": [round(x, 2) for x in load_end],
        "elapsed_s": round(elapsed), "page_cache_dropped": env.drop.ok,
        "rclone_vfs_cache_mode": args.rclone_cache_mode,
        "data": {"big_bytes": facts["big_bytes"], "table_shards": cfg["table_shards"],
                 "table_rows": cfg["table_shards"] * cfg["table_rows"],
                 "images": facts["image_files"], "image_bytes": facts["image_bytes"],
                 "tree_files": facts["tree_files"], "tensors": cfg["tensors"],
                 "tensor_files": cfg["tensor_files"]},
        "missing": {n: s.missing for n, s in systems.items() if s.missing},
        "network": network,
    }
    if network:
        sh = env.shaper() or {}
        network["shaper_cpu_s"] = sh.get("cpu_seconds")
        network["shaper_bytes_down"] = sh.get("bytes_down")
    meta["warp_read_counters"] = {f"{w}/{ph}": v for (w, ph), v in warp_last.items()}
    meta["warp_heap_bytes_per_indexed_member"] = heap_per_member
    report(meta, res, peak_rss, warp_stats, workloads, systems, args)

