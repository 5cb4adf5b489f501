"""scripts/bench --fleet: the shipped nginx files templated, the mirror's access log, nginx cache
files poisoned, --mirror detected, one node's reader (fleet_node.py), the passes' arithmetic, the
targets and the table."""
import hashlib
import io
import json
import os
import subprocess
import sys

import pytest

from warpbench import cli, fleet as F
from warpbench.common import MIB, REPO, BenchError

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The lines of the shipped files that the bench replaces (systemd/mirror/nginx/ on the mirror branch).
SITE = """upstream warp_store {
    server 127.0.0.1:9000;
    keepalive 32;
}
proxy_cache_path /var/cache/nginx/warp-mirror levels=1:2 keys_zone=warp_mirror:64m;
js_path /etc/nginx/warp-mirror/;
server {
    listen 8080;
    access_log /var/log/nginx/warp-mirror.access.log warp_mirror;
    include /etc/nginx/warp-mirror/store.conf;
}
"""
STORE = """set $warp_store_scheme http;
set $warp_store_host "127.0.0.1:9000";
set $warp_bucket_path "/my-bucket/warp";
set $warp_s3_region "us-east-1";
set $warp_s3_access_key "";
set $warp_s3_secret_key "";
"""
TEMPLATE = dict(port=8123, store_addr="127.0.0.1:9100", bucket_path="/warp-bench/store", access_key="k",
                secret_key="s", cache_dir="/b/cache", conf_dir="/b/conf", access_log="/b/access.log")


# -- the shipped nginx files --------------------------------------------------------------------

def test_template_replaces_each_machine_specific_line_once():
    site, store = F.template_nginx(SITE, STORE, **TEMPLATE)
    assert "server 127.0.0.1:9100;" in site and "127.0.0.1:9000" not in site
    assert "listen 127.0.0.1:8123;" in site
    assert "proxy_cache_path /b/cache levels=1:2" in site
    assert "js_path /b/conf/;" in site and "include /b/conf/store.conf;" in site
    assert "access_log /b/access.log warp_mirror;" in site
    assert 'set $warp_store_host "127.0.0.1:9100";' in store
    assert 'set $warp_bucket_path "/warp-bench/store";' in store
    assert 'set $warp_s3_access_key "k";' in store and 'set $warp_s3_secret_key "s";' in store
    assert "/etc/nginx" not in site + store and "/var/" not in site


@pytest.mark.parametrize("broken", [SITE.replace("listen 8080;", "listen 80;"),
                                    SITE + "server {\n    listen 8080;\n}\n"])
def test_template_refuses_shipped_files_it_no_longer_matches(broken):
    with pytest.raises(BenchError, match="listen 8080;.*update warpbench/fleet.py"):
        F.template_nginx(broken, STORE, **TEMPLATE)


@pytest.mark.skipif(not os.path.isfile(os.path.join(REPO, F.SHIPPED_MIRROR, "warp-mirror.conf")),
                    reason="this checkout has no shipped nginx mirror (systemd/mirror/nginx/)")
def test_template_matches_the_files_shipped_in_this_checkout():
    d = os.path.join(REPO, F.SHIPPED_MIRROR)
    with open(os.path.join(d, "warp-mirror.conf")) as a, open(os.path.join(d, "store.conf")) as b:
        site, store = F.template_nginx(a.read(), b.read(), **TEMPLATE)
    assert "listen 127.0.0.1:8123;" in site and "127.0.0.1:9100" in store


def test_main_conf_keeps_everything_under_the_bench_directory():
    conf = F.nginx_main_conf("/b", "/b/conf", js_module="/m/js.so")
    assert conf.startswith("load_module /m/js.so;")
    assert "daemon off;" in conf and "pid /b/nginx.pid;" in conf and "include /b/conf/warp-mirror.conf;" in conf
    assert "proxy_temp_path /b/tmp-proxy;" in conf
    assert "/var/" not in conf and "/etc/" not in conf


# -- the mirror's access log --------------------------------------------------------------------

def line(status, n, cache, auth="none", key="blobs/sha256/ab/" + "ab" * 32):
    return (f'127.0.0.1 [25/Nov/2026:19:00:00 +0000] "GET /warp/{key} HTTP/1.1" {status} {n} '
            f'range="bytes=0-1048575" cache={cache} client_auth={auth} upstream=127.0.0.1:9100 '
            f'upstream_status=206 ua="Java-http-client/21"')


