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
from pathlib import Path

import polars as pl

from cluster_decide.inventory.errors import InventoryError

__all__ = [
    "FORMATS",
    "Source",
    "detect_format",
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
        raise InventoryError(
            name,
            f"truncated or corrupt gzip stream ({exc})",
            expected="a complete gzip file; re-copy or re-compress it",
        ) from None


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
    Python); line numbers stay exact because blank lines are kept.
    """
    name = source_name(source)
    direct = not isinstance(source, bytes) and _is_plain_file(source)
    data = b"" if direct else read_bytes(source)
    if not direct and not data:
        return pl.DataFrame(schema={"line_no": pl.Int64, "text": pl.String})
    try:
        if direct and Path(source).stat().st_size == 0:  # type: ignore[arg-type]
            return pl.DataFrame(schema={"line_no": pl.Int64, "text": pl.String})
        df = pl.read_csv(
            source if direct else io.BytesIO(data),  # type: ignore[arg-type]
            has_header=False,
            separator="\x00",
            quote_char=None,
            new_columns=["text"],
            infer_schema=False,
            encoding="utf8-lossy",
        )
    except pl.exceptions.PolarsError:
        # A NUL byte inside a line: split in Python instead (slow, but only for such files).
        raw = read_bytes(source) if direct else data
        text = raw.decode("utf-8", errors="replace").split("\n")
        if text and text[-1] == "":
            text.pop()
        df = pl.DataFrame({"text": text}, schema={"text": pl.String})
    except OSError as exc:
        raise InventoryError(name, f"cannot read file: {exc}") from None
    return df.select(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("line_no"),
        pl.col("text").fill_null("").str.strip_chars_end("\r\n"),
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
        if b'"jobs"' in raw:
            return "sacct_json"
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
    if "," in first:
        return "csv"
    raise InventoryError(
        name,
        "unrecognized format",
        expected="sacct text or JSON, SWF, openb, Philly runtime, PAI or CSV/Parquet "
        "(pass format= to choose)",
    )


_SWF_LINE = re.compile(r"^-?\d+(\.\d+)?(\s+-?\d+(\.\d+)?){17,}$")


def _looks_swf(line: str) -> bool:
    return bool(_SWF_LINE.match(line))
