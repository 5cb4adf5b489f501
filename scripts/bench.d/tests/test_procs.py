"""Process handling shared by scripts/bench and scripts/soak, on real processes this test starts
(sleep, a Python helper): the state file, cleanup by pid and start time, timed commands, line
helpers. No FUSE, no server."""
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from warpbench import procs


@pytest.fixture
def reg(tmp_path):
    r = procs.Registry(str(tmp_path / "state.json"))
    yield r
    for p in r.procs.values():  # whatever a failed test left
        if p.poll() is None:
            p.kill()
            p.wait()


def test_the_state_file_names_each_process_by_pid_and_start_time(reg, tmp_path):
    p = reg.start("sleeper", ["sleep", "60"], str(tmp_path / "sleeper.log"))
    reg.add_mount("sleeper", str(tmp_path / "mnt"))
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["pids"] == {"sleeper": [p.pid, procs.pid_start_time(p.pid)]}
    assert state["mounts"] == {"sleeper": str(tmp_path / "mnt")}
    assert os.getsid(p.pid) == p.pid  # its own session: Ctrl-C reaches only the harness
    reg.stop("sleeper", grace=5)
    assert p.poll() is not None
    assert json.loads((tmp_path / "state.json").read_text()) == {"pids": {}, "mounts": {}}


def test_cleanup_stops_what_a_dead_harness_left_and_removes_the_state(reg, tmp_path):
    p = reg.start("sleeper", ["sleep", "60"], str(tmp_path / "sleeper.log"))
    procs.cleanup_from_state(reg.state_path)
    assert p.wait(timeout=10) == -signal.SIGTERM
    assert not os.path.exists(reg.state_path)


def test_cleanup_leaves_a_process_that_only_reuses_a_recorded_pid(tmp_path):
    p = subprocess.Popen(["sleep", "60"])
    try:
        state = tmp_path / "state.json"
        state.write_text(json.dumps({"pids": {"old": [p.pid, procs.pid_start_time(p.pid) - 1]}, "mounts": {}}))
        procs.cleanup_from_state(str(state))
        assert p.poll() is None
        assert not state.exists()
    finally:
        p.kill()
        p.wait()


def test_cleanup_reads_the_state_files_of_an_older_soak(tmp_path):
    p = subprocess.Popen(["sleep", "60"])
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"procs": {"warpd": [p.pid, procs.pid_start_time(p.pid)]},
                                 "mounts": [str(tmp_path / "not-mounted")]}))
    procs.cleanup_from_state(str(state))
    assert p.wait(timeout=10) == -signal.SIGTERM


def test_cleanup_without_a_state_file_does_nothing(tmp_path):
    procs.cleanup_from_state(str(tmp_path / "none.json"))


def test_stop_pid_kills_what_ignores_sigterm():
    p = subprocess.Popen([sys.executable, "-c",
                          "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
                          " print('ready', flush=True); time.sleep(60)"], stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"ready\n"
    procs.stop_pid(p.pid, grace=0.5)
    assert p.wait(timeout=10) == -signal.SIGKILL


def test_run_timed_returns_the_output_or_says_why_it_failed():
    secs, out = procs.run_timed(["sh", "-c", "echo hello"], timeout=30)
    assert out == "hello\n" and secs >= 0
    with pytest.raises(procs.HarnessError, match=r"^exit 3: the last line$"):
        procs.run_timed(["sh", "-c", "echo first >&2; echo 'the last line' >&2; exit 3"], timeout=30)
    with pytest.raises(procs.HarnessError, match=r"^timeout after 0.5s$"):
        procs.run_timed(["sleep", "30"], timeout=0.5)


HELPER = textwrap.dedent("""
    import json, sys
    print("ready", flush=True)
    for line in sys.stdin:
        word = line.strip()
        if word == "die":
            sys.exit(1)
        print(json.dumps({"error": "bad word"} if word == "bad" else {"result": word.upper()}), flush=True)
""")


def test_a_line_server_answers_restarts_after_dying_and_reports_errors(reg, tmp_path):
    helper = tmp_path / "helper.py"
    helper.write_text(HELPER)
    ls = procs.LineServer(reg, str(tmp_path), "helper", [sys.executable, str(helper)])
    assert ls.ask("abc", timeout=30) == {"result": "ABC"}
    first = ls.p.pid
    with pytest.raises(procs.HarnessError, match="^bad word$"):
        ls.ask("bad", timeout=30)
    with pytest.raises(procs.HarnessError, match="the helper helper died; see helper.log"):
        ls.ask("die", timeout=30)
    assert ls.ask("again", timeout=30) == {"result": "AGAIN"}
    assert ls.p.pid != first
    ls.close()
    assert "helper" not in reg.procs


def test_credentials_replace_what_would_confuse_the_peers(monkeypatch):
    monkeypatch.setenv("AWS_CA_BUNDLE", "/etc/ssl/x.pem")
    monkeypatch.setenv("AWS_PROFILE", "prod")
    env = procs.S3Creds("k", "s", "eu-west-1").env(WARP_JAR="/x.jar")
    assert "AWS_CA_BUNDLE" not in env and "AWS_PROFILE" not in env
    assert (env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], env["AWS_REGION"], env["WARP_JAR"]) == \
        ("k", "s", "eu-west-1", "/x.jar")
    assert procs.S3Creds("k", "s").curl_args()[4] == "aws:amz:us-east-1:s3"


