"""One raw-byte pass of torchvision ImageFolder + DataLoader over a folder tree.

Run by scripts/bench with Debian's /usr/bin/python3. The loader returns the file's bytes
(no JPEG decode), so the pass measures the file system, not the CPU. Prints one JSON line:
files, bytes, seconds (dataset scan + full pass, imports excluded) and an order-independent
checksum of every file's bytes, so a wrong byte through a mount is caught.

usage: imagefolder_pass.py ROOT [--shuffle] [--plan SOCKET] [--workers N] [--batch N]
       imagefolder_pass.py --serve    reads "ROOT<TAB>0|1[<TAB>SOCKET]" lines (1 = shuffled; with
                                      SOCKET, warpd is told the order first), answers one JSON
                                      line each; torch is imported once for the whole bench

--plan SOCKET: the shuffled order (the same as --shuffle's) is handed to warpd on its control
socket (prefetch.order, docs/control.md) before the first read, as the loader `warpctl init`
writes does (warpd_order.tell_warpd); the time this takes is part of the pass.
"""
import sys
import argparse
import json
import os
import time
import zlib

import torch
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

from warpd_order import tell_warpd


def raw_loader(path):
    with open(path, "rb") as f:
        return f.read()


def collate(batch):
    # Sum the sizes and CRCs in the worker so only small numbers cross the process boundary.
    n = 0
    crc = 0
    for data, _label in batch:
        n += len(data)
        crc = (crc + zlib.crc32(data)) & 0xFFFFFFFFFFFF
    return len(batch), n, crc


def one_pass(root, shuffle, workers, batch, plan_socket=None):
    t0 = time.perf_counter()
    ds = ImageFolder(root, loader=raw_loader)
    gen = torch.Generator()
    gen.manual_seed(1234)
    if plan_socket:
        # The order DataLoader(shuffle=True, generator=gen) would read in, handed to warpd first.
        order = list(torch.utils.data.RandomSampler(ds, generator=gen))
        tell_warpd(plan_socket, root, [os.path.relpath(ds.samples[i][0], root) for i in order])
        dl = DataLoader(ds, batch_size=batch, sampler=order, num_workers=workers, collate_fn=collate)
    else:
        dl = DataLoader(ds, batch_size=batch, shuffle=shuffle, generator=gen,
                        num_workers=workers, collate_fn=collate)
    files = total = crc = 0
    for n, b, c in dl:
        files += n
        total += b
        crc = (crc + c) & 0xFFFFFFFFFFFF
    secs = time.perf_counter() - t0
    return {"files": files, "bytes": total, "seconds": secs, "checksum": crc}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?")
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--plan", metavar="SOCKET")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--serve", action="store_true")
    args = ap.parse_args()
    if not args.serve:
        print(json.dumps(one_pass(args.root, args.shuffle or bool(args.plan), args.workers, args.batch, args.plan)))
        return
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        root, shuffle, *plan = line.split("\t")
        try:
            out = one_pass(root, shuffle == "1", args.workers, args.batch, plan[0] if plan else None)
        except Exception as e:  # reported to the harness as this measurement's failure
            out = {"error": f"{type(e).__name__}: {e}"[:300]}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
