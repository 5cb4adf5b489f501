"""ds.warm() fills warpd's cache (with progress); reads after it fetch nothing; modes."""

import pytest

import warpdata as wd
from conftest import DATASET


def test_warm_then_reads_fetch_nothing(warp):
    ds = wd.dataset("pytest/untouched")
    events = []
    result = ds.warm(tables=["main"], progress=events.append)
    assert result["bytes_total"] > 0 and result["bytes_done"] == result["bytes_total"]
    assert all("bytes_done" in e for e in events)
    before = warp.counters()
    n = sum(len(b["id"]) for b in ds.table("main").batch_dicts(64))
    after = warp.counters()
    assert n == 160
    assert after["bytes_fetched"] == before["bytes_fetched"] and after["gets_issued"] == before["gets_issued"]


def test_warm_stops_at_max_bytes(warp, ds):
    result = ds.warm(artifacts=["sounds"], max_bytes=1)
    assert result["truncated"] is True


def test_hybrid_mode_warms_before_the_first_batch_and_bad_modes_are_refused(warp):
    ds = wd.dataset(DATASET, mode="hybrid")
    assert sum(len(b["id"]) for b in ds.table("main").batch_dicts(100, columns=["id"])) == 160
    assert "main" in ds._warmed
    with pytest.raises(wd.BadRequestError) as e:
        wd.dataset(DATASET, mode="local")
    assert "auto" in e.value.next_step


def test_a_warm_that_does_not_fit_in_the_cache_warns_and_progress_true_is_the_stderr_line(warp, monkeypatch, capsys):
    """warpd says "fits": false when what was asked is larger than its cache: what was warmed first
    was evicted again. progress=True raised TypeError ('bool' object is not callable)."""
    ds = wd.dataset("pytest/untouched")
    result = ds.warm(tables=["main"], progress=True)
    assert result["fits"] is True
    assert "main" not in capsys.readouterr().out

    def too_big(op, args, on_event=None):
        return {"bytes_done": 5, "bytes_total": 10, "truncated": False, "fits": False}

    monkeypatch.setattr(ds._client, "call", too_big)
    with pytest.warns(RuntimeWarning, match="does not all fit in warpd's cache"):
        ds.warm(progress=False)
    with pytest.raises(TypeError, match="progress must be"):
        ds.warm(progress="yes")
