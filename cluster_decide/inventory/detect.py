"""Reading raw bytes (gzip or not), splitting them into numbered lines, and sniffing formats.

Every reader goes through `read_bytes`, so gzip input works everywhere and a truncated gzip
gets the same precise error wherever it is read.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import polars as pl

from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.sniff import looks_like_sacct, sniff_delimiter

__all__ = [
    "BATCH_BYTES",
    "FORMATS",
    "LineBatch",
    "Source",
    "count_byte",
    "detect_format",
    "line_batches",
    "lines_frame",
    "read_bytes",
    "read_head",
    "source_name",
]

Source = str | os.PathLike | bytes
"""A file path, or the file's bytes (named `<bytes>` in messages)."""

FORMATS = (
    "sacct",
    "sacct_json",
    "swf",
    "openb",
    "philly_runtime",
    "philly_jobs",
    "pai",
    "csv",
    "parquet",
)
"""Format names `detect_format` returns and `read_jobs(format=...)` accepts."""

_GZIP_MAGIC = b"\x1f\x8b"
_SNIFF_BYTES = 65536


def source_name(source: Source) -> str:
    """The name used for `source` in messages and reports."""
    return "<bytes>" if isinstance(source, bytes) else str(source)


def read_bytes(source: Source) -> bytes:
    """The file's content, gunzipped when it starts with the gzip magic number.

    Raises InventoryError for a missing file and for a truncated or corrupt gzip stream.
    """
    name = source_name(source)
    if isinstance(source, bytes):
        raw = source
    else:
        try:
            raw = Path(source).read_bytes()
        except FileNotFoundError:
            raise InventoryError(name, "no such file") from None
        except OSError as exc:
            raise InventoryError(name, f"cannot read file: {exc.strerror}") from None
    if not raw.startswith(_GZIP_MAGIC):
        return raw
    try:
        return gzip.decompress(raw)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise _gzip_error(name, exc) from None


def read_head(source: Source, size: int = _SNIFF_BYTES) -> bytes:
    """The first `size` bytes of the (gunzipped) content, without reading the whole file.

    A gzip stream that ends early raises the same InventoryError as `read_bytes`.
    """
    try:
        if isinstance(source, bytes):
            fh: io.BufferedIOBase = io.BytesIO(source)
        else:
            fh = open(source, "rb")  # noqa: SIM115 - closed below, whichever branch reads
        with fh:
            magic = fh.read(2)
            fh.seek(0)
            if magic != _GZIP_MAGIC:
                return fh.read(size)
            with gzip.GzipFile(fileobj=fh) as gz:
                return gz.read(size)
    except (EOFError, OSError, zlib.error):
        return read_bytes(source)


def lines_frame(source: Source) -> pl.DataFrame:
    """Split a file (or bytes) into lines: `line_no` (1-based) and `text` ('' when blank).

    Uses polars' CSV splitter with a separator byte that text never contains, so a large file
    is split in native code (an uncompressed file is memory-mapped rather than read into
    Python); line numbers stay exact because blank lines are kept. The whole file is in
    memory: `line_batches` streams instead.
    """
    name = source_name(source)
    direct = not isinstance(source, bytes) and _is_plain_file(source)
    data = b"" if direct else read_bytes(source)
    if not direct and not data:
        return _numbered(pl.DataFrame(schema={"text": pl.String}), 0)
    try:
        if direct and Path(source).stat().st_size == 0:  # type: ignore[arg-type]
            return _numbered(pl.DataFrame(schema={"text": pl.String}), 0)
        return _numbered(_split(source if direct else data), 0)
    except OSError as exc:
        raise InventoryError(name, f"cannot read file: {exc}") from None


def _split(data: bytes | str | os.PathLike) -> pl.DataFrame:
    """One `text` column, one row per line (blank lines kept), split in native code."""
    try:
        return pl.read_csv(
            io.BytesIO(data) if isinstance(data, bytes) else Path(data),
            has_header=False,
            separator="\x00",
            quote_char=None,
            new_columns=["text"],
            infer_schema=False,
            encoding="utf8-lossy",
        )
    except pl.exceptions.PolarsError:
        # A NUL byte inside a line: split in Python instead (slow, but only for such lines).
        raw = data if isinstance(data, bytes) else Path(data).read_bytes()
        text = raw.decode("utf-8", errors="replace").split("\n")
        if text and text[-1] == "":
            text.pop()
        return pl.DataFrame({"text": text}, schema={"text": pl.String})


