"""Typed errors: every failure says what went wrong and what to do next.

``WarpError`` is the base. Errors that come from warpd carry its typed error code (``code``,
e.g. ``DatasetNotFoundError``) and its "what to do" text (``next_step``); each known code has its
own subclass, so ``except wd.DatasetNotFoundError`` works.
"""


_WHAT_TO_DO = "\n  what to do: "


class WarpError(Exception):
    """A Warp failure: ``code`` (warpd's error type), ``message`` and ``next_step`` (what to do)."""

    code = "WarpError"

    def __init__(self, message, next_step="", code=None, details=None):
        if not next_step and isinstance(message, str) and _WHAT_TO_DO in message:
            # Rebuilt from its text alone (torch re-raises a DataLoader worker's error as
            # type(message)): the text carries "what to do", so the next step is not lost.
            message, _, next_step = message.rpartition(_WHAT_TO_DO)
            next_step = next_step.strip().splitlines()[0] if next_step.strip() else ""
        self.message = message
        self.next_step = next_step or ""
        # facts beside the message, e.g. a PointerMovedError's "version" (the version published all the same)
        self.details = dict(details or {})
        if code is not None:
            self.code = code
        super().__init__(message if not self.next_step else "%s\n  what to do: %s" % (message, self.next_step))


class DaemonUnavailableError(WarpError):
    """No warpd answers on the control socket."""
    code = "DaemonUnavailable"


class DatasetNotFoundError(WarpError):
    """The dataset, or the tag, branch or version named, does not exist."""
    code = "DatasetNotFoundError"


class TableNotFoundError(WarpError):
    code = "TableNotFound"


class ArtifactNotFoundError(WarpError):
    code = "ArtifactNotFound"


class ColumnNotFoundError(WarpError):
    code = "ColumnNotFound"


class InvalidFilterError(WarpError):
    code = "InvalidFilter"


class MemberNotFoundError(WarpError):
    code = "MemberNotFound"


class BadRequestError(WarpError):
    code = "BadRequest"


class AccessDeniedError(WarpError):
    code = "AccessDenied"


class AuthenticationError(WarpError):
    code = "AuthenticationError"


class StoreError(WarpError):
    code = "StoreError"


class StoreUnreachableError(StoreError):
    code = "StoreUnreachable"


class NotCachedError(WarpError):
    """mode="local": the data is not in warpd's cache."""
    code = "NotCached"


class MountUnavailableError(WarpError):
    code = "MountUnavailable"


class VerificationFailedError(WarpError):
    code = "VerificationFailed"


class InvalidInputError(WarpError):
    """A publish refused its input (a file, folder or writer's manifest), naming it; nothing was
    published. ``DatasetIncomplete`` (no _SUCCESS, a listed part missing) is one of these."""
    code = "InvalidInput"


class InvalidSafetensorsError(InvalidInputError):
    code = "InvalidSafetensors"


class ThresholdsViolatedError(InvalidInputError):
    code = "ThresholdsViolated"


class ManifestCorruptedError(WarpError):
    """A stored manifest (or a side blob it names) fails verification: its content does not hash
    to its version, or it does not parse."""
    code = "ManifestCorrupted"


class FormatTooNewError(WarpError):
    """The version was published by a newer Warp, in a format this warpd does not read: upgrade
    warpd (readers of a store before its publishers)."""
    code = "FormatTooNew"


class PointerMovedError(WarpError):
    """Someone else moved the pointer (latest, a branch) meanwhile; nothing was overwritten."""
    code = "PointerMoved"


class RefExistsError(WarpError):
    code = "RefExists"


class InvalidViewError(WarpError):
    code = "InvalidView"


class TooManyRowsError(BadRequestError):
    """Table.pandas() / polars() without a limit would hold more than max_rows rows in memory."""
    code = "TooManyRows"


class MissingDependencyError(WarpError, ImportError):
    """An optional module (numpy, PIL, torch, pyarrow, ...) is needed and not importable."""
    code = "MissingDependency"


_BY_CODE = {c.code: c for c in (
    DaemonUnavailableError, DatasetNotFoundError, TableNotFoundError, ArtifactNotFoundError, ColumnNotFoundError,
    InvalidFilterError, MemberNotFoundError, BadRequestError, AccessDeniedError, AuthenticationError, StoreError,
    StoreUnreachableError, NotCachedError, MountUnavailableError, VerificationFailedError, InvalidInputError,
    InvalidSafetensorsError, ThresholdsViolatedError, ManifestCorruptedError, FormatTooNewError, PointerMovedError, RefExistsError,
    InvalidViewError)}
# warpd's other codes, by the class that says what they mean to a caller
_BY_CODE.update({
    "InvalidTwhShard": InvalidInputError, "InvalidManifest": ManifestCorruptedError,
    "CorruptShard": VerificationFailedError, "MemberHashMismatch": VerificationFailedError,
    "ObjectTooLarge": StoreError, "BlobNotFound": StoreError, "NoSuchBucket": StoreError,
    "PermissionError": AccessDeniedError, "NoTables": TableNotFoundError, "PlanTooLarge": BadRequestError,
    "StoreUnavailable": StoreUnreachableError, "StoreNotAnswering": StoreUnreachableError,
    "AmbiguousVersion": DatasetNotFoundError,
})


def from_warpd(error):
    """The WarpError for warpd's ``{"type", "message", "next_step"}``."""
    code = error.get("type") or "WarpError"
    cls = _BY_CODE.get(code, WarpError)
    details = {k: v for k, v in error.items() if k not in ("type", "message", "next_step") and isinstance(v, str)}
    return cls(error.get("message") or code, error.get("next_step") or "", code=code, details=details)


def missing(module, what, package):
    """A MissingDependencyError for ``module``, needed for ``what``."""
    return MissingDependencyError(
        "%s needs %s, which cannot be imported" % (what, module),
        "install it (apt-get install %s, or pip install %s)" % (package, module if module != "PIL" else "pillow"))
