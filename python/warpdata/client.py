"""warpd's control socket: newline-delimited JSON over a Unix socket (docs/control.md)."""

import json
import errno
import os
import socket
import stat

from .errors import DaemonUnavailableError, WarpError, from_warpd

DEFAULT_TIMEOUT = 600.0

# Calls warpd answers from what it knows, at most one store wait (10 s) later: a warpd that is
# stopped (SIGSTOP), swapping or wedged takes the connection and never answers, and held
# wd.dataset() for DEFAULT_TIMEOUT. Table reads, warm and publish may be silent for long.
QUICK_TIMEOUT = 30.0
QUICK_OPS = frozenset(("status", "info", "stats"))


SERVICE_SOCKET = "/run/warp/warpd.sock"


def default_socket():
    """warpd's socket as warpctl finds it: $WARP_SOCKET, else the default for this user; a user other
    than root whose own default socket does not exist talks to the installed service's
    (/run/warp/warpd.sock) when that one exists (being in the warp group is all it takes)."""
    if os.environ.get("WARP_SOCKET"):
        return os.environ["WARP_SOCKET"]
    if os.geteuid() == 0:
        return SERVICE_SOCKET
    if os.environ.get("XDG_RUNTIME_DIR"):
        own = os.path.join(os.environ["XDG_RUNTIME_DIR"], "warp", "warpd.sock")
    else:
        own = "/tmp/warp-%d/warpd.sock" % os.geteuid()
    if not os.path.exists(own) and (os.path.exists(SERVICE_SOCKET) or _unsearchable(os.path.dirname(SERVICE_SOCKET))):
        return SERVICE_SOCKET
    if own.startswith("/tmp/") and os.path.exists(own):
        _require_own_folder(os.path.dirname(own))
    return own


def _require_own_folder(folder):
    """Anyone may make /tmp/warp-<uid> first: talk to a socket there only if the folder is this
    user's (or root's), not a symlink, and nobody else may write it (warpctl checks the same)."""
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or st.st_uid not in (os.geteuid(), 0) or st.st_mode & 0o022:
        raise DaemonUnavailableError(
            "the socket folder %s belongs to uid %d (mode %04o): another user could pose as warpd there"
            % (folder, st.st_uid, st.st_mode & 0o7777),
            "remove %s if you did not make it, or set XDG_RUNTIME_DIR or WARP_SOCKET to warpd's real socket" % folder)


def _unsearchable(folder):
    """Whether ``folder`` exists but this user may not look inside it: the service's socket may be
    there (/run/warp is 0750 warp:warp), and connecting says which group to join (audit 37)."""
    return os.path.isdir(folder) and not os.access(folder, os.X_OK)


def _group_of(path):
    """The group that may use the socket: the socket's, else its folder's (which this user may not
    be allowed to look inside), else None."""
    import grp
    for p in (path, os.path.dirname(path)):
        try:
            return grp.getgrgid(os.stat(p).st_gid).gr_name
        except (OSError, KeyError):
            continue
    return None


def _join_advice(path, group, user):
    """What to do when the socket does not let this user in (as warpctl's ControlClient.joinAdvice)."""
    if group is None:
        return ("ask warpd's administrator which group may use it (ls -ld %s shows its folder's group) and join that"
                " group (sudo usermod -aG GROUP %s, then log in again), or run as warpd's user or root"
                % (os.path.dirname(path), user))
    if group == "root":
        return ("only warpd's user and root may use it: have warpd started with --socket-group GROUP (socket-group ="
                " GROUP in its config file) and join that group (sudo usermod -aG GROUP %s, then log in again), or run"
                " as warpd's user or root" % user)
    return ("join its group %s (sudo usermod -aG %s %s, then log in again), or run as warpd's user or root"
            % (group, group, user))


def _user():
    try:
        import pwd
        return pwd.getpwuid(os.geteuid()).pw_name
    except (KeyError, ImportError):
        return "$USER"


class Client:
    """Talks to one warpd. Each call opens its own connection (closing it cancels the call)."""

    def __init__(self, socket_path=None, timeout=DEFAULT_TIMEOUT):
        """socket_path: a str or a path-like (pathlib.Path); None: ``default_socket()``."""
        self.socket_path = os.fspath(socket_path) if socket_path else default_socket()
        self.timeout = timeout

    def _timeout(self, op):
        """How long ``op`` may stay silent: QUICK_TIMEOUT for the quick calls, else the client's timeout."""
        return min(self.timeout, QUICK_TIMEOUT) if op in QUICK_OPS else self.timeout

    def _connect(self, timeout=None):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout if timeout is None else timeout)
        try:
            s.connect(self.socket_path)
        except OSError as e:
            s.close()
            if e.errno in (errno.EACCES, errno.EPERM):
                raise DaemonUnavailableError(
                    "warpd's socket %s does not let this user in (permission denied)" % self.socket_path,
                    _join_advice(self.socket_path, _group_of(self.socket_path), _user())) from None
            raise DaemonUnavailableError(
                "no warpd answers on %s (%s)" % (self.socket_path, e.strerror or e),
                "start one (the installed service: systemctl start warpd, as root; where systemd does not run, the"
                " command scripts/install printed; or scripts/warpd --mount /warp --remote s3://BUCKET; scripts/demo"
                " starts a local one), or point WARP_SOCKET at its socket") from None
        return s

    def call(self, op, args=None, on_event=None):
        """Runs ``op``; events (progress, ...) go to ``on_event(dict)``; returns the result dict."""
        for kind, body in self.stream(op, args):
            if kind == "result":
                return body
            if on_event is not None:
                on_event(body)
        raise WarpError("warpd sent no result for %s" % op, "check warpd's log (journalctl -u warpd)")

    def stream(self, op, args=None, parse_float=None):
        """Yields ("event", dict) for each event, then ("result", dict); raises WarpError on an error.
        ``parse_float``: as json.loads's (decimal.Decimal keeps a DECIMAL's digits)."""
        timeout = self._timeout(op)
        s = self._connect(timeout)
        try:
            f = s.makefile("rb", buffering=1 << 20)
            s.sendall(json.dumps({"id": 1, "op": op, "args": args or {}}).encode("utf-8") + b"\n")
            while True:
                try:
                    line = f.readline()
                except socket.timeout:
                    raise DaemonUnavailableError("warpd at %s did not answer %s within %.0f s" % (self.socket_path, op, timeout),
                                                 "check warpd (ps: state T is stopped; its log); a hung store makes"
                                                 " reads of uncached data wait")
                if not line.endswith(b"\n"):
                    # Nothing, or part of a line: warpd stopped (or died) while answering.
                    raise DaemonUnavailableError("warpd closed the connection during %s%s"
                                                 % (op, " in the middle of an answer" if line else ""),
                                                 "check that warpd is still running (warpctl status) and its log")
                msg = json.loads(line) if parse_float is None else json.loads(line, parse_float=parse_float)
                if "event" in msg:
                    yield "event", msg
                    continue
                if msg.get("ok"):
                    yield "result", msg.get("result", {})
                    return
                raise from_warpd(msg.get("error") or {})
        finally:
            s.close()