def test_access_log_counts_hits_misses_bytes_and_authorization_headers():
    log = F.parse_access_log([line(206, 1048576, "MISS"), line(206, 1048576, "HIT"), line(206, 1000, "HIT"),
                              line(404, 0, "-", key="datasets/x/latest.json"), line(206, 5, "EXPIRED", auth="PRESENT"),
                              "", "garbage"])
    assert (log["requests"], log["hits"], log["misses"], log["uncached"]) == (5, 2, 2, 1)
    assert (log["hit_bytes"], log["miss_bytes"], log["bytes"]) == (1049576, 1048581, 2098157)
    assert (log["client_auth"], log["unparsed"], log["status"]) == (1, 1, {"206": 4, "404": 1})
    assert F.hit_ratio(log) == 0.5


def test_hit_ratio_without_cache_requests_is_none():
    assert F.hit_ratio(F.parse_access_log([])) is None
    assert F.hit_ratio(None) is None


# -- warpd --help -------------------------------------------------------------------------------

PICOCLI = """Usage: warpd [-hV] [--cache-dir=DIR] [--endpoint=URL] [--mirror=URL]...
             [--mirror-timeout=DURATION]
      --mirror=URL           Read-through cache, tried in order (WARP_MIRRORS).
"""


@pytest.mark.parametrize("text,ok", [
    (PICOCLI, True),
    ("      --mirror URL   a mirror\n", True),
    ("Usage: warpd [--mirror-timeout=DURATION]\n      --mirror-timeout=DURATION  x\n", False),
    ("Usage: warpd [-hV] [--cache-dir=DIR] [--endpoint=URL]\n", False),
    ("", False), (None, False),
])
def test_supports_mirror_reads_warpd_help(text, ok):
    assert F.supports_mirror(text) is ok


def test_mirror_is_unavailable_without_the_shipped_files(tmp_path):
    why = F.mirror_unavailable(str(tmp_path), ["warpd"], help_text=PICOCLI)
    assert why.startswith("MISSING (no systemd/mirror/nginx/warp-mirror.conf in this checkout")


def test_mirror_is_unavailable_when_warpd_lacks_the_option(tmp_path):
    d = tmp_path / F.SHIPPED_MIRROR
    d.mkdir(parents=True)
    for f in F.SHIPPED_FILES:
        (d / f).write_text("x")
    if not (os.access(F.NGINX, os.X_OK) and os.path.isfile(F.NGINX_JS_MODULE)):
        assert "apt-get install nginx libnginx-mod-http-js" in F.mirror_unavailable(str(tmp_path), [], "")
        return
    assert F.mirror_unavailable(str(tmp_path), [], help_text="Usage: warpd [-hV]") == \
        "MISSING (warpd does not accept --mirror: its --help does not list it; issue 25 item 1)"
    assert F.mirror_unavailable(str(tmp_path), [], help_text=PICOCLI) is None


# -- poisoning nginx cache files ------------------------------------------------------------------

def cache_file(path, body, body_start=300):
    head = bytearray(body_start)
    head[:8] = (5).to_bytes(8, "little")  # version
    head[56:58] = body_start.to_bytes(2, "little")
    head[100:120] = b"\nKEY: blobs/x 0-1\n\r\n"
    path.write_bytes(bytes(head) + body)
    return bytes(head)


def test_poison_inverts_body_bytes_and_keeps_header_and_size(tmp_path):
    p = tmp_path / "c"
    body = bytes(range(256)) * 40  # 10240 bytes
    head = cache_file(p, body)
    assert F.cache_body_start(head, len(head) + len(body)) == 300
    changed = F.poison_cache_file(str(p), stride=4096)
    data = p.read_bytes()
    assert changed == 3 and len(data) == len(head) + len(body)
    assert data[:300] == head
    diff = [i for i in range(len(body)) if data[300 + i] != body[i]]
    assert diff == [0, 4096, 8192]
    assert all(data[300 + i] == body[i] ^ 0xFF for i in diff)


def test_poison_of_an_unknown_layout_changes_the_last_byte(tmp_path):
    p = tmp_path / "c"
    p.write_bytes(b"\0" * 100)  # body_start 0: not plausible
    assert F.cache_body_start(b"\0" * 100, 100) is None
    assert F.poison_cache_file(str(p)) == 1
    assert p.read_bytes() == b"\0" * 99 + b"\xff"


# -- one node's reader -----------------------------------------------------------------------------

