"""The report: medians and min-max of each cell, ratios against each peer, the targets, the
side tables (tensors, daemon resources, Warp's counters, requests), as Markdown on stdout and,
with --json, as JSON. Pure arithmetic and formatting over Results: no process, no file read."""
import json
import statistics

from .common import GIB, MIB, log
from .data import TENSOR_FLOATS, TENSOR_PICKS
from .systems import COLD_ONLY, DAEMONS, PEERS, PGET_STREAMS, SYSTEM_LABEL, SYSTEMS

S3_GET_USD_PER_1000 = 0.0004   # S3 Standard, us-east-1: GET and HEAD per 1,000 requests
S3_LIST_USD_PER_1000 = 0.005   # LIST (like PUT) per 1,000 requests
IMAGENET_IMAGES = 1_281_167    # ImageNet-1k training images


def median_cell(vals, unit, runs=1):
    if not vals:
        return None
    fmt = (lambda v: f"{v:.0f}") if unit in ("MB/s", "files/s", "tensors/s") else \
        (lambda v: f"{v:.1f}") if unit == "ms" else (lambda v: f"{v:.3f}" if v < 10 else f"{v:.1f}")
    med = statistics.median(vals)
    if len(vals) == 1:
        return fmt(med) + (" (n=1)" if runs > 1 else "")
    n = f", n={len(vals)}" if len(vals) < runs else ""
    return f"{fmt(med)} ({fmt(min(vals))}–{fmt(max(vals))}{n})"


class Results:
    def __init__(self):
        self.vals = {}     # (workload, phase, system) -> [values]
        self.errors = {}   # (workload, phase, system) -> [messages]
        self.extra = {}    # (workload, phase, system) -> [extra dicts]
        self.cpu = {}      # (workload, phase, system) -> [cpu seconds per GiB]

    def add(self, key, value, extra):
        self.vals.setdefault(key, []).append(value)
        self.extra.setdefault(key, []).append(extra)

    def err(self, key, msg):
        self.errors.setdefault(key, []).append(msg)

    def median(self, key):
        v = self.vals.get(key)
        return statistics.median(v) if v else None

    def median_mbps(self, key):
        """Median MB/s of a files/s workload, from the bytes and seconds each pass reported."""
        v = [e["bytes"] / e["seconds"] / 1e6 for e in self.extra.get(key, []) if e.get("bytes") and e.get("seconds")]
        return statistics.median(v) if v else None



def counter_delta(now, before):
    """now - before for the numeric counters of one stats.json section."""
    return {k: v - before.get(k, 0) for k, v in now.items() if isinstance(v, (int, float))}


def targets(res):
    """The issue-4 and DESIGN section 11 targets, from medians of this run."""
    m = res.median
    out = []

    def ratio(name, a, b, goal, how, invert=False):
        va, vb = m(a), m(b)
        if va is None or vb is None or va == 0 or vb == 0:
            out.append({"target": name, "ratio": None, "goal": f"{how} {goal}", "met": None})
            return
        r = vb / va if invert else va / vb
        met = r >= goal if how == ">=" else r <= goal
        out.append({"target": name, "ratio": round(r, 3), "goal": f"{how} {goal}", "met": met})

    ratio("cold sequential: warp / raw GET (MB/s)", ("seq-dd", "cold", "warp"), ("seq-dd", "cold", "rawget"), 0.8, ">=")
    ratio("cold sequential: warp / GET+SHA-256+file (MB/s)", ("seq-dd", "cold", "warp"), ("seq-dd", "cold", "getsha"),
          1.0, ">=")
    ratio("warm sequential: warp / cat of warpd's cache block files (MB/s)", ("seq-dd", "warm", "warp"),
          ("seq-dd", "warm", "cachecat"), 0.8, ">=")
    ratio("ImageFolder cold, folder order: warp / local disk (files/s)", ("img-seq", "cold", "warp"),
          ("img-seq", "cold", "local"), 0.5, ">=")
    ratio("ImageFolder warm, folder order: warp / local disk (files/s)", ("img-seq", "warm", "warp"),
          ("img-seq", "warm", "local"), 0.8, ">=")
    ratio("ImageFolder cold, folder order: warp / rclone (files/s)", ("img-seq", "cold", "warp"),
          ("img-seq", "cold", "rclone"), 5.0, ">=")
    for w in ("ls-lR", "find"):
        ratio(f"{w} cold: warp time / local disk time", (w, "cold", "warp"), (w, "cold", "local"), 2.0, "<=")
    for w in ("duck-count", "duck-filter", "duck-groupby"):
        ratio(f"{w} warm: warp time / local disk time", (w, "warm", "warp"), (w, "warm", "local"), 1.2, "<=")
    return out


