"""Errors: typed, naming what is missing, saying what to do."""

import os
import sys

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


def test_a_dataset_with_no_latest_says_how_to_set_it_from_python_too(warp, tmp_path):
    """The next step said only warpctl's '--set-latest' to a Python user."""
    out = tmp_path / "part-0.parquet"
    warp.sql("COPY (SELECT 1 AS id) TO '%s' (FORMAT PARQUET)" % out)
    wd.publish("pytest/no-latest", tables={"main": [str(out)]}, set_latest=False)
    with pytest.raises(wd.DatasetNotFoundError) as e:
        wd.dataset("pytest/no-latest")
    assert "--set-latest" in e.value.next_step and "wd.publish(..., set_latest=True)" in e.value.next_step
    assert e.value.code == "DatasetNotFoundError" and "no latest" in e.value.message



def test_a_bad_publish_names_warpctls_real_options(warp, tmp_path):
    """warpd's hint named "warpctl's --dataset, Python's dataset=" and "warpctl's --tables": warpctl
    publish has neither (DATASET is its first argument; --table, --artifact), nor has wd.publish."""
    out = tmp_path / "part-0.parquet"
    warp.sql("COPY (SELECT 1 AS id) TO '%s' (FORMAT PARQUET)" % out)
    for publish in (lambda: wd.publish("pytest/pets@v1", tables={"main": [str(out)]}),
                    lambda: wd.DatasetBuilder("pytest/pets@v1").add_table("main", str(out)).publish()):
        with pytest.raises(wd.BadRequestError) as e:
            publish()
        assert "--dataset" not in str(e.value) and "dataset=" not in str(e.value)
        assert "'pytest/pets@v1'" in e.value.message and "warpctl publish DATASET" in e.value.next_step
    with pytest.raises(wd.BadRequestError) as e:
        wd.publish("pytest/empty", tables={}, artifacts={})
    assert "--tables" not in str(e.value) and "--table" in e.value.next_step and "--artifact" in e.value.next_step

def test_publish_bindings_are_checked_in_pythons_words(warp, tmp_path):
    """A dict passed as bindings= reached warpd as its keys, and a bad binding got warpctl's --bind
    advice; a name without a workspace was told to try workspace/name@<hash>, which publish refuses."""
    out = tmp_path / "part-0.parquet"
    warp.sql("COPY (SELECT 'a.jpg' AS path) TO '%s' (FORMAT PARQUET)" % out)
    tables = {"main": [str(out)]}
    for bad in ({"main.path": "images:image"}, ["main.path=images"], ["main.path=images:pdf"], ["path=images:image"]):
        with pytest.raises(wd.BadRequestError) as e:
            wd.publish("pytest/binds", tables=tables, artifacts={"images": str(tmp_path)}, bindings=bad)
        assert "--bind" not in str(e.value) and 'bindings=["main.path=images:image"]' in e.value.next_step, bad
    with pytest.raises(wd.WarpError) as e:
        wd.publish("noworkspace", tables=tables)
    assert "workspace/name" in e.value.next_step and "@" not in e.value.next_step


def test_missing_table_names_itself_and_the_tables(ds):
    with pytest.raises(wd.TableNotFoundError) as e:
        ds.table("nope")
    assert "'nope'" in e.value.message and "main" in e.value.next_step


def test_a_table_name_that_is_not_a_str_is_a_bad_request_not_a_missing_table(ds):
    """table(Path("main")) said "has no table 'main'", table(0) TableNotFound."""
    import pathlib
    for wrong in (pathlib.Path("main"), 0, b"main", None):
        with pytest.raises(wd.BadRequestError) as e:
            ds.table(wrong)
        assert "a table name is a str" in e.value.message and 'table("main")' in e.value.next_step
        assert not isinstance(e.value, wd.TableNotFoundError)


