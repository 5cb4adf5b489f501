"""The report's arithmetic and formatting: cells (median, min-max, n), ratios against each peer,
TIMEOUT / MISSING / FAILED cells, the failures list, targets, the side tables, the JSON."""
import json
import types

import pytest

from warpbench import report as R
from warpbench.systems import SYSTEMS, SYSTEM_LABEL
from warpbench.workloads import WORKLOADS, select


class Sys:
    def __init__(self, missing=None):
        self.missing = missing


def systems(**missing):
    return {n: Sys(missing.get(n)) for n in SYSTEMS}


def meta(runs=3, network=None, **kw):
    m = {"date": "2026-11-25 18:00 UTC", "commit": "abc1234", "scale": "full", "runs": runs,
         "cpus": 2, "kernel": "6.1.0", "mem_gib": 7.7, "load_start": [1.5, 1.0, 1.0], "load_end": [2.25, 1.0, 1.0],
         "elapsed_s": 321, "page_cache_dropped": True, "rclone_vfs_cache_mode": "full",
         "data": {"big_bytes": 1 << 30, "table_shards": 8, "table_rows": 4_000_000, "images": 5000,
                  "image_bytes": 480 << 20, "tree_files": 100_000, "tensors": 100_000, "tensor_files": 4},
         "missing": {}, "network": network}
    m.update(kw)
    return m


def render(res, workloads, sysmap=None, m=None, peak_rss=None):
    sysmap = sysmap or systems()
    m = m or meta()
    m["missing"] = {n: s.missing for n, s in sysmap.items() if s.missing}
    return R.render(m, res, peak_rss or {}, {}, workloads, sysmap)


def row(text, label, phase):
    """The cells of one row of the main table, after label and phase."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 2 and cells[0] == label and cells[1] == phase:
            return cells[2:]
    raise AssertionError(f"no row {label!r} {phase!r} in:\n{text}")


def column(name):
    """Index of a column in row()'s cells: unit, then the systems, then warp/peer ratios."""
    head = ["unit"] + [SYSTEM_LABEL[c] for c in SYSTEMS] + [f"warp/{SYSTEM_LABEL[p]}" for p in SYSTEMS[1:]]
    return head.index(name)


# -- one cell -------------------------------------------------------------------------------

@pytest.mark.parametrize("vals,unit,runs,cell", [
    ([812.4], "MB/s", 1, "812"),
    ([812.4], "MB/s", 3, "812 (n=1)"),
    ([700.0, 812.4, 650.2], "MB/s", 3, "700 (650–812)"),
    ([700.0, 812.4], "MB/s", 3, "756 (700–812, n=2)"),  # the median of two is their mean
    ([1234.56], "files/s", 1, "1235"),
    ([99.5], "tensors/s", 1, "100"),  # rounds half to even like format(): 99.5 -> 100
    ([12.345, 10.0, 14.0], "ms", 3, "12.3 (10.0–14.0)"),
    ([0.12345], "s", 1, "0.123"),
    ([9.9994], "s", 1, "9.999"),
    ([10.04], "s", 1, "10.0"),          # 10 s and more: one decimal
    ([0.5, 20.0, 3.0], "s", 3, "3.000 (0.500–20.0)"),  # each of median, min, max formatted alone
    ([150000.0], "rows/s", 1, "150000.0"),  # other units: 3 decimals below 10, 1 from 10
])
def test_median_cell_formats_each_unit(vals, unit, runs, cell):
    assert R.median_cell(vals, unit, runs) == cell


def test_median_cell_of_no_value_is_none():
    assert R.median_cell([], "MB/s", 3) is None


def test_results_keep_every_value_and_error_per_key():
    res = R.Results()
    key = ("seq-dd", "cold", "warp")
    res.add(key, 3.0, {"bytes": 1})
    res.add(key, 1.0, {"bytes": 2})
    res.add(key, 2.0, {})
    res.err(key, "timeout after 120s")
    assert res.vals[key] == [3.0, 1.0, 2.0]
    assert res.median(key) == 2.0
    assert res.median(("seq-dd", "warm", "warp")) is None
    assert res.errors[key] == ["timeout after 120s"]
    assert res.extra[key] == [{"bytes": 1}, {"bytes": 2}, {}]


