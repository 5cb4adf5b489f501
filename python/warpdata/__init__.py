"""warpdata: Warp datasets from Python.

    import warpdata as wd
    ds = wd.dataset("workspace/name")            # pinned to one version (also @hash, @tag, @branch)
    table = ds.table("main")
    for batch in table.batch_dicts(1024, shard="auto"):
        ...                                       # {column: [values]}; bound columns are refs

Rows are read by warpd (DuckDB over the version's Parquet shards, through its cache), found via
$WARP_SOCKET or the default socket; artifact members through the Warp mount. Standard library only;
numpy, PIL, soundfile, torch, pyarrow, pandas and polars are used when importable.
"""

from .client import Client, default_socket
from .dataset import Dataset, DatasetBuilder, Table, dataset, member_batches, publish, resolve_shard
from .errors import (AccessDeniedError, ArtifactNotFoundError, AuthenticationError, BadRequestError,
                     ColumnNotFoundError, DaemonUnavailableError, DatasetNotFoundError, FormatTooNewError, InvalidFilterError,
                     InvalidInputError, InvalidSafetensorsError, InvalidViewError, ManifestCorruptedError,
                     MemberNotFoundError, MissingDependencyError, MountUnavailableError, NotCachedError,
                     PointerMovedError, RefExistsError, StoreError, StoreUnreachableError, TableNotFoundError,
                     ThresholdsViolatedError, TooManyRowsError, VerificationFailedError, WarpError)
from .refs import AudioRef, FileRef, ImageRef, read_file

__version__ = "0.1.0"

__all__ = [
    "dataset", "publish", "Dataset", "DatasetBuilder", "Table", "FileRef", "ImageRef", "AudioRef", "read_file", "Client", "default_socket",
    "resolve_shard", "member_batches", "WarpError", "DaemonUnavailableError", "DatasetNotFoundError", "TableNotFoundError",
    "ArtifactNotFoundError", "ColumnNotFoundError", "InvalidFilterError", "MemberNotFoundError", "BadRequestError",
    "AccessDeniedError", "AuthenticationError", "StoreError", "StoreUnreachableError", "NotCachedError",
    "MountUnavailableError", "VerificationFailedError", "MissingDependencyError", "InvalidInputError",
    "InvalidSafetensorsError", "ThresholdsViolatedError", "ManifestCorruptedError", "FormatTooNewError", "PointerMovedError",
    "RefExistsError", "InvalidViewError", "TooManyRowsError",
]
