"""scripts/bench: Warp against s3fs, rclone mount, a raw GET (alone, and verified and written to a
file by standard tools) and the local disk, in one run.

Run through scripts/bench (which finds a JDK, fetches S3Proxy and DuckDB and builds warp.jar);
this file is its entry point: the harness is the package warpbench/ beside it (its map is in
warpbench/__init__.py), standard library only (Debian's /usr/bin/python3).
See docs/bench.md for what each workload means and how to read the table.

Everything it starts (S3Proxy, warpd, s3fs, rclone, the DuckDB helper) and every mount it makes
is recorded in <workdir>/run/state.json and torn down on exit, on SIGINT/SIGTERM, and by
`bench.py --cleanup` (which scripts/bench's EXIT trap runs in case this process died hard).
"""
import os
import sys

# The harness is the package beside this file (warpbench/); this file is its entry point.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from warpbench.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