def test_missing_column_and_bad_filter_are_typed(ds):
    with pytest.raises(wd.ColumnNotFoundError) as e:
        next(ds.table("main").batch_dicts(columns=["id", "nope"]))
    assert "nope" in str(e.value)
    assert "columns=" in e.value.next_step and "id" in e.value.next_step
    with pytest.raises(wd.InvalidFilterError) as e:
        next(ds.table("main").batch_dicts(where="nope > 1"))
    assert e.value.next_step


def test_filter_cannot_read_files(ds):
    with pytest.raises(wd.InvalidFilterError) as e:
        next(ds.table("main").batch_dicts(where="(SELECT count(*) FROM read_text('/etc/passwd')) > 0"))
    assert "/etc/passwd" in str(e.value)


def test_filter_cannot_read_through_duckdbs_spill_folder_in_warpds_working_directory(ds, warp):
    """DuckDB allows its spill folder, .tmp in the working directory by default: a planted .tmp
    symlink there let a filter read any file warpd could (conftest plants one)."""
    planted = os.path.join(warp.base, ".tmp", "secret.txt")
    assert open(planted).read() == "TOPSECRET"
    with pytest.raises(wd.InvalidFilterError) as e:
        next(ds.table("main").batch_dicts(where="(SELECT content FROM read_text('%s')) = 'x'" % planted))
    assert "TOPSECRET" not in str(e.value)
    with pytest.raises(wd.InvalidFilterError):
        next(ds.table("main").batch_dicts(where="(SELECT count(*) FROM glob('%s/*')) > 0" % warp.base))


def test_filter_cannot_close_itself_and_add_rows(ds):
    """where= is one expression: "1=1) UNION ALL SELECT ..." gave 3001 rows of 3000, ignoring limit."""
    table = ds.table("main")
    for attack in ("1=1) UNION ALL SELECT 1,'a',0.5,'n','p','s' --", "1=1); SELECT 1"):
        with pytest.raises(wd.InvalidFilterError) as e:
            next(table.batch_dicts(where=attack, limit=5))
        assert "one expression" in str(e.value)
    # A filter may end with a comment (it was refused: the comment ate the closing parenthesis).
    got = [i for b in table.batch_dicts(columns=["id"], where="id < 10 -- the first ten") for i in b["id"]]
    assert got == list(range(10))


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


def test_warp_mode_is_read_as_warpd_reads_it(warp, monkeypatch):
    """$WARP_MODE is warpd's variable too: its `local` reads as auto here; anything else unknown
    names the variable, not a mode= nobody passed."""
    from conftest import DATASET
    monkeypatch.setenv("WARP_MODE", "local")
    assert wd.dataset(DATASET).mode == "auto"
    monkeypatch.setenv("WARP_MODE", "turbo")
    with pytest.raises(wd.BadRequestError, match=r"\$WARP_MODE='turbo'"):
        wd.dataset(DATASET)
    monkeypatch.setenv("WARP_MODE", "hybrid")
    assert wd.dataset(DATASET).mode == "hybrid"
    # in any case, as warpd reads it (HYBRID and mode="Auto" were refused)
    monkeypatch.setenv("WARP_MODE", "HYBRID")
    assert wd.dataset(DATASET).mode == "hybrid"
    monkeypatch.setenv("WARP_MODE", "Local")
    assert wd.dataset(DATASET).mode == "auto"
    assert wd.dataset(DATASET, mode="Remote").mode == "remote"
    monkeypatch.delenv("WARP_MODE")
    assert wd.dataset(DATASET, mode="Auto").mode == "auto"
    with pytest.raises(wd.BadRequestError, match="mode 'Turbo'"):
        wd.dataset(DATASET, mode="Turbo")


def test_publish_arguments_of_the_wrong_shape_say_so(warp, tmp_path):
    """tables= and artifacts= are dicts (a list gave AttributeError); one binding may be a string
    (it was split into characters)."""
    with pytest.raises(wd.BadRequestError, match="tables=.* is not a dict"):
        wd.publish("pytest/shapes", tables=["a.parquet"])
    with pytest.raises(wd.BadRequestError, match="artifacts=.* is not a dict"):
        wd.publish("pytest/shapes", artifacts="images/")
    with pytest.raises(wd.WarpError) as e:
        wd.publish("pytest/shapes", tables={"main": [str(tmp_path / "nope.parquet")]}, bindings="main.path=images:image")
    assert "Binding 'm'" not in str(e.value)


