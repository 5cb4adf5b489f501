"""WebDataset shards (tars written by Python's tarfile, as webdataset's own writers do) published
as tars: the mount shows their members under ARTIFACT/ and the tars themselves, byte for byte
under the names they were published as, under ARTIFACT.tars/, so that a WebDataset pipeline can
stream them from the mount (audit 22)."""
import hashlib
import io
import json
import os
import tarfile

import warpdata as wd


def _write_shards(folder, shards, per_shard, tag=b""):
    folder.mkdir(exist_ok=True)
    keys = []
    for s in range(shards):
        with tarfile.open(str(folder / ("shard-%06d.tar" % s)), "w") as t:
            for i in range(per_shard):
                key = "%06d" % (s * per_shard + i)
                keys.append(key)
                for ext, data in (("jpg", b"jpeg " + key.encode() + tag + os.urandom(300)),
                                  ("cls", str(i % 3).encode())):
                    info = tarfile.TarInfo("%s.%s" % (key, ext))
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
    return keys


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_shards_published_as_tars_are_also_their_files_in_the_mount(warp, tmp_path):
    shards = tmp_path / "shards"
    keys = _write_shards(shards, 4, 25)
    warp.warpctl("publish", "pytest/wdsfiles", "--artifact", "train=%s/*.tar" % shards, "--set-latest")
    version = os.path.join(warp.mount, "pytest", "wdsfiles")
    assert sorted(os.listdir(version)) == [".warp", "train", "train.tars"]
    tars = os.path.join(version, "train.tars")
    assert sorted(os.listdir(tars)) == ["shard-%06d.tar" % s for s in range(4)]
    for name in os.listdir(tars):
        assert os.path.getsize(os.path.join(tars, name)) == os.path.getsize(shards / name)
        assert _sha256(os.path.join(tars, name)) == _sha256(shards / name), name
    # A WebDataset reader streams each tar front to back ("r|"): every sample, whole, in order.
    seen = []
    for name in sorted(os.listdir(tars)):
        with open(os.path.join(tars, name), "rb") as f, tarfile.open(fileobj=f, mode="r|") as t:
            for m in t:
                data = t.extractfile(m).read()
                key, ext = m.name.split(".", 1)
                if ext == "jpg":
                    assert data.startswith(b"jpeg " + key.encode())
                    seen.append(key)
    assert seen == keys
    # The members are where they always were.
    with open(os.path.join(version, "train", keys[-1] + ".jpg"), "rb") as f:
        assert f.read().startswith(b"jpeg " + keys[-1].encode())
    with open(os.path.join(version, ".warp", "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["format_version"] == 3
    assert manifest["artifacts"]["train"]["shard_names"] == ["shard-%06d.tar" % s for s in range(4)]
    ds = wd.dataset("pytest/wdsfiles")
    assert ds.artifacts["train"]["shard_files"] == ["shard-%06d.tar" % s for s in range(4)]
    # train.tars/ is beside the artifact's folder: an epoch over the members does not read the tars too
    members = [r.path for b in wd.member_batches(ds, "train", shard=None) for r in b["path"]]
    assert len(members) == ds.artifacts["train"]["members"] and not any(".tar" in m for m in members)
    info = warp.warpctl("info", "pytest/wdsfiles").stdout.decode()
    assert "train.tars/ in the mount holds the 4 tar file(s) of train" in info, info
    as_json = json.loads(warp.warpctl("info", "pytest/wdsfiles", "--json").stdout)
    assert as_json["artifacts"]["train"]["shard_files"] == ["shard-%06d.tar" % s for s in range(4)]
    inspected = json.loads(warp.warpctl("inspect", "pytest/wdsfiles", "--json").stdout)
    assert [s["name"] for s in inspected["artifacts"]["train"]["shards"]] == ["shard-%06d.tar" % s for s in range(4)]


def test_a_new_version_shows_its_own_tars_and_an_older_one_keeps_its(warp, tmp_path):
    first = tmp_path / "v1"
    _write_shards(first, 2, 10, tag=b" one")
    warp.warpctl("publish", "pytest/wdsnext", "--artifact", "train=%s/*.tar" % first, "--set-latest")
    old = os.path.realpath(os.path.join(warp.mount, "pytest", "wdsnext"))
    second = tmp_path / "v2"
    _write_shards(second, 3, 10, tag=b" two")
    published = warp.warpctl("publish", "pytest/wdsnext", "--artifact", "train=%s/*.tar" % second, "--set-latest",
                             "--json")
    new = os.path.join(os.path.dirname(old), "wdsnext@" + json.loads(published.stdout)["version"])
    assert sorted(os.listdir(os.path.join(new, "train.tars"))) == ["shard-%06d.tar" % s for s in range(3)]
    assert sorted(os.listdir(os.path.join(old, "train.tars"))) == ["shard-%06d.tar" % s for s in range(2)]
    for s in range(2):
        assert _sha256(os.path.join(old, "train.tars", "shard-%06d.tar" % s)) == _sha256(first / ("shard-%06d.tar" % s))
    for s in range(3):
        assert _sha256(os.path.join(new, "train.tars", "shard-%06d.tar" % s)) == _sha256(second / ("shard-%06d.tar" % s))


def test_tars_that_share_a_name_publish_their_members_and_say_why_there_is_no_tars_folder(warp, tmp_path):
    """Two tars of one name from two folders cannot both be shown under it: the publish says so in
    its result (audit 25: only on stderr), and the members are there; a name with a space is kept."""
    for sub in ("a", "b"):
        folder = tmp_path / sub
        folder.mkdir()
        with tarfile.open(str(folder / "shard 0.tar"), "w") as t:
            info = tarfile.TarInfo("%s.jpg" % sub)
            info.size = 2
            t.addfile(info, io.BytesIO(b"ok"))
    result = wd.publish("pytest/wdsdup", artifacts={"train": [str(tmp_path / "a" / "shard 0.tar"),
                                                              str(tmp_path / "b" / "shard 0.tar")]})
    assert any("share a name" in n and "train.tars/" in n for n in result["notes"]), result["notes"]
    version = os.path.join(warp.mount, "pytest", "wdsdup")
    assert sorted(os.listdir(version)) == [".warp", "train"]
    assert sorted(os.listdir(os.path.join(version, "train"))) == ["a.jpg", "b.jpg"]
    wd.publish("pytest/wdsspace", artifacts={"train": [str(tmp_path / "a" / "shard 0.tar")]})
    assert os.listdir(os.path.join(warp.mount, "pytest", "wdsspace", "train.tars")) == ["shard 0.tar"]


def test_no_shard_files_publishes_members_only_in_a_format_every_reader_reads(warp, tmp_path):
    """--no-shard-files (wd.publish(shard_files=False)): for fleets with readers older than manifest
    format 3, which refuse every version that names its tar files."""
    shards = tmp_path / "shards"
    _write_shards(shards, 2, 5)
    warp.warpctl("publish", "pytest/wdsold", "--artifact", "train=%s/*.tar" % shards, "--set-latest",
                 "--no-shard-files")
    version = os.path.join(warp.mount, "pytest", "wdsold")
    assert sorted(os.listdir(version)) == [".warp", "train"]
    with open(os.path.join(version, ".warp", "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["format_version"] == 1 and "shard_names" not in manifest["artifacts"]["train"]
    result = wd.publish("pytest/wdsold2", artifacts={"train": [str(p) for p in sorted(shards.iterdir())]},
                        shard_files=False)
    assert sorted(os.listdir(os.path.join(warp.mount, "pytest", "wdsold2@" + result["version"]))) == [".warp", "train"]


def test_a_publish_naming_neither_option_is_noted_for_clients_before_them(warp, tmp_path):
    """Audit 42: a warpctl or warpdata from before manifest formats 3 and 4 names neither
    shard_files nor tensor_hashes, and got, silently, versions its own release refuses. warpd
    still takes absent for on (as clients of the releases since sent it) and says so in the
    reply's notes and summary, which older clients print; this release's clients name both."""
    shards = tmp_path / "shards"
    _write_shards(shards, 2, 5)
    paths = [str(p) for p in sorted(shards.iterdir())]
    older = wd.Client(warp.socket).call("publish", {"dataset": "pytest/wdsolder", "artifacts": {"train": paths},
                                                    "set_latest": True})
    assert older["format_version"] == 3, older
    assert any("manifest format 3" in n and "--no-daemon" in n for n in older["notes"]), older["notes"]
    assert "manifest format 3" in older["summary"]
    newer = wd.publish("pytest/wdsnewer", artifacts={"train": paths})
    assert newer["format_version"] == 3, newer
    assert not any("manifest format" in n for n in newer["notes"]), newer["notes"]
    assert os.listdir(os.path.join(warp.mount, "pytest", "wdsnewer@" + newer["version"], "train.tars")) != []
