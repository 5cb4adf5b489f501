"""Typed refs against the source bytes: FileRef, ImageRef (PIL, numpy), AudioRef (samples, rate)."""

import os
import sys

import pytest

import warpdata as wd
from conftest import expected_row, pixels, samples


def first_rows(ds, n=6):
    return next(ds.table("main").batch_dicts(batch_size=n, columns=["id", "path", "sound"]))


def test_file_ref_paths_and_bytes(warp, ds):
    b = first_rows(ds)
    for i, ref in zip(b["id"], b["path"]):
        assert ref.path == expected_row(i)["path"]
        assert ref.artifact == "images"
        local = ref.local_path()
        assert str(local) == str(ref) == os.fspath(ref)
        assert str(local).startswith(os.path.join(warp.mount, "pytest", "pets@" + ds.version))
        with open(ref, "rb") as f:
            assert f.read() == ref.read_bytes()
        assert ref.read_bytes() == open(os.path.join(warp.source, "images", ref.path), "rb").read()


def test_image_ref_decodes_the_source_pixels(ds):
    np = pytest.importorskip("numpy")
    pytest.importorskip("PIL")
    b = first_rows(ds)
    for i, ref in zip(b["id"], b["path"]):
        a = ref.as_numpy()
        assert a.dtype == np.uint8 and a.shape == (4, 6, 3)
        assert a.tobytes() == pixels(i)
        assert ref.as_pil().size == (6, 4)


def test_audio_ref_samples_and_rate(ds):
    np = pytest.importorskip("numpy")
    b = first_rows(ds)
    for i, ref in zip(b["id"], b["sound"]):
        assert ref.sample_rate == 8000 + i
        a = ref.as_array()
        assert a.dtype == np.float32 and a.shape == (200,)
        assert np.array_equal(a, np.array(samples(i), dtype=np.float32) / 32768.0)


def test_refs_false_gives_the_stored_strings(ds):
    b = next(ds.table("main").batch_dicts(batch_size=3, columns=["path"], refs=False))
    assert b["path"] == [expected_row(i)["path"] for i in range(3)]


def test_rows_take_refs_false_as_batch_dicts_do(ds):
    """rows(refs=False) was a TypeError (unexpected keyword 'refs')."""
    row = next(ds.table("main").rows(columns=["id", "path"], refs=False))
    assert row == {"id": 0, "path": expected_row(0)["path"]}
    assert isinstance(next(ds.table("main").rows(columns=["path"]))["path"], wd.ImageRef)


def test_projection_filter_and_limit_run_in_warpd(ds):
    table = ds.table("main")
    got = []
    for b in table.batch_dicts(batch_size=7, columns=["id", "label"], where="label = 'dog' AND id < 100"):
        assert list(b) == ["id", "label"]
        got.extend(zip(b["id"], b["label"]))
    assert got == [(i, "dog") for i in range(100) if i % 3 == 1]
    limited = [i for b in table.batch_dicts(batch_size=4, columns=["id"], limit=10) for i in b["id"]]
    assert limited == list(range(10))


def test_batches_are_arrow_when_pyarrow_is_importable(ds):
    table = ds.table("main")
    try:
        import pyarrow as pa
    except ImportError:
        b = next(table.batches(batch_size=4, columns=["id"]))
        assert b == {"id": [0, 1, 2, 3]}
        return
    b = next(table.batches(batch_size=4, columns=["id", "label"]))
    assert isinstance(b, pa.RecordBatch)
    assert b.column("id").to_pylist() == [0, 1, 2, 3]


def test_pinned_version_by_tag_and_hash(ds):
    assert wd.dataset("pytest/pets@v1").version == ds.version
    assert wd.dataset("pytest/pets@" + ds.version[:12]).version == ds.version
    assert ds.tables == ["main"]
    assert set(ds.artifacts) == {"images", "sounds"}
    assert ds.info()["tables"]["main"]["rows"] == 160


