"""The fixture the Python tests run against: a real warpd with a real FUSE mount over a file://
store, started from the repository's scripts (scripts/warpd, scripts/warpctl) and the shaded jar,
and cleaned up after (warpd stopped by its pid, the mount unmounted, the directories removed).

Test data is written by tools that are not Warp's: Parquet by DuckDB (through the jar's tiny SQL
runner), PNGs by PIL, WAVs by Python's wave module. The expected values come from the same
formulas, computed here in Python.
"""

import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import wave

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

import warpdata as wd  # noqa: E402

DATASET = "pytest/pets"
#: Rows per Parquet file of DATASET's main table (written in this order).
FILE_ROWS = [37, 50, 13, 60]
LABELS = ["cat", "dog", "bird"]


def jar():
    path = os.environ.get("WARP_JAR") or os.path.join(REPO, "daemon", "target", "warp.jar")
    if not os.path.isfile(path):
        pytest.exit("%s is missing: build it first (scripts/test, or mvn -q package -DskipTests)" % path, 2)
    return path


_JAVA = []


def java():
    """The java the scripts use (scripts/lib/common.sh's find_java: 21 or newer)."""
    if not _JAVA:
        out = subprocess.run(["bash", "-c", 'source "$1/scripts/lib/common.sh" && find_java >&2 && echo "$JAVA"',
                              "-", REPO], capture_output=True, check=True)
        _JAVA.append(out.stdout.decode().strip())
    return _JAVA[0]


def expected_row(i):
    """Row i of DATASET's main table, as the DuckDB query in _write_tables makes it."""
    return {"id": i, "label": LABELS[i % 3], "score": i * 0.5, "note": None if i % 7 == 0 else "n%d" % i,
            "path": "%s/img%04d.png" % (LABELS[i % 3], i), "sound": "s%04d.wav" % i}


def pixels(i):
    """The RGB pixels of image i: 6 x 4 (w x h), values from i."""
    return bytes(((i * 7 + x * 31 + y * 17 + c * 53) % 256) for y in range(4) for x in range(6) for c in range(3))


def samples(i):
    """The 16-bit mono samples of sound i."""
    return [((i * 97 + k * 1031) % 65536) - 32768 for k in range(200)]