def tensor_table(res, workloads, systems, runs):
    """The tensor-npy and tensor-mmap rows beside each other: the same 1,000 tensors through
    .npy files and through one mmap of each .safetensors file, per system and phase; then Warp's
    tensor-npy-planned (the same .npy reads, the order told to warpd first) and planned/npy."""
    names = ("tensor-npy", "tensor-mmap", "tensor-npy-planned")
    if not any(w in workloads for w in names):
        return []

    def cell(w, ph, sn):
        if systems[sn].missing:
            return systems[sn].missing.split(" (")[0]
        if w not in workloads:
            return ""
        key = (w, ph, sn)
        return median_cell(res.vals.get(key, []), "tensors/s", runs) or ("FAILED" if res.errors.get(key) else "—")

    lines = ["", f"Single tensors, {TENSOR_PICKS} random ones (tensors/s ↑; mmap/npy above 1: the mmap is faster; "
                 "planned/npy above 1: telling warpd the order first is faster):", "",
             "| phase | warp .npy | warp mmap | warp mmap/npy | local .npy | local mmap | local mmap/npy "
             "| .npy warp/local | mmap warp/local | warp .npy planned | warp planned/npy |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for ph in ("cold", "warm"):
        cells = []
        for sn in ("warp", "local"):
            for w in ("tensor-npy", "tensor-mmap"):
                cells.append(cell(w, ph, sn))
            npy, mm = res.median(("tensor-npy", ph, sn)), res.median(("tensor-mmap", ph, sn))
            cells.append(f"{mm / npy:.2f}" if npy and mm else "")
        for w in ("tensor-npy", "tensor-mmap"):
            a, b = res.median((w, ph, "warp")), res.median((w, ph, "local"))
            cells.append(f"{a / b:.2f}" if a and b else "")
        cells.append(cell("tensor-npy-planned", ph, "warp"))
        npy, planned = res.median(("tensor-npy", ph, "warp")), res.median(("tensor-npy-planned", ph, "warp"))
        cells.append(f"{planned / npy:.2f}" if npy and planned else "")
        lines.append("| " + " | ".join([ph] + cells) + " |")
    return lines


def s3like_targets(res, meta, peak_rss):
    """Issue 16's targets under a shaped network, from medians of this run."""
    m = res.median
    out = []

    def add(name, r, goal, how):
        met = None if r is None else (r >= goal if how == ">=" else r <= goal)
        out.append({"target": name, "ratio": None if r is None else round(r, 3), "goal": f"{how} {goal}", "met": met})

    def ratio(a, b):
        va, vb = m(a), m(b)
        return va / vb if va and vb else None

    add("cold sequential: warp / raw GET (MB/s)", ratio(("seq-dd", "cold", "warp"), ("seq-dd", "cold", "rawget")), 6, ">=")
    add(f"cold sequential: warp / {PGET_STREAMS} ranged GETs (MB/s)",
        ratio(("seq-dd", "cold", "warp"), ("seq-dd", "cold", "pget")), 0.7, ">=")
    # Issue 26: small files as fast as one big file, and the link's practical limit.
    add(f"issue 26, cold sequential: warp / {PGET_STREAMS} ranged GETs (MB/s)",
        ratio(("seq-dd", "cold", "warp"), ("seq-dd", "cold", "pget")), 0.9, ">=")
    img, big = res.median_mbps(("img-seq", "cold", "warp")), m(("seq-dd", "cold", "warp"))
    add("issue 26, ImageFolder cold, folder order: warp MB/s / warp's cold sequential MB/s of the big file",
        img / big if img and big else None, 0.8, ">=")
    # What the same client reaches on the local disk, over the same big-file rate: the client's own
    # ceiling for the target above on this machine (no file system can beat the local disk's pass).
    local = res.median_mbps(("img-seq", "cold", "local"))
    out.append({"target": "the ceiling of the target above on this machine: local disk's ImageFolder MB/s (cold, "
                          "same client) / warp's cold sequential MB/s of the big file",
                "ratio": round(local / big, 3) if local and big else None, "goal": "(reference)", "met": None})
    for p in ("rclone", "s3fs"):
        add(f"ImageFolder cold, folder order: warp / {p} (files/s)",
            ratio(("img-seq", "cold", "warp"), ("img-seq", "cold", p)), 20, ">=")
    add("ImageFolder cold, shuffled: warp / s3fs (files/s)",
        ratio(("img-shuffle", "cold", "warp"), ("img-shuffle", "cold", "s3fs")), 5, ">=")
    add("ImageFolder cold, shuffled with the order told to warpd: warp img-planned / warp img-seq (files/s)",
        ratio(("img-planned", "cold", "warp"), ("img-seq", "cold", "warp")), 0.8, ">=")
    t = m(("ttfb-new", "cold", "warp"))
    one = meta["network"].get("ttfb_ms")
    add(f"time to first byte, version never opened, running daemon: warp ms / one request's round trip"
        f" ({one} ms: a small GET's first byte through the shaper)", t / one if t and one else None, 3, "<=")
    for w in ("duck-count", "duck-filter", "duck-groupby"):
        peers = [x for x in (m((w, "cold", "s3fs")), m((w, "cold", "rclone"))) if x]
        mw = m((w, "cold", "warp"))
        add(f"{w} cold: warp time / the faster of s3fs and rclone", mw / min(peers) if mw and peers else None, 1.0, "<=")
    rss = peak_rss.get("warp")
    add("warpd peak RSS over the bench, MiB", rss / 1024 if rss else None, 512, "<=")
    return out


# A pass whose machine was busy at least this share of its cores' time ran out of CPU.
CPU_SATURATED = 0.9

CPU_PARTS = (("daemon", "the system's daemon"), ("store", "S3Proxy"), ("shaper", "the shaper"),
             ("client", "the client"), ("rest", "the rest"))


def cpu_split(res, key):
    """Medians over runs of one measurement's CPU split (loop.cpu_split_delta), per GiB the client
    read, with the machine's busy share; None when not measured."""
    ex = [e for e in res.extra.get(key, []) if e.get("cpu_split") and e.get("bytes")]
    if not ex:
        return None
    # Leave out a run whose helper started inside it (torch's imports are not the pass's work),
    # unless every run did (then the row says so).
    clean = [e for e in ex if not e["cpu_split"].get("helper_started")]
    started = not clean
    ex = clean or ex
    gib = [e["bytes"] / GIB for e in ex]
    out = {p: statistics.median(e["cpu_split"][p] / g for e, g in zip(ex, gib)) for p, _ in CPU_PARTS}
    out["total"] = statistics.median(e["cpu_split"]["busy"] / g for e, g in zip(ex, gib))
    out["busy_share"] = statistics.median(
        e["cpu_split"]["busy"] / max(1e-9, e["cpu_split"]["wall"] * (e["cpu_split"]["cores"] or 1)) for e in ex)
    out["helper_started"] = started
    return out


def cpu_table(res):
    """Where the machine's CPU went in the cold passes issue 26's ImageFolder target compares.
    When both keep every core busy, the ratio of their MB/s can be no better than the ratio of
    their CPU seconds per GiB (the big file's over ImageFolder's), whatever each part does."""
    rows = [("seq-dd", "cold", "warp", "big file, dd, Warp"),
            ("img-seq", "cold", "warp", "ImageFolder, folder order, Warp"),
            ("seq-dd", "cold", "pget", f"big file, {PGET_STREAMS} ranged GETs")]
    splits = {k[:3]: cpu_split(res, k[:3]) for k in rows}
    if not any(splits.values()):
        return [], None
    lines = ["", "Where the CPU went in the cold passes (CPU seconds per GiB the client read, medians; "
             "the client: dd, curl, or the ImageFolder helper with its DataLoader workers; the rest: "
             "the kernel's own threads, time stolen by the hypervisor, the harness, anything else on the machine):", "",
             "| pass | machine busy | " + " | ".join(label for _, label in CPU_PARTS) + " | all |",
             "|---|---|" + "---|" * len(CPU_PARTS) + "---|"]
    for w, ph, sn, label in rows:
        c = splits[(w, ph, sn)]
        if c:
            if c["helper_started"]:
                label += " (its helper's start included)"
            lines.append(f"| {label} | {c['busy_share'] * 100:.0f}% | "
                         + " | ".join(f"{c[p]:.2f}" for p, _ in CPU_PARTS) + f" | {c['total']:.2f} |")
    big, img = splits[("seq-dd", "cold", "warp")], splits[("img-seq", "cold", "warp")]
    bound = None
    if big and img and img["total"]:
        saturated = min(big["busy_share"], img["busy_share"]) >= CPU_SATURATED
        bound = {"ratio": round(big["total"] / img["total"], 3), "holds": saturated,
                 "busy_share_big": round(big["busy_share"], 3), "busy_share_img": round(img["busy_share"], 3)}
        cost = (f"a GiB of ImageFolder cost the machine {img['total']:.2f} CPU s against {big['total']:.2f} for the "
                f"big file, {img['client'] - big['client']:.2f} of the difference in the client and "
                f"{img['daemon'] - big['daemon']:.2f} in the daemon.")
        busy = (f"The machine was busy {big['busy_share'] * 100:.0f}% and {img['busy_share'] * 100:.0f}% of its "
                f"cores' time in the two Warp passes")
        if saturated:
            lines += ["", f"{busy}: both ran out of CPU, so ImageFolder's MB/s over the big file's can be at most "
                      f"about {bound['ratio']:.2f} (an estimate: the CPU is taken over each measurement's window, "
                      f"the rate over the client's own timing): {cost}"]
        else:
            lines += ["", f"{busy}: a pass under {CPU_SATURATED * 100:.0f}% waited for something other than CPU "
                      f"(the link, a round trip), so CPU alone sets no bound on their ratio here; {cost}"]
    return lines, bound


def request_table(res, workloads, images):
    """GET/HEAD/LIST counted at the shaper per measurement (median over runs), and what one
    ImageNet-1k epoch (1.28 M images) would cost in requests on S3 at each system's rate per image
    in the cold ImageFolder passes (Warp: tar shards; the peers: one object per image)."""
    rows = []
    for wl in workloads:
        w = wl.name
        for ph in wl.phases:
            for sn in wl.systems:
                ex = [e["requests"] for e in res.extra.get((w, ph, sn), []) if e.get("requests") is not None]
                if ex:
                    rows.append((w, ph, sn, {k: statistics.median([e.get(k, 0) for e in ex])
                                             for k in ("GET", "HEAD", "LIST")}))
    if not rows:
        return []
    lines = ["", "Requests reaching the store per measurement (counted at the shaper; median of the runs):", "",
             "| workload | phase | system | GET | HEAD | LIST |", "|---|---|---|---|---|---|"]
    for w, ph, sn, med in rows:
        lines.append(f"| {w} | {ph} | {SYSTEM_LABEL[sn]} | {med['GET']:.0f} | {med['HEAD']:.0f} | {med['LIST']:.0f} |")
    epoch = [(w, sn, med) for w, ph, sn, med in rows if w in ("img-seq", "img-shuffle", "img-planned") and ph == "cold"]
    if epoch and images:
        lines += ["", f"One ImageNet-1k epoch ({IMAGENET_IMAGES:,} images) at each cold pass's requests per image, "
                      f"S3 Standard prices (${S3_GET_USD_PER_1000} per 1,000 GET/HEAD, ${S3_LIST_USD_PER_1000} per 1,000 LIST):",
                  "", "| pass | system | requests per image | requests per epoch | USD per epoch |", "|---|---|---|---|---|"]
        for w, sn, med in epoch:
            per = (med["GET"] + med["HEAD"] + med["LIST"]) / images
            usd = IMAGENET_IMAGES / images * ((med["GET"] + med["HEAD"]) * S3_GET_USD_PER_1000
                                             + med["LIST"] * S3_LIST_USD_PER_1000) / 1000
            lines.append(f"| {w} | {SYSTEM_LABEL[sn]} | {per:.4f} | {per * IMAGENET_IMAGES:,.0f} | {usd:.2f} |")
    return lines


def link_cap(net):
    """The shaped link's shared cap as words for a header: ", at most X MB/s for all connections
    together", or "" when uncapped."""
    return f", at most {net['link_mbps']:g} MB/s for all connections together" if net.get("link_mbps") else ""


def jit_warm_up_text(starts, settled_below):
    """What the warm-up passes of each warpd start did (a list per start of the compiler CPU
    seconds of each pass), in words; a start whose last pass cost settled_below or more ran out
    of passes before its JIT settled."""
    passes = ", ".join(str(len(s)) for s in starts)
    last = ", ".join(f"{s[-1]:.2f}" for s in starts)
    unsettled = sum(1 for s in starts if s[-1] >= settled_below)
    return (f"{len(starts)} fresh warpd(s) served {passes} cold warm-up pass(es) over the big file and the images; "
            f"their JIT compilers used {last} CPU s in the last pass; "
            + (f"settled (under {settled_below:g}) in every start" if not unsettled else
               f"{unsettled} of {len(starts)} not settled (under {settled_below:g}) when the passes ran out"))


def render(meta, res, peak_rss, warp_stats, workloads, systems):
    """The whole report: (Markdown text, the JSON document). workloads: the run's Workloads;
    systems: name -> an object whose .missing is None or why it did not run."""
    cols = list(SYSTEMS)
    peers = list(PEERS)
    names = [wl.name for wl in workloads]
    lines = []
    d = meta["data"]
    lines.append(f"Warp bench, {meta['date']}, commit {meta['commit']}, scale {meta['scale']}, "
                 f"median of {meta['runs']} run(s) (min–max in brackets)  ")
    net = meta.get("network")
    where = ("S3Proxy on loopback" if not net else
             f"S3Proxy on loopback behind shaper.py: RTT {net['rtt_ms']:g} ms added to every request, "
             f"{net['rate_mbps']:g} MB/s per connection{link_cap(net)} (measured: first byte of a small GET {net.get('ttfb_ms')} ms; "
             f"the shaper used {net.get('shaper_cpu_s')} CPU s for {(net.get('shaper_bytes_down') or 0) / 1e9:.1f} GB)")
    lines.append(f"Machine: {meta['cpus']} cores, {meta['mem_gib']} GiB RAM, Linux {meta['kernel']}, "
                 f"{where}; load average {meta['load_start'][0]} at start, "
                 f"{meta['load_end'][0]} at end; {meta['elapsed_s']} s in all  ")
    jit = meta.get("warp_jit_warm_up")
    if jit:
        lines.append(f"Warp's JIT before its cold rows: {jit_warm_up_text(jit, meta['warp_jit_settled_cpu_s'])}  ")
    lines.append(f"Data: big file {d['big_bytes'] / MIB:.0f} MiB; table {d['table_shards']} shards, "
                 f"{d['table_rows']} rows; {d['images']} images ({d['image_bytes'] / MIB:.0f} MiB); "
                 f"wide tree {d['tree_files']} files; {d['tensors']} F32 tensors of {TENSOR_FLOATS} values "
                 f"in {d['tensor_files']} safetensors files. rclone --vfs-cache-mode {meta['rclone_vfs_cache_mode']}; "
                 "s3fs defaults (no disk cache)."
                 + ("" if meta["page_cache_dropped"] else " PAGE CACHE COULD NOT BE DROPPED."))
    lines.append("")
    lines.append("Ratios are warp/peer of the number shown: for ↑ rows above 1 means Warp is faster, "
                 "for ↓ rows below 1 means Warp is faster.")
    lines.append("")
    head = ["workload", "phase", "unit"] + [SYSTEM_LABEL[c] for c in cols] + \
           [f"warp/{SYSTEM_LABEL[p]}" for p in peers]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    rows_json = []
    for wl in workloads:
        w, label, unit, better = wl.name, wl.label, wl.unit, wl.better
        for ph in wl.phases:
            cells = []
            for c in cols:
                key = (w, ph, c)
                if c not in wl.systems or (c in COLD_ONLY and ph == "warm"):
                    cells.append("")
                    continue
                if systems[c].missing:
                    cells.append(systems[c].missing.split(" (")[0])
                    continue
                cell = median_cell(res.vals.get(key, []), unit, meta["runs"])
                errs = res.errors.get(key, [])
                if cell is None:
                    cell = "FAILED" if errs else "—"
                    if errs and errs[0].startswith(("MISSING", "timeout")):
                        cell = errs[0].split(" (")[0].split(" after")[0].upper()
                elif errs:
                    cell += f" ({len(errs)} failed)"
                cells.append(cell)
                rows_json.append({"workload": w, "label": label, "phase": ph, "unit": unit,
                                  "better": "higher" if better == "hi" else "lower", "system": c,
                                  "values": res.vals.get(key, []),
                                  "median": res.median(key),
                                  "min": min(res.vals[key]) if res.vals.get(key) else None,
                                  "max": max(res.vals[key]) if res.vals.get(key) else None,
                                  "errors": errs, "extra": res.extra.get(key, []),
                                  "daemon_cpu_s_per_gib": res.cpu.get(key, [])})
            ratios = []
            mw = res.median((w, ph, "warp"))
            for p in peers:
                mp = res.median((w, ph, p))
                ratios.append(f"{mw / mp:.2f}" if mw and mp else "")
            if w == "ttfb-new" and net and mw and net.get("ttfb_ms"):
                ratios[0] = f"{mw / net['ttfb_ms']:.1f} round trips"
            arrow = "↑" if better == "hi" else "↓"
            lines.append("| " + " | ".join([label, ph, f"{unit} {arrow}"] + cells + ratios) + " |")
        if w == "seq-dd" and ("seq-dd", "warm", "cachecat") in res.vals or res.errors.get(("seq-dd", "warm", "cachecat")):
            if w == "seq-dd":
                key = ("seq-dd", "warm", "cachecat")
                cell = median_cell(res.vals.get(key, []), "MB/s") or "FAILED"
                mw = res.median(("seq-dd", "warm", "warp"))
                mc = res.median(key)
                lines.append("| " + " | ".join(
                    ["cat of warpd's own cache block files (reference for warm warp)", "warm", "MB/s ↑", cell]
                    + [""] * (len(cols) - 1 + len(peers) - 1)
                    + [f"warp/cache files: {mw / mc:.2f}" if mw and mc else ""]) + " |")
                rows_json.append({"workload": "seq-dd", "phase": "warm", "system": "warp-cache-files",
                                  "unit": "MB/s", "values": res.vals.get(key, []),
                                  "median": mc, "errors": res.errors.get(key, []),
                                  "extra": res.extra.get(key, [])})
    lines += tensor_table(res, names, systems, meta["runs"])
    # daemon resources
    lines.append("")
    lines.append("Daemon resources (the FUSE process: warpd's JVM, s3fs, rclone):")
    lines.append("")
    lines.append("| measure | warp | s3fs | rclone |")
    lines.append("|---|---|---|---|")
    lines.append("| peak RSS, MiB (VmHWM, max over the run) | " + " | ".join(
        f"{peak_rss[s] / 1024:.0f}" if s in peak_rss else "" for s in DAEMONS) + " |")
    cpu_rows = {}
    for w, ph in (("seq-dd", "cold"), ("seq-dd", "warm"), ("img-seq", "cold"), ("img-seq", "warm")):
        if w not in names:
            continue
        cells = []
        for s in DAEMONS:
            v = res.cpu.get((w, ph, s))
            cells.append(f"{statistics.median(v):.2f}" if v else "")
            if v:
                cpu_rows[f"{w}/{ph}/{s}"] = statistics.median(v)
        lines.append(f"| CPU s per GiB read, {w} {ph} | " + " | ".join(cells) + " |")
    hpm = meta.get("warp_heap_bytes_per_indexed_member") or {}
    if hpm:
        lines.append("| warpd heap bytes per indexed member, upper bound (heap used incl. garbage / indexed_members, after the workload) | "
                     + ", ".join(f"{v:.0f} ({w})" for w, v in hpm.items()) + " | | |")
    wrc = meta.get("warp_read_counters") or {}
    if wrc:
        lines.append("")
        lines.append("Warp's read counters during each measurement (stats.json deltas, last run; "
                     "fetched/read = bytes fetched from S3 per byte the client read):")
        lines.append("")
        lines.append("| workload | phase | GETs | fetched MiB | client read MiB | fetched/read | hit blocks "
                     "| miss blocks | prefetch hit blocks | prefetch wasted MiB | retries | verification failures |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for key, c in wrc.items():
            w, ph = key.split("/")
            cb = c.get("client_bytes")
            fetched = c.get("bytes_fetched", 0)
            lines.append("| " + " | ".join([
                w, ph, str(c.get("gets_issued", "")), f"{fetched / MIB:.1f}",
                f"{cb / MIB:.1f}" if cb else "", f"{fetched / cb:.2f}" if cb else "",
                str(c.get("hit_blocks", "")), str(c.get("miss_blocks", "")),
                str(c.get("prefetch_hit_blocks", "")), f"{c.get('prefetch_wasted_bytes', 0) / MIB:.1f}",
                str(c.get("retries", "")), str(c.get("verification_failures", ""))]) + " |")
    lines += request_table(res, workloads, d.get("images"))
    cpu_bound = None
    if net:
        more, cpu_bound = cpu_table(res)
        lines += more
    # targets
    tg = targets(res) if not net else s3like_targets(res, meta, peak_rss)
    lines.append("")
    lines.append("Targets (issue 4, DESIGN §11), from the medians above:" if not net else
                 "Targets under this network (issues 16 and 26), from the medians above:")
    lines.append("")
    lines.append("| target | measured | goal | met |")
    lines.append("|---|---|---|---|")
    for t in tg:
        met = "n/a" if t["met"] is None else ("yes" if t["met"] else "NO")
        lines.append(f"| {t['target']} | {'' if t['ratio'] is None else t['ratio']} | {t['goal']} | {met} |")
    if meta["missing"]:
        lines.append("")
        for n, why in meta["missing"].items():
            lines.append(f"- {SYSTEM_LABEL[n]}: {why}")
    by_msg = {}
    for (w, ph, s), msgs in res.errors.items():
        for msg in msgs:
            by_msg.setdefault(msg, []).append(f"{w}/{ph}/{s}")
    if by_msg:
        lines.append("")
        lines.append("Failures:")
        for msg, where in by_msg.items():
            shown = ", ".join(where[:4]) + (f" and {len(where) - 4} more" if len(where) > 4 else "")
            lines.append(f"- {msg}: {shown}")
    text = "\n".join(lines)
    doc = {"meta": meta, "results": rows_json, "targets": tg,
           "daemon": {"peak_rss_kib": peak_rss, "cpu_s_per_gib": cpu_rows},
           "cpu_bound_imagefolder_over_big_file": cpu_bound,
           "warp_stats": warp_stats, "markdown": text}
    return text, doc


def report(meta, res, peak_rss, warp_stats, workloads, systems, args):
    """Prints the table; with --json also writes the JSON document."""
    text, doc = render(meta, res, peak_rss, warp_stats, workloads, systems)
    report_doc(text, doc, args)


def report_doc(text, doc, args):
    """Prints a report's text; with --json also writes its JSON document."""
    print(text, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
        log(f"JSON written to {args.json}")
