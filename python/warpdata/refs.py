"""Typed references to artifact members (seed 000, D3): the values of a bound column.

A ref names one member of an artifact of a pinned version; its bytes are read through the Warp
mount (warpd fetches and caches them on first read, verified), so nothing is downloaded up front.
"""

import errno
import io
import os
import pathlib

from .errors import ArtifactNotFoundError, MemberNotFoundError, MountUnavailableError, missing

#: The read buffer of ``open()``. Giving it explicitly spares each open Python's ``isatty()``
#: check, an ``ioctl(TCGETS)`` that FUSE always sends to warpd (one round trip a file on Python
#: before 3.14; see ``read_file``).
BUFFER_SIZE = 128 * 1024


def read_file(path):
    """The whole file at ``path``, in one open and no ``isatty()``.

    ``open(path, "rb")`` asks the new file ``isatty()`` to choose its buffering (Python before
    3.14), an ``ioctl(TCGETS)`` that the kernel sends to warpd for every file on a FUSE mount, a
    round trip beside the file's own READ. Unbuffered (``buffering=0``), ``open`` asks nothing and
    ``readall()`` reads to the end.
    """
    with open(path, "rb", buffering=0) as f:
        return f.readall()


class FileRef:
    """A member of an artifact: ``open()``, ``read_bytes()``, ``local_path()``, ``str()``.

    ``path`` is the value in the table (the member's path inside the artifact); ``str(ref)`` and
    ``os.fspath(ref)`` are the file in the mount, so ``open(ref, "rb")`` works too.
    """

    __slots__ = ("_root", "artifact", "path")

    def __init__(self, root, artifact, path):
        self._root = root
        self.artifact = artifact
        self.path = path

    def _version_dir(self):
        return self._root() if callable(self._root) else self._root

    def local_path(self):
        """The member as a file in the Warp mount (read lazily, cached by warpd)."""
        return pathlib.Path(self._version_dir(), self.artifact, str(self.path).lstrip("/"))

    def open(self):
        """The member's bytes as a binary file object."""
        p = self.local_path()
        try:
            return open(p, "rb", buffering=BUFFER_SIZE)
        except OSError as e:
            if e.errno == errno.ENOTCONN:
                raise self._mount_gone(e) from None
            if not isinstance(e, FileNotFoundError):
                raise
            root = self._version_dir()
            if not os.path.isdir(root):
                raise MountUnavailableError(
                    "%s is not visible, so %s cannot be read: is the Warp mount up?" % (root, self.path),
                    "check the mount (warpctl status; ls %s), and that WARP_MOUNT (or dataset(..., mount=)) names"
                    " warpd's mount point" % os.path.dirname(os.path.dirname(root))) from None
            if not os.path.isdir(os.path.join(root, self.artifact)):
                raise ArtifactNotFoundError(
                    "%s has no artifact '%s', so %s cannot be read" % (
                        "/".join(pathlib.PurePath(root).parts[-2:]), self.artifact, self.path),
                    "its artifacts: ls %s" % root) from None
            raise MemberNotFoundError(
                "artifact '%s' of %s has no member '%s'" % (self.artifact, "/".join(pathlib.PurePath(root).parts[-2:]),
                                                             self.path),
                "list its members: ls %s" % os.path.join(root, self.artifact)) from None

    def read_bytes(self):
        """The member's bytes, read through the mount (fetched and verified by warpd, then cached)."""
        with self.open() as f:
            try:
                return f.read()
            except OSError as e:
                if e.errno == errno.ENOTCONN:
                    raise self._mount_gone(e) from None
                if e.errno != errno.EIO:
                    raise
                # A read error carries no file name; the mount answers EIO when warpd could not
                # serve the bytes (store down, bytes failing verification): say which file, and where to look.
                raise OSError(e.errno, "%s (warpd could not serve it: warpctl status, and warpd's log, say why)"
                              % e.strerror, str(self.local_path())) from None

    def _mount_gone(self, e):
        """ENOTCONN: the mount is still there, but the warpd that served it died (kill -9, a crash)."""
        path, mount = str(self.local_path()), os.path.dirname(os.path.dirname(self._version_dir()))
        return MountUnavailableError(
            "%s cannot be read (%s): the warpd that served the Warp mount is gone" % (path, e.strerror or e),
            "unmount it (fusermount -u %s) and start warpd again; warpctl status says whether one runs" % mount)

    def __fspath__(self):
        return str(self.local_path())

    def __str__(self):
        return str(self.local_path())

    def __repr__(self):
        return "%s(%r, %r)" % (type(self).__name__, self.artifact, self.path)

    def __eq__(self, other):
        return (type(other) is type(self) and other.artifact == self.artifact and other.path == self.path
                and str(other) == str(self))

    def __hash__(self):
        return hash((self.artifact, self.path))