class Warp:
    """What the fixture started: run warpctl, read warpd's cache counters."""

    def __init__(self, base):
        self.base = base
        self.store = os.path.join(base, "store")
        self.remote = "file://" + self.store
        self.mount = os.path.join(base, "mnt")
        self.cache = os.path.join(base, "cache")
        self.socket = os.path.join(base, "warpd.sock")
        self.source = os.path.join(base, "source")
        self.env = dict(os.environ, WARP_JAR=jar(), WARP_SOCKET=self.socket, WARP_REMOTE=self.remote)
        self.proc = None
        self.log = None

    def run(self, *args, check=True, env=None, timeout=300):
        """Runs a script of the repository (scripts/NAME) and returns the CompletedProcess."""
        p = subprocess.run([os.path.join(REPO, "scripts", args[0])] + list(args[1:]), capture_output=True,
                           env=dict(self.env, **(env or {})), timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError("%s exited %d:\n%s%s" % (" ".join(args), p.returncode,
                                                          p.stdout.decode(), p.stderr.decode()))
        return p

    def warpctl(self, *args, **kw):
        return self.run("warpctl", *args, **kw)

    def sql(self, query):
        subprocess.run([java(), "--enable-native-access=ALL-UNNAMED", "-cp", jar(), "io.warpdata.daemon.demo.Sql",
                        query], check=True, capture_output=True, env=self.env, timeout=300)

    def counters(self):
        return wd.Client(self.socket).call("cache.stats")["counters"]

    def start_warpd(self):
        os.makedirs(self.mount, exist_ok=True)
        self.log = open(os.path.join(self.base, "warpd.log"), "wb")
        # warpd runs in a directory where someone planted .tmp, DuckDB's default spill folder,
        # pointing at a secret (test_errors: a filter must not read it)
        secret = os.path.join(self.base, "secret")
        os.makedirs(secret, exist_ok=True)
        with open(os.path.join(secret, "secret.txt"), "w") as f:
            f.write("TOPSECRET")
        if not os.path.lexists(os.path.join(self.base, ".tmp")):
            os.symlink(secret, os.path.join(self.base, ".tmp"))
        self.proc = subprocess.Popen(
            [os.path.join(REPO, "scripts", "warpd"), "--mount", self.mount, "--remote", self.remote,
             "--cache-dir", self.cache, "--cache-size", "1GB", "--socket", self.socket],
            stdout=self.log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True, cwd=self.base)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("warpd exited %d:\n%s" % (self.proc.returncode, self.read_log()))
            if b"warpd: mounted" in open(self.log.name, "rb").read() and os.path.exists(self.socket):
                return
            time.sleep(0.2)
        raise AssertionError("warpd did not mount within 120 s:\n" + self.read_log())

    def read_log(self):
        with open(self.log.name, "rb") as f:
            return f.read().decode("utf-8", "replace")[-4000:]

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        if self.log:
            self.log.close()
        if mounted(self.mount):
            subprocess.run(["fusermount", "-u", self.mount], capture_output=True)
            if mounted(self.mount):
                subprocess.run(["fusermount", "-u", "-z", self.mount], capture_output=True)


def mounted(path):
    want = " " + os.path.realpath(path) + " "
    with open("/proc/self/mountinfo") as f:
        return any(want in line for line in f)


def _write_tables(w):
    os.makedirs(os.path.join(w.source, "table"))
    first = 0
    for n, rows in enumerate(FILE_ROWS):
        out = os.path.join(w.source, "table", "part-%d.parquet" % n)
        w.sql("COPY (SELECT i::BIGINT AS id, ['cat','dog','bird'][i %% 3 + 1] AS label, (i * 0.5)::DOUBLE AS score,"
              " CASE WHEN i %% 7 = 0 THEN NULL ELSE 'n' || i END AS note,"
              " ['cat','dog','bird'][i %% 3 + 1] || '/img' || lpad(i::VARCHAR, 4, '0') || '.png' AS path,"
              " 's' || lpad(i::VARCHAR, 4, '0') || '.wav' AS sound"
              " FROM range(%d, %d) t(i) ORDER BY i) TO '%s' (FORMAT PARQUET)" % (first, first + rows, out))
        first += rows


def _write_media(w):
    from PIL import Image
    total = sum(FILE_ROWS)
    for i in range(total):
        row = expected_row(i)
        p = os.path.join(w.source, "images", row["path"])
        os.makedirs(os.path.dirname(p), exist_ok=True)
        Image.frombytes("RGB", (6, 4), pixels(i)).save(p, format="PNG")
        s = os.path.join(w.source, "sounds", row["sound"])
        os.makedirs(os.path.dirname(s), exist_ok=True)
        with wave.open(s, "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(8000 + i)
            out.writeframes(struct.pack("<%dh" % len(samples(i)), *samples(i)))


@pytest.fixture(scope="session")
def warp():
    base = tempfile.mkdtemp(prefix="warpdata-pytest-")
    w = Warp(base)
    try:
        os.makedirs(w.store)
        _write_tables(w)
        _write_media(w)
        tables = "main=" + os.path.join(w.source, "table", "*.parquet")
        w.warpctl("publish", DATASET, "--table", tables, "--artifact", "images=" + os.path.join(w.source, "images"),
                  "--artifact", "sounds=" + os.path.join(w.source, "sounds"), "--bind", "main.path=images:image",
                  "--bind", "main.sound=sounds:audio", "--set-latest")
        w.warpctl("tag", DATASET, "v1")
        # A second dataset nothing reads before test_remote_schema_no_pull.
        w.warpctl("publish", "pytest/untouched", "--table", tables, "--set-latest")
        w.start_warpd()
        old = os.environ.get("WARP_SOCKET")
        os.environ["WARP_SOCKET"] = w.socket
        try:
            yield w
        finally:
            if old is None:
                os.environ.pop("WARP_SOCKET", None)
            else:
                os.environ["WARP_SOCKET"] = old
    finally:
        w.stop()
        if not mounted(w.mount):
            shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def ds(warp):
    return wd.dataset(DATASET)
