"""scripts/bench's flags: defaults, the shaped network, --help."""
import os

import pytest

from warpbench import cli


def test_defaults_are_the_full_scale_on_plain_loopback():
    a = cli.parse_args([])
    assert (a.scale, a.shape, a.runs, a.timeout, a.repeat_limit) == ("full", None, None, 0, 30.0)
    assert (a.rclone_cache_mode, a.warp_cache_size, a.network) == ("full", "20GB", "loopback")
    assert a.workdir.endswith(os.path.join("", ".bench"))


def test_quick_only_and_systems_are_kept_as_given():
    a = cli.parse_args(["--quick", "--only", "seq-dd,img-seq", "--systems", "warp,local", "--runs", "2"])
    assert (a.scale, a.only, a.systems, a.runs) == ("quick", "seq-dd,img-seq", "warp,local", 2)


def test_s3like_is_20_ms_and_25_mb_s():
    assert cli.parse_args(["--network", "s3like"]).shape == {"rtt_ms": 20.0, "rate_mbps": 25.0}


def test_rtt_or_rate_alone_shapes_the_network_with_the_other_from_s3like():
    assert cli.parse_args(["--rtt", "40"]).shape == {"rtt_ms": 40.0, "rate_mbps": 25.0}
    assert cli.parse_args(["--conn-rate", "50"]).shape == {"rtt_ms": 20.0, "rate_mbps": 50.0}
    assert cli.parse_args(["--rtt", "0", "--conn-rate", "85"]).shape == {"rtt_ms": 0.0, "rate_mbps": 85.0}


@pytest.mark.parametrize("argv", [["--conn-rate", "0"], ["--rtt", "-1"], ["--network", "moon"]])
def test_impossible_networks_are_refused(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parse_args(argv)
    assert e.value.code == 2
    assert "scripts/bench" in capsys.readouterr().err


def test_warm_up_passes_default_to_12_and_take_at_least_one(capsys):
    assert cli.parse_args([]).warp_warm_up_passes == 12
    assert cli.parse_args(["--warp-warm-up-passes", "1"]).warp_warm_up_passes == 1
    for bad in ("0", "two"):
        with pytest.raises(SystemExit) as e:
            cli.parse_args(["--warp-warm-up-passes", bad])
        assert e.value.code == 2
        assert "--warp-warm-up-passes" in capsys.readouterr().err


def test_json_path_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.parse_args(["--json", "out.json"]).json == str(tmp_path / "out.json")


def test_help_lists_every_workload_and_system(capsys):
    with pytest.raises(SystemExit) as e:
        cli.parse_args(["--help"])
    assert e.value.code == 0
    out = "".join(capsys.readouterr().out.split())  # argparse wraps lines, also at hyphens
    assert out.startswith("usage:scripts/bench")
    assert "seq-dd,seq-fio,img-seq,img-shuffle,img-planned,ls-lR,find" in out
    assert "warp,s3fs,rclone,local,rawget,getsha,pget" in out