def _numbered(df: pl.DataFrame, offset: int) -> pl.DataFrame:
    return df.select(
        pl.int_range(offset + 1, offset + pl.len() + 1, dtype=pl.Int64).alias("line_no"),
        pl.col("text").fill_null("").str.strip_chars_end("\r\n"),
    )


BATCH_BYTES = 64 * 2**20
"""Bytes of (uncompressed) text `line_batches` splits at a time: bounds a streamed read."""


@dataclass(frozen=True)
class LineBatch:
    """A run of whole lines of a file, and how far the read is.

    `body` is the batch's text as bytes (whole lines, decoded lazily so a reader with a
    faster path never pays for the split) and `offset` the number of lines before it.
    `fraction` is the share of the file's bytes consumed (compressed bytes for gzip), for a
    progress estimate; `last` is true for the final batch.
    """

    body: bytes
    offset: int
    fraction: float
    last: bool

    @property
    def lines(self) -> pl.DataFrame:
        """The batch as `lines_frame` gives it: numbered lines, split in native code."""
        if not self.body:
            return _numbered(pl.DataFrame(schema={"text": pl.String}), self.offset)
        return _numbered(_split(self.body), self.offset)

    def first_content(self) -> tuple[int, str] | None:
        """(line number, text) of the batch's first line that is not blank or a `#` comment."""
        head = self.head_content(1)
        return head[0] if head else None

    def head_content(self, n: int) -> list[tuple[int, str]]:
        """(line number, text) of the batch's first `n` lines that are not blank or comments.

        Walks the lines from the start, so finding a header costs a few lines, not the batch.
        """
        start, found = 0, []
        for i in range(self.n_lines):
            end = self.body.find(b"\n", start)
            end = len(self.body) if end < 0 else end
            text = self.body[start:end].decode("utf-8", errors="replace").rstrip("\r\n")
            if text.strip() and not text.startswith("#"):
                found.append((self.offset + i + 1, text))
                if len(found) >= n:
                    break
            start = end + 1
        return found

    @cached_property
    def n_lines(self) -> int:
        """Lines in the batch (a final line without a newline counts)."""
        if not self.body:
            return 0
        return count_byte(self.body, b"\n") + (not self.body.endswith(b"\n"))


def count_byte(data: bytes, byte: bytes) -> int:
    """How many times the one-byte `byte` occurs in `data`.

    numpy counts about three times as fast as `bytes.count` and releases the GIL, which the
    threads parsing other batches need.
    """
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == byte[0]))


def line_batches(source: Source, batch_bytes: int | None = None) -> Iterator[LineBatch]:
    """Stream a file (gzip or not) as batches of whole, numbered lines, in bounded memory.

    Memory holds about two batches of text, whatever the file's size; line numbers run on
    across batches. Bytes given in memory come as one batch. Raises InventoryError for a
    missing or unreadable file and for a truncated or corrupt gzip stream.
    """
    if isinstance(source, bytes):
        yield LineBatch(read_bytes(source), 0, 1.0, True)
        return
    name = source_name(source)
    size = batch_bytes or BATCH_BYTES
    try:
        raw = open(source, "rb")  # noqa: SIM115 - closed in the finally below
    except FileNotFoundError:
        raise InventoryError(name, "no such file") from None
    except OSError as exc:
        raise InventoryError(name, f"cannot read file: {exc.strerror}") from None
    try:
        total = os.fstat(raw.fileno()).st_size
        packed = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        bodies = _gzip_bodies(raw, size, total, name) if packed else _plain_bodies(raw, size, total)
        offset = 0
        for body, fraction, last in bodies:
            if body:
                batch = LineBatch(body, offset, fraction, last)
                offset += batch.n_lines
                yield batch
    except OSError as exc:
        raise InventoryError(name, f"cannot read file: {exc}") from None
    finally:
        raw.close()


def _plain_bodies(
    fh: io.BufferedIOBase, size: int, total: int
) -> Iterator[tuple[bytes, float, bool]]:
    """(whole lines, share of the file read, last) of about `size` bytes from a plain file.

    Each batch is read once, to its exact length: a short look at the bytes before the
    batch's end finds its last newline first, so no batch is copied again to cut it.
    """
    pos = 0
    while pos < total:
        end = pos + size
        if end >= total:
            yield fh.read(), 1.0, True
            return
        look = min(size, 65536)
        fh.seek(end - look)
        newline = fh.read(look).rfind(b"\n")
        fh.seek(pos)
        if newline >= 0:
            body = fh.read(end - look + newline + 1 - pos)
        else:  # no newline in the look-back: read the block, or the one long line it is in
            body = fh.read(size)
            cut = body.rfind(b"\n") + 1
            body = body[:cut] if cut else body + fh.readline()
            fh.seek(pos + len(body))
        pos += len(body)
        yield body, pos / total, pos >= total