# -- the main table ---------------------------------------------------------------------------

def test_ratios_are_warp_over_each_peer_of_the_medians():
    res = R.Results()
    for v in (800.0, 900.0, 1000.0):
        res.add(("seq-dd", "cold", "warp"), v, {})
    for v in (400.0, 450.0, 500.0):
        res.add(("seq-dd", "cold", "s3fs"), v, {})
    res.add(("seq-dd", "cold", "local"), 1800.0, {})
    text, doc = render(res, [WORKLOADS["seq-dd"]])
    cells = row(text, WORKLOADS["seq-dd"].label, "cold")
    assert cells[column("unit")] == "MB/s ↑"
    assert cells[column("warp")] == "900 (800–1000)"
    assert cells[column("s3fs")] == "450 (400–500)"
    assert cells[column("local disk")] == "1800 (n=1)"
    assert cells[column("warp/s3fs")] == "2.00"
    assert cells[column("warp/local disk")] == "0.50"
    assert cells[column("warp/rclone")] == ""  # no rclone value: no ratio
    assert cells[column("rclone")] == "—"      # neither a value nor an error
    result = next(r for r in doc["results"] if r["system"] == "warp" and r["phase"] == "cold")
    assert (result["median"], result["min"], result["max"]) == (900.0, 800.0, 1000.0)
    assert result["values"] == [800.0, 900.0, 1000.0]
    assert result["better"] == "higher"


def test_lower_is_better_rows_have_the_down_arrow_and_the_same_ratio():
    res = R.Results()
    res.add(("ls-lR", "cold", "warp"), 2.0, {})
    res.add(("ls-lR", "cold", "local"), 0.5, {})
    text, doc = render(res, [WORKLOADS["ls-lR"]], m=meta(runs=1))
    cells = row(text, WORKLOADS["ls-lR"].label, "cold")
    assert cells[column("unit")] == "s ↓"
    assert cells[column("warp/local disk")] == "4.00"
    assert doc["results"][0]["better"] == "lower"


def test_failed_cells_say_what_happened():
    res = R.Results()
    w = WORKLOADS["duck-filter"]
    res.err((w.name, "cold", "s3fs"), "timeout after 150s")
    res.err((w.name, "warm", "s3fs"), "timeout after 60s (twice its cold time)")
    res.err((w.name, "cold", "rclone"), "MISSING (fio not installed)")
    res.err((w.name, "cold", "local"), "WRONG DATA: query result differs from local disk")
    res.add((w.name, "cold", "warp"), 0.2, {})
    res.add((w.name, "cold", "warp"), 0.4, {})
    res.err((w.name, "cold", "warp"), "exit 1: boom")
    text, _doc = render(res, [w])
    cold = row(text, w.label, "cold")
    assert cold[column("s3fs")] == "TIMEOUT"
    assert cold[column("rclone")] == "MISSING"
    assert cold[column("local disk")] == "FAILED"
    assert cold[column("warp")] == "0.300 (0.200–0.400, n=2) (1 failed)"
    assert row(text, w.label, "warm")[column("s3fs")] == "TIMEOUT"
    failures = text.split("Failures:\n")[1].splitlines()
    assert "- timeout after 150s: duck-filter/cold/s3fs" in failures
    assert "- WRONG DATA: query result differs from local disk: duck-filter/cold/local" in failures


def test_failures_with_the_same_message_are_listed_once_with_a_count():
    res = R.Results()
    names = ["ls-lR", "find", "duck-count", "duck-filter", "duck-groupby", "img-seq"]
    for n in names:
        res.err((n, "cold", "s3fs"), "s3fs exited with 1; see s3fs.log")
    text, _doc = render(res, [WORKLOADS[n] for n in names])
    assert ("- s3fs exited with 1; see s3fs.log: ls-lR/cold/s3fs, find/cold/s3fs, duck-count/cold/s3fs, "
            "duck-filter/cold/s3fs and 2 more") in text


