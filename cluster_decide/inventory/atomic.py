"""Writing a derived scenario atomically: the old file or the new one, never half of one.

The same technique as `cluster_decide.export.atomic.write_atomic` (temporary file in the target
folder, fsync, rename), kept here because importing `cluster_decide.export` loads the deck and
chart libraries, which `ingest` must start without. A failure names the file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cluster_decide.inventory.errors import InventoryError

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write `text` (UTF-8) to `path` through a temporary file and a rename; returns the path.

    The temporary file is removed on any failure, and the target keeps its old content. An
    OSError (full disk, no permission, a folder in the way) becomes an InventoryError naming
    the file.
    """
    target = Path(path)
    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        raise InventoryError(str(target), f"cannot write: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return target
