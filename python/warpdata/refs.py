"""Typed references to artifact members (seed 000, D3): the values of a bound column.

A ref names one member of an artifact of a pinned version; its bytes are read through the Warp
mount (warpd fetches and caches them on first read, verified), so nothing is downloaded up front.
"""

import errno
import io
import os
import pathlib

from .errors import MemberNotFoundError, MountUnavailableError, missing

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
        except FileNotFoundError:
            root = self._version_dir()
            if not os.path.isdir(root):
                raise MountUnavailableError(
                    "%s is not visible, so %s cannot be read: is the Warp mount up?" % (root, self.path),
                    "check the mount (warpctl status; ls %s)" % os.path.dirname(os.path.dirname(root))) from None
            raise MemberNotFoundError(
                "artifact '%s' of %s has no member '%s'" % (self.artifact, os.path.basename(root), self.path),
                "list its members: ls %s" % os.path.join(root, self.artifact)) from None

    def read_bytes(self):
        with self.open() as f:
            try:
                return f.read()
            except OSError as e:
                if e.errno != errno.EIO:
                    raise
                # A read error carries no file name; the mount answers EIO when warpd could not
                # serve the bytes (store down, bytes failing verification): say which file, and where to look.
                raise OSError(e.errno, "%s (warpd could not serve it: warpctl status, and warpd's log, say why)"
                              % e.strerror, str(self.local_path())) from None

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
        try:
            from PIL import Image
        except ImportError:
            raise missing("PIL", "ImageRef.as_pil()", "python3-pil") from None
        with self.open() as f:
            im = Image.open(io.BytesIO(f.read()))
            im.load()
        return im

    def as_numpy(self):
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
            import wave
            with self.open() as f, wave.open(f) as w:
                return w.getframerate()
        with self.open() as f:
            return soundfile.info(f).samplerate

    def as_array(self):
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
        import wave
        with self.open() as f, wave.open(f) as w:
            channels, width, frames = w.getnchannels(), w.getsampwidth(), w.readframes(w.getnframes())
        if width == 1:
            a = (np.frombuffer(frames, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
        elif width == 2:
            a = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
        elif width == 3:
            b = np.frombuffer(frames, dtype=np.uint8).reshape(-1, 3)
            ints = (b[:, 0].astype(np.int32) | (b[:, 1].astype(np.int32) << 8) | (b[:, 2].astype(np.int32) << 16))
            ints = np.where(ints >= 1 << 23, ints - (1 << 24), ints)
            a = ints.astype(np.float32) / float(1 << 23)
        elif width == 4:
            a = np.frombuffer(frames, dtype="<i4").astype(np.float32) / float(1 << 31)
        else:
            raise missing("soundfile", "AudioRef.as_array() of %d-byte samples" % width, "python3-soundfile")
        return a if channels == 1 else a.reshape(-1, channels)


def ref_class(ref_type):
    """The ref class for a binding's ref_type (image, audio, else FileRef)."""
    return {"image": ImageRef, "audio": AudioRef}.get(ref_type, FileRef)
