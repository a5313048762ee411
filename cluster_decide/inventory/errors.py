"""The one exception every inventory reader raises on input it cannot use."""

from __future__ import annotations

__all__ = ["InventoryError"]


class InventoryError(ValueError):
    """Input that cannot be read: says which file, which line and what was expected.

    Readers raise only this (never a parser's own exception), so callers such as the CLI can
    print the message as is.
    """

    def __init__(
        self,
        source: str,
        message: str,
        *,
        line: int | None = None,
        expected: str | None = None,
    ) -> None:
        self.source = source
        self.message = message
        self.line = line
        self.expected = expected
        where = f"{source}, line {line}" if line is not None else source
        text = f"{where}: {message}"
        if expected:
            text += f" (expected {expected})"
        super().__init__(text)
