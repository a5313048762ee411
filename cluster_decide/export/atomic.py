"""Reproducible file writing for every export.

A deck or report handed on must never be half a file: each one is written through
:func:`cluster_decide.base.atomic.write_atomic` (re-exported here), so a failure (a full disk, an
exception mid-render) leaves the old file or none. Zip containers (``.pptx``) are re-packed with fixed member dates, because Python's zipfile stamps each member with the current
time and the same deck would otherwise differ byte for byte from run to run.
"""

from __future__ import annotations

import io
import zipfile

from cluster_decide.base.atomic import write_atomic

__all__ = ["ZIP_EPOCH", "repack_zip", "write_atomic"]

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
"""The member date every re-packed zip carries: the earliest a zip can store."""


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
