"""The bench's data: generated once per scale, deterministic, reused by later runs; the facts
(sizes, counts, checksums) the workloads check their results against; the peers' objects."""
import hashlib
import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import time

from .common import MIB, GIB, log

TENSOR_PICKS = 1000   # tensors read per tensor-* measurement
TENSOR_FLOATS = 256   # F32 values per tensor (1 KiB): one embedding

SCALES = {
    "quick": {"big_bytes": 256 * MIB, "table_shards": 4, "table_rows": 250_000,
              "images": 2000, "classes": 10, "tree_files": 20_000, "tensors": 20_000, "tensor_files": 4,
              "runs": 1, "timeout": 120},
    "full": {"big_bytes": 1 * GIB, "table_shards": 8, "table_rows": 500_000,
             "images": 5000, "classes": 10, "tree_files": 100_000, "tensors": 100_000, "tensor_files": 4,
             "runs": 3, "timeout": 150},
}


def _pool_worker_init():
    # The harness turns SIGTERM into KeyboardInterrupt; the pool's workers are ended with it.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _make_image(job):
    path, seed = job
    from PIL import Image  # imported in the worker: only data generation needs PIL
    import io
    r = random.Random(seed)
    target = r.randint(50_000, 150_000)
    # Noise JPEGs at quality 85 take about 0.6 byte a pixel: choose a 4:3 size near target.
    pixels = target / 0.6
    w = max(64, int((pixels * 4 / 3) ** 0.5))
    h = max(48, int(pixels / w))
    im = Image.frombytes("RGB", (w, h), r.randbytes(w * h * 3))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=85)
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def generate_data(cfg, data_dir, java_cmd):
    params = {k: cfg[k] for k in ("big_bytes", "table_shards", "table_rows", "images", "classes",
                                  "tree_files")}
    params["format"] = 1
    marker = os.path.join(data_dir, ".complete.json")
    try:
        with open(marker) as f:
            if json.load(f) == params:
                log(f"data: reusing {data_dir}")
                return
    except (OSError, ValueError):
        pass
    if os.path.isdir(data_dir):
        shutil.rmtree(data_dir)
    t0 = time.time()
    for d in ("big", "main", "images", "tree"):
        os.makedirs(os.path.join(data_dir, d))
    log(f"data: big file ({cfg['big_bytes'] // MIB} MiB Parquet, 4 random BIGINT columns, uncompressed)")
    subprocess.run(java_cmd + ["big", os.path.join(data_dir, "big", "big.parquet"),
                               str(cfg["big_bytes"])], check=True, stderr=subprocess.DEVNULL)
    log(f"data: table ({cfg['table_shards']} shards x {cfg['table_rows']} rows)")
    subprocess.run(java_cmd + ["table", os.path.join(data_dir, "main"), str(cfg["table_shards"]),
                               str(cfg["table_rows"])], check=True, stderr=subprocess.DEVNULL)
    log(f"data: {cfg['images']} JPEG images in {cfg['classes']} classes")
    jobs = []
    for i in range(cfg["images"]):
        cls = f"n{1440764 + 7919 * (i % cfg['classes']):08d}"
        d = os.path.join(data_dir, "images", cls)
        os.makedirs(d, exist_ok=True)
        jobs.append((os.path.join(d, f"{cls}_{i:06d}.JPEG"), 1_000_003 * i + 17))
    with multiprocessing.Pool(2, initializer=_pool_worker_init) as pool:
        pool.map(_make_image, jobs, chunksize=64)
    log(f"data: wide tree of {cfg['tree_files']} small files")
    r = random.Random(99)
    for i in range(cfg["tree_files"]):
        d = os.path.join(data_dir, "tree", f"d{i // 1000:03d}")
        if i % 1000 == 0:
            os.makedirs(d)
        with open(os.path.join(d, f"f{i:06d}.txt"), "wb") as f:
            f.write(r.randbytes(r.randint(64, 512)))
    with open(marker, "w") as f:
        json.dump(params, f)
    log(f"data: generated in {time.time() - t0:.0f}s")


