"""Errors a user can act on: each names where the problem is, what is wrong and how to fix it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Problem", "ScenarioError", "did_you_mean"]


@dataclass(frozen=True)
class Problem:
    """One validation problem: the key path, what was expected, and an optional hint."""

    where: str
    what: str
    hint: str = ""

    def render(self, source: str) -> str:
        """The problem as one line: ``file: key.path: what (hint)``."""
        prefix = f"{source}: " if source else ""
        place = f"{self.where}: " if self.where else ""
        hint = f" ({self.hint})" if self.hint else ""
        return f"{prefix}{place}{self.what}{hint}"


class ScenarioError(ValueError):
    """A scenario that cannot be used; carries every problem found, not just the first."""

    def __init__(self, source: str, problems: Sequence[Problem]) -> None:
        self.source = source
        self.problems = tuple(problems)
        super().__init__("\n".join(p.render(source) for p in self.problems))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A hint naming the closest valid choice, or an empty string when nothing is close."""
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else ""