def test_a_missing_system_shows_the_first_word_of_why_in_every_cell_and_below():
    res = R.Results()
    sysmap = systems(s3fs="MISSING (s3fs not installed)", rclone="not selected (--systems)")
    text, doc = render(res, [WORKLOADS["img-seq"]], sysmap=sysmap)
    cells = row(text, WORKLOADS["img-seq"].label, "cold")
    assert cells[column("s3fs")] == "MISSING"
    assert cells[column("rclone")] == "not selected"
    assert "- s3fs: MISSING (s3fs not installed)" in text
    assert "- rclone: not selected (--systems)" in text
    assert not any(r["system"] in ("s3fs", "rclone") for r in doc["results"])


def test_cold_only_and_absent_systems_leave_their_cells_empty():
    res = R.Results()
    res.add(("seq-dd", "warm", "warp"), 1000.0, {})
    text, _doc = render(res, [WORKLOADS["seq-dd"]])
    warm = row(text, WORKLOADS["seq-dd"].label, "warm")
    for peer in ("raw GET", "GET+SHA-256+file", "8 ranged GETs"):
        assert warm[column(peer)] == ""
    text, _doc = render(R.Results(), [WORKLOADS["img-planned"]])
    cells = row(text, WORKLOADS["img-planned"].label, "cold")
    assert cells[column("warp")] == "—"
    assert cells[column("s3fs")] == cells[column("local disk")] == ""


def test_the_header_says_how_warpds_jit_was_warmed_before_its_cold_rows():
    res = R.Results()
    text, _doc = render(res, [WORKLOADS["seq-dd"]], m=meta(warp_jit_warm_up=[[2.1, 0.9, 0.2], [1.8, 0.3]],
                                                          warp_jit_settled_cpu_s=0.25))
    assert ("Warp's JIT before its cold rows: 2 fresh warpd(s) served 3, 2 cold warm-up pass(es) over the big"
            " file and the images; their JIT compilers used 0.20, 0.30 CPU s in the last pass; 1 of 2 not settled"
            " (under 0.25) when the passes ran out") in text
    text, _doc = render(res, [WORKLOADS["seq-dd"]], m=meta(warp_jit_warm_up=[[0.1]], warp_jit_settled_cpu_s=0.25))
    assert "in the last pass; settled (under 0.25) in every start" in text
    text, _doc = render(res, [WORKLOADS["seq-dd"]], m=meta())
    assert "Warp's JIT" not in text


def test_the_cache_files_row_follows_warm_seq_dd():
    res = R.Results()
    res.add(("seq-dd", "warm", "warp"), 900.0, {})
    res.add(("seq-dd", "warm", "cachecat"), 1200.0, {"files": 3})
    text, doc = render(res, [WORKLOADS["seq-dd"]], m=meta(runs=1))
    line = next(ln for ln in text.splitlines() if ln.startswith("| cat of warpd's own cache block files"))
    assert "| 1200 |" in line and line.endswith("| warp/cache files: 0.75 |")
    assert any(r["system"] == "warp-cache-files" and r["median"] == 1200.0 for r in doc["results"])


def test_header_names_the_run_and_a_page_cache_that_could_not_be_dropped():
    text, _doc = render(R.Results(), [WORKLOADS["seq-dd"]], m=meta(page_cache_dropped=False))
    first = text.splitlines()[0]
    assert first.startswith("Warp bench, 2026-11-25 18:00 UTC, commit abc1234, scale full, median of 3 run(s)")
    assert "load average 1.5 at start, 2.25 at end; 321 s in all" in text
    assert "big file 1024 MiB; table 8 shards, 4000000 rows; 5000 images (480 MiB)" in text
    assert text.splitlines()[2].endswith("PAGE CACHE COULD NOT BE DROPPED.")


# -- targets ----------------------------------------------------------------------------------

