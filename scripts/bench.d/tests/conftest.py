"""Unit tests of the bench harness (warpbench): pure logic and process handling, no FUSE, no
server, no JVM. Run by scripts/test (with the Python package's tests), or alone:
  cd scripts/bench.d && /usr/bin/python3 -m pytest -q -p no:cacheprovider tests
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