def test_a_shard_size_warpctl_refuses_is_refused_before_warpd_is_asked(tmp_path, monkeypatch):
    """shard_size=0 was taken silently, and 1 gave a WarpError showing Java's
    IllegalArgumentException; warpctl refuses --shard-size under 4KiB."""
    monkeypatch.setenv("WARP_SOCKET", str(tmp_path / "none.sock"))
    tables = {"main": [str(tmp_path / "a.parquet")]}
    for wrong in (0, 1, 4095, "1KiB", "4KB", "abc", "", 5.0, True):
        with pytest.raises(wd.BadRequestError) as e:
            wd.publish("pytest/shards", tables=tables, shard_size=wrong)
        assert "shard_size=" in e.value.message and "shard_size" in e.value.next_step, wrong
    with pytest.raises(wd.BadRequestError) as e:
        wd.publish("pytest/shards", tables=tables, shard_size=0)
    assert "too small" in e.value.message and "at least 4KiB" in e.value.next_step
    import numpy as np
    for right in (4096, np.int64(4096), "4KiB", "256MiB", "1.5G"):
        with pytest.raises(wd.DaemonUnavailableError):  # taken: what is left is asking warpd
            wd.publish("pytest/shards", tables=tables, shard_size=right)


def test_bytes_where_a_str_is_needed_is_a_bad_request_and_a_socket_may_be_a_path(warp, ds, tmp_path):
    """where=b"id=1" and publish tables={"main": [b"..."]} raised 'Object of type bytes is not JSON
    serializable'; socket=pathlib.Path(...) 'a bytes-like object is required, not PosixPath'."""
    import pathlib
    from conftest import DATASET
    with pytest.raises(wd.BadRequestError, match="where=b'id=1' is not an expression") as e:
        next(ds.table("main").batch_dicts(where=b"id=1"))
    assert "str" in e.value.next_step
    for wrong in ({"tables": {"main": [b"/tmp/a.parquet"]}}, {"tables": {"main": b"/tmp/a.parquet"}},
                  {"tables": {b"main": ["/tmp/a.parquet"]}}, {"artifacts": {"images": [b"/tmp/images"]}},
                  {"tables": {"main": ["/tmp/a.parquet"]}, "bindings": [b"main.path=images:image"]}):
        with pytest.raises(wd.BadRequestError, match="is not a str") as e:
            wd.publish("pytest/bytes", **wrong)
        assert "str" in e.value.next_step, wrong
    with pytest.raises(wd.BadRequestError, match="dataset name"):
        wd.publish(b"pytest/bytes", tables={"main": ["/tmp/a.parquet"]})
    pinned = wd.dataset(DATASET, socket=pathlib.Path(warp.socket), mount=pathlib.Path(warp.mount))
    assert pinned.version == ds.version
    assert next(pinned.table("main").batch_dicts(2, columns=["id"]))["id"] == [0, 1]
    with pytest.raises(wd.InvalidInputError):  # a Path in tables= is taken as its path: warpd says it is missing
        wd.publish("pytest/bytes", tables={"main": [tmp_path / "none.parquet"]}, socket=pathlib.Path(warp.socket))


def test_an_eio_while_reading_a_ref_names_the_file(monkeypatch):
    """The mount answers EIO when warpd cannot serve bytes; a read error carries no file name,
    so read_bytes() names the member's path and where to look."""
    import errno
    import io
    from warpdata.refs import FileRef

    class Failing(io.RawIOBase):
        def read(self, n=-1):
            raise OSError(errno.EIO, "Input/output error")

    ref = FileRef(None, "images", "cat/0.png")
    monkeypatch.setattr(FileRef, "open", lambda self: Failing())
    monkeypatch.setattr(FileRef, "local_path", lambda self: "/warp/ws/pets@abc/images/cat/0.png")
    with pytest.raises(OSError) as e:
        ref.read_bytes()
    assert e.value.errno == errno.EIO
    assert e.value.filename == "/warp/ws/pets@abc/images/cat/0.png"
    assert "warpctl status" in str(e.value)