def test_node_reads_in_imagefolder_order_and_counts_exactly_the_wrong_bytes(tmp_path):
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    files = {"b_cls/2.JPEG": b"two" * 100, "b_cls/10.JPEG": b"ten" * 100, "a_cls/z.JPEG": b"zed" * 1000,
             "a_cls/sub/y.JPEG": b"why" * 10}
    for root in (src, mnt):
        for rel, data in files.items():
            (root / "images" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "images" / rel).write_bytes(data)
        (root / "big").mkdir()
    (src / "big" / "big.parquet").write_bytes(b"B" * (3 * MIB + 5))
    (mnt / "big" / "part-0.parquet").write_bytes(b"B" * MIB + b"X" + b"B" * (2 * MIB + 4))  # 1 wrong byte
    (mnt / "images" / "b_cls" / "2.JPEG").write_bytes(b"twX" + b"two" * 99 + b"!!")  # 1 differs, 2 extra
    expected = {"images": {rel: [len(d), hashlib.sha256(d).hexdigest()] for rel, d in files.items()},
                "big": [3 * MIB + 5, hashlib.sha256(b"B" * (3 * MIB + 5)).hexdigest()]}
    sys.path.insert(0, HERE)
    import fleet_node
    assert fleet_node.image_order(str(mnt / "images")) == \
        ["a_cls/z.JPEG", "a_cls/sub/y.JPEG", "b_cls/10.JPEG", "b_cls/2.JPEG"]
    r = fleet_node.one_pass(str(mnt), expected, str(src))
    assert (r["files"], r["image_files"], r["wrong_files"], r["wrong_bytes"], r["errors"]) == (5, 4, 2, 4, 0)
    assert r["bytes"] == sum(len(d) for d in files.values()) + 2 + 3 * MIB + 5
    assert r["t_start"] <= r["t_images"] <= r["t_end"]


def test_node_waits_for_go_and_reports_a_missing_image_as_an_error(tmp_path):
    (tmp_path / "images" / "c").mkdir(parents=True)
    (tmp_path / "big").mkdir()
    exp = tmp_path / "exp.json"
    exp.write_text(json.dumps({"images": {"c/gone.JPEG": [1, "00"]}, "big": [0, "00"]}))
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "fleet_node.py"), "--root", str(tmp_path),
                          "--expected", str(exp), "--source", str(tmp_path)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert json.loads(p.stdout.readline()) == {"ready": True}
    out, _ = p.communicate("go\n", timeout=60)
    r = json.loads(out)
    assert (r["files"], r["errors"]) == (0, 2)  # the unlisted image and the absent big file
    assert "1 images not listed" in " ".join(r["error_samples"])


# -- the passes' arithmetic, targets, table ---------------------------------------------------------

def node(t0, secs, img_secs, files=100, nbytes=200 * MIB, wrong=0, errors=0):
    return {"t_start": t0, "t_images": t0 + img_secs, "t_end": t0 + secs, "files": files + 1, "image_files": files,
            "bytes": nbytes, "wrong_files": 1 if wrong else 0, "wrong_bytes": wrong, "errors": errors,
            "error_samples": ["x: EIO"] if errors else []}


DATASET = 100 * MIB


def a_pass(name, nodes, store_mib, reads=(80, 0, 2), log=None, **kw):
    return {"name": name, "nodes": len(nodes), "results": nodes, "mirror_log": log, "errors": [],
            "store": {"bytes": store_mib * MIB, "requests": {"GET": reads[0], "HEAD": reads[1], "LIST": reads[2],
                                                            "PUT": 9}}, **kw}


def test_one_node_is_its_own_reference():
    f = F.pass_figures(a_pass("one", [node(10.0, 20.0, 5.0)], 102), DATASET)
    assert f["seconds"] == 20.0 and f["time_x"] is None
    assert f["files_s"] == [20.0] and f["mb_s"] == [pytest.approx(200 * MIB / 20 / 1e6)]
    assert f["store_bytes_x"] == pytest.approx(1.02) and f["store_reads"] == 82
    assert f["requests_per_mib"] == pytest.approx(0.82)


