"""shaper.py's shared link (--link-rate): one token bucket for every connection, on a driven clock,
and the real proxy relaying to several connections at once under it."""
import asyncio
import os
import types

import pytest

import shaper

MB = 1_000_000


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_the_link_lends_its_burst_then_makes_each_reservation_wait_for_its_bytes():
    clock = Clock()
    link = shaper.Link(1 * MB, burst=256 * 1024, clock=clock)
    assert link.reserve(256 * 1024) == 0.0
    assert link.reserve(MB) == pytest.approx(1.0)
    # a second reservation at the same moment queues behind the first: the link is shared
    assert link.reserve(MB) == pytest.approx(2.0)
    clock.t += 2.0  # both paid off: the next one waits for its own bytes only
    assert link.reserve(MB // 2) == pytest.approx(0.5)
    clock.t += 10  # idle time refills the burst, no more
    assert link.reserve(256 * 1024) == 0.0
    assert link.reserve(MB) == pytest.approx(1.0)


def test_connections_taking_turns_on_the_link_get_its_rate_together_not_each():
    clock = Clock()
    rate, quantum, burst = 4 * MB, 64 * 1024, 256 * 1024
    link = shaper.Link(rate, burst=burst, clock=clock)
    start = clock.t
    due = [start] * 8  # 8 connections, each sends a quantum when its last one has left
    sent = 0
    for _ in range(400):
        i = min(range(len(due)), key=due.__getitem__)
        clock.t = due[i]
        due[i] = clock.t + link.reserve(quantum)
        sent += quantum
        # what left by the time this quantum leaves is never more than the burst plus the rate
        assert sent <= burst + (due[i] - start) * rate + 1e-6
    elapsed = max(due) - start
    assert sent / elapsed == pytest.approx(rate, rel=0.05)


def test_a_link_without_rate_is_refused():
    with pytest.raises(ValueError):
        shaper.Link(0)


def relay(n_conns, size, link_rate_mbps):
    """Runs an upstream that sends `size` bytes on each connection, the shaper in front of it (no
    RTT, 200 MB/s per connection) and n_conns clients at once; returns (what each client got,
    seconds from the first connect to the last byte, the shaper's stats)."""
    payload = bytes(range(256)) * (size // 256)

    async def upstream(reader, writer):
        writer.write(payload)
        await writer.drain()
        writer.close()

    async def main():
        up = await asyncio.start_server(upstream, "127.0.0.1", 0)
        up_port = up.sockets[0].getsockname()[1]
        args = types.SimpleNamespace(upstream=f"127.0.0.1:{up_port}", rtt_ms=0.0, rate_mbps=200.0)
        stats = shaper.Stats(None)
        link = shaper.Link(link_rate_mbps * MB) if link_rate_mbps else None
        sh = await asyncio.start_server(lambda r, w: shaper.handle(r, w, args, stats, link), "127.0.0.1", 0)
        port = sh.sockets[0].getsockname()[1]

        async def client():
            r, w = await asyncio.open_connection("127.0.0.1", port)
            got = await r.read(-1)
            w.close()
            return got

        t0 = asyncio.get_running_loop().time()
        got = await asyncio.wait_for(asyncio.gather(*(client() for _ in range(n_conns))), 60)
        elapsed = asyncio.get_running_loop().time() - t0
        sh.close()
        up.close()
        return got, elapsed, stats

    got, elapsed, stats = asyncio.run(main())
    assert all(g == payload for g in got)  # every byte relayed, in order
    return got, elapsed, stats


def test_four_connections_under_a_link_cap_share_its_rate():
    size = 512 * 1024
    _, elapsed, stats = relay(4, size, link_rate_mbps=4)
    assert stats.bytes_down == 4 * size
    # 2 MiB at 4 MB/s after a 256 KiB burst: at least 0.46 s, where their own pace (200 MB/s
    # each) would let the four finish in about 3 ms. A lower bound: a loaded machine cannot fail it.
    assert elapsed >= (4 * size - shaper.BURST) / (4 * MB) * 0.95
    assert stats.link_wait_s > 0


def test_without_a_link_cap_nobody_waits_for_the_link():
    _, _, stats = relay(4, 512 * 1024, link_rate_mbps=0)
    assert stats.bytes_down == 4 * 512 * 1024 and stats.link_wait_s == 0