def test_loopback_targets_compare_medians_with_their_goal():
    res = R.Results()
    res.add(("seq-dd", "cold", "warp"), 600.0, {})
    res.add(("seq-dd", "cold", "rawget"), 1000.0, {})
    res.add(("ls-lR", "cold", "warp"), 3.0, {})
    res.add(("ls-lR", "cold", "local"), 2.0, {})
    tg = {t["target"]: t for t in R.targets(res)}
    seq = tg["cold sequential: warp / raw GET (MB/s)"]
    assert (seq["ratio"], seq["goal"], seq["met"]) == (0.6, ">= 0.8", False)
    ls = tg["ls-lR cold: warp time / local disk time"]
    assert (ls["ratio"], ls["goal"], ls["met"]) == (1.5, "<= 2.0", True)
    unmeasured = tg["cold sequential: warp / GET+SHA-256+file (MB/s)"]
    assert (unmeasured["ratio"], unmeasured["met"]) == (None, None)
    text, doc = render(res, [WORKLOADS["seq-dd"], WORKLOADS["ls-lR"]])
    assert "| cold sequential: warp / raw GET (MB/s) | 0.6 | >= 0.8 | NO |" in text
    assert "| ls-lR cold: warp time / local disk time | 1.5 | <= 2.0 | yes |" in text
    assert "| cold sequential: warp / GET+SHA-256+file (MB/s) |  | >= 1.0 | n/a |" in text
    assert doc["targets"] == R.targets(res)


def test_shaped_network_targets_count_round_trips_and_peak_rss():
    net = {"rtt_ms": 20.0, "rate_mbps": 25.0, "ttfb_ms": 21.0, "shaper_cpu_s": 3.5, "shaper_bytes_down": 2.5e9}
    res = R.Results()
    res.add(("ttfb-new", "cold", "warp"), 84.0, {})
    res.add(("duck-count", "cold", "warp"), 1.0, {})
    res.add(("duck-count", "cold", "s3fs"), 4.0, {})
    res.add(("duck-count", "cold", "rclone"), 2.0, {})
    res.add(("seq-dd", "cold", "warp"), 200.0, {})
    res.add(("seq-dd", "cold", "pget"), 250.0, {})
    res.add(("img-seq", "cold", "warp"), 1000.0, {"bytes": 50_000_000, "seconds": 0.5})
    res.add(("img-seq", "cold", "local"), 1400.0, {"bytes": 50_000_000, "seconds": 0.3125})
    m = meta(runs=1, network=net)
    tg = {t["target"].split(" (")[0]: t for t in R.s3like_targets(res, m, {"warp": 600 * 1024})}
    ttfb = tg["time to first byte, version never opened, running daemon: warp ms / one request's round trip"]
    assert (ttfb["ratio"], ttfb["met"]) == (4.0, False)
    duck = tg["duck-count cold: warp time / the faster of s3fs and rclone"]
    assert (duck["ratio"], duck["met"]) == (0.5, True)
    pget = tg["cold sequential: warp / 8 ranged GETs"]
    assert (pget["ratio"], pget["met"]) == (0.8, True)
    pget26 = tg["issue 26, cold sequential: warp / 8 ranged GETs"]
    assert (pget26["ratio"], pget26["goal"], pget26["met"]) == (0.8, ">= 0.9", False)
    img = tg["issue 26, ImageFolder cold, folder order: warp MB/s / warp's cold sequential MB/s of the big file"]
    assert (img["ratio"], img["met"]) == (0.5, False)
    # the same client on the local disk: 160 MB/s over the big file's 200, a ceiling, not a goal
    ceiling = tg["the ceiling of the target above on this machine: local disk's ImageFolder MB/s"]
    assert (ceiling["ratio"], ceiling["goal"], ceiling["met"]) == (0.8, "(reference)", None)
    rss = tg["warpd peak RSS over the bench, MiB"]
    assert (rss["ratio"], rss["met"]) == (600.0, False)
    text, _doc = render(res, [WORKLOADS["ttfb-new"]], m=m, peak_rss={"warp": 600 * 1024})
    assert row(text, WORKLOADS["ttfb-new"].label, "cold")[column("warp/s3fs")] == "4.0 round trips"
    assert "Targets under this network (issues 16 and 26)" in text
    assert "the shaper used 3.5 CPU s for 2.5 GB" in text


