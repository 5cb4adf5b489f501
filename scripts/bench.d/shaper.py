#!/usr/bin/env python3
"""A TCP proxy that makes loopback behave like a real object store's network.

    shaper.py --listen 127.0.0.1:9100 --upstream 127.0.0.1:9000 --rtt-ms 20 --rate-mbps 25
              [--link-rate MBPS] [--stats FILE]

Every connection to --listen is relayed to --upstream, with these effects:

- latency: everything the client sends reaches the server --rtt-ms later (a delay line: each
  chunk is held until its own arrival time plus the RTT, so a long upload keeps its rate and
  only gains the RTT once); a request therefore waits one RTT before the server sees it, as an
  S3 request does before its first byte comes back;
- bandwidth: what the server sends back is paced to --rate-mbps (MB/s, 10^6 bytes) per
  connection (a token bucket with 256 KiB of burst: 10 ms at 25 MB/s), the way one S3 connection delivers about
  85-90 MB/s while many connections together deliver much more;
- the link (--link-rate, off unless given): what the server sends back to ALL connections
  together is capped at --link-rate MB/s (one token bucket shared by every connection, 256 KiB
  of burst, on top of each connection's own pace), the way many nodes share one uplink, WAN
  path or per-prefix limit to the store: more connections then share the rate instead of
  adding to it.

`tc netem` is not in every kernel (tbf/htb are not enough for per-connection pacing), hence a
small userspace proxy. It uses one thread (asyncio); --stats FILE gets a JSON line with
connections, bytes each way, the S3 requests seen (GET, HEAD, LIST, PUT, POST, DELETE: read from
the request lines the clients send), the seconds connections waited for the shared link
(link_wait_s, summed over them) and this process's CPU seconds when it exits (SIGTERM/SIGINT)
and every 0.2 s while anything changed.
"""
import argparse
import asyncio
import json
import os
import re
import signal
import time

CHUNK = 256 * 1024
BURST = 256 * 1024
QUANTUM = 64 * 1024  # smallest paced write: 2.6 ms at 25 MB/s
# An HTTP/1.1 request line at the start of the stream or of a line: "GET /bucket/key?x HTTP/1.1".
REQUEST_LINE = re.compile(rb"(?:^|\r\n)(GET|HEAD|PUT|POST|DELETE) (\S+) HTTP/1\.[01]\r\n")
KINDS = ("GET", "HEAD", "LIST", "PUT", "POST", "DELETE")


def request_kind(method, target):
    """LIST for a GET of a bucket (path-style: /bucket or /bucket/?list-type=2...), else the method."""
    if method != b"GET":
        return method.decode()
    path, _, query = target.partition(b"?")
    if path.rstrip(b"/").count(b"/") <= 1 or b"list-type=" in query or b"prefix=" in query:
        return "LIST"
    return "GET"


class Stats:
    def __init__(self, path):
        self.path = path
        self.link_wait_s = 0.0  # seconds connections spent waiting for the shared link
        self.connections = 0
        self.open = 0
        self.bytes_up = 0
        self.bytes_down = 0
        self.requests = dict.fromkeys(KINDS, 0)
        self.written = None

    def write(self):
        if not self.path:
            return
        t = os.times()
        data = {"connections": self.connections, "open": self.open, "bytes_up": self.bytes_up,
                "bytes_down": self.bytes_down, "requests": dict(self.requests),
                "link_wait_s": round(self.link_wait_s, 1), "cpu_seconds": round(t.user + t.system, 3),
                "pid": os.getpid()}
        moved = {k: v for k, v in data.items() if k != "cpu_seconds"}
        if moved == self.written:
            return
        self.written = moved
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write(json.dumps(data) + "\n")
        os.replace(tmp, self.path)


