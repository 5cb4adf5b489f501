"""`scripts/bench --fleet N`: N warpd processes on this machine (each with its own cache directory,
mount and control socket) read the same dataset at the same moment, the way the nodes of a
training job start their first epoch; what the store served is counted at the shaper.

Passes, in this order (docs/bench.md, "Fleets"):
  one       1 node straight to the store: the reference time
  store     N nodes straight to the store (configuration a)
  mirror    N nodes through ONE nginx read-through cache, empty at the start (configuration b):
            Debian's nginx running the shipped systemd/mirror/nginx/ files, its upstream the
            shaped store, each node started with `warpd --mirror http://127.0.0.1:PORT/warp`
  poisoned  the same, after the mirror's cache files were corrupted on disk
  dead      nginx stopped: the mirror's port refuses connections
  hanging   the mirror is a port that accepts connections and never answers

Each node reads the images in ImageFolder's order and then the big file, and checks every byte
against the source (fleet_node.py). The mirror passes run only when the checkout has the shipped
nginx files, nginx and its njs module are installed and warpd lists --mirror in its --help;
otherwise they are reported as MISSING with the reason.

The pure parts (templating of the shipped files, the access log, the arithmetic, the table) are
at the top and unit-tested (tests/test_fleet.py); the processes are below them.
"""
import json
import os
import re
import select
import shutil
import socket
import subprocess
import time

from . import procs
from .common import ACCESS_KEY, GIB, HERE, MIB, REPO, SECRET_KEY, WARP_BUCKET, WARP_PREFIX, BenchError, git_commit, log

NGINX = "/usr/sbin/nginx"
NGINX_JS_MODULE = "/usr/lib/nginx/modules/ngx_http_js_module.so"
SHIPPED_MIRROR = os.path.join("systemd", "mirror", "nginx")
SHIPPED_FILES = ("warp-mirror.conf", "store.conf", "warp-s3-sign.js")

# Targets (issue 25): the store's bytes for N nodes through a mirror, wrong bytes, N nodes' time.
STORE_BYTES_GOAL = 1.15
TIME_GOAL = 1.5

# The passes: name -> (label, through a mirror).
PASSES = {
    "one": "1 node, straight to the store",
    "store": "{n} nodes, straight to the store",
    "mirror": "{n} nodes through one nginx mirror, empty at the start",
    "poisoned": "{n} nodes, poisoned mirror (its cache files corrupted on disk after the fill)",
    "dead": "{n} nodes, dead mirror (nginx stopped: connection refused)",
    "hanging": "{n} nodes, hanging mirror (a port that accepts and never answers)",
}
MIRROR_PASSES = ("mirror", "poisoned", "dead", "hanging")

# $upstream_cache_status values: served from the cache, or fetched from the store.
CACHE_HITS = ("HIT", "STALE", "UPDATING", "REVALIDATED")
CACHE_MISSES = ("MISS", "EXPIRED", "BYPASS")


# ------------------------------------------------------------------------------------------------
# The shipped nginx mirror, run from the bench's own directory
# ------------------------------------------------------------------------------------------------

def replace_once(text, shipped, replacement, where):
    """text with the one occurrence of shipped replaced; BenchError when it is not there exactly
    once (the shipped file changed: the bench would otherwise run something else than shipped)."""
    n = text.count(shipped)
    if n != 1:
        raise BenchError(f"the shipped {where} has {n} occurrences of {shipped!r}, not 1; update "
                         "warpbench/fleet.py's template_nginx to match it")
    return text.replace(shipped, replacement)


def template_nginx(site, store, *, port, store_addr, bucket_path, access_key, secret_key, cache_dir,
                   conf_dir, access_log):
    """The shipped warp-mirror.conf and store.conf with only what a machine must change replaced,
    each exactly once (as the mirror branch's NginxMirrorIT does): the listening port, the
    store's address (the shaper), the bucket path, the mirror's store credentials and the
    paths of the cache, the njs file, store.conf and the access log. Returns (site, store)."""
    w = "systemd/mirror/nginx/store.conf"
    store = replace_once(store, 'set $warp_store_host "127.0.0.1:9000";', f'set $warp_store_host "{store_addr}";', w)
    store = replace_once(store, 'set $warp_bucket_path "/my-bucket/warp";', f'set $warp_bucket_path "{bucket_path}";', w)
    store = replace_once(store, 'set $warp_s3_access_key "";', f'set $warp_s3_access_key "{access_key}";', w)
    store = replace_once(store, 'set $warp_s3_secret_key "";', f'set $warp_s3_secret_key "{secret_key}";', w)
    w = "systemd/mirror/nginx/warp-mirror.conf"
    site = replace_once(site, "server 127.0.0.1:9000;", f"server {store_addr};", w)
    site = replace_once(site, "proxy_cache_path /var/cache/nginx/warp-mirror ", f"proxy_cache_path {cache_dir} ", w)
    site = replace_once(site, "js_path /etc/nginx/warp-mirror/;", f"js_path {conf_dir}/;", w)
    site = replace_once(site, "include /etc/nginx/warp-mirror/store.conf;",
                        f"include {os.path.join(conf_dir, 'store.conf')};", w)
    site = replace_once(site, "access_log /var/log/nginx/warp-mirror.access.log ", f"access_log {access_log} ", w)
    site = replace_once(site, "listen 8080;", f"listen 127.0.0.1:{port};", w)
    return site, store