def test_the_package_reads_files_without_the_isatty_ioctl(warp, ds):
    """open(path, "rb") asks each file isatty() (Python before 3.14): an ioctl that FUSE sends to
    warpd, one round trip a file. The refs, read_file and the loader's decode do not ask it."""
    refs = list(first_rows(ds, n=12)["path"])
    client = wd.Client(warp.socket)

    def ioctls():
        return client.call("stats").get("fuse_requests", {}).get("ioctl", 0)

    before = ioctls()
    for ref in refs:
        source = open(os.path.join(warp.source, "images", ref.path), "rb").read()
        assert ref.read_bytes() == source
        assert wd.read_file(ref.local_path()) == source
        with ref.open() as f:
            assert f.read() == source
    from warpdata.loader import _decode
    first = str(refs[0].local_path())
    assert _decode(first, "file") == open(os.path.join(warp.source, "images", refs[0].path), "rb").read()
    try:
        import PIL  # noqa: F401
    except ImportError:
        pass
    else:
        assert _decode(first, "image").size == (6, 4)
    assert ioctls() == before, "the package's reads sent ioctls to warpd"
    if sys.version_info < (3, 14):
        # The plain open() the package avoids: one ioctl per file.
        for ref in refs:
            with open(ref, "rb") as f:
                f.read()
        assert ioctls() >= before + len(refs)


def _riff_wav(path, tag, channels, rate, bits, payload, extensible=False):
    """A RIFF WAVE file laid out byte for byte as the format says (Python's wave module writes
    integer PCM only; soundfile and torchaudio write IEEE float, tag 3, for float data)."""
    import struct
    block = channels * bits // 8
    if extensible:
        fmt = struct.pack("<HHIIHH", 0xFFFE, channels, rate, rate * block, block, bits)
        guid_tail = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
        fmt += struct.pack("<HHI", 22, bits, 0) + struct.pack("<H", tag) + guid_tail
    else:
        fmt = struct.pack("<HHIIHH", tag, channels, rate, rate * block, block, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"LIST" + struct.pack("<I", 4) + b"INFO"  # a chunk readers skip
    body += b"data" + struct.pack("<I", len(payload)) + payload
    with open(path, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", len(body)) + body)


def test_float_wav_reads_without_soundfile_and_other_formats_say_what_to_install(warp, tmp_path, monkeypatch):
    import numpy as np
    import sys
    monkeypatch.setitem(sys.modules, "soundfile", None)  # as on a box without python3-soundfile
    sounds = tmp_path / "sounds"
    sounds.mkdir()
    stereo = np.array([[0.5, -0.25], [1.0, -1.0], [0.125, 0.0]], dtype="<f4")
    mono64 = np.array([0.1, -0.2, 0.3], dtype="<f8")
    _riff_wav(sounds / "stereo.wav", 3, 2, 22050, 32, stereo.tobytes())
    _riff_wav(sounds / "mono64.wav", 3, 1, 16000, 64, mono64.tobytes(), extensible=True)
    _riff_wav(sounds / "adpcm.wav", 2, 1, 8000, 4, b"\x00" * 16)
    warp.sql("COPY (SELECT * FROM (VALUES (0, 'stereo.wav'), (1, 'mono64.wav'), (2, 'adpcm.wav')) t(id, sound))"
             " TO '%s' (FORMAT PARQUET)" % (tmp_path / "t.parquet"))
    wd.publish("pytest/floatwav", tables={"main": [str(tmp_path / "t.parquet")]}, artifacts={"sounds": [str(sounds)]},
               bindings=["main.sound=sounds:audio"])
    rows = list(wd.dataset("pytest/floatwav").table("main").rows())
    assert rows[0]["sound"].sample_rate == 22050
    assert np.array_equal(rows[0]["sound"].as_array(), stereo)
    assert rows[1]["sound"].sample_rate == 16000
    assert np.array_equal(rows[1]["sound"].as_array(), mono64.astype(np.float32))
    with pytest.raises(wd.MissingDependencyError) as e:
        rows[2]["sound"].as_array()
    assert "adpcm.wav" in str(e.value) and "python3-soundfile" in e.value.next_step