def test_warpd_argv_puts_the_cache_size_last_when_given():
    argv = procs.warpd_argv(["warpd"], mnt="/m", remote="s3://b/p", endpoint="http://e", cache_dir="/c",
                            socket_path="/s", extra=["--mode", "auto"], cache_size="1GB")
    assert argv == ["warpd", "--mount", "/m", "--remote", "s3://b/p", "--endpoint", "http://e", "--cache-dir", "/c",
                    "--socket", "/s", "--mode", "auto", "--cache-size", "1GB"]
    assert "--cache-size" not in procs.warpd_argv(["warpd"], mnt="/m", remote="r", endpoint="e", cache_dir="c",
                                                  socket_path="s")


def test_a_path_that_is_no_mount_point_is_not_mounted(tmp_path):
    assert not procs.is_mounted(str(tmp_path))
    procs.unmount(str(tmp_path))  # nothing to do, and no error
    assert procs.is_mounted("/proc")



def test_jit_cpu_seconds_counts_the_threads_named_as_hotspots_compilers_and_no_other():
    # A helper whose threads are named as HotSpot names its C1 and C2 compiler threads, and one
    # named otherwise; each spins for its own CPU time, then waits alive (an ended thread leaves
    # /proc/<pid>/task) until the test closes the helper's stdin.
    helper = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import ctypes, sys, threading, time
        libc = ctypes.CDLL(None)
        done, stop = threading.Barrier(4), threading.Event()
        def spin(name, seconds):
            libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME: the thread's comm
            end = time.thread_time() + seconds
            while time.thread_time() < end:
                pass
            done.wait()
            stop.wait()
        ts = [threading.Thread(target=spin, args=a, daemon=True) for a in
              (("C2 CompilerThre", 0.3), ("C1 CompilerThre", 0.2), ("warp-fetch-1", 0.8))]
        for t in ts: t.start()
        done.wait()
        print("spun", flush=True)
        sys.stdin.read()
        stop.set()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert helper.stdout.readline().strip() == "spun"
        threads = procs.jit_cpu_seconds(helper.pid)
        assert len(threads) == 2, threads
        spent = procs.jit_cpu_delta({}, threads)
        assert 0.45 <= spent <= 0.75, spent  # 0.5 s of the two compilers (clock ticks of 10 ms), not the 0.8 s
        # A compiler thread that ended between two readings is not a negative delta; a new one counts from 0.
        assert procs.jit_cpu_delta({1: 5.0, 2: 1.0}, {2: 1.5, 3: 0.25}) == 0.75
    finally:
        helper.stdin.close()
        helper.wait(10)
    with pytest.raises(OSError):
        procs.jit_cpu_seconds(helper.pid)  # gone: the caller says what


BURNER = textwrap.dedent("""
    import os, sys, time
    def burn(seconds):
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
    # A child that has exited and been waited for (cutime), then one still running (children).
    pid = os.fork()
    if pid == 0:
        burn(0.3)
        os._exit(0)
    os.waitpid(pid, 0)
    if os.fork() == 0:
        burn(0.3)
        print("burnt", flush=True)
        time.sleep(60)
        os._exit(0)
    time.sleep(60)
""")


def test_a_process_trees_cpu_counts_its_waited_and_its_running_children(reg, tmp_path):
    script = tmp_path / "burner.py"
    script.write_text(BURNER)
    p = reg.start("burner", [sys.executable, "-u", str(script)], str(tmp_path / "burner.log"),
                  stdout=subprocess.PIPE)
    busy0 = procs.machine_busy_seconds()
    assert p.stdout.readline() == b"burnt\n"
    own = procs.proc_cpu_seconds(p.pid)
    tree = procs.proc_tree_cpu_seconds(p.pid)
    # the parent itself only forked and slept; both children burnt 0.3 s each
    assert own < 0.25
    assert tree >= own + 0.55
    assert procs.machine_busy_seconds() - busy0 >= 0.25
    os.killpg(p.pid, signal.SIGKILL)  # the burner and its sleeping child (a session of their own)
    p.wait()
    reg.procs.pop("burner")
    assert procs.proc_tree_cpu_seconds(p.pid) is None