def nginx_main_conf(base, conf_dir, js_module=NGINX_JS_MODULE):
    """What Debian's /etc/nginx/nginx.conf and modules-enabled/ give the shipped file, with every
    path under base; in the foreground (the harness records the master's pid)."""
    return "\n".join([
        f"load_module {js_module};",
        "user root;",
        "worker_processes 2;",
        "daemon off;",
        f"pid {os.path.join(base, 'nginx.pid')};",
        f"error_log {os.path.join(base, 'error.log')} info;",
        "events { worker_connections 1024; }",
        "http {",
        "  default_type application/octet-stream;",
        "  access_log off;",
        *(f"  {k}_temp_path {os.path.join(base, 'tmp-' + k)};" for k in ("client_body", "proxy", "fastcgi",
                                                                         "uwsgi", "scgi")),
        f"  include {os.path.join(conf_dir, 'warp-mirror.conf')};",
        "}", ""])


# The shipped log_format: '... "$request" $status $body_bytes_sent range=".." cache=$upstream_cache_status
# client_auth=..'
ACCESS_LINE = re.compile(r'"(?P<request>[^"]*)" (?P<status>\d{3}) (?P<bytes>\d+) .*?'
                         r'cache=(?P<cache>\S+) client_auth=(?P<auth>\S+)')


def parse_access_log(lines):
    """The mirror's side of a pass from its access log lines: requests, bytes sent, how many were
    served from its cache (HIT...) or fetched from the store (MISS...), by request and by byte,
    and requests that carried an Authorization header (warpd must never send one)."""
    out = {"requests": 0, "bytes": 0, "hits": 0, "misses": 0, "hit_bytes": 0, "miss_bytes": 0,
           "uncached": 0, "client_auth": 0, "unparsed": 0, "status": {}}
    for line in lines:
        m = ACCESS_LINE.search(line)
        if not m:
            if line.strip():
                out["unparsed"] += 1
            continue
        n = int(m.group("bytes"))
        out["requests"] += 1
        out["bytes"] += n
        out["status"][m.group("status")] = out["status"].get(m.group("status"), 0) + 1
        cache = m.group("cache")
        if cache in CACHE_HITS:
            out["hits"] += 1
            out["hit_bytes"] += n
        elif cache in CACHE_MISSES:
            out["misses"] += 1
            out["miss_bytes"] += n
        else:
            out["uncached"] += 1  # "-": refused (a pointer, a listing) or answered without the cache
        if m.group("auth") != "none":
            out["client_auth"] += 1
    return out


def hit_ratio(mirror_log):
    """Hits over hits and misses (requests the cache was asked for), or None before any."""
    if not mirror_log:
        return None
    asked = mirror_log["hits"] + mirror_log["misses"]
    return mirror_log["hits"] / asked if asked else None


def supports_mirror(help_text):
    """Whether `warpd --help` lists a --mirror option."""
    return re.search(r"(?m)(^|[\s,\[])--mirror(\b|=)(?!-)", help_text or "") is not None


# nginx's cache file starts with ngx_http_file_cache_header_t; on 64-bit Linux its u_short
# body_start (where the cached response's body begins, after the header and the key) is at byte 56.
CACHE_BODY_START_OFFSET = 56


def cache_body_start(head, size):
    """Where the body of an nginx cache file of `size` bytes begins, from its first bytes; None
    when the header does not hold a plausible offset."""
    if len(head) < CACHE_BODY_START_OFFSET + 2:
        return None
    start = int.from_bytes(head[CACHE_BODY_START_OFFSET:CACHE_BODY_START_OFFSET + 2], "little")
    return start if CACHE_BODY_START_OFFSET + 2 < start < size else None


