"""Atomic, reproducible file writing for every export.

A deck or report handed on must never be half a file: each one is written to a temporary file
in the target's folder and renamed over the target, which on POSIX is atomic, so a failure (a
full disk, an exception mid-render) leaves the old file or none. Zip containers (``.pptx``) are
re-packed with fixed member dates, because Python's zipfile stamps each member with the current
time and the same deck would otherwise differ byte for byte from run to run.
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from pathlib import Path

__all__ = ["ZIP_EPOCH", "repack_zip", "write_atomic"]

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
"""The member date every re-packed zip carries: the earliest a zip can store."""


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename; returns the path.

    Text is written as UTF-8, as given. The parent folder is created when missing.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def repack_zip(data: bytes) -> bytes:
    """The same zip with every member dated :data:`ZIP_EPOCH`, in the original member order."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            member = zipfile.ZipInfo(info.filename, date_time=ZIP_EPOCH)
            member.compress_type = zipfile.ZIP_DEFLATED
            member.external_attr = 0o644 << 16
            dst.writestr(member, src.read(info.filename))
    return out.getvalue()
