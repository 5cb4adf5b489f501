"""Env: what every system and workload of one run shares: directories, names, the registry of
processes, the clock, the S3 server and, under --network, the shaper in front of it."""
import json
import os
import socket
import statistics
import subprocess
import time

from . import procs
from .common import HERE, REPO, CREDS, BenchError, Clock, Dropper, Names, log


class Env:
    """Everything the systems share: directories, the server, the registry."""

    def __init__(self, args, cfg):
        self.args = args
        self.cfg = cfg
        self.names = Names(args.scale)
        self.work = os.path.abspath(args.workdir)
        self.data = os.path.join(self.work, f"data-{args.scale}")
        self.s3_dir = os.path.join(self.work, "s3")
        self.run = os.path.join(self.work, "run")
        self.logs = os.path.join(self.run, "logs")
        self.java = os.environ.get("BENCH_JAVA", "java")
        self.tools = os.path.join(self.work, "tools")
        self.warp_jar = os.environ.get("BENCH_WARP_JAR", os.path.join(REPO, "daemon", "target", "warp.jar"))
        self.reg = procs.Registry(os.path.join(self.run, "state.json"))
        self.clock = Clock()
        self.drop = Dropper(self.clock)
        self.port = None
        self.endpoint = None         # what the systems read through (the shaper under --network)
        self.direct_endpoint = None  # S3Proxy itself: setup (buckets, seeding, publishing) only
        self.network = args.shape    # {"rtt_ms", "rate_mbps"[, "link_mbps"]} when shaped, else None
        self.shaper_stats = os.path.join(self.run, "shaper.json")

    @property
    def dataset(self):
        return self.names.dataset

    def sql_cmd(self):
        return [self.java, "--enable-native-access=ALL-UNNAMED", "-Xmx1g",
                "-cp", os.path.join(self.tools, "duckdb.jar") + ":" + os.path.join(self.tools, "classes"),
                "BenchSql"]

    def aws_env(self, **extra):
        return CREDS.env(**extra)

    def line_server(self, name, argv):
        return procs.LineServer(self.reg, self.logs, name, argv)

    def start_server(self):
        self.port = self.args.port or procs.free_port()
        self.endpoint = procs.start_s3proxy(self.reg, CREDS, java=self.java,
                                            jar=os.path.join(self.tools, "s3proxy.jar"), basedir=self.s3_dir,
                                            port=self.port, run_dir=self.run, log_dir=self.logs,
                                            buckets=self.names.all_buckets(), heap="1g")
        log(f"server: S3Proxy on {self.endpoint}, backend {self.s3_dir}")
        self.direct_endpoint = self.endpoint
        if self.network:
            self.start_shaper()

    def start_shaper(self):
        """Every system reaches S3Proxy through shaper.py: each request delayed by the RTT, each
        connection paced at the rate, all of them together within the link's rate when there is
        one, and the requests counted (GET/HEAD/LIST)."""
        port = procs.free_port()
        n = self.network
        try:
            os.remove(self.shaper_stats)
        except FileNotFoundError:
            pass
        self.reg.start("shaper", ["/usr/bin/python3", os.path.join(HERE, "shaper.py"),
                                  "--listen", f"127.0.0.1:{port}", "--upstream", f"127.0.0.1:{self.port}",
                                  "--rtt-ms", str(n["rtt_ms"]), "--rate-mbps", str(n["rate_mbps"]),
                                  "--link-rate", str(n.get("link_mbps") or 0),
                                  "--stats", self.shaper_stats], os.path.join(self.logs, "shaper.log"))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise BenchError(f"shaper.py did not listen within 20s; see {self.logs}/shaper.log")
        self.endpoint = f"http://127.0.0.1:{port}"
        link = f"{n['link_mbps']:g} MB/s for all connections together" if n.get("link_mbps") else "no link cap"
        log(f"network: shaper on {self.endpoint}: RTT {n['rtt_ms']:g} ms, {n['rate_mbps']:g} MB/s per connection, "
            f"{link}")

    def shaper(self):
        """The shaper's counters (requests by kind, bytes, its CPU seconds); None when unshaped."""
        if not self.network:
            return None
        try:
            with open(self.shaper_stats) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def requests_settled(self):
        """The shaper's request counts once they stopped moving (read-ahead a client started may
        still be arriving when it is done; it belongs to its measurement)."""
        prev = (self.shaper() or {}).get("requests")
        if prev is None:
            return None
        deadline = time.monotonic() + 5
        while True:
            time.sleep(0.5)
            now = (self.shaper() or {}).get("requests", {})
            if now == prev or time.monotonic() > deadline:
                return now
            prev = now

    def sanity(self, rel):
        """What the profile delivers, measured through it: time to first byte of a small object
        (median of 5 GETs on new connections) and one GET's rate on the big object."""
        ttfb = []
        for _ in range(5):
            r = subprocess.run(CREDS.curl_args() + ["-o", "/dev/null", "-w", "%{time_starttransfer}",
                                                    f"{self.endpoint}/{self.names.buckets['data']}/{rel}"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                ttfb.append(float(r.stdout) * 1000)
        return {"ttfb_ms": round(statistics.median(ttfb), 1) if ttfb else None,
                "ttfb_ms_all": [round(x, 1) for x in ttfb]}