def poison_cache_file(path, stride=4096):
    """Corrupts one nginx cache file in place: every stride-th byte of its body inverted, its size
    and header kept, so nginx keeps serving it as a HIT. Returns the number of bytes changed."""
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        head = f.read(4096)
        start = cache_body_start(head, size)
        if start is None:
            start = max(0, size - 1)  # an unknown layout: at least the last byte, which is the body's
        changed = 0
        for off in range(start, size, stride):
            f.seek(off)
            b = f.read(1)
            f.seek(off)
            f.write(bytes([b[0] ^ 0xFF]))
            changed += 1
    return changed


# ------------------------------------------------------------------------------------------------
# The arithmetic and the table
# ------------------------------------------------------------------------------------------------

def store_requests(req):
    """Requests that read the store: GET, HEAD and LIST."""
    return sum((req or {}).get(k, 0) for k in ("GET", "HEAD", "LIST"))


def node_rates(node):
    """(files/s over the images, MB/s over everything the node read) of one node's result."""
    img_secs = node["t_images"] - node["t_start"]
    secs = node["t_end"] - node["t_start"]
    files = node["image_files"] / img_secs if img_secs > 0 else None
    mbs = node["bytes"] / secs / 1e6 if secs > 0 else None
    return files, mbs


def pass_figures(p, dataset_bytes, one=None):
    """The figures of one pass. p: {"name", "nodes", "results": [node result], "store": {"bytes",
    "requests": {...}}, "mirror_log", "warpd_mirrors", "missing", "errors"}; one: the 1-node
    pass's figures (the reference time). Wall time: from the first node's start to the last
    node's end (their clocks are the same CLOCK_MONOTONIC)."""
    f = {"name": p["name"], "nodes": p["nodes"], "missing": p.get("missing"), "errors": list(p.get("errors") or [])}
    if f["missing"]:
        return f
    ok = [r for r in p.get("results") or [] if r and "error" not in r]
    for r in p.get("results") or []:
        if r and "error" in r:
            f["errors"].append(r["error"])
    if not ok:
        f["missing"] = "FAILED"
        return f
    f["complete"] = len(ok) == p["nodes"]
    f["seconds"] = max(r["t_end"] for r in ok) - min(r["t_start"] for r in ok)
    rates = [node_rates(r) for r in ok]
    f["files_s"] = [x for x, _ in rates if x is not None]
    f["mb_s"] = [y for _, y in rates if y is not None]
    f["node_seconds"] = [r["t_end"] - r["t_start"] for r in ok]
    f["wrong_bytes"] = sum(r["wrong_bytes"] for r in ok)
    f["wrong_files"] = sum(r["wrong_files"] for r in ok)
    f["read_errors"] = sum(r["errors"] for r in ok)
    for r in ok:
        f["errors"] += r.get("error_samples") or []
    store = p.get("store") or {}
    f["store_bytes"] = store.get("bytes")
    f["store_requests"] = dict(store.get("requests") or {})
    reads = store_requests(f["store_requests"])
    f["store_reads"] = reads
    f["store_bytes_x"] = store["bytes"] / dataset_bytes if store.get("bytes") is not None and dataset_bytes else None
    f["requests_per_mib"] = reads / (dataset_bytes / MIB) if dataset_bytes else None
    f["time_x"] = f["seconds"] / one["seconds"] if one and one.get("seconds") else None
    f["requests_x"] = reads / one["store_reads"] if one and one.get("store_reads") else None
    f["mirror_log"] = p.get("mirror_log")
    f["hit_ratio"] = hit_ratio(p.get("mirror_log"))
    f["warpd_mirrors"] = w = p.get("warpd_mirrors")
    if f["hit_ratio"] is None and w and w.get("hits", 0) + w.get("misses", 0):
        # No access log to read (a mirror that is not our nginx): warpd's own view of its mirrors.
        f["hit_ratio"] = w["hits"] / (w["hits"] + w["misses"])
    return f


