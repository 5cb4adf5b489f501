"""pip install ./python (standard library only; no network needed)."""
from setuptools import setup

setup(
    name="warpdata",
    version="0.1.0",
    description="Warp datasets from Python: versioned tables and artifacts read through warpd",
    packages=["warpdata"],
    python_requires=">=3.9",
    extras_require={"arrow": ["pyarrow"], "torch": ["torch"], "images": ["pillow", "numpy"],
                    "audio": ["soundfile", "numpy"]},
)
