"""Random reads of single tensors of a safetensors dataset, two ways, for scripts/bench.

Run by scripts/bench with Debian's /usr/bin/python3 (numpy from python3-numpy). Either way the
same tensors are read in the same order, each one's bytes CRC-ed and its values summed:

- npy:  numpy.load(<npy root>/<file stem>.tensors/<key>.npy, mmap_mode="r") per tensor: the
        way Warp's tensor folders are read (on the local disk, the same files written by
        numpy.save);
- mmap: one numpy.memmap of each whole .safetensors file, opened on its first tensor, the
        header parsed from the map, each tensor a view at its data_offsets.

With "plan_socket" in a request (tensor-npy-planned, npy only), the pass first tells warpd on
that control socket the order of the .npy files it will read (prefetch.order, root npy_root,
the paths npy_paths() gives, relative to it: warpd_order.tell_warpd, as imagefolder_pass.py's
img-planned does), then reads them as above; the hand-over is inside the timing.

--serve reads one JSON request a line ({"mode", "st_root", "npy_root", "picks": [[file, key],
...], optionally "plan_socket"}) and answers one JSON line each (tensors, bytes, seconds,
checksum, sum): numpy is imported once for the whole bench, so interpreter start-up never
lands inside a timing. The checksum is the sum of the tensors' CRC-32s mod 2^48 (as
imagefolder_pass.py's), which the harness compares with the one it computed from the source
files.
"""
import json
import os
import struct
import sys
import time
import zlib

import numpy as np

from warpd_order import tell_warpd

DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "U8": "|u1", "I8": "|i1", "U16": "<u2",
          "I16": "<i2", "U32": "<u4", "I32": "<i4", "U64": "<u8", "I64": "<i8", "BOOL": "|b1"}


def npy_paths(picks):
    """The .npy file of each pick ([file, key]), relative to the npy root, in the picks' order:
    <file stem>.tensors/<key>.npy. What read_npy opens and what a planned pass tells warpd."""
    return [file[:-len(".safetensors")] + ".tensors/" + key + ".npy" for file, key in picks]


def read_npy(picks, st_root, npy_root):
    n = total = crc = 0
    s = 0.0
    for rel in npy_paths(picks):
        a = np.load(os.path.join(npy_root, rel), mmap_mode="r")
        crc = (crc + zlib.crc32(a)) & 0xFFFFFFFFFFFF
        s += float(a.sum(dtype=np.float64))
        n += 1
        total += a.nbytes
    return n, total, crc, s


def read_mmap(picks, st_root, npy_root):
    maps = {}  # file -> (memmap of the whole file, start of the byte buffer, header)
    n = total = crc = 0
    s = 0.0
    for file, key in picks:
        m = maps.get(file)
        if m is None:
            mm = np.memmap(os.path.join(st_root, file), dtype=np.uint8, mode="r")
            hlen = struct.unpack("<Q", mm[:8].tobytes())[0]
            header = json.loads(mm[8:8 + hlen].tobytes())
            m = maps[file] = (mm, 8 + hlen, header)
        mm, base, header = m
        t = header[key]
        begin, end = t["data_offsets"]
        a = mm[base + begin:base + end].view(DTYPES[t["dtype"]]).reshape(t["shape"])
        crc = (crc + zlib.crc32(a)) & 0xFFFFFFFFFFFF
        s += float(a.sum(dtype=np.float64))
        n += 1
        total += a.nbytes
    return n, total, crc, s


def one_pass(req):
    fn = {"npy": read_npy, "mmap": read_mmap}[req["mode"]]
    plan = req.get("plan_socket")
    if plan and fn is not read_npy:
        raise ValueError("plan_socket: a planned pass reads .npy files (mode npy)")
    t0 = time.perf_counter()
    if plan:
        tell_warpd(plan, req["npy_root"], npy_paths(req["picks"]))
    n, total, crc, s = fn(req["picks"], req["st_root"], req["npy_root"])
    secs = time.perf_counter() - t0
    return {"tensors": n, "bytes": total, "seconds": secs, "checksum": crc, "sum": s}


def main():
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: tensor_pass.py --serve   (requests on stdin, one JSON line each)")
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = one_pass(json.loads(line))
        except Exception as e:  # reported to the harness as this measurement's failure
            out = {"error": f"{type(e).__name__}: {e}"[:300]}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
