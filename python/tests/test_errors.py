"""Errors: typed, naming what is missing, saying what to do."""

import pytest

import warpdata as wd


def test_missing_dataset_names_itself(warp):
    with pytest.raises(wd.DatasetNotFoundError) as e:
        wd.dataset("pytest/nope")
    assert "pytest/nope" in str(e.value)
    assert e.value.code == "DatasetNotFoundError" and e.value.next_step
    assert isinstance(e.value, wd.WarpError)


def test_missing_tag_names_itself(warp):
    with pytest.raises(wd.DatasetNotFoundError) as e:
        wd.dataset("pytest/pets@no-such-tag")
    assert "no-such-tag" in str(e.value)


def test_missing_table_names_itself_and_the_tables(ds):
    with pytest.raises(wd.TableNotFoundError) as e:
        ds.table("nope")
    assert "'nope'" in e.value.message and "main" in e.value.next_step


def test_missing_column_and_bad_filter_are_typed(ds):
    with pytest.raises(wd.ColumnNotFoundError) as e:
        next(ds.table("main").batch_dicts(columns=["id", "nope"]))
    assert "nope" in str(e.value)
    with pytest.raises(wd.InvalidFilterError) as e:
        next(ds.table("main").batch_dicts(where="nope > 1"))
    assert e.value.next_step


def test_filter_cannot_read_files(ds):
    with pytest.raises(wd.InvalidFilterError) as e:
        next(ds.table("main").batch_dicts(where="(SELECT count(*) FROM read_text('/etc/passwd')) > 0"))
    assert "/etc/passwd" in str(e.value)


def test_bad_shard_says_what_to_pass(ds):
    with pytest.raises(wd.BadRequestError) as e:
        next(ds.table("main").batch_dicts(shard=(3, 3)))
    assert "rank" in e.value.next_step


def test_no_warpd_says_how_to_start_one(tmp_path, monkeypatch):
    monkeypatch.setenv("WARP_SOCKET", str(tmp_path / "none.sock"))
    with pytest.raises(wd.DaemonUnavailableError) as e:
        wd.dataset("pytest/pets")
    assert str(tmp_path / "none.sock") in str(e.value)
    assert "start" in e.value.next_step and "warpd" in e.value.next_step