def test_n_nodes_wall_time_runs_from_the_first_start_to_the_last_end():
    one = F.pass_figures(a_pass("one", [node(0.0, 20.0, 5.0)], 100), DATASET)
    f = F.pass_figures(a_pass("mirror", [node(100.0, 24.0, 6.0), node(100.5, 25.5, 8.0, wrong=3, errors=1)], 110,
                              reads=(100, 1, 3), log=F.parse_access_log([line(206, 10, "HIT")] * 3
                                                                        + [line(206, 10, "MISS")])),
                       DATASET, one)
    assert f["seconds"] == 26.0 and f["time_x"] == pytest.approx(1.3)
    assert f["node_seconds"] == [24.0, 25.5]
    assert f["files_s"] == [pytest.approx(100 / 6), pytest.approx(12.5)]
    assert f["store_bytes_x"] == pytest.approx(1.1) and f["requests_x"] == pytest.approx(104 / 82)
    assert (f["wrong_bytes"], f["wrong_files"], f["read_errors"]) == (3, 1, 1)
    assert f["hit_ratio"] == 0.75 and f["errors"] == ["x: EIO"] and f["complete"]


def test_hit_ratio_comes_from_warpd_when_there_is_no_access_log():
    f = F.pass_figures(a_pass("dead", [node(0.0, 10.0, 2.0)], 100, warpd_mirrors={"hits": 3, "misses": 1}), DATASET)
    assert f["hit_ratio"] == 0.75
    f = F.pass_figures(a_pass("mirror", [node(0.0, 10.0, 2.0)], 100, log=F.parse_access_log([line(206, 1, "MISS")]),
                              warpd_mirrors={"hits": 3, "misses": 1}), DATASET)
    assert f["hit_ratio"] == 0.0  # nginx's log wins: it is what the cache itself saw


def test_a_failed_node_is_kept_out_of_the_figures_and_named():
    f = F.pass_figures(a_pass("store", [node(0.0, 10.0, 2.0), {"error": "timeout after 600s"}], 200), DATASET)
    assert f["seconds"] == 10.0 and not f["complete"] and f["errors"] == ["timeout after 600s"]
    f = F.pass_figures(a_pass("store", [{"error": "boom"}], 0), DATASET)
    assert f["missing"] == "FAILED" and f["errors"] == ["boom"]


def figs(mirror_x=1.1, poisoned_wrong=0, mirror_time=1.4, missing=None):
    one = F.pass_figures(a_pass("one", [node(0.0, 20.0, 5.0)], 100), DATASET)
    out = {"one": one,
           "store": F.pass_figures(a_pass("store", [node(0.0, 30.0, 5.0)] * 4, 400), DATASET, one)}
    if missing:
        out.update({n: {"name": n, "nodes": 4, "missing": missing} for n in F.MIRROR_PASSES})
        return out
    out["mirror"] = F.pass_figures(a_pass("mirror", [node(0.0, 20.0 * mirror_time, 5.0)] * 4, 100 * mirror_x,
                                          log=F.parse_access_log([line(206, 1, "HIT")])), DATASET, one)
    out["poisoned"] = F.pass_figures(a_pass("poisoned", [node(0.0, 40.0, 5.0, wrong=poisoned_wrong)] * 4, 400,
                                            warpd_mirrors={"verification_failures": 12, "errors": 0}), DATASET, one)
    for n in ("dead", "hanging"):
        out[n] = F.pass_figures(a_pass(n, [node(0.0, 30.0, 5.0)] * 4, 400), DATASET, one)
    return out


def test_targets_met():
    t = {x["target"]: x for x in F.fleet_targets(figs(), 4)}
    assert t["store bytes ÷ dataset, 4 nodes through the mirror"] == \
        {"target": "store bytes ÷ dataset, 4 nodes through the mirror", "ratio": 1.1, "goal": "<= 1.15", "met": True}
    ref = t["store bytes ÷ dataset, 4 nodes without a mirror (reference)"]
    assert (ref["ratio"], ref["met"]) == (4.0, None)
    assert t["wrong bytes, poisoned mirror"]["met"] is True and t["wrong bytes, every pass"]["ratio"] == 0
    assert t["time, 4 nodes through the mirror ÷ 1 node"]["met"] is True
    assert t["time, 4 nodes straight to the store ÷ 1 node"]["ratio"] == 1.5


def test_targets_missed_or_not_measured():
    t = {x["target"]: x for x in F.fleet_targets(figs(mirror_x=1.2, poisoned_wrong=7, mirror_time=1.6), 4)}
    assert t["store bytes ÷ dataset, 4 nodes through the mirror"]["met"] is False
    assert (t["wrong bytes, poisoned mirror"]["ratio"], t["wrong bytes, poisoned mirror"]["met"]) == (28, False)
    assert t["wrong bytes, every pass"]["met"] is False
    assert t["time, 4 nodes through the mirror ÷ 1 node"]["met"] is False
    t = {x["target"]: x for x in F.fleet_targets(figs(missing="MISSING (no nginx)"), 4)}
    assert t["store bytes ÷ dataset, 4 nodes through the mirror"] == \
        {"target": "store bytes ÷ dataset, 4 nodes through the mirror", "ratio": None, "goal": "<= 1.15", "met": None}
    assert t["wrong bytes, poisoned mirror"]["met"] is None and t["wrong bytes, every pass"]["met"] is True


