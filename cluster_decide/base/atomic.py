"""Every file cluster_decide writes goes through here: whole files, or none, and nothing left over.

A file is written to an unnamed temporary file in its target's folder (Linux ``O_TMPFILE``;
elsewhere a hidden ``.NAME.<random>.tmp`` from ``tempfile.mkstemp``, removed on any error),
flushed to disk, and only then given its name by a rename, which on POSIX replaces the old file
in one step. So a full disk, an exception or a killed process leaves the old file intact, and
(with ``O_TMPFILE``) not even a stray temporary file: an unnamed file vanishes with the process that held it.

Outputs of several files (``solve --out``, an export of a deck, a report and its images) are
written inside :func:`all_or_nothing`: every file is staged first and the renames happen
together at the end, only when all were written; one failure writes none of them.

Failures raise :class:`OutputError`, whose message names the file and the reason ("No space
left on device", "Permission denied").
"""

from __future__ import annotations

import contextvars
import errno
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "OutputError",
    "all_or_nothing",
    "refuse_inputs_as_outputs",
    "write_atomic",
]


class OutputError(OSError):
    """An output that could not be written; the message names the file and why."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        super().__init__(f"cannot write {path}: {reason}; nothing was written")

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass
class _Staged:
    """A written, synced temporary file waiting for its name."""

    target: Path
    fd: int | None = None
    tmp: Path | None = None


@dataclass
class _Batch:
    staged: list[_Staged] = field(default_factory=list)


_BATCH: contextvars.ContextVar[_Batch | None] = contextvars.ContextVar("batch", default=None)
_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_AT_FDCWD, _AT_EMPTY_PATH = -100, 0x1000
_UNNAMED_WORKS: dict[int, bool] = {}
"""Per file system (``st_dev``): whether an unnamed file can be given a name here."""


def _link_unnamed(fd: int, name: Path) -> None:
    """Give the unnamed (``O_TMPFILE``) file ``fd`` the name ``name``.

    ``linkat(AT_EMPTY_PATH)`` needs the ``CAP_DAC_READ_SEARCH`` capability; the
    ``/proc/self/fd`` route works without it where ``/proc`` allows it. Either may be missing.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.linkat(fd, b"", _AT_FDCWD, os.fsencode(name), _AT_EMPTY_PATH) == 0:
        return
    os.link(f"/proc/self/fd/{fd}", name, follow_symlinks=True)


def _unnamed_works(folder: Path) -> bool:
    """Whether ``folder`` takes unnamed temporary files that can later be named (probed once)."""
    if not _O_TMPFILE or not os.path.exists("/proc/self/fd"):
        return False
    device = folder.stat().st_dev
    if device not in _UNNAMED_WORKS:
        probe = folder / f".cluster-decide-probe.{os.getpid()}"
        try:
            fd = os.open(folder, os.O_WRONLY | _O_TMPFILE, 0o644)
        except OSError:
            _UNNAMED_WORKS[device] = False
            return False
        try:
            _link_unnamed(fd, probe)
            probe.unlink()
            _UNNAMED_WORKS[device] = True
        except OSError:
            _UNNAMED_WORKS[device] = False
        finally:
            os.close(fd)
    return _UNNAMED_WORKS[device]


def _reason(exc: OSError) -> str:
    return exc.strerror or errno.errorcode.get(exc.errno or 0, "") or str(exc)


def _stage(target: Path, payload: bytes) -> _Staged:
    """Write ``payload`` to a temporary file beside ``target`` and sync it (no name yet)."""
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(folder, _reason(exc)) from None
    if target.is_dir():
        raise OutputError(target, "it is a folder")
    staged = _Staged(target)
    try:
        if _unnamed_works(folder):
            staged.fd = os.open(folder, os.O_WRONLY | _O_TMPFILE, 0o644)
        else:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
            staged.fd, staged.tmp = fd, Path(tmp)
            os.fchmod(fd, 0o644)
        view = memoryview(payload)
        while view:
            view = view[os.write(staged.fd, view) :]
        os.fsync(staged.fd)
    except OSError as exc:
        _discard(staged)
        raise OutputError(target, _reason(exc)) from None
    except BaseException:
        _discard(staged)
        raise
    return staged


def _discard(staged: _Staged) -> None:
    if staged.fd is not None:
        os.close(staged.fd)
        staged.fd = None
    if staged.tmp is not None:
        staged.tmp.unlink(missing_ok=True)
        staged.tmp = None


def _name(staged: _Staged) -> None:
    """Give a staged file its target name, replacing any old file in one rename."""
    target = staged.target
    try:
        if staged.tmp is None and staged.fd is not None:
            # An O_TMPFILE file gets a hidden name first (link cannot replace), then the rename.
            hidden = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            hidden.unlink(missing_ok=True)
            _link_unnamed(staged.fd, hidden)
            staged.tmp = hidden
        os.replace(staged.tmp or target, target)
        staged.tmp = None
    except OSError as exc:
        _discard(staged)
        raise OutputError(target, _reason(exc)) from None
    _discard(staged)
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Make a rename durable (best effort: some file systems cannot sync a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write ``data`` to ``path`` whole or not at all; returns the path.

    Text is written as UTF-8, as given. The parent folder is created when missing. Inside
    :func:`all_or_nothing` the file is only staged; it gets its name when the block ends well.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    staged = _stage(target, payload)
    batch = _BATCH.get()
    if batch is not None:
        batch.staged.append(staged)
    else:
        _name(staged)
    return target


@contextmanager
def all_or_nothing() -> Iterator[None]:
    """Stage every :func:`write_atomic` inside the block; name them all at the end, or none.

    The renames at the end need no disk space, so once every file is staged they do not fail
    for lack of it.
    """
    if _BATCH.get() is not None:  # nested: the outer block decides
        yield
        return
    batch = _Batch()
    token = _BATCH.set(batch)
    try:
        yield
    except BaseException:
        for staged in batch.staged:
            _discard(staged)
        raise
    finally:
        _BATCH.reset(token)
    for i, staged in enumerate(batch.staged):
        try:
            _name(staged)
        except BaseException:
            for rest in batch.staged[i + 1 :]:
                _discard(rest)
            raise


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def refuse_inputs_as_outputs(inputs: Iterable[str | Path], outputs: Iterable[str | Path]) -> None:
    """Raise ValueError when an output file is one of the inputs (it would be overwritten)."""
    ins = [Path(p) for p in inputs if p]
    for out in outputs:
        if not out:
            continue
        for inp in ins:
            if _same(Path(out), inp):
                raise ValueError(
                    f"{out} is both an input and an output; writing it would destroy the input, "
                    "so nothing was written (choose another output path)"
                )
