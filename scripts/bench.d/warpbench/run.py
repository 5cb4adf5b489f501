"""One bench run: set up (data, server, peers' objects, Warp's publish), then every selected
workload x system x phase, N runs, interleaved (loop.py); then the report."""
import datetime
import os
import platform
import shutil
import time

from . import procs, systems as systems_mod, workloads as workloads_mod
from .common import GIB, BenchError, git_commit, log
from .data import SCALES, data_facts, generate_data, generate_tensors, seed_peer_objects, tensor_facts
from .env import Env
from .measures import Runner
from .loop import Measurements
from .report import report
from .systems import DAEMONS, SYSTEMS


def main_bench(args):
    # Each scale has its own buckets and dataset (env.names), so one size never sees the other's objects.
    cfg = dict(SCALES[args.scale])
    runs = args.runs or cfg["runs"]
    env = Env(args, cfg)
    os.makedirs(env.logs, exist_ok=True)
    procs.cleanup_from_state(env.reg.state_path)  # a previous run that died hard
    for name in DAEMONS:
        procs.unmount(os.path.join(env.run, "mnt", name))
    if os.path.isdir(os.path.join(env.run, "mnt")):
        for name in os.listdir(os.path.join(env.run, "mnt")):
            if name.startswith("fleet-"):  # the fleet's nodes (fleet.py)
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
    if args.fleet is not None:
        from .fleet import main_fleet
        if os.environ.get("BENCH_WARP_MISSING"):
            warp.missing = "MISSING (" + os.environ["BENCH_WARP_MISSING"] + ")"
        elif not os.path.isfile(env.warp_jar):
            warp.missing = f"MISSING (no {env.warp_jar})"
        return main_fleet(args, env, cfg, facts, warp, started, load_start)
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
    if any(wl.name.startswith("duck-") for wl in workloads):
        # The local files' answers, which every mount's answer must equal (not timed).
        with env.clock.timed("setup: DuckDB reference answers"):
            for q in ("count", "filter", "groupby"):
                facts["duck_" + q] = runner.duck.ask(f"{q} {runner.table_glob(local)}", runner.timeout)["result"]
    loop = Measurements(env, runner, systems, runs, args.repeat_limit)
    loop.run(workloads)
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
    meta["warp_read_counters"] = {f"{w}/{ph}": v for (w, ph), v in loop.warp_last.items()}
    meta["warp_heap_bytes_per_indexed_member"] = loop.heap_per_member
    meta["warp_jit_warm_up"] = getattr(systems.get("warp"), "warm_ups", [])
    meta["warp_jit_settled_cpu_s"] = getattr(systems.get("warp"), "JIT_SETTLED_CPU_S", None)
    report(meta, loop.res, loop.peak_rss, loop.warp_stats, workloads, systems, args)