def test_the_cpu_table_bounds_imagefolder_over_the_big_file_by_cpu_per_gib():
    net = {"rtt_ms": 20.0, "rate_mbps": 25.0, "ttfb_ms": 21.0, "shaper_cpu_s": 3.5, "shaper_bytes_down": 2.5e9}
    res = R.Results()

    def split(busy, daemon, store, shaper, client, wall):
        return {"busy": busy, "daemon": daemon, "store": store, "shaper": shaper, "client": client,
                "rest": busy - daemon - store - shaper - client, "wall": wall, "cores": 2}
    # the big file: 1 GiB, 6.5 CPU s in 3.4 s of 2 cores; ImageFolder: 0.5 GiB, 4.5 CPU s in 2.3 s
    res.add(("seq-dd", "cold", "warp"), 300.0, {"bytes": 1 << 30, "seconds": 3.4,
                                                "cpu_split": split(6.5, 3.0, 1.5, 1.5, 0.1, 3.4)})
    res.add(("img-seq", "cold", "warp"), 1500.0, {"bytes": 1 << 29, "seconds": 2.3,
                                                  "cpu_split": split(4.5, 1.6, 0.75, 0.75, 1.3, 2.3)})
    res.add(("seq-dd", "cold", "pget"), 200.0, {"bytes": 1 << 30, "seconds": 5.0})
    text, doc = render(res, [WORKLOADS["seq-dd"], WORKLOADS["img-seq"]], m=meta(runs=1, network=net))
    assert "| big file, dd, Warp | 96% | 3.00 | 1.50 | 1.50 | 0.10 | 0.40 | 6.50 |" in text
    assert "| ImageFolder, folder order, Warp | 98% | 3.20 | 1.50 | 1.50 | 2.60 | 0.20 | 9.00 |" in text
    assert "8 ranged GETs" not in text.split("Where the CPU went")[1].split("The machine was busy")[0]
    assert doc["cpu_bound_imagefolder_over_big_file"] == {"ratio": 0.722, "holds": True, "busy_share_big": 0.956,
                                                          "busy_share_img": 0.978}
    assert "both ran out of CPU, so ImageFolder's MB/s over the big file's can be at most about 0.72" in text
    assert "9.00 CPU s against 6.50 for the big file, 2.50 of the difference in the client and 0.20 in the daemon" in text
    # a pass that left the cores idle waited for something else: no bound is claimed
    idle = R.Results()
    idle.add(("seq-dd", "cold", "warp"), 300.0, {"bytes": 1 << 30, "seconds": 3.4,
                                                 "cpu_split": split(4.4, 2.0, 1.0, 1.0, 0.3, 3.4)})
    idle.add(("img-seq", "cold", "warp"), 1500.0, {"bytes": 1 << 29, "seconds": 2.3,
                                                   "cpu_split": split(4.5, 1.6, 0.75, 0.75, 1.3, 2.3)})
    text_idle, doc_idle = render(idle, [WORKLOADS["seq-dd"], WORKLOADS["img-seq"]], m=meta(runs=1, network=net))
    assert "The machine was busy 65% and 98%" in text_idle
    assert "CPU alone sets no bound on their ratio here" in text_idle
    assert "can be at most" not in text_idle
    assert doc_idle["cpu_bound_imagefolder_over_big_file"]["holds"] is False
    # unshaped runs have no such table
    plain, _ = render(res, [WORKLOADS["seq-dd"], WORKLOADS["img-seq"]])
    assert "Where the CPU went" not in plain
    # a run whose helper started inside it (torch imported) is left out while another is there...
    started = dict(split(20.0, 1.6, 0.75, 0.75, 16.8, 9.0), helper_started=True)
    res.add(("img-seq", "cold", "warp"), 900.0, {"bytes": 1 << 29, "seconds": 4.0, "cpu_split": started})
    text, _ = render(res, [WORKLOADS["seq-dd"], WORKLOADS["img-seq"]], m=meta(runs=2, network=net))
    assert "| ImageFolder, folder order, Warp | 98% | 3.20 |" in text
    # ...and said when it is all there is
    only = R.Results()
    only.add(("img-seq", "cold", "warp"), 900.0, {"bytes": 1 << 29, "seconds": 4.0, "cpu_split": started})
    text, _ = render(only, [WORKLOADS["img-seq"]], m=meta(runs=1, network=net))
    assert "| ImageFolder, folder order, Warp (its helper's start included) |" in text


# -- side tables ------------------------------------------------------------------------------