META = {"date": "2026-11-25 19:00 UTC", "commit": "abc1234", "scale": "quick", "nodes": 4, "cpus": 2,
        "kernel": "6.1.0", "mem_gib": 23.0, "load_start": [3.0], "load_end": [4.5], "elapsed_s": 300,
        "network": {"rtt_ms": 20.0, "rate_mbps": 25.0, "shaper_cpu_s": 12.5},
        "data": {"images": 2000, "image_bytes": 190 * MIB, "big_bytes": 256 * MIB}, "dataset_bytes": 446 * MIB}


def rows(text):
    out = {}
    for ln in text.splitlines():
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if ln.startswith("| ") and len(cells) == 13:
            out[cells[0]] = cells[1:]
    return out


def test_table_shows_every_pass_with_its_figures():
    fs = figs()
    text, doc = F.render_fleet(META, fs, F.fleet_targets(fs, 4))
    r = rows(text)
    assert r["1 node, straight to the store"][:7] == ["1", "20.0", "", "1.00", "80/0/2", "0.82", "20"]
    assert r["4 nodes, straight to the store"][:5] == ["4", "30.0", "1.50", "4.00", "80/0/2"]
    assert r["4 nodes through one nginx mirror, empty at the start"][8:] == ["1.00", "n/a", "0", "0"]
    assert r["4 nodes, poisoned mirror (its cache files corrupted on disk after the fill)"][8:] == \
        ["—", "12 / 0", "0", "0"]
    assert r["4 nodes, straight to the store"][8] == ""  # no mirror: no hit ratio
    assert "| wrong bytes, poisoned mirror | 0 | = 0 | yes |" in text
    assert "| store bytes ÷ dataset, 4 nodes without a mirror (reference) | 4.0 | ≈ 4 (each node fetches it all) | n/a |" in text
    assert "446 MiB, every byte checked" in text and "RTT 20 ms" in text
    assert json.loads(json.dumps(doc))["fleet"]["passes"][2]["store_bytes_x"] == pytest.approx(1.1)
    assert doc["markdown"] == text
    assert "no store link cap" in text


def test_table_header_names_the_store_link_cap():
    fs = figs()
    meta = dict(META, network=dict(META["network"], link_mbps=40.0))
    text, _ = F.render_fleet(meta, fs, F.fleet_targets(fs, 4))
    assert "25 MB/s per connection, store link 40 MB/s for all connections together" in text


def test_table_says_why_the_mirror_passes_are_missing():
    fs = figs(missing="MISSING (warpd does not accept --mirror: its --help does not list it; issue 25 item 1)")
    text, doc = F.render_fleet(META, fs, F.fleet_targets(fs, 4))
    r = rows(text)
    assert r["4 nodes, dead mirror (nginx stopped: connection refused)"][:3] == ["4", "MISSING", ""]
    assert "- 4 nodes through one nginx mirror, empty at the start: MISSING (warpd does not accept --mirror" in text
    assert "| store bytes ÷ dataset, 4 nodes through the mirror |  | <= 1.15 | n/a |" in text


def test_table_lists_failures():
    fs = figs()
    fs["store"]["errors"] = ["fleet-reader-1: timeout after 600s"]
    text, _ = F.render_fleet(META, fs, F.fleet_targets(fs, 4))
    assert "Failures:\n- store: fleet-reader-1: timeout after 600s" in text


# -- the flag -----------------------------------------------------------------------------------

def test_fleet_flag_defaults_to_4_and_shapes_the_network_with_a_store_link():
    link = cli.FLEET_STORE_LINK_MBPS
    a = cli.parse_args(["--fleet"])
    assert (a.fleet, a.shape) == (4, {"rtt_ms": 20.0, "rate_mbps": 25.0, "link_mbps": link})
    a = cli.parse_args(["--quick", "--fleet", "2", "--rtt", "40"])
    assert (a.fleet, a.scale, a.shape) == (2, "quick", {"rtt_ms": 40.0, "rate_mbps": 25.0, "link_mbps": link})
    assert cli.parse_args([]).fleet is None