def tensor_params(cfg):
    return {"tensors": cfg["tensors"], "tensor_files": cfg["tensor_files"], "floats": TENSOR_FLOATS,
            "format": 1}


def generate_tensors(cfg, data_dir):
    """A safetensors dataset (tensors/: dataset_manifest.json and part-NNNNN.safetensors, F32
    tensors "emb/<i>" of TENSOR_FLOATS values, written byte by byte as the format says) and, for
    the local disk's .npy path, each tensor saved by numpy.save under tensors-npy/<stem>.tensors/
    (where Warp's mount shows them). Kept apart from generate_data's marker, so adding it did
    not regenerate the rest; numpy is imported here only (the harness is otherwise stdlib)."""
    import numpy as np
    params = tensor_params(cfg)
    marker = os.path.join(data_dir, ".tensors-complete.json")
    try:
        with open(marker) as f:
            if json.load(f) == params:
                return
    except (OSError, ValueError):
        pass
    t0 = time.time()
    root, npy_root = os.path.join(data_dir, "tensors"), os.path.join(data_dir, "tensors-npy")
    for d in (root, npy_root):
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
    files, total = cfg["tensor_files"], cfg["tensors"]
    log(f"data: {total} F32 tensors of {TENSOR_FLOATS} values in {files} safetensors files, and as .npy files")
    shards = []
    per = -(-total // files)
    for f in range(files):
        first, last = f * per, min(total, (f + 1) * per)
        values = np.random.default_rng(1500 + f).standard_normal((last - first, TENSOR_FLOATS), dtype=np.float32)
        header = {"__metadata__": {"writer": "scripts/bench", "file": str(f)}}
        nbytes = TENSOR_FLOATS * 4
        for j in range(last - first):
            header[f"emb/{first + j}"] = {"dtype": "F32", "shape": [TENSOR_FLOATS],
                                          "data_offsets": [j * nbytes, (j + 1) * nbytes]}
        h = json.dumps(header).encode()
        h += b" " * (-len(h) % 8)
        name = f"part-{f:05d}.safetensors"
        with open(os.path.join(root, name), "wb") as out:
            out.write(len(h).to_bytes(8, "little") + h + values.astype("<f4").tobytes())
        shards.append({"file": name, "samples_count": last - first,
                       "bytes": os.path.getsize(os.path.join(root, name))})
        emb = os.path.join(npy_root, name[:-len(".safetensors")] + ".tensors", "emb")
        os.makedirs(emb)
        for j in range(last - first):
            np.save(os.path.join(emb, f"{first + j}.npy"), values[j])
    with open(os.path.join(root, "dataset_manifest.json"), "w") as m:
        json.dump({"format_version": "1.0", "total_samples": total,
                   "total_bytes": sum(s["bytes"] for s in shards), "shards": shards}, m)
    with open(marker, "w") as f:
        json.dump(params, f)
    log(f"data: tensors generated in {time.time() - t0:.0f}s")


def tensor_facts(cfg, data_dir):
    """The TENSOR_PICKS tensors every tensor-* measurement reads (seeded, random order, as
    [file, key]) and the checksum of their bytes (sum of CRC-32s mod 2^48), from the source
    safetensors files."""
    import zlib
    files, total = cfg["tensor_files"], cfg["tensors"]
    per = -(-total // files)
    picks = [[f"part-{i // per:05d}.safetensors", f"emb/{i}"]
             for i in random.Random(15).sample(range(total), min(TENSOR_PICKS, total))]
    crc = 0
    headers = {}
    for file, key in picks:
        path = os.path.join(data_dir, "tensors", file)
        if file not in headers:
            with open(path, "rb") as f:
                n = int.from_bytes(f.read(8), "little")
                headers[file] = (8 + n, json.loads(f.read(n)))
        base, header = headers[file]
        begin, end = header[key]["data_offsets"]
        with open(path, "rb") as f:
            f.seek(base + begin)
            crc = (crc + zlib.crc32(f.read(end - begin))) & 0xFFFFFFFFFFFF
    return {"tensor_picks": picks, "tensor_checksum": crc, "tensor_bytes": len(picks) * TENSOR_FLOATS * 4}


def data_facts(data_dir):
    """Sizes, counts and checksums the workloads check their results against (cached)."""
    import zlib
    cached = os.path.join(data_dir, ".facts.json")
    try:
        if os.path.getmtime(cached) >= os.path.getmtime(os.path.join(data_dir, ".complete.json")):
            with open(cached) as f:
                facts = json.load(f)
            if "big_sha256" in facts:  # written by an older bench without it: recomputed
                return facts
    except (OSError, ValueError):
        pass
    facts = {"big_bytes": os.path.getsize(os.path.join(data_dir, "big", "big.parquet"))}
    sha = hashlib.sha256()
    with open(os.path.join(data_dir, "big", "big.parquet"), "rb") as f:
        while chunk := f.read(MIB):
            sha.update(chunk)
    facts["big_sha256"] = sha.hexdigest()
    files = total = crc = 0
    for root, _dirs, names in os.walk(os.path.join(data_dir, "images")):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                b = f.read()
            files += 1
            total += len(b)
            crc = (crc + zlib.crc32(b)) & 0xFFFFFFFFFFFF
    facts.update(image_files=files, image_bytes=total, image_checksum=crc)
    classes = sorted(os.listdir(os.path.join(data_dir, "images")))
    last = sorted(os.listdir(os.path.join(data_dir, "images", classes[-1])))[-1]
    facts["ttfb_image"] = f"{classes[-1]}/{last}"
    facts["tree_files"] = sum(len(n) for _r, _d, n in os.walk(os.path.join(data_dir, "tree")))
    with open(cached, "w") as f:
        json.dump(facts, f)
    return facts


def seed_peer_objects(data_dir, s3_dir, buckets):
    """Places one object per file in the peers' buckets (buckets: "data" and "tree" -> bucket)
    for s3fs, rclone and the raw GET.

    Written straight into S3Proxy's filesystem backend (hard links plus the same xattrs
    S3Proxy stores on a PUT: content MD5, type, tier), which is what an upload would leave
    there, in seconds instead of the many minutes 100,000 PUTs take. GETs, HEADs and
    listings then behave exactly as for uploaded objects (ETag included).
    """
    t0 = time.time()
    n = 0
    for sub in ("big", "main", "images", "tree"):
        dst_root = os.path.join(s3_dir, buckets["tree" if sub == "tree" else "data"])
        src_root = os.path.join(data_dir, sub)
        for root, _dirs, names in os.walk(src_root):
            rel = os.path.relpath(root, data_dir)
            os.makedirs(os.path.join(dst_root, rel), exist_ok=True)
            for name in names:
                src = os.path.join(root, name)
                dst = os.path.join(dst_root, rel, name)
                if os.path.exists(dst) and os.path.samefile(src, dst):
                    continue
                if os.path.exists(dst):
                    os.remove(dst)
                os.link(src, dst)
                md5 = hashlib.md5()
                with open(src, "rb") as f:
                    for chunk in iter(lambda: f.read(4 * MIB), b""):
                        md5.update(chunk)
                os.setxattr(dst, "user.user.content-md5", md5.digest())
                os.setxattr(dst, "user.user.content-type", b"application/octet-stream")
                os.setxattr(dst, "user.user.storage-tier", b"STANDARD")
                n += 1
    log(f"peers: {n} objects placed in s3://{buckets['data']}/ and s3://{buckets['tree']}/ "
        f"in {time.time() - t0:.0f}s")