def test_a_ref_on_a_mount_whose_warpd_died_is_a_mount_unavailable_error(monkeypatch):
    """read_bytes() and as_numpy() raised a plain OSError [Errno 107] Transport endpoint is not
    connected, at the open or at the read."""
    import builtins
    import errno
    import io
    from warpdata import refs
    ref = refs.ImageRef("/warp/ws/pets@abc", "images", "cat/0.png")

    class Failing(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, b):
            raise OSError(errno.ENOTCONN, "Transport endpoint is not connected")

    def gone(path, *args, **kwargs):
        raise OSError(errno.ENOTCONN, "Transport endpoint is not connected", str(path))
    for opening in (gone, lambda path, *args, **kwargs: io.BufferedReader(Failing())):
        monkeypatch.setattr(builtins, "open", opening)
        for read in (ref.read_bytes, ref.as_numpy):
            with pytest.raises(wd.MountUnavailableError) as e:
                read()
            assert "/warp/ws/pets@abc/images/cat/0.png" in e.value.message
            assert "fusermount -u /warp)" in e.value.next_step


def test_a_warpd_that_never_answers_fails_a_quick_call_not_after_ten_minutes(tmp_path, monkeypatch):
    """A stopped (SIGSTOP) or wedged warpd takes the connection and never answers: status and
    info give up after QUICK_TIMEOUT (here shortened), not the 600 s of table reads."""
    import socket
    import time
    from warpdata import client as wclient
    path = str(tmp_path / "warpd.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    try:
        monkeypatch.setattr(wclient, "QUICK_TIMEOUT", 0.5)
        c = wclient.Client(path)
        assert c.timeout == wclient.DEFAULT_TIMEOUT
        t0 = time.monotonic()
        with pytest.raises(wd.DaemonUnavailableError) as e:
            c.call("status")
        assert time.monotonic() - t0 < 5
        assert "did not answer status" in str(e.value) and path in str(e.value)
        assert c._timeout("table.batches") == wclient.DEFAULT_TIMEOUT
    finally:
        server.close()


def test_a_warpd_that_stops_in_the_middle_of_an_answer_is_a_typed_error_not_a_json_one(tmp_path):
    """warpd stopped (SIGTERM, a crash) while it wrote a batch: the client got part of a line and
    json.loads raised JSONDecodeError, which `except wd.WarpError` does not catch."""
    import socket
    import threading
    from warpdata import client as wclient
    path = str(tmp_path / "warpd.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)

    def answer_half():
        conn, _ = server.accept()
        with conn:
            conn.makefile("rb").readline()
            conn.sendall(b'{"id":1,"event":"batch","rows":2}\n{"id":1,"event":"batch","columns":{"id":[1,2')

    t = threading.Thread(target=answer_half, daemon=True)
    t.start()
    try:
        events = []
        with pytest.raises(wd.DaemonUnavailableError) as e:
            for kind, body in wclient.Client(path).stream("table.batches", {}):
                events.append(body)
        assert len(events) == 1, "the whole line before the cut was delivered"
        assert "in the middle of an answer" in str(e.value) and "table.batches" in str(e.value)
        assert "warpctl status" in e.value.next_step
    finally:
        t.join(5)
        server.close()


def test_a_user_the_socket_refuses_is_told_to_join_its_group_not_to_start_warpd(warp):
    """As nobody, warpd's socket answers EACCES: "no warpd answers ... start one" sent users the wrong way."""
    import shutil
    import subprocess
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("needs root and runuser to act as another user")
    code = ("import warpdata as wd\n"
            "try:\n    wd.Client(%r).call('status')\n"
            "except wd.DaemonUnavailableError as e:\n    print(e.message); print(e.next_step)\n") % warp.socket
    import tempfile
    pkg = tempfile.mkdtemp(prefix="warpdata-nobody-")  # a copy of the package nobody can read
    try:
        os.chmod(pkg, 0o755)
        shutil.copytree(os.path.dirname(os.path.abspath(wd.__file__)), os.path.join(pkg, "warpdata"))
        for d, _, files in os.walk(pkg):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        p = subprocess.run([shutil.which("runuser"), "-u", "nobody", "--", "/usr/bin/python3", "-c", code], capture_output=True,
                           env={"PYTHONPATH": pkg, "PATH": "/usr/bin:/bin"}, timeout=60)
    finally:
        shutil.rmtree(pkg, ignore_errors=True)
    out = p.stdout.decode()
    assert "permission denied" in out, out + p.stderr.decode()
    assert "usermod -aG" in out and "start one" not in out


def test_an_errors_details_come_beside_its_message():
    from warpdata.errors import from_warpd
    e = from_warpd({"type": "PointerMoved", "message": "latest moved", "next_step": "point it", "version": "ab" * 32})
    assert isinstance(e, wd.PointerMovedError)
    assert e.details == {"version": "ab" * 32}
    assert e.next_step == "point it"
    assert from_warpd({"type": "BadRequest", "message": "m"}).details == {}


def test_a_socket_folder_another_user_made_in_tmp_is_not_talked_to(tmp_path):
    from warpdata.client import _require_own_folder
    folder = tmp_path / "warp-4242"
    folder.mkdir(mode=0o700)
    _require_own_folder(str(folder))  # this user's, closed to others: fine
    os.chmod(folder, 0o777)
    with pytest.raises(wd.DaemonUnavailableError) as e:
        _require_own_folder(str(folder))
    assert "pose as warpd" in str(e.value)
    if os.geteuid() == 0:
        os.chmod(folder, 0o700)
        os.chown(folder, 1002, 1002)
        with pytest.raises(wd.DaemonUnavailableError):
            _require_own_folder(str(folder))


def test_a_filter_still_computing_stops_when_its_client_goes(warp, ds):
    """A filter can keep DuckDB busy before its first row; when the client closes the connection
    the query is interrupted (it kept a core busy until warpd stopped)."""
    import json as _json
    import socket as _socket
    import time as _time
    pid = warp.proc.pid

    def cpu_seconds():
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    s = _socket.socket(_socket.AF_UNIX)
    s.connect(warp.socket)
    s.sendall((_json.dumps({"id": 1, "op": "table.batches", "args": {
        "dataset": ds.pinned, "table": "main", "columns": ["id"],
        "where": "id < (SELECT count(*) FROM range(1000000000000) t1)"}}) + "\n").encode())
    _time.sleep(1.5)
    s.close()
    _time.sleep(1.0)  # the query notices within 200 ms
    before = cpu_seconds()
    _time.sleep(3.0)
    used = cpu_seconds() - before
    assert used < 1.5, "warpd used %.1f s of CPU in 3 s after the client left: the query still runs" % used


def test_arguments_of_the_wrong_kind_are_bad_requests_not_python_errors_or_silent(ds):
    """limit="abc" raised ValueError, shard=3 TypeError, limit=2.7 read 2 rows, columns=[] every column."""
    t = ds.table("main")
    for kwargs in ({"limit": "abc"}, {"limit": 2.7}, {"limit": -1}, {"shard": 3}, {"shard": ("0", "2")},
                   {"columns": []}, {"columns": [""]}, {"columns": 5}):
        with pytest.raises(wd.BadRequestError) as e:
            next(iter(t.batch_dicts(50, **kwargs)))
        assert e.value.next_step, kwargs
    import numpy as np
    assert sum(len(b["id"]) for b in t.batch_dicts(50, columns=("id",), limit=np.int64(3), shard=(np.int64(0), 1))) == 3


def test_a_batch_size_or_limit_out_of_warpds_range_is_a_bad_request_naming_the_range(ds):
    """batch_dicts(10**12) leaked Jackson's 'Numeric value (1000000000000) out of range of int',
    limit=2**70 'out of range of long'; the cap of 1,048,576 rows a batch was said nowhere."""
    t = ds.table("main")
    for batch_size in (10 ** 8, 10 ** 12, 2 ** 20 + 1, 0, "8", 8.0):
        with pytest.raises(wd.BadRequestError) as e:
            next(t.batch_dicts(batch_size))
        assert "from 1 to 1048576" in e.value.message and "batch_size=" in e.value.next_step, batch_size
    for limit in (2 ** 63, 2 ** 70, -1):
        with pytest.raises(wd.BadRequestError) as e:
            next(t.batch_dicts(8, limit=limit))
        assert "from 0 to 2**63-1" in e.value.message, limit
    assert sum(len(b["id"]) for b in t.batch_dicts(2 ** 20, columns=["id"], limit=2 ** 63 - 1)) == t.num_rows


def test_numpy_integers_are_whole_numbers_and_bools_and_floats_are_not(ds):
    """head(np.int64(3)), pandas(max_rows=np.int64(...)) and to_torch(batch_size=np.int32(8)) said
    the number was not a whole number."""
    import numpy as np
    t = ds.table("main")
    assert [r["id"] for r in t.select("id").head(np.int64(3))] == [0, 1, 2]
    assert [len(b["id"]) for b in t.batch_dicts(np.int32(8), columns=["id"], limit=np.uint8(20))] == [8, 8, 4]
    for wrong in (True, 3.0, "3"):
        with pytest.raises(wd.BadRequestError, match="not a whole number"):
            t.head(wrong)
        with pytest.raises(wd.BadRequestError, match="not a whole number"):
            next(t.batch_dicts(wrong))
    with pytest.raises(wd.BadRequestError, match=r"max_rows=2\.5 is not a whole number"):
        t._collect("pandas()", None, None, None, None, 2.5)
    assert len(t._collect("pandas()", ["id"], None, None, None, np.int64(1000))["id"]) == t.num_rows
    with pytest.raises(wd.BadRequestError, match="batch_size=0"):
        ds.to_torch(batch_size=np.int32(0))  # refused before torch is imported
    from warpdata.torch_data import WarpBatches  # its dataset's batches, without torch's DataLoader
    batches = WarpBatches(t, batch_size=np.int32(40), shard=None, columns=["id"], tensors=False)
    assert [len(b["id"]) for b in batches._batches()] == [40, 40, 40, 40]


def test_a_ref_to_a_missing_artifact_or_member_or_mount_says_which(ds, tmp_path):
    """A ref to an artifact the version does not have said "artifact 'nope' has no member 'x'", and
    ArtifactNotFoundError was never raised; a wrong mount did not name WARP_MOUNT."""
    with pytest.raises(wd.ArtifactNotFoundError) as e:
        wd.FileRef(ds.root, "nope", "x").read_bytes()
    assert "no artifact 'nope'" in str(e.value) and "ls " in e.value.next_step
    with pytest.raises(wd.MemberNotFoundError) as e:
        wd.FileRef(ds.root, "images", "no/such.png").read_bytes()
    assert "no member 'no/such.png'" in str(e.value)
    with pytest.raises(wd.MountUnavailableError) as e:
        wd.FileRef(str(tmp_path / "not-a-mount" / "ws" / "name@v"), "images", "x.png").read_bytes()
    assert "WARP_MOUNT" in e.value.next_step


def test_an_error_rebuilt_from_its_text_keeps_its_next_step():
    """torch re-raises a DataLoader worker's error as type(text): next_step came back empty."""
    original = wd.BadRequestError("columns=[] names no column", "pass column names")
    rebuilt = wd.BadRequestError("Caught BadRequestError in DataLoader worker process 0.\nOriginal Traceback"
                                 " (most recent call last):\n  ...\nwarpdata.errors.BadRequestError: " + str(original) + "\n")
    assert rebuilt.next_step == "pass column names"
    assert isinstance(rebuilt, wd.BadRequestError) and "names no column" in rebuilt.message
    assert wd.WarpError("plain").next_step == ""


def test_a_version_published_by_a_newer_warp_says_upgrade_not_damaged(warp, tmp_path):
    """A manifest in a format newer than this warpd reads (as a newer Warp's publisher writes) is
    FormatTooNewError with the upgrade to make, not ManifestCorruptedError and its advice to
    re-publish or suspect tampering."""
    out = tmp_path / "t.parquet"
    warp.sql("COPY (SELECT 1 AS id) TO '%s' (FORMAT PARQUET)" % out)
    # Published without warpd, so that warpd first reads the manifest from the store.
    warp.warpctl("publish", "pytest/newer", "--table", "main=%s" % out, "--set-latest", "--no-daemon")
    versions = os.path.join(warp.store, "datasets", "pytest", "newer", "versions")
    (name,) = os.listdir(versions)
    path = os.path.join(versions, name)
    with open(path, "rb") as f:
        stored = f.read()
    assert b'"format_version":1' in stored
    with open(path, "wb") as f:
        f.write(stored.replace(b'"format_version":1', b'"format_version":6'))
    with pytest.raises(wd.FormatTooNewError) as e:
        wd.dataset("pytest/newer").info()
    assert "format version 6" in e.value.message and "newer Warp" in e.value.message
    assert "Upgrade Warp" in e.value.next_step and "tamper" not in e.value.next_step
    p = warp.warpctl("info", "pytest/newer", check=False)
    assert p.returncode != 0
    assert b"published by a newer Warp" in p.stderr and b"Upgrade Warp" in p.stderr, p.stderr


def test_a_dataset_not_found_says_when_warp_remote_names_another_store_than_warpds(warp, monkeypatch):
    """audit 24: warpctl in this shell published to $WARP_REMOTE, warpdata reads warpd's store, and
    the advice ('warpctl list-remote') listed the other store, where the dataset was."""
    monkeypatch.setenv("WARP_REMOTE", "file:///tmp/another-store")
    with pytest.raises(wd.DatasetNotFoundError) as e:
        wd.dataset("pytest/only-elsewhere")
    assert "$WARP_REMOTE in this shell is file:///tmp/another-store" in e.value.message
    assert warp.remote in e.value.message and "list-remote --remote " + warp.remote in e.value.next_step
    monkeypatch.setenv("WARP_REMOTE", warp.remote)
    with pytest.raises(wd.DatasetNotFoundError) as same:
        wd.dataset("pytest/only-elsewhere")
    assert "WARP_REMOTE" not in same.value.message


def test_a_dataset_not_found_says_when_only_the_endpoint_names_another_server(monkeypatch):
    """audit 25: a bucket of the same name on another server ($WARP_S3_ENDPOINT) got no hint. warpd's
    status is a stand-in here (the fixture's store is a file:// one)."""
    import importlib
    dataset_module = importlib.import_module("warpdata.dataset")

    class Warpd:
        socket_path = "/run/warp/warpd.sock"

        def call(self, op, args=None, on_event=None):
            assert op == "status"
            return {"remote": "s3://warp", "endpoint": "http://127.0.0.1:9000"}
    monkeypatch.delenv("WARP_REMOTE", raising=False)
    monkeypatch.setenv("WARP_S3_ENDPOINT", "http://10.9.9.9:9000/")
    missing = wd.DatasetNotFoundError("A latest version of ws/x is not published in s3://warp", "check the name")
    e = dataset_module._elsewhere(Warpd(), missing)
    assert "$WARP_S3_ENDPOINT in this shell is http://10.9.9.9:9000, warpd's http://127.0.0.1:9000" in e.message
    assert "--endpoint http://127.0.0.1:9000" in e.next_step
    for same in ("HTTP://127.0.0.1:9000", "http://localhost:9000/", "http://[::1]:9000"):
        monkeypatch.setenv("WARP_S3_ENDPOINT", same)
        assert dataset_module._elsewhere(Warpd(), missing) is missing, same


def test_a_socket_that_refuses_this_user_names_the_group_to_join_and_never_group_root():
    # Audit 37: the advice said to run ls -l on a socket the user may not look at, and for a warpd
    # started without --socket-group it amounted to joining group root.
    from warpdata import client
    assert "join its group warp (sudo usermod -aG warp alice" in client._join_advice("/run/warp/warpd.sock", "warp", "alice")
    root = client._join_advice("/run/warp/warpd.sock", "root", "alice")
    assert "--socket-group GROUP" in root and "usermod -aG root" not in root
    unknown = client._join_advice("/run/warp/warpd.sock", None, "alice")
    assert "ls -ld /run/warp" in unknown


def test_a_service_socket_folder_this_user_may_not_enter_is_still_where_warpd_is(tmp_path):
    # Audit 37: /run/warp is 0750 warp:warp; an outsider's client took it for absent and said
    # "start the daemon" instead of "join group warp".
    from warpdata import client
    folder = tmp_path / "run"
    folder.mkdir()
    assert not client._unsearchable(str(folder))
    assert not client._unsearchable(str(tmp_path / "absent"))
    # As a user who may not enter it (nobody, when the test runs as root): a folder readable to
    # its parent's visitors, closed to them.
    import subprocess, tempfile
    if os.geteuid() != 0:
        folder.chmod(0o600)
        assert client._unsearchable(str(folder))
        return
    outer = tempfile.mkdtemp(prefix="warp-unsearchable-")
    try:
        os.chmod(outer, 0o755)
        closed = os.path.join(outer, "run")
        os.mkdir(closed, 0o750)
        package = os.path.dirname(os.path.dirname(client.__file__))
        probe = ("import sys; sys.path.insert(0, %r); from warpdata import client; "
                 "print(client._unsearchable(%r))" % (package, closed))
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                             preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)))
        if "Permission denied" in out.stderr and "warpdata" in out.stderr:
            pytest.skip("nobody may not read the package's folder here")
        assert out.stdout.strip() == "True", out.stderr
    finally:
        import shutil
        shutil.rmtree(outer)