@pytest.mark.parametrize("value, shape_link", [("80", 80.0), ("12.5", 12.5), ("none", None), ("0", None),
                                               ("off", None)])
def test_store_link_sets_or_lifts_the_fleet_link_cap(value, shape_link):
    a = cli.parse_args(["--fleet", "--store-link", value])
    assert a.shape.get("link_mbps") == shape_link and a.shape["rate_mbps"] == 25.0


def test_store_link_without_fleet_shapes_the_network_and_caps_only_when_given():
    assert "link_mbps" not in cli.parse_args(["--network", "s3like"]).shape
    assert cli.parse_args(["--store-link", "50"]).shape == {"rtt_ms": 20.0, "rate_mbps": 25.0, "link_mbps": 50.0}


@pytest.mark.parametrize("value", ["-5", "fast"])
def test_store_link_refuses_what_is_no_rate(value, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parse_args(["--fleet", "--store-link", value])
    assert e.value.code == 2 and "--store-link" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--fleet", "0"], ["--fleet", "2", "--only", "seq-dd"],
                                  ["--fleet", "--systems", "warp"]])
def test_fleet_flag_refuses_what_it_cannot_do(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parse_args(argv)
    assert e.value.code == 2


def test_hanging_port_accepts_and_never_answers():
    import socket
    h = F.HangingPort()
    try:
        with socket.create_connection(("127.0.0.1", h.port), timeout=2) as s:
            s.sendall(b"GET /warp/x HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(0.3)
            with pytest.raises(socket.timeout):
                s.recv(1)
    finally:
        h.close()
    assert h.url() == f"http://127.0.0.1:{h.port}/warp"


# -- the mirror passes' order, on a fake fleet and a fake nginx -------------------------------------

class FakeMirror:
    def __init__(self, env, shipped, store_addr):
        self.calls = env.calls
        self.calls.append(("nginx", shipped.endswith(F.SHIPPED_MIRROR), store_addr))

    def start(self):
        self.calls.append("start")

    def url(self):
        return "http://127.0.0.1:1111/warp"

    def poison(self):
        self.calls.append("poison")
        return 3, 768

    def stop(self):
        self.calls.append("stop")


class FakeFleet:
    def __init__(self, calls, mirror_requests):
        self.calls, self.mirror_requests = calls, mirror_requests

    def run_pass(self, name, k, mirror=None, url=None):
        self.calls.append((name, k, mirror is not None, url))
        log = F.parse_access_log([line(206, 1, "HIT")] * self.mirror_requests) if mirror else None
        return a_pass(name, [node(0.0, 10.0, 2.0)] * k, 100, log=log)


def run_mirror_passes(monkeypatch, mirror_requests):
    import types
    calls = []
    monkeypatch.setattr(F, "NginxMirror", FakeMirror)
    env = types.SimpleNamespace(calls=calls, endpoint="http://127.0.0.1:5555")
    figs = F.mirror_passes(env, FakeFleet(calls, mirror_requests), 4, DATASET, None)
    return calls, figs


def test_mirror_passes_fill_poison_stop_and_hang_in_that_order(monkeypatch):
    calls, figs = run_mirror_passes(monkeypatch, mirror_requests=5)
    assert calls[0] == ("nginx", True, "127.0.0.1:5555")  # the shipped files, in front of the shaper
    assert calls[1:] == ["start", ("mirror", 4, True, "http://127.0.0.1:1111/warp"), "poison",
                         ("poisoned", 4, True, "http://127.0.0.1:1111/warp"), "stop",
                         ("dead", 4, False, "http://127.0.0.1:1111/warp"), calls[-1]]
    assert calls[-1][:3] == ("hanging", 4, False) and calls[-1][3] != "http://127.0.0.1:1111/warp"
    assert list(figs) == ["mirror", "poisoned", "dead", "hanging"]
    assert figs["poisoned"]["poisoned_files"] == 3 and not any(f.get("missing") for f in figs.values())


def test_a_warpd_that_never_asks_the_mirror_makes_every_mirror_pass_missing(monkeypatch):
    calls, figs = run_mirror_passes(monkeypatch, mirror_requests=0)
    assert calls[1:] == ["start", ("mirror", 4, True, "http://127.0.0.1:1111/warp"), "stop"]
    assert {f["missing"] for f in figs.values()} == \
        {"MISSING (warpd accepted --mirror but sent the mirror no request: its read path does not use it)"}
