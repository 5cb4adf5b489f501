"""Processes and mounts for scripts/bench and scripts/soak: everything a harness starts is recorded
(pid and start time, mounts) in a state file, so it can always be torn down, by the harness on
exit or by `--cleanup` from the state file when the harness died hard.

Standard library only (Debian's /usr/bin/python3). soak.py imports this module too.
"""
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

_log = None


def set_log(fn):
    """Where warnings of this module go: the harness's own log function."""
    global _log
    _log = fn


def log(msg):
    if _log is not None:
        _log(msg)
    else:
        print(msg, file=sys.stderr, flush=True)


class HarnessError(Exception):
    """A step of the harness failed; the message says what and where its log is."""


# ----------------------------------------------------------------------------------------
# Mounts and pids
# ----------------------------------------------------------------------------------------

def is_mounted(path):
    path = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                if line.split()[4] == path:
                    return True
    except OSError:
        pass
    return False


def unmount(path):
    """fusermount -u, then a lazy -z if the mount is busy; returns when it is gone."""
    if not is_mounted(path):
        return
    for args in (["-u"], ["-u", "-z"]):
        for tool in ("fusermount", "fusermount3", "umount"):
            if shutil.which(tool) is None:
                continue
            argv = [tool] + args + [path] if tool != "umount" else ["umount", "-l", path]
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
            if not is_mounted(path):
                return
            break
        time.sleep(0.5)
    if is_mounted(path):
        log(f"warning: could not unmount {path}")


def _stat_fields(pid):
    """The fields of /proc/<pid>/stat after the command name (field 3, the state, is [0])."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return _stat_fields(pid)[0] != "Z"
    except OSError:
        return False


def pid_start_time(pid):
    try:
        return int(_stat_fields(pid)[19])
    except OSError:
        return None


def stop_pid(pid, sig=signal.SIGTERM, grace=15.0):
    """sig, then SIGKILL if the process is still there after grace seconds."""
    if not pid_alive(pid):
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Registry:
    """Processes and mounts this run owns, mirrored to state.json for --cleanup."""

    def __init__(self, state_path):
        self.state_path = state_path
        self.procs = {}   # name -> Popen
        self.mounts = {}  # name -> path

    def _save(self):
        state = {"pids": {n: [p.pid, pid_start_time(p.pid)] for n, p in self.procs.items()},
                 "mounts": self.mounts}
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, self.state_path)

    def start(self, name, argv, logpath, env=None, stdin=None, stdout=None):
        logf = open(logpath, "ab")
        # A new session: Ctrl-C in the terminal reaches only the harness, which then stops
        # its children in order (warpd gets SIGTERM so it unmounts itself).
        p = subprocess.Popen(argv, stdout=stdout if stdout is not None else logf, stderr=logf,
                             stdin=stdin if stdin is not None else subprocess.DEVNULL,
                             env=env, start_new_session=True)
        logf.close()
        self.procs[name] = p
        self._save()
        return p

    def add_mount(self, name, path):
        self.mounts[name] = path
        self._save()

    def stop(self, name, grace=15.0):
        """Stops one process and its mount: SIGTERM first, then unmount, then SIGKILL."""
        p = self.procs.pop(name, None)
        mount = self.mounts.pop(name, None)
        if p is not None:
            if name.startswith(("s3fs", "rclone")) and mount:
                unmount(mount)  # the FUSE client exits by itself once unmounted
            stop_pid(p.pid, signal.SIGTERM, grace)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if mount:
            unmount(mount)
        self._save()

    def stop_all(self, last=("s3proxy", "duckdb")):
        """The mounts' processes first, then the helpers and the server they read from."""
        for name in list(self.procs):
            if name not in last:
                self.stop(name)
        for name in list(self.mounts):
            unmount(self.mounts.pop(name))
        for name in list(self.procs):
            self.stop(name, grace=10.0)
        self._save()


def cleanup_from_state(state_path):
    """Tears down what a dead harness left: used by the scripts' EXIT traps (--cleanup)."""
    try:
        with open(state_path) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return
    pids = state.get("pids", state.get("procs", {}))  # "procs": state files of an older soak.py
    mounts = state.get("mounts", {})
    if isinstance(mounts, list):
        mounts = {f"mount{i}": m for i, m in enumerate(mounts)}
    # Newest first: the FUSE daemons go before the server they read from.
    for name, (pid, start) in reversed(list(pids.items())):
        if pid_alive(pid) and pid_start_time(pid) == start:  # same process, not a reused pid
            if name in mounts:
                unmount(mounts[name])
            stop_pid(pid, signal.SIGTERM, 15.0)
    for path in mounts.values():
        unmount(path)
    try:
        os.remove(state_path)
    except OSError:
        pass


# ----------------------------------------------------------------------------------------
# What a running process uses
# ----------------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu_seconds(pid):
    try:
        fields = _stat_fields(pid)
        tck = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / tck  # utime + stime
    except OSError:
        return None