def _gzip_bodies(
    raw: io.BufferedIOBase, size: int, total: int, name: str
) -> Iterator[tuple[bytes, float, bool]]:
    """(whole lines, share of the compressed file read, last) of about `size` bytes, gunzipped.

    Reads one block ahead, so the last batch is known as such; a line cut by a block's end
    is carried into the next batch.
    """
    fh = gzip.GzipFile(fileobj=raw)

    def read() -> bytes:
        try:
            return fh.read(size)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise _gzip_error(name, exc) from None

    carry, block = b"", read()
    while block:
        # Where the file stood when this block was read, before the read-ahead below.
        fraction = min(raw.tell() / max(total, 1), 1.0)
        ahead = read()
        block, last = carry + block, not ahead
        cut = len(block) if last else block.rfind(b"\n") + 1
        body, carry = block[:cut], block[cut:]
        yield body, fraction, last
        block = ahead


def _gzip_error(name: str, exc: Exception) -> InventoryError:
    return InventoryError(
        name,
        f"truncated or corrupt gzip stream ({exc})",
        expected="a complete gzip file; re-copy or re-compress it",
    )


def _is_plain_file(source: str | os.PathLike) -> bool:
    """True for an existing file that is not gzip-compressed (polars can map it directly)."""
    try:
        with open(source, "rb") as fh:
            return fh.read(2) != _GZIP_MAGIC
    except OSError:
        return False


def _first_lines(data: bytes, n: int = 40) -> list[str]:
    head = data[:_SNIFF_BYTES].decode("utf-8", errors="replace")
    return [ln.strip() for ln in head.splitlines() if ln.strip()][:n]


def detect_format(source: Source, data: bytes | None = None) -> str:
    """Guess the format of `source` from its content (and its name for PAI tables).

    Only the first 64 KB are read (gunzipped). Returns one of FORMATS. Raises
    InventoryError for an empty file or content that matches none of them, saying which
    formats were tried.
    """
    name = source_name(source)
    raw = read_head(source) if data is None else data[:_SNIFF_BYTES]
    if raw.startswith(b"PAR1"):
        return "parquet"
    lines = _first_lines(raw)
    if not lines:
        raise InventoryError(name, "file is empty", expected="job records")
    first = lines[0]
    if first.startswith(("{", "[")):
        if b'"jobs"' in raw or (b'"errors"' in raw and b'"meta"' in raw):
            return "sacct_json"  # a slurmdbd error response may carry no jobs list at all
        if b'"attempts"' in raw and b'"jobid"' in raw:
            return "philly_jobs"
        raise InventoryError(
            name,
            "JSON without a 'jobs' list or Philly 'attempts'",
            expected="sacct --json output or a Philly cluster_job_log",
        )
    base = Path(name).name.lower()
    if "pai_job_table" in base or "pai_task_table" in base:
        return "pai"
    low = first.lower()
    if low.startswith("name,cpu_milli") or low.startswith("sn,cpu_milli"):
        return "openb"
    if low == "runtime":
        return "philly_runtime"
    data_lines = [ln for ln in lines if not ln.startswith((";", "#"))]
    if any(ln.startswith(";") for ln in lines) or (
        data_lines and all(_looks_swf(ln) for ln in data_lines[:10])
    ):
        return "swf"
    if any("|" in ln for ln in data_lines[:10]):
        return "sacct"
    delimiter = sniff_delimiter(data_lines[:20])
    if delimiter is not None and looks_like_sacct(data_lines[:20], delimiter):
        return "sacct"  # header-less, or with another delimiter than '|'
    if "," in first:
        return "csv"
    raise InventoryError(
        name,
        "unrecognized format",
        expected="sacct text or JSON, SWF, openb, Philly runtime, PAI or CSV/Parquet "
        "(pass format= to choose)",
    )


_NUMBER = r"-?\d+(\.\d*)?([eE][-+]?\d+)?"
_SWF_LINE = re.compile(rf"^{_NUMBER}(\s+{_NUMBER}){{17,}}$")
"""18 or more whitespace-separated numbers: SWF v2.2, or an extended SWF with extra fields."""


def _looks_swf(line: str) -> bool:
    return bool(_SWF_LINE.match(line))