def fleet_targets(figs, n):
    """Issue 25's targets from the passes' figures (by name)."""
    out = []

    def add(name, value, goal, met):
        out.append({"target": name, "ratio": None if value is None else round(value, 3), "goal": goal,
                    "met": None if value is None else met})

    def fig(name, key):
        f = figs.get(name) or {}
        return None if f.get("missing") else f.get(key)

    v = fig("mirror", "store_bytes_x")
    add(f"store bytes ÷ dataset, {n} nodes through the mirror", v, f"<= {STORE_BYTES_GOAL}",
        v is not None and v <= STORE_BYTES_GOAL)
    v = fig("store", "store_bytes_x")
    add(f"store bytes ÷ dataset, {n} nodes without a mirror (reference)", v, f"≈ {n} (each node fetches it all)",
        None)
    out[-1]["met"] = None
    v = fig("poisoned", "wrong_bytes")
    add("wrong bytes, poisoned mirror", v, "= 0", v == 0)
    passes = [f for f in figs.values() if not f.get("missing") and "wrong_bytes" in f]
    v = sum(f["wrong_bytes"] for f in passes) if passes else None
    add("wrong bytes, every pass", v, "= 0", v == 0)
    v = fig("mirror", "time_x")
    add(f"time, {n} nodes through the mirror ÷ 1 node", v, f"<= {TIME_GOAL}", v is not None and v <= TIME_GOAL)
    v = fig("store", "time_x")
    add(f"time, {n} nodes straight to the store ÷ 1 node", v, f"<= {TIME_GOAL}", v is not None and v <= TIME_GOAL)
    return out


def _spread(vals, unit):
    from .report import median_cell
    return median_cell(vals, unit, len(vals)) or ""


def _num(v, fmt):
    return "" if v is None else format(v, fmt)


def warpd_mirror_cell(w):
    """warpd's own mirror counters summed over the nodes (verification failures / errors), if any."""
    if not w:
        return "n/a"
    vf = w.get("verification_failures", w.get("verificationFailures"))
    err = w.get("errors")
    return f"{_num(vf, 'd') or '?'} / {_num(err, 'd') or '?'}"


def store_link_words(net):
    """The store link's shared cap as the header says it."""
    mbps = net.get("link_mbps")
    return (f"store link {mbps:g} MB/s for all connections together" if mbps else
            "no store link cap (the connections' pace only)")


