"""A fresh install from python/ in a clean virtual environment, without network, reads a table."""

import os
import subprocess
import sys

from conftest import DATASET, REPO


def test_fresh_install_in_a_clean_venv(warp, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index",
                          os.path.join(REPO, "python")], capture_output=True, timeout=300)
    assert pip.returncode == 0, pip.stdout.decode() + pip.stderr.decode()
    code = ("import warpdata as wd, sys; ds = wd.dataset(%r); t = ds.table('main');"
            " n = sum(len(b['id']) for b in t.batch_dicts(50, columns=['id']));"
            " print(wd.__file__, n)" % DATASET)
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, timeout=300,
                         cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=""))
    assert out.returncode == 0, out.stderr.decode()
    where, n = out.stdout.decode().split()
    assert where.startswith(str(venv)), "imported from the venv, not the source tree"
    assert int(n) == 160