class Link:
    """The rate of the link all connections share: a token bucket that may go into debt. Each
    connection reserves the bytes it is about to send and waits out its share of the debt, so
    reservations are served in the order they were made (a later one waits behind an earlier
    one) and the link as a whole never delivers more than `rate` bytes per second after its
    first `burst` bytes. The clock is injected (tests drive it)."""

    def __init__(self, rate, burst=BURST, clock=time.monotonic):
        if rate <= 0:
            raise ValueError("a link's rate must be > 0")
        self.rate = float(rate)
        self.burst = float(burst)
        self.clock = clock
        self.tokens = float(burst)
        self.last = clock()

    def reserve(self, n):
        """Takes n bytes from the link; returns the seconds to wait before sending them (0.0 when
        the link has them now)."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        self.tokens -= n
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


async def delay_line(reader, writer, rtt, stats):
    """Client -> server: each chunk leaves rtt seconds after it arrived. Request lines are
    counted as they arrive (with the end of the previous chunk, so a line split across two
    chunks is seen once)."""
    queue = asyncio.Queue()

    async def pump_in():
        tail = b""
        try:
            while True:
                data = await reader.read(CHUNK)
                seen = tail + data
                for m in REQUEST_LINE.finditer(seen):
                    if m.end() > len(tail):
                        stats.requests[request_kind(m.group(1), m.group(2))] += 1
                tail = seen[-2048:]
                queue.put_nowait((time.monotonic() + rtt, data))
                if not data:
                    return
        except (ConnectionError, OSError):
            queue.put_nowait((time.monotonic(), b""))

    feeder = asyncio.ensure_future(pump_in())
    try:
        while True:
            due, data = await queue.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            stats.bytes_up += len(data)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        return
    finally:
        feeder.cancel()


async def paced(reader, writer, rate, stats, link=None):
    """Server -> client at `rate` bytes per second (token bucket, BURST bytes of burst), and
    within the shared link's rate when there is one."""
    tokens = float(BURST)
    last = time.monotonic()
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            view = memoryview(data)
            while view:
                now = time.monotonic()
                tokens = min(float(BURST), tokens + (now - last) * rate)
                last = now
                # Write in quanta of QUANTUM bytes (or what is left): waking up for every few
                # tokens cost the shaper a core at 16 connections; the pace is the same.
                want = min(len(view), QUANTUM)
                if tokens < want:
                    await asyncio.sleep((want - tokens) / rate)
                    continue
                n = min(len(view), int(tokens))
                if link is not None:
                    wait = link.reserve(n)
                    if wait > 0:
                        stats.link_wait_s += wait
                        await asyncio.sleep(wait)
                writer.write(view[:n])
                tokens -= n
                stats.bytes_down += n
                view = view[n:]
                await writer.drain()
    except (ConnectionError, OSError):
        return


async def handle(client_reader, client_writer, args, stats, link=None):
    host, port = args.upstream.rsplit(":", 1)
    try:
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
    except OSError:
        client_writer.close()
        return
    stats.connections += 1
    stats.open += 1
    try:
        await asyncio.gather(delay_line(client_reader, up_writer, args.rtt_ms / 1000.0, stats),
                             paced(up_reader, client_writer, args.rate_mbps * 1e6, stats, link))
    finally:
        stats.open -= 1
        for w in (up_writer, client_writer):
            try:
                w.close()
            except OSError:
                pass


async def main_async(args):
    stats = Stats(args.stats)
    link = Link(args.link_rate * 1e6) if args.link_rate else None
    host, port = args.listen.rsplit(":", 1)
    server = await asyncio.start_server(lambda r, w: handle(r, w, args, stats, link), host, int(port),
                                        reuse_address=True, backlog=512)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async def report():
        while True:
            stats.write()
            await asyncio.sleep(0.2)

    reporter = asyncio.ensure_future(report())
    print("shaper: %s -> %s, rtt %g ms, %g MB/s per connection, %s" % (
        args.listen, args.upstream, args.rtt_ms, args.rate_mbps,
        "link %g MB/s for all" % args.link_rate if args.link_rate else "no link cap"), flush=True)
    async with server:
        await stop.wait()
    reporter.cancel()
    stats.written = None  # the last word, with this process's CPU seconds up to now
    stats.write()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", required=True, help="HOST:PORT to accept connections on")
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the real server")
    ap.add_argument("--rtt-ms", type=float, default=20.0, help="added round-trip time per request (default 20)")
    ap.add_argument("--rate-mbps", type=float, default=25.0, help="MB/s per connection, server to client (default 25)")
    ap.add_argument("--link-rate", type=float, default=0.0,
                    help="MB/s server to client for all connections together (default 0: no cap)")
    ap.add_argument("--stats", help="write counters as JSON to this file every 5 s and at exit")
    args = ap.parse_args()
    if args.rtt_ms < 0 or args.rate_mbps <= 0 or args.link_rate < 0:
        ap.error("--rtt-ms must be >= 0, --rate-mbps > 0 and --link-rate >= 0 (0: no cap)")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