def render_fleet(meta, figs, targets):
    """The fleet's report: (Markdown text, the JSON document). figs: pass name -> pass_figures(),
    in the order run."""
    n = meta["nodes"]
    d = meta["data"]
    net = meta.get("network") or {}
    lines = [f"Warp fleet bench, {meta['date']}, commit {meta['commit']}, scale {meta['scale']}, "
             f"{n} warpd processes on this machine (own cache directory, mount and socket each)  ",
             f"Machine: {meta['cpus']} cores, {meta['mem_gib']} GiB RAM, Linux {meta['kernel']}; S3Proxy behind "
             f"shaper.py: RTT {net.get('rtt_ms', 0):g} ms added to every request, {net.get('rate_mbps', 0):g} MB/s per "
             f"connection, {store_link_words(net)} (the shaper used {net.get('shaper_cpu_s')} CPU s); load average {meta['load_start'][0]} at "
             f"start, {meta['load_end'][0]} at end; {meta['elapsed_s']} s in all  ",
             f"Dataset per node: {d['images']} images ({d['image_bytes'] / MIB:.0f} MiB) in folder order, then the "
             f"big file ({d['big_bytes'] / MIB:.0f} MiB): {meta['dataset_bytes'] / MIB:.0f} MiB, every byte checked "
             "against the source's SHA-256. Store: what the shaper relayed from S3Proxy to anyone (the nodes, the "
             "mirror), node start-up included.", ""]
    head = ["pass", "nodes", "time s ↓", "× 1 node ↓", "store bytes ÷ dataset ↓", "store GET/HEAD/LIST",
            "store requests per dataset MiB ↓", "files/s per node ↑", "MB/s per node ↑", "mirror hit ratio ↑",
            "warpd mirror verify failures / errors", "wrong bytes", "read errors"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for name, f in figs.items():
        label = PASSES[name].format(n=f["nodes"])
        if f.get("missing"):
            word = f["missing"].split(" (")[0]
            lines.append("| " + " | ".join([label, str(f["nodes"]), word] + [""] * (len(head) - 3)) + " |")
            continue
        req = f["store_requests"]
        hr = f["hit_ratio"]
        lines.append("| " + " | ".join([
            label + ("" if f.get("complete", True) else " (a node failed)"), str(f["nodes"]),
            f"{f['seconds']:.1f}", _num(f["time_x"], ".2f"), _num(f["store_bytes_x"], ".2f"),
            f"{req.get('GET', 0)}/{req.get('HEAD', 0)}/{req.get('LIST', 0)}",
            _num(f["requests_per_mib"], ".2f"), _spread(f["files_s"], "files/s"), _spread(f["mb_s"], "MB/s"),
            "" if name not in MIRROR_PASSES else ("—" if hr is None else f"{hr:.2f}"),
            "" if name not in MIRROR_PASSES else warpd_mirror_cell(f.get("warpd_mirrors")),
            str(f["wrong_bytes"]), str(f["read_errors"])]) + " |")
    lines += ["", "Targets (issue 25), from the passes above:", "", "| target | measured | goal | met |",
              "|---|---|---|---|"]
    for t in targets:
        met = "n/a" if t["met"] is None else ("yes" if t["met"] else "NO")
        lines.append(f"| {t['target']} | {'' if t['ratio'] is None else t['ratio']} | {t['goal']} | {met} |")
    notes = [(name, f["missing"]) for name, f in figs.items() if f.get("missing")]
    if notes:
        lines.append("")
        for name, why in notes:
            lines.append(f"- {PASSES[name].format(n=figs[name]['nodes'])}: {why}")
    errs = [(name, e) for name, f in figs.items() for e in f.get("errors") or []]
    if errs:
        lines += ["", "Failures:"]
        for name, e in errs[:12]:
            lines.append(f"- {name}: {e}")
        if len(errs) > 12:
            lines.append(f"- and {len(errs) - 12} more (see the JSON)")
    text = "\n".join(lines)
    return text, {"meta": meta, "fleet": {"passes": list(figs.values()), "targets": targets}, "markdown": text}


# ------------------------------------------------------------------------------------------------
# The processes: nodes, readers, the mirror, a hanging port
# ------------------------------------------------------------------------------------------------

def expected_hashes(data_dir, facts):
    """{"images": {relpath: [size, sha256]}, "big": [size, sha256]} of the source files."""
    import hashlib
    images = {}
    root = os.path.join(data_dir, "images")
    for r, _dirs, names in os.walk(root):
        for nm in names:
            p = os.path.join(r, nm)
            with open(p, "rb") as fh:
                b = fh.read()
            images[os.path.relpath(p, root)] = [len(b), hashlib.sha256(b).hexdigest()]
    return {"images": images, "big": [facts["big_bytes"], facts["big_sha256"]]}


class Node:
    """One warpd of the fleet: its own mount, cache directory and control socket."""

    def __init__(self, env, i):
        self.env, self.i = env, i
        self.name = f"fleet-warpd-{i}"
        self.mnt = os.path.join(env.run, "mnt", f"fleet-{i}")
        self.cache = os.path.join(env.run, "cache", f"fleet-{i}")
        self.socket = os.path.join(env.run, f"fleet-{i}.sock")

    def root(self):
        return os.path.join(self.mnt, self.env.dataset)

    def ready(self):
        return procs.is_mounted(self.mnt) and os.path.isdir(os.path.join(self.root(), "big")) \
            and os.path.exists(self.socket)

    def start(self, launcher, mirror_url=None):
        """Starts warpd on an empty cache; returns at once (Fleet.start_nodes waits for all)."""
        shutil.rmtree(self.cache, ignore_errors=True)
        os.makedirs(self.cache)
        os.makedirs(self.mnt, exist_ok=True)
        procs.unmount(self.mnt)
        extra = ["--mode", "auto"] + (["--mirror", mirror_url] if mirror_url else [])
        argv = procs.warpd_argv(launcher, mnt=self.mnt, remote=f"s3://{WARP_BUCKET}/{WARP_PREFIX}",
                                endpoint=self.env.endpoint, cache_dir=self.cache, socket_path=self.socket,
                                extra=extra, cache_size=self.env.args.warp_cache_size)
        self.p = self.env.reg.start(self.name, argv, os.path.join(self.env.logs, f"{self.name}.log"),
                                    env=self.env.aws_env())
        self.env.reg.add_mount(self.name, self.mnt)

    def mirror_counters(self):
        """warpd's per-mirror counters (cache.stats), summed over its mirrors; None when it has none."""
        try:
            st = procs.warpd_control(self.socket, "cache.stats", timeout=30)
        except BenchError:
            return None
        ms = st.get("mirrors") if isinstance(st, dict) else None
        if ms is None and isinstance(st, dict):
            ms = (st.get("counters") or {}).get("mirrors")
        if isinstance(ms, dict):
            ms = list(ms.values())
        if not isinstance(ms, list) or not ms:
            return None
        out = {}
        for m in ms:
            for k, v in (m or {}).items():
                key = re.sub(r"(?<=[a-z])([A-Z])", r"_\1", k).lower()
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    out[key] = out.get(key, 0) + v
        return out

    def stop(self):
        self.env.reg.stop(self.name)


class NginxMirror:
    """Debian's nginx running the checkout's shipped mirror files, templated by template_nginx,
    in front of the shaped store; stopped by its master's pid through the registry."""
    NAME = "fleet-nginx"

    def __init__(self, env, shipped_dir, store_addr):
        self.env = env
        self.shipped = shipped_dir
        self.store_addr = store_addr
        self.base = os.path.join(env.run, "fleet-mirror")
        self.conf = os.path.join(self.base, "conf")
        self.cache = os.path.join(self.base, "cache")
        self.access_log = os.path.join(self.base, "access.log")
        self.port = None

    def start(self):
        shutil.rmtree(self.base, ignore_errors=True)
        os.makedirs(self.conf)
        os.makedirs(self.cache)
        self.port = procs.free_port()
        with open(os.path.join(self.shipped, "warp-mirror.conf")) as f:
            site = f.read()
        with open(os.path.join(self.shipped, "store.conf")) as f:
            store = f.read()
        site, store = template_nginx(site, store, port=self.port, store_addr=self.store_addr,
                                     bucket_path=f"/{WARP_BUCKET}/{WARP_PREFIX}", access_key=ACCESS_KEY,
                                     secret_key=SECRET_KEY, cache_dir=self.cache, conf_dir=self.conf,
                                     access_log=self.access_log)
        shutil.copyfile(os.path.join(self.shipped, "warp-s3-sign.js"), os.path.join(self.conf, "warp-s3-sign.js"))
        for name, text in (("warp-mirror.conf", site), ("store.conf", store),
                           ("nginx.conf", nginx_main_conf(self.base, self.conf))):
            with open(os.path.join(self.conf, name), "w") as f:
                f.write(text)
        err = os.path.join(self.base, "error.log")
        p = self.env.reg.start(self.NAME, [NGINX, "-e", err, "-p", self.base, "-c",
                                           os.path.join(self.conf, "nginx.conf")],
                               os.path.join(self.env.logs, "fleet-nginx.log"))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if p.poll() is not None:
                self.env.reg.stop(self.NAME)
                raise BenchError(f"nginx exited with {p.returncode}; see {err} and {self.env.logs}/fleet-nginx.log")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            self.stop()
            raise BenchError(f"nginx did not listen on {self.port} within 30s; see {err}")
        log(f"fleet: nginx mirror on {self.url()} (the shipped {SHIPPED_MIRROR}), its store {self.store_addr}")

    def url(self):
        return f"http://127.0.0.1:{self.port}/warp"

    def log_offset(self):
        try:
            return os.path.getsize(self.access_log)
        except OSError:
            return 0

    def log_since(self, offset):
        try:
            with open(self.access_log, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace").splitlines()
        except OSError:
            return []

    def poison(self):
        """Every cache file corrupted in place; returns (files, bytes changed)."""
        files = changed = 0
        for r, _dirs, names in os.walk(self.cache):
            for nm in names:
                changed += poison_cache_file(os.path.join(r, nm))
                files += 1
        return files, changed

    def stop(self):
        self.env.reg.stop(self.NAME, grace=10.0)


class HangingPort:
    """A port that accepts connections (the kernel completes them into the listen backlog) and
    never answers: nothing ever accepts or reads them. Closed by the harness, no process."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1024)
        self.port = self.sock.getsockname()[1]

    def url(self):
        return f"http://127.0.0.1:{self.port}/warp"

    def close(self):
        self.sock.close()


class Fleet:
    def __init__(self, env, facts, launcher, n, timeout):
        self.env, self.facts, self.launcher, self.n, self.timeout = env, facts, launcher, n, timeout
        self.nodes = [Node(env, i) for i in range(n)]
        self.expected = os.path.join(env.run, "fleet-expected.json")
        with open(self.expected, "w") as f:
            json.dump(expected_hashes(env.data, facts), f)

    def store_settled(self):
        """The shaper's bytes and requests once they stopped moving (read-ahead may still land)."""
        def cur():
            s = self.env.shaper() or {}
            return {"bytes": s.get("bytes_down", 0), "requests": dict(s.get("requests") or {})}
        prev = cur()
        deadline = time.monotonic() + 10
        while True:
            time.sleep(0.5)
            now = cur()
            if now == prev or time.monotonic() > deadline:
                return now
            prev = now

    def start_nodes(self, k, mirror_url=None, timeout=180):
        nodes = self.nodes[:k]
        for nd in nodes:
            nd.start(self.launcher, mirror_url)
        deadline = time.monotonic() + timeout
        waiting = list(nodes)
        while waiting:
            for nd in list(waiting):
                if nd.p.poll() is not None:
                    raise BenchError(f"{nd.name} exited with {nd.p.returncode}; see {self.env.logs}/{nd.name}.log")
                if nd.ready():
                    waiting.remove(nd)
            if waiting and time.monotonic() > deadline:
                raise BenchError(f"{waiting[0].name} did not mount within {timeout}s; see "
                                 f"{self.env.logs}/{waiting[0].name}.log")
            time.sleep(0.2)
        return nodes

    def stop_nodes(self):
        for nd in self.nodes:
            nd.stop()

    def read(self, nodes):
        """One reader per node, told to go at the same moment; returns their results (a dict
        with "error" for a reader that failed)."""
        readers = []
        try:
            for nd in nodes:
                name = f"fleet-reader-{nd.i}"
                p = self.env.reg.start(name, ["/usr/bin/python3", os.path.join(HERE, "fleet_node.py"),
                                              "--root", nd.root(), "--expected", self.expected,
                                              "--source", self.env.data],
                                       os.path.join(self.env.logs, f"{name}.log"),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                readers.append((name, p))
            for name, p in readers:
                r, _, _ = select.select([p.stdout], [], [], 60)
                if not r or b"ready" not in p.stdout.readline():
                    raise BenchError(f"{name} did not start; see {self.env.logs}/{name}.log")
            for _name, p in readers:  # go
                p.stdin.write(b"go\n")
                p.stdin.flush()
            results = {}
            deadline = time.monotonic() + self.timeout
            pending = {p.stdout: name for name, p in readers}
            while pending and time.monotonic() < deadline:
                r, _, _ = select.select(list(pending), [], [], max(0.1, deadline - time.monotonic()))
                for out in r:
                    name = pending.pop(out)
                    line = out.readline()
                    results[name] = json.loads(line) if line else {"error": f"{name} died; see its log"}
            for name in pending.values():
                results[name] = {"error": f"timeout after {self.timeout}s"}
            return [results[name] for name, _p in readers]
        finally:
            for name, p in readers:
                try:
                    p.stdin.close()
                except OSError:
                    pass
                self.env.reg.stop(name, grace=5.0)

    def run_pass(self, name, k, mirror=None, mirror_url=None):
        """One pass of k nodes (fresh warpd, empty caches), through mirror_url when given."""
        log(f"fleet: pass {name}: {PASSES[name].format(n=k)}")
        p = {"name": name, "nodes": k, "errors": []}
        before = self.store_settled()
        off = mirror.log_offset() if mirror else None
        try:
            nodes = self.start_nodes(k, mirror_url)
            self.env.drop()
            p["results"] = self.read(nodes)
            if mirror_url:
                counts = [nd.mirror_counters() for nd in nodes]
                counts = [c for c in counts if c]
                if counts:
                    p["warpd_mirrors"] = {key: sum(c.get(key, 0) for c in counts) for key in counts[0]}
            after = self.store_settled()
        except BenchError as e:
            p["missing"] = f"FAILED ({e})"
            log(f"fleet: pass {name}: {e}")
            return p
        finally:
            self.stop_nodes()
        p["store"] = {"bytes": after["bytes"] - before["bytes"],
                      "requests": {kk: v - before["requests"].get(kk, 0) for kk, v in after["requests"].items()}}
        if mirror:
            p["mirror_log"] = parse_access_log(mirror.log_since(off))
        for r in p["results"]:
            if "error" not in r:
                log(f"fleet: {name}: {r['files']} files, {r['bytes'] / MIB:.0f} MiB in {r['t_end'] - r['t_start']:.1f}s, "
                    f"wrong bytes {r['wrong_bytes']}, read errors {r['errors']}")
        log(f"fleet: {name}: store served {p['store']['bytes'] / MIB:.0f} MiB, requests {p['store']['requests']}")
        return p


def warpd_help(launcher):
    """What `warpd --help` prints (stdout and stderr), or why it could not be run."""
    try:
        r = subprocess.run(list(launcher) + ["--help"], capture_output=True, text=True, timeout=120)
        return r.stdout + r.stderr
    except (OSError, subprocess.SubprocessError) as e:
        return f"(warpd --help failed: {e})"


def mirror_unavailable(repo, launcher, help_text=None):
    """Why configuration (b) cannot run here, or None."""
    shipped = os.path.join(repo, SHIPPED_MIRROR)
    absent = [f for f in SHIPPED_FILES if not os.path.isfile(os.path.join(shipped, f))]
    if absent:
        return (f"MISSING (no {SHIPPED_MIRROR}/{absent[0]} in this checkout: the shipped nginx mirror "
                "configuration, issue 25 item 3)")
    if not os.access(NGINX, os.X_OK) or not os.path.isfile(NGINX_JS_MODULE):
        return "MISSING (Debian's nginx and its njs module are not installed: apt-get install nginx libnginx-mod-http-js)"
    text = help_text if help_text is not None else warpd_help(launcher)
    if not supports_mirror(text):
        return "MISSING (warpd does not accept --mirror: its --help does not list it; issue 25 item 1)"
    return None


def main_fleet(args, env, cfg, facts, warp, started, load_start):
    """The fleet run after the data and facts: server, publish, the passes, the report."""
    import datetime
    import platform
    from .report import report_doc
    n = args.fleet
    env.start_server()
    if warp.missing:
        raise BenchError(f"warp is {warp.missing}; the fleet needs warpd")
    warp.publish()
    launcher = warp.launcher()
    timeout = args.timeout or max(600, 5 * cfg["timeout"])
    fleet = Fleet(env, facts, launcher, n, timeout)
    dataset_bytes = facts["image_bytes"] + facts["big_bytes"]
    figs = {}
    try:
        figs["one"] = pass_figures(fleet.run_pass("one", 1), dataset_bytes)
        one = figs["one"] if not figs["one"].get("missing") else None
        if n > 1:
            figs["store"] = pass_figures(fleet.run_pass("store", n), dataset_bytes, one)
        why = mirror_unavailable(REPO, launcher)
        if why:
            log(f"fleet: the mirror passes: {why}")
            for name in MIRROR_PASSES:
                figs[name] = {"name": name, "nodes": n, "missing": why}
        else:
            figs.update(mirror_passes(env, fleet, n, dataset_bytes, one))
    finally:
        fleet.stop_nodes()
    elapsed = time.time() - started
    sh = env.shaper() or {}
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": git_commit(), "scale": args.scale, "nodes": n, "cpus": os.cpu_count(),
            "kernel": platform.release(),
            "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB, 1),
            "load_start": [round(x, 2) for x in load_start], "load_end": [round(x, 2) for x in os.getloadavg()],
            "elapsed_s": round(elapsed), "page_cache_dropped": env.drop.ok,
            "network": dict(env.network, shaper_cpu_s=sh.get("cpu_seconds")),
            "data": {"images": facts["image_files"], "image_bytes": facts["image_bytes"],
                     "big_bytes": facts["big_bytes"]},
            "dataset_bytes": dataset_bytes}
    env.reg.stop_all()
    text, doc = render_fleet(meta, figs, fleet_targets(figs, n))
    report_doc(text, doc, args)


def mirror_passes(env, fleet, n, dataset_bytes, one):
    """Configuration (b) and its variants: the mirror empty, then poisoned, stopped, hanging."""
    figs = {}
    store_addr = env.endpoint.split("//", 1)[1]
    mirror = NginxMirror(env, os.path.join(REPO, SHIPPED_MIRROR), store_addr)
    try:
        mirror.start()
    except BenchError as e:
        for name in MIRROR_PASSES:
            figs[name] = {"name": name, "nodes": n, "missing": f"FAILED (nginx: {e})"}
        return figs
    try:
        p = fleet.run_pass("mirror", n, mirror, mirror.url())
        if not p.get("missing") and not (p.get("mirror_log") or {}).get("requests"):
            why = "MISSING (warpd accepted --mirror but sent the mirror no request: its read path does not use it)"
            log(f"fleet: {why}")
            for name in MIRROR_PASSES:
                figs[name] = {"name": name, "nodes": n, "missing": why}
            return figs
        figs["mirror"] = pass_figures(p, dataset_bytes, one)
        files, changed = mirror.poison()
        log(f"fleet: poisoned the mirror: {changed} bytes changed in {files} cache files")
        p = fleet.run_pass("poisoned", n, mirror, mirror.url())
        p.setdefault("errors", [])
        figs["poisoned"] = pass_figures(p, dataset_bytes, one)
        figs["poisoned"]["poisoned_files"] = files
        dead_url = mirror.url()
    finally:
        mirror.stop()
    figs["dead"] = pass_figures(fleet.run_pass("dead", n, None, dead_url), dataset_bytes, one)
    hang = HangingPort()
    try:
        figs["hanging"] = pass_figures(fleet.run_pass("hanging", n, None, hang.url()), dataset_bytes, one)
    finally:
        hang.close()
    return figs