class ImageRef(FileRef):
    """An image member: ``as_pil()`` (PIL image) and ``as_numpy()`` (H x W x C, uint8)."""

    __slots__ = ()

    def as_pil(self):
        """The image as a ``PIL.Image`` (loaded, so the file is closed); needs PIL (python3-pil)."""
        try:
            from PIL import Image
        except ImportError:
            raise missing("PIL", "ImageRef.as_pil()", "python3-pil") from None
        im = Image.open(io.BytesIO(self.read_bytes()))
        im.load()
        return im

    def as_numpy(self):
        """The image as a ``numpy`` array, height x width x channels, uint8; needs PIL and numpy."""
        try:
            import numpy as np
        except ImportError:
            raise missing("numpy", "ImageRef.as_numpy()", "python3-numpy") from None
        im = self.as_pil()
        if im.mode not in ("RGB", "RGBA", "L"):
            im = im.convert("RGBA" if "A" in im.getbands() else "RGB")
        a = np.asarray(im, dtype=np.uint8)
        return a[:, :, None] if a.ndim == 2 else a


class AudioRef(FileRef):
    """An audio member: ``as_array()`` (float32 samples, frames x channels or frames for mono) and
    ``sample_rate``. Uses soundfile when importable, else reads WAV (PCM) with the standard library."""

    __slots__ = ()

    @property
    def sample_rate(self):
        try:
            import soundfile
        except ImportError:
            with self.open() as f:
                return _wav(f, self.path)[0]
        with self.open() as f:
            return soundfile.info(f).samplerate

    def as_array(self):
        """The samples as a float32 ``numpy`` array in [-1, 1) (frames x channels when there are
        several; ``sample_rate()`` gives the rate): through soundfile when it is installed
        (python3-soundfile), else WAV through the standard library."""
        try:
            import numpy as np
        except ImportError:
            raise missing("numpy", "AudioRef.as_array()", "python3-numpy") from None
        try:
            import soundfile
        except ImportError:
            soundfile = None
        if soundfile is not None:
            with self.open() as f:
                data, _ = soundfile.read(f, dtype="float32")
            return data
        with self.open() as f:
            _, channels, is_float, width, frames = _wav(f, self.path)
        if is_float:
            a = np.frombuffer(frames, dtype="<f%d" % width).astype(np.float32)
        elif width == 1:
            a = (np.frombuffer(frames, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
        elif width == 2:
            a = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
        elif width == 3:
            b = np.frombuffer(frames, dtype=np.uint8).reshape(-1, 3)
            ints = (b[:, 0].astype(np.int32) | (b[:, 1].astype(np.int32) << 8) | (b[:, 2].astype(np.int32) << 16))
            ints = np.where(ints >= 1 << 23, ints - (1 << 24), ints)
            a = ints.astype(np.float32) / float(1 << 23)
        else:
            a = np.frombuffer(frames, dtype="<i4").astype(np.float32) / float(1 << 31)
        return a if channels == 1 else a.reshape(-1, channels)


# WAVE format tags: integer PCM, IEEE float (what soundfile and torchaudio write for float data),
# and WAVE_FORMAT_EXTENSIBLE, whose sub-format GUID starts with one of the other two.
_PCM, _FLOAT, _EXTENSIBLE = 1, 3, 0xFFFE


def _wav(f, name):
    """(sample rate, channels, is_float, bytes a sample, sample bytes) of a RIFF WAVE file: PCM of
    8-32 bits or IEEE float of 32/64 bits, read with the standard library. Anything else is a
    MissingDependencyError pointing to soundfile, which reads it."""
    import struct
    head = f.read(12)
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise _not_wav(name, "not a RIFF WAVE file")
    fmt = None
    while True:
        chunk = f.read(8)
        if len(chunk) < 8:
            raise _not_wav(name, "no data chunk" if fmt else "no fmt chunk")
        cid, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
        if cid == b"fmt ":
            body = f.read(size + (size & 1))
            if len(body) < 16:
                raise _not_wav(name, "a fmt chunk of %d bytes" % len(body))
            tag, channels, rate, _, _, bits = struct.unpack("<HHIIHH", body[:16])
            if tag == _EXTENSIBLE and len(body) >= 26:
                tag = struct.unpack("<H", body[24:26])[0]
            fmt = (tag, channels, rate, bits)
        elif cid == b"data":
            if fmt is None:
                raise _not_wav(name, "data before its fmt chunk")
            tag, channels, rate, bits = fmt
            if channels < 1 or not ((tag == _PCM and bits in (8, 16, 24, 32)) or (tag == _FLOAT and bits in (32, 64))):
                raise _not_wav(name, "format %d with %d-bit samples" % (tag, bits))
            data = f.read(size)
            width = bits // 8
            data = data[:len(data) - len(data) % (width * channels)]
            return rate, channels, tag == _FLOAT, width, data
        else:
            f.seek(size + (size & 1), 1)


def _not_wav(name, why):
    return missing("soundfile", "reading audio %s (%s; the standard library reads WAV PCM and float only)"
                   % (name, why), "python3-soundfile")


def ref_class(ref_type):
    """The ref class for a binding's ref_type (image, audio, else FileRef)."""
    return {"image": ImageRef, "audio": AudioRef}.get(ref_type, FileRef)
