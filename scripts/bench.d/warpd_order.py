"""Telling warpd the order a pass will read files in (prefetch.order on its control socket,
docs/control.md), for the bench's helpers: imagefolder_pass.py (img-planned) and
tensor_pass.py (tensor-npy-planned). Standard library only: each helper imports its own
heavy library (torch, numpy), not the other's.
"""
import json
import socket


def tell_warpd(sock_path, root, paths):
    """prefetch.order in parts of at most 512 KiB of paths, each sent after the previous answer."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(120)
        s.connect(sock_path)
        f = s.makefile("rwb")
        part, i = 0, 0
        while True:
            batch, size = [], 0
            while i < len(paths) and (not batch or size + len(paths[i]) + 8 <= 512 * 1024):
                batch.append(paths[i])
                size += len(paths[i]) + 8
                i += 1
            more = i < len(paths)
            f.write((json.dumps({"id": part, "op": "prefetch.order", "args": {
                "plan": "bench", "root": root, "paths": batch, "part": part, "more": more}}) + "\n").encode())
            f.flush()
            answer = json.loads(f.readline())
            if not answer.get("ok"):
                raise RuntimeError("prefetch.order: %s" % answer.get("error"))
            if not more:
                return answer["result"]
            part += 1