def proc_tree_cpu_seconds(pid):
    """CPU seconds (user and system) of a process and of its children: those it has waited for
    (cutime, cstime) and those still running (a helper's DataLoader workers), read from /proc.
    None when the process is gone."""
    try:
        f = _stat_fields(pid)
    except OSError:
        return None
    own = sum(int(x) for x in f[11:15]) / os.sysconf("SC_CLK_TCK")
    return own + sum(proc_tree_cpu_seconds(child) or 0.0 for child in _children(pid))


def _children(pid):
    """Pids whose parent is pid (from each task's children file, which the kernel keeps)."""
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            continue
    return out


def machine_busy_seconds():
    """CPU seconds all cores have spent busy since boot: /proc/stat's user, nice, system, irq,
    softirq and steal (not idle, not iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = v
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def proc_status(pid):
    """/proc/<pid>/status as a dict of strings (raises OSError when the process is gone)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def proc_hwm_kib(pid):
    try:
        return int(proc_status(pid)["VmHWM"].split()[0])
    except (OSError, KeyError, ValueError, IndexError):
        return None


def jit_cpu_seconds(pid):
    """CPU seconds (user and system) of each of the JVM pid's JIT compiler threads so far, by
    thread id. HotSpot ends idle compiler threads and starts new ones: compare two of these per
    thread (jit_cpu_delta), not their sums."""
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):  # OSError when pid is gone: the caller says what
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if name.startswith(("C1 CompilerThre", "C2 CompilerThre")):
            out[int(t)] = (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15
    return out


def jit_cpu_delta(before, after):
    """Compiler CPU seconds between two jit_cpu_seconds: each thread alive at the end counts from
    where it was (0 if it started since); a thread that ended meanwhile takes what it used along."""
    return sum(secs - before.get(t, 0.0) for t, secs in after.items())


def java_descendant(pid):
    """The java process that is pid or its descendant (a launcher script may not exec)."""
    frontier = [pid]
    seen = set()
    while frontier:
        p = frontier.pop(0)
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/comm") as f:
                if f.read().strip() == "java":
                    return p
        except OSError:
            continue
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    if int(_stat_fields(d)[1]) == p:
                        frontier.append(int(d))
                except (OSError, ValueError, IndexError):
                    pass
    return pid


def run_timed(argv, timeout, shell=False, cwd=None):
    """Runs a command, returns (seconds, stdout). Raises HarnessError on failure or timeout."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=cwd, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        raise HarnessError(f"timeout after {timeout}s")
    secs = time.perf_counter() - t0
    if p.returncode != 0:
        msg = (err or b"").decode(errors="replace").strip().splitlines()
        raise HarnessError(f"exit {p.returncode}: {msg[-1] if msg else ''}"[:200])
    return secs, out.decode(errors="replace")


# ----------------------------------------------------------------------------------------
# The S3 server, the mounts, warpd
# ----------------------------------------------------------------------------------------

class S3Creds:
    def __init__(self, access_key, secret_key, region="us-east-1"):
        self.access_key, self.secret_key, self.region = access_key, secret_key, region

    def curl_args(self):
        return ["curl", "-sS", "--fail", "--aws-sigv4", f"aws:amz:{self.region}:s3",
                "-u", f"{self.access_key}:{self.secret_key}",
                # curl does not send the payload hash S3Proxy requires; UNSIGNED-PAYLOAD is valid v4.
                "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]

    def env(self, **extra):
        """This environment with these credentials, for warpd, warpctl and the peers."""
        env = dict(os.environ)
        # A CA bundle is meaningless for the http:// loopback endpoint, and rclone 1.60 refuses
        # to start when AWS_CA_BUNDLE is set ("LoadCustomCABundleError").
        for k in ("AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
            env.pop(k, None)
        env.update(AWS_ACCESS_KEY_ID=self.access_key, AWS_SECRET_ACCESS_KEY=self.secret_key,
                   AWS_REGION=self.region, AWS_DEFAULT_REGION=self.region, **extra)
        return env


def start_s3proxy(reg, creds, *, java, jar, basedir, port, run_dir, log_dir, buckets, heap="1g",
                  timeout=60):
    """S3Proxy on 127.0.0.1:port over a filesystem directory, as process "s3proxy"; returns its
    endpoint once every bucket exists (created, or already there)."""
    os.makedirs(basedir, exist_ok=True)
    endpoint = f"http://127.0.0.1:{port}"
    conf = os.path.join(run_dir, "s3proxy.conf")
    with open(conf, "w") as f:
        f.write(f"s3proxy.endpoint={endpoint}\n"
                "s3proxy.authorization=aws-v2-or-v4\n"
                f"s3proxy.identity={creds.access_key}\ns3proxy.credential={creds.secret_key}\n"
                f"jclouds.identity={creds.access_key}\njclouds.credential={creds.secret_key}\n"
                # The jclouds "filesystem" provider, as in the project's S3ProxyFixture: the
                # newer filesystem-nio2 fails CompleteMultipartUpload of the 1 GiB file with an
                # NPE in S3Proxy 2.6.0 (AbstractNio2BlobStore$MultiBlobInputStream.read).
                "jclouds.provider=filesystem\n"
                f"jclouds.filesystem.basedir={basedir}\n")
    p = reg.start("s3proxy", [java, f"-Xmx{heap}", "-jar", jar, "--properties", conf],
                  os.path.join(log_dir, "s3proxy.log"))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise HarnessError(f"S3Proxy exited; see {log_dir}/s3proxy.log")
        ok = True
        for bucket in buckets:
            # The HTTP status, not curl's message: that names the port, which may hold "409".
            r = subprocess.run(creds.curl_args() + ["-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT",
                                                    f"{endpoint}/{bucket}"],
                               capture_output=True, text=True)
            ok = ok and r.stdout.strip() in ("200", "409")
        if ok:
            return endpoint
        time.sleep(0.5)
    raise HarnessError(f"S3Proxy did not answer within {timeout}s; see {log_dir}/s3proxy.log")


def start_mount(reg, name, argv, mnt, logpath, ready, env=None, timeout=90):
    """Starts a FUSE daemon (warpd, s3fs, rclone) as `name`, records its mount and waits until
    ready() holds; returns its Popen. On exit or timeout it is stopped and HarnessError raised."""
    os.makedirs(mnt, exist_ok=True)
    if is_mounted(mnt):
        unmount(mnt)
    p = reg.start(name, argv, logpath, env=env)
    reg.add_mount(name, mnt)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if p.poll() is not None:
            reg.stop(name)
            raise HarnessError(f"{name} exited with {p.returncode}; see {logpath}")
        if ready():
            return p
        time.sleep(0.2)
    reg.stop(name)
    raise HarnessError(f"{name} did not mount within {timeout}s; see {logpath}")


def warpd_argv(launcher, *, mnt, remote, endpoint, cache_dir, socket_path, cache_size=None, extra=()):
    """warpd's command line; launcher: scripts/warpd, or [java, -jar, warp.jar, warpd]."""
    argv = list(launcher) + ["--mount", mnt, "--remote", remote, "--endpoint", endpoint,
                             "--cache-dir", cache_dir, "--socket", socket_path] + list(extra)
    if cache_size:
        argv += ["--cache-size", cache_size]
    return argv


def warpd_control(socket_path, op, args=None, timeout=120):
    """One request on warpd's control socket (newline-delimited JSON, docs/control.md), as
    warpctl would send it, without starting a JVM per call; returns the result."""
    req = {"id": 1, "op": op}
    if args:
        req["args"] = args
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(timeout)
            sock.connect(socket_path)
            f = sock.makefile("rwb")
            f.write((json.dumps(req) + "\n").encode())
            f.flush()
            while True:
                line = f.readline()
                if not line:
                    raise HarnessError(f"warpd closed the control socket during {op}")
                j = json.loads(line)
                if j.get("event") == "progress":
                    continue
                if not j.get("ok"):
                    raise HarnessError(f"{op}: {json.dumps(j.get('error'))[:200]}")
                return j["result"]
    except (OSError, ValueError) as e:
        raise HarnessError(f"{op} on {socket_path}: {e}") from e


class LineServer:
    """A helper process that loads its libraries once (DuckDB, torch) and then answers one
    JSON line per request line, so start-up never lands inside a timing. Started on first use
    (and again after it died), recorded in the registry as `name`."""

    def __init__(self, reg, log_dir, name, argv):
        self.reg, self.log_dir, self.name, self.argv = reg, log_dir, name, argv
        self.p = None

    def start(self):
        """Starts the helper unless it runs, and waits until it is ready."""
        if self.p is None or self.p.poll() is not None:
            self.p = self.reg.start(self.name, self.argv, os.path.join(self.log_dir, f"{self.name}.log"),
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            r, _, _ = select.select([self.p.stdout], [], [], 120)
            if not r or b"ready" not in self.p.stdout.readline():
                self.close()
                raise HarnessError(f"the {self.name} helper did not start; see {self.name}.log")

    def ask(self, line, timeout):
        self.start()
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            self.close()
            raise HarnessError(f"timeout after {timeout}s")
        out = self.p.stdout.readline()
        if not out:
            self.close()
            raise HarnessError(f"the {self.name} helper died; see {self.name}.log")
        j = json.loads(out)
        if "error" in j:
            raise HarnessError(j["error"][:200])
        return j

    def close(self):
        if self.p is not None:
            self.reg.stop(self.name, grace=5.0)
            self.p = None
