"""Settings as a link: the controls' values to and from URL query parameters.

A share link carries the preset and every control that differs from it, so opening the link
(in Voila, whose kernel sees the query string) shows the same question and, because live solves
are deterministic, the same answer. Values are checked as they are read; a bad one is refused
with a message naming the parameter, and the rest still apply.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qsl, urlencode

from cluster_decide.base.constants import PLATFORMS
from cluster_decide.widgets.controls import Controls

__all__ = ["from_query", "request_query", "to_query"]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ",".join(value)
    return str(value)


def to_query(preset: str, settings: dict[str, Any], defaults: dict[str, Any]) -> str:
    """``?scenario=…&key=value…`` for the settings that differ from the preset's."""
    pairs = [("scenario", preset)]
    pairs += [(k, _text(v)) for k, v in settings.items() if _text(v) != _text(defaults.get(k))]
    return "?" + urlencode(pairs, safe=":,")


def from_query(query: str, controls: Controls) -> tuple[str | None, dict[str, Any], list[str]]:
    """The preset, the control values and the problems (one line each) in a query string."""
    preset: str | None = None
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, raw in parse_qsl(query.lstrip("?"), keep_blank_values=True):
        if key == "scenario":
            preset = raw
            continue
        if key not in controls.controls:
            problems.append(f"'{key}' is not a control of this app; ignored.")
            continue
        current = controls.value(key)
        try:
            values[key] = _parse(key, raw, current, controls)
        except ValueError as exc:
            problems.append(f"'{key}={raw}': {exc}; ignored.")
    return preset, values, problems


def _parse(key: str, raw: str, current: Any, controls: Controls) -> Any:
    if isinstance(current, bool):
        if raw not in ("0", "1"):
            raise ValueError("expected 0 or 1")
        return raw == "1"
    if isinstance(current, tuple):
        chosen = tuple(p for p in PLATFORMS if p in raw.split(","))
        unknown = [p for p in raw.split(",") if p and p not in PLATFORMS]
        if unknown or not chosen:
            raise ValueError(f"expected platforms among {', '.join(PLATFORMS)}")
        return chosen
    if isinstance(current, float):
        value = float(raw)  # ValueError names the text
        if not 0 <= value <= 1e6:
            raise ValueError("expected a non-negative number")
        return value
    widget = controls[key]
    options = [v for _label, v in getattr(widget, "options", ())]
    if options and raw not in options:
        raise ValueError(f"expected one of {', '.join(map(str, options))}")
    return raw


def request_query() -> str:
    """The query string of the page this kernel serves (empty outside Voila).

    With pre-heated kernels Voila runs the notebook before anyone asks for it; this waits for
    the request, so call it after the heavy start-up, just before applying the link's settings.
    """
    if os.environ.get("VOILA_PREHEAT", "False") != "False":
        from voila.utils import wait_for_request

        wait_for_request()
    return os.environ.get("QUERY_STRING", "")
