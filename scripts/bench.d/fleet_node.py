#!/usr/bin/env python3
"""One node of `scripts/bench --fleet`: reads a dataset through its own mount, as a training job's
first epoch would, and checks every byte against the source.

    fleet_node.py --root MOUNT/DATASET --expected FILE --source DATA_DIR

Reads the images in ImageFolder's order (classes sorted, then file names sorted, as torchvision's
make_dataset lists them: the directory listing is part of the pass), then the big file, each
with plain reads of 1 MiB. Every file's SHA-256 is compared with the source's (--expected, a JSON
object {"images": {relpath: [size, sha256]}, "big": [size, sha256]}); a file that differs is
compared byte by byte with the source file under --source, so the count of wrong bytes is exact.

It prints {"ready": true} once loaded, waits for one line on stdin (the harness says "go" to every
node at the same moment), then prints one JSON line: time.monotonic() at the start, after the
images and at the end (CLOCK_MONOTONIC: comparable between the nodes of one machine), files and
bytes read, wrong files and bytes, read errors. Standard library only.
"""
import argparse
import glob
import hashlib
import json
import os
import sys
import time

CHUNK = 1 << 20


def read_file(path):
    """(bytes read, sha256 hex) of a whole file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    n = 0
    buf = bytearray(CHUNK)
    with open(path, "rb", buffering=0) as f:
        while True:
            k = f.readinto(buf)
            if not k:
                break
            h.update(memoryview(buf)[:k])
            n += k
    return n, h.hexdigest()


def wrong_bytes(path, source):
    """Bytes of path that differ from source (positions that differ, plus the difference in length)."""
    wrong = 0
    with open(path, "rb") as a, open(source, "rb") as b:
        while True:
            x, y = a.read(CHUNK), b.read(CHUNK)
            if not x and not y:
                return wrong
            if x == y:
                continue
            wrong += sum(1 for i in range(min(len(x), len(y))) if x[i] != y[i]) + abs(len(x) - len(y))


def image_order(root):
    """The images under root as ImageFolder lists them: relpaths, classes sorted, files sorted."""
    out = []
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
    for c in classes:
        for r, _dirs, names in sorted(os.walk(os.path.join(root, c), followlinks=True)):
            for n in sorted(names):
                out.append(os.path.relpath(os.path.join(r, n), root))
    return out


def one_pass(root, expected, source):
    res = {"files": 0, "bytes": 0, "wrong_files": 0, "wrong_bytes": 0, "errors": 0, "error_samples": []}

    def check(path, src, size, sha):
        try:
            n, got = read_file(path)
        except OSError as e:
            res["errors"] += 1
            if len(res["error_samples"]) < 3:
                res["error_samples"].append(f"{path}: {e}")
            return
        res["files"] += 1
        res["bytes"] += n
        if got != sha or n != size:
            res["wrong_files"] += 1
            try:
                res["wrong_bytes"] += wrong_bytes(path, src)
            except OSError:
                res["wrong_bytes"] += max(n, size)

    res["t_start"] = time.monotonic()
    images = expected["images"]
    listed = image_order(os.path.join(root, "images"))
    for rel in listed:
        if rel not in images:
            res["errors"] += 1
            if len(res["error_samples"]) < 3:
                res["error_samples"].append(f"unexpected file images/{rel}")
            continue
        size, sha = images[rel]
        check(os.path.join(root, "images", rel), os.path.join(source, "images", rel), size, sha)
    missing = len(images) - len(set(listed) & set(images))
    if missing:
        res["errors"] += missing
        res["error_samples"].append(f"{missing} images not listed under {root}/images")
    res["image_files"] = res["files"]
    res["image_bytes"] = res["bytes"]
    res["t_images"] = time.monotonic()
    # Warp shows the big table's file under its own name: the one .parquet in big/.
    big = sorted(glob.glob(os.path.join(root, "big", "*.parquet")))
    if not big:
        res["errors"] += 1
        res["error_samples"].append(f"no big/*.parquet under {root}")
    else:
        size, sha = expected["big"]
        check(big[0], os.path.join(source, "big", "big.parquet"), size, sha)
    res["t_end"] = time.monotonic()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="the dataset's directory in this node's mount")
    ap.add_argument("--expected", required=True, help="JSON file of sizes and SHA-256s of the source")
    ap.add_argument("--source", required=True, help="the source data directory (images/, big/big.parquet)")
    args = ap.parse_args()
    with open(args.expected) as f:
        expected = json.load(f)
    print(json.dumps({"ready": True}), flush=True)
    if not sys.stdin.readline():
        return
    try:
        out = one_pass(args.root, expected, args.source)
    except Exception as e:  # reported to the harness as this node's failure
        out = {"error": f"{type(e).__name__}: {e}"[:300]}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