def test_tensor_table_puts_mmap_over_npy_and_warp_over_local():
    res = R.Results()
    for sn, npy, mm in (("warp", 500.0, 2000.0), ("local", 1000.0, 8000.0)):
        res.add(("tensor-npy", "cold", sn), npy, {})
        res.add(("tensor-mmap", "cold", sn), mm, {})
    lines = R.tensor_table(res, ["tensor-npy", "tensor-mmap"], systems(), 1)
    cold = [c.strip() for c in lines[-2].strip("|").split("|")]
    assert cold == ["cold", "500", "2000", "4.00", "1000", "8000", "8.00", "0.50", "0.25", "", ""]
    warm = [c.strip() for c in lines[-1].strip("|").split("|")]
    assert warm == ["warm", "—", "—", "", "—", "—", "", "", "", "", ""]
    assert R.tensor_table(res, ["seq-dd"], systems(), 1) == []
    # Warp's planned .npy pass, and planned over unplanned
    res.add(("tensor-npy-planned", "cold", "warp"), 1500.0, {})
    res.add(("tensor-npy-planned", "cold", "local"), 999.0, {})  # the local disk's is in the main table only
    lines = R.tensor_table(res, ["tensor-npy", "tensor-mmap", "tensor-npy-planned"], systems(), 1)
    head = [c.strip() for c in lines[-4].strip("|").split("|")]
    assert head[-2:] == ["warp .npy planned", "warp planned/npy"]
    assert [c.strip() for c in lines[-2].strip("|").split("|")][-2:] == ["1500", "3.00"]
    assert [c.strip() for c in lines[-1].strip("|").split("|")][-2:] == ["—", ""]
    alone = R.Results()
    alone.add(("tensor-npy-planned", "cold", "warp"), 1500.0, {})
    only = R.tensor_table(alone, ["tensor-npy-planned"], systems(), 1)
    assert [c.strip() for c in only[-2].strip("|").split("|")] == ["cold"] + [""] * 8 + ["1500", ""]


def test_request_table_takes_medians_and_prices_an_imagenet_epoch():
    res = R.Results()
    for get in (90, 100, 110):
        res.add(("img-seq", "cold", "warp"), 1.0, {"requests": {"GET": get, "HEAD": 0, "LIST": 0}})
    res.add(("img-seq", "cold", "s3fs"), 1.0, {"requests": {"GET": 2000, "HEAD": 2000, "LIST": 10}})
    lines = R.request_table(res, [WORKLOADS["img-seq"]], images=2000)
    assert "| img-seq | cold | warp | 100 | 0 | 0 |" in lines
    assert "| img-seq | cold | s3fs | 2000 | 2000 | 10 |" in lines
    # warp: 100 requests for 2,000 images = 0.05 a image; 1,281,167 images -> 64,058 GETs, $0.03
    assert "| img-seq | warp | 0.0500 | 64,058 | 0.03 |" in lines
    # s3fs: 4,010 per 2,000 images; (4000 * 0.0004 + 10 * 0.005) / 1000 * 1,281,167 / 2,000 = $1.06
    assert "| img-seq | s3fs | 2.0050 | 2,568,740 | 1.06 |" in lines
    assert R.request_table(R.Results(), [WORKLOADS["img-seq"]], images=2000) == []


def test_counter_delta_keeps_numbers_only():
    assert R.counter_delta({"gets": 10, "bytes": 5.5, "mode": "auto"}, {"gets": 4}) == {"gets": 6, "bytes": 5.5}


# -- output -----------------------------------------------------------------------------------

def test_report_prints_the_table_and_writes_the_same_json(tmp_path, capsys):
    res = R.Results()
    res.add(("seq-dd", "cold", "warp"), 700.0, {"bytes": 1})
    out = tmp_path / "bench.json"
    R.report(meta(runs=1), res, {"warp": 2048}, {"seq-dd/cold": {"read": {}}}, select("seq-dd"), systems(),
             types.SimpleNamespace(json=str(out)))
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert printed == doc["markdown"] + "\n"
    assert set(doc) == {"meta", "results", "targets", "daemon", "cpu_bound_imagefolder_over_big_file",
                        "warp_stats", "markdown"}
    assert doc["daemon"]["peak_rss_kib"] == {"warp": 2048}
    assert "| peak RSS, MiB (VmHWM, max over the run) | 2 |  |  |" in printed
