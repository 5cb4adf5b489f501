"""The systems under test, and their registry: each system is a class with a name, a label
(the table's column) and what "cold" and "warm" mean for it. Warp is in warp.py.

To add a system: a class here (or a module of its own) with path() or url(), cold() and warm(),
then a line in SYSTEMS (column order) and CLASSES below; the workloads name the systems they run
on (workloads.py)."""
import os
import shutil

from . import procs
from .common import ACCESS_KEY, SECRET_KEY, REGION

# Columns of the table, in order, and their labels.
SYSTEMS = ["warp", "s3fs", "rclone", "local", "rawget", "getsha", "pget"]
SYSTEM_LABEL = {"warp": "warp", "s3fs": "s3fs", "rclone": "rclone", "local": "local disk",
                "rawget": "raw GET", "getsha": "GET+SHA-256+file", "pget": "8 ranged GETs"}
DAEMONS = ["warp", "s3fs", "rclone"]  # FUSE processes: their RSS and CPU are reported
PEERS = ("s3fs", "rclone", "local", "rawget", "getsha", "pget")  # --repeat-limit applies to these, never to warp
COLD_ONLY = ("rawget", "getsha", "pget")  # no cache of their own: measured cold only
PGET_STREAMS = 8  # the parallel ranged GET peer: this many concurrent curls, one range each


def build(env):
    """One instance of every system, by name, in column order."""
    from .warp import Warp  # warp.py builds on MountSystem below
    classes = {"warp": Warp, "s3fs": S3fs, "rclone": Rclone, "local": Local, "rawget": RawGet,
               "getsha": GetSha, "pget": PGet}
    return {name: classes[name](env) for name in SYSTEMS}


def parse_systems(arg):
    """--systems: the names given (all systems without it); a system not named is shown as
    "not selected". A name that is no system selects nothing."""
    if not arg:
        return list(SYSTEMS)
    return [x.strip() for x in arg.split(",")]


class System:
    name = "?"
    daemon_pid = None

    def __init__(self, env):
        self.env = env
        self.missing = None   # reason this system cannot run, shown in the table

    def path(self, what):
        raise NotImplementedError

    def cold(self, target="data"):
        """Caches of this system emptied, restarted, page cache dropped. target: the peers'
        bucket the next workload reads ("data" or "tree")."""
        self.env.drop()

    def warm(self):
        """This system's own caches kept, page cache dropped."""
        self.env.drop()

    def stop(self):
        pass


class Local(System):
    name = "local"

    def path(self, what):
        return os.path.join(self.env.data, what)


class RawGet(System):
    name = "rawget"

    def url(self, rel):
        return f"{self.env.endpoint}/{self.env.names.buckets['data']}/{rel}"


class PGet(RawGet):
    """The link's practical limit for one file: PGET_STREAMS concurrent ranged GETs (curl -r),
    one contiguous range each, to /dev/null."""
    name = "pget"


class GetSha(RawGet):
    """The same GET as the raw GET, doing what a verifying cache must do with the bytes as they
    arrive, with the standard tools: curl | tee <file> | openssl dgst -sha256. Warp's cold read
    does this work and more (it also serves every byte through FUSE), so this row is the floor
    that warp's cold sequential read is measured against beside the raw GET."""
    name = "getsha"

    def file(self):
        return os.path.join(self.env.run, "getsha.out")

    def cold(self, target="data"):
        self.remove()
        super().cold(target)

    def remove(self):
        try:
            os.remove(self.file())
        except FileNotFoundError:
            pass


class MountSystem(System):
    root_sub = ""

    def __init__(self, env):
        super().__init__(env)
        self.mnt = os.path.join(env.run, "mnt", self.name)
        self.cache = os.path.join(env.run, "cache", self.name)

    def path(self, what):
        return os.path.join(self.mnt, self.root_sub, what)

    def argv(self):
        raise NotImplementedError

    target = "data"

    def ready(self):
        return procs.is_mounted(self.mnt) and os.path.exists(self.path("tree" if self.target == "tree" else "big"))

    def start(self):
        os.makedirs(self.cache, exist_ok=True)
        p = procs.start_mount(self.env.reg, self.name, self.argv(), self.mnt,
                              os.path.join(self.env.logs, f"{self.name}.log"), self.ready,
                              env=self.env.aws_env(), timeout=90)
        self.daemon_pid = self.fuse_pid(p)

    def fuse_pid(self, p):
        """The process serving the mount (its RSS and CPU are reported)."""
        return p.pid

    def stop(self):
        self.env.reg.stop(self.name)
        self.daemon_pid = None

    def clear_cache(self):
        if os.path.isdir(self.cache):
            shutil.rmtree(self.cache)
        os.makedirs(self.cache)

    def cold(self, target="data"):
        with self.env.clock.timed(f"  {self.name}: stop"):
            self.stop()
        with self.env.clock.timed(f"  {self.name}: clear cache"):
            self.clear_cache()
        self.env.drop()
        self.target = target
        with self.env.clock.timed(f"  {self.name}: start until mounted"):
            self.start()


class S3fs(MountSystem):
    name = "s3fs"

    def argv(self):
        pw = os.path.join(self.env.run, "s3fs.passwd")
        with open(pw, "w") as f:
            f.write(f"{ACCESS_KEY}:{SECRET_KEY}\n")
        os.chmod(pw, 0o600)
        # s3fs's defaults otherwise: no disk cache (use_cache off), in-memory stat cache.
        return ["s3fs", self.env.names.buckets[self.target], self.mnt, "-f",
                "-o", f"url={self.env.endpoint},use_path_request_style,passwd_file={pw},"
                      f"endpoint={REGION},ro"]


class Rclone(MountSystem):
    name = "rclone"

    def argv(self):
        conf = os.path.join(self.env.run, "rclone.conf")
        with open(conf, "w") as f:
            f.write(f"[bench]\ntype = s3\nprovider = Other\naccess_key_id = {ACCESS_KEY}\n"
                    f"secret_access_key = {SECRET_KEY}\nendpoint = {self.env.endpoint}\n"
                    f"region = {REGION}\nforce_path_style = true\n")
        return ["rclone", "mount", f"bench:{self.env.names.buckets[self.target]}", self.mnt, "--config", conf,
                "--read-only", "--vfs-cache-mode", self.env.args.rclone_cache_mode,
                "--cache-dir", self.cache]


