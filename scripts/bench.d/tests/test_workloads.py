"""The registries of workloads and systems, and choosing from them (--only, --quick, --systems)."""
import pytest

from warpbench import workloads as W
from warpbench.common import BenchError, Names
from warpbench.report import median_cell
from warpbench.systems import SYSTEMS, SYSTEM_LABEL, parse_systems


def test_every_workload_is_complete_and_names_known_systems():
    for w in W.REGISTRY:
        assert set(w.systems) <= set(SYSTEMS), w.name
        assert w.phases and set(w.phases) <= {"cold", "warm"}, w.name
        assert w.phases[0] == "cold", w.name  # warm is measured right after its cold
        assert w.better in ("hi", "lo"), w.name
        assert w.target in ("data", "tree"), w.name
        assert callable(w.measure), w.name
        assert median_cell([1.0], w.unit) is not None
    assert set(SYSTEM_LABEL) == set(SYSTEMS)


def test_all_workloads_run_in_registry_order():
    assert [w.name for w in W.select()] == [w.name for w in W.REGISTRY]
    assert list(W.WORKLOADS)[:3] == ["seq-dd", "seq-fio", "img-seq"]


def test_only_keeps_the_registry_order_not_the_order_given():
    chosen = W.select(" img-seq, seq-dd ,,")
    assert [w.name for w in chosen] == ["seq-dd", "img-seq"]


def test_an_unknown_workload_is_an_error_that_lists_the_known_ones():
    with pytest.raises(BenchError) as e:
        W.select("seq-dd,fleet-read,nope")
    assert str(e.value).startswith("unknown workload(s) fleet-read, nope; known: seq-dd, seq-fio, img-seq,")


def test_quick_measures_the_shuffled_pass_cold_only():
    full = {w.name: w for w in W.select()}
    quick = {w.name: w for w in W.select(quick=True)}
    assert full["img-shuffle"].phases == ("cold", "warm")
    assert quick["img-shuffle"].phases == ("cold",)
    assert W.WORKLOADS["img-shuffle"].phases == ("cold", "warm")  # the registry is not changed
    assert {n: w.phases for n, w in quick.items() if n != "img-shuffle"} == \
        {n: w.phases for n, w in full.items() if n != "img-shuffle"}


def test_workload_flags_drive_the_run():
    assert [w.name for w in W.REGISTRY if w.target == "tree"] == ["ls-lR", "find"]
    assert [w.name for w in W.REGISTRY if w.fresh_warp] == ["ttfb-image", "ttfb-big"]
    assert [w.name for w in W.REGISTRY if w.needs] == ["seq-fio"]


def test_systems_default_to_all_and_keep_the_names_given():
    assert parse_systems(None) == SYSTEMS
    assert parse_systems("warp, local") == ["warp", "local"]


def test_each_scale_has_its_own_dataset_and_buckets():
    quick = Names("quick")
    assert quick.dataset == "bench/quick"
    assert quick.buckets == {"data": "peer-data-quick", "tree": "peer-tree-quick"}
    assert quick.all_buckets() == ["warp-bench", "peer-data-quick", "peer-tree-quick"]
    assert Names("full").buckets["tree"] == "peer-tree-full"
