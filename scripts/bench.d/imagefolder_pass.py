"""One raw-byte pass of torchvision ImageFolder + DataLoader over a folder tree.

Run by scripts/bench with Debian's /usr/bin/python3. The loader returns the file's bytes
(no JPEG decode), so the pass measures the file system, not the CPU. Prints one JSON line:
files, bytes, seconds (dataset scan + full pass, imports excluded) and an order-independent
checksum of every file's bytes, so a wrong byte through a mount is caught.

usage: imagefolder_pass.py ROOT [--shuffle] [--workers N] [--batch N]
       imagefolder_pass.py --serve    reads "ROOT<TAB>0|1" lines (1 = shuffled), answers one
                                      JSON line each; torch is imported once for the whole bench
"""
import sys
import argparse
import json
import time
import zlib

import torch
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder


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


def one_pass(root, shuffle, workers, batch):
    t0 = time.perf_counter()
    ds = ImageFolder(root, loader=raw_loader)
    gen = torch.Generator()
    gen.manual_seed(1234)
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
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--serve", action="store_true")
    args = ap.parse_args()
    if not args.serve:
        print(json.dumps(one_pass(args.root, args.shuffle, args.workers, args.batch)))
        return
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        root, shuffle = line.split("\t")
        try:
            out = one_pass(root, shuffle == "1", args.workers, args.batch)
        except Exception as e:  # reported to the harness as this measurement's failure
            out = {"error": f"{type(e).__name__}: {e}"[:300]}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