def test_a_mount_this_user_may_not_enter_says_allow_other(tmp_path, warp):
    # Audit 37: os.listdir(ds.root) raised a bare PermissionError for a user other than warpd's;
    # audit 39: the kernel refuses such a user even a stat of the mount's root, so checking
    # os.path.isdir first raised nothing. Checked against the fixture's real mount (no
    # --allow-other), as nobody.
    import warpdata.dataset  # noqa: F401 (the package's name 'dataset' is the function)
    dsmod = sys.modules["warpdata.dataset"]
    dsmod._require_access(str(tmp_path))  # enterable: nothing raised
    dsmod._require_access(str(tmp_path / "absent"))  # not there: os.listdir says so itself
    if os.geteuid() != 0:
        pytest.skip("needs root to read the mount as another user")
    import subprocess
    package = os.path.dirname(os.path.dirname(dsmod.__file__))
    probe = ("import os, sys; sys.path.insert(0, %r)\nimport warpdata.dataset\nfrom warpdata import errors as e\n"
             "d = sys.modules['warpdata.dataset']\n"
             "try:\n    os.stat(%r)\nexcept PermissionError:\n    print('STAT-DENIED')\n"
             "try:\n    d._require_access(%r)\nexcept e.MountUnavailableError as x:\n    print('REFUSED', x.next_step)\n"
             % (package, warp.mount, warp.mount))
    before = os.stat(warp.base).st_mode & 0o7777
    os.chmod(warp.base, 0o755)  # the way to the mount, as a shared box has it
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                             preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)))
    finally:
        os.chmod(warp.base, before)
    if "Permission denied" in out.stderr and "warpdata" in out.stderr:
        pytest.skip("nobody may not read the package here")
    assert "STAT-DENIED" in out.stdout, out.stdout + out.stderr  # the kernel's rule this guards against
    assert "REFUSED" in out.stdout and "--allow-other" in out.stdout, out.stdout + out.stderr
