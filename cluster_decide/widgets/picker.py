"""Pick the scenario to start from: a preset, an uploaded file, or one saved this session.

An upload is parsed and validated before it replaces anything; a bad file leaves the current
scenario (and its plan) in place and says what is wrong, naming the file, the key and the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w

from cluster_decide.base.errors import Problem, ScenarioError
from cluster_decide.inputs.scenario import (
    MAX_SCENARIO_BYTES,
    PRESETS,
    Scenario,
    load_scenario,
    parse_scenario,
    read_scenario_toml,
)

__all__ = ["ScenarioPicker", "read_upload"]


def read_upload(name: str, content: bytes) -> Scenario:
    """A scenario from an uploaded file's bytes; ScenarioError (file, key, fix) when it is bad.

    Read as `cluster-decide solve` reads a file: at most ``MAX_SCENARIO_BYTES``, a UTF-8
    byte-order mark skipped, nesting too deep to parse refused with a message (never a
    RecursionError in the app).
    """
    if len(content) > MAX_SCENARIO_BYTES:
        raise _problem(
            name,
            f"the file is {len(content) / 1e6:,.0f} MB; a scenario is read whole, so at most "
            f"{MAX_SCENARIO_BYTES // 1_000_000} MB is accepted",
        )
    return parse_scenario(read_scenario_toml(content, name), source=name)


def _problem(name: str, what: str) -> ScenarioError:
    return ScenarioError(name, [Problem("", what)])


class ScenarioPicker:
    """Presets, saved scenarios and an upload box; calls back with each scenario picked."""

    def __init__(self, presets: tuple[str, ...] = PRESETS, upload: bool = True) -> None:
        """Presets to offer; ``upload=False`` (the executive app) hides upload and saving."""
        self.scenarios: dict[str, Scenario] = {p: load_scenario(p) for p in presets}
        self.dropdown = w.Dropdown(
            options=[(self._label(k, s), k) for k, s in self.scenarios.items()],
            value=presets[0],
            description="Scenario",
            style={"description_width": "70px"},
            layout=w.Layout(width="420px"),
        )
        self.upload = w.FileUpload(accept=".toml", multiple=False, description="Load TOML")
        self.save_name = w.Text(
            placeholder="name to save as", layout=w.Layout(width="200px"), continuous_update=False
        )
        self.save_button = w.Button(description="Save in session", icon="bookmark")
        self._on_pick: list[Callable[[Scenario], None]] = []
        self._on_error: list[Callable[[str], None]] = []
        self.dropdown.observe(self._picked, names="value")
        self.upload.observe(self._uploaded, names="value")
        rows: list[w.Widget] = [self.dropdown]
        if upload:
            rows.append(w.HBox([self.upload]))
            rows.append(w.HBox([self.save_name, self.save_button]))
        self.box = w.VBox(rows)

    @staticmethod
    def _label(key: str, scn: Scenario) -> str:
        return f"{scn.name} ({key})" if key in PRESETS else key

    @property
    def current(self) -> Scenario:
        """The scenario selected in the dropdown."""
        return self.scenarios[str(self.dropdown.value)]

    def on_pick(self, callback: Callable[[Scenario], None]) -> None:
        """Call ``callback(scenario)`` whenever a scenario is picked or loaded."""
        self._on_pick.append(callback)

    def on_error(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(message)`` when an upload cannot be used."""
        self._on_error.append(callback)

    def add(self, key: str, scn: Scenario, select: bool = True) -> None:
        """Remember ``scn`` under ``key`` for this session, and select it."""
        self.scenarios[key] = scn
        self.dropdown.options = [(self._label(k, s), k) for k, s in self.scenarios.items()]
        if select:
            if self.dropdown.value == key:
                self._emit(scn)
            else:
                self.dropdown.value = key

    def _emit(self, scn: Scenario) -> None:
        for cb in self._on_pick:
            cb(scn)

    def _picked(self, change: Any) -> None:
        self._emit(self.scenarios[str(change["new"])])

    def load_bytes(self, name: str, content: bytes) -> bool:
        """Load an uploaded file; on a bad file report the error and keep everything as it is."""
        try:
            scn = read_upload(name, content)
        except ScenarioError as exc:
            message = f"Could not load {name}; the current scenario is kept.\n{exc}"
            for cb in self._on_error:
                cb(message)
            return False
        self.add(f"uploaded: {name}", scn)
        return True

    def _uploaded(self, change: Any) -> None:
        files = change["new"]
        if not files:
            return
        item = files[0]
        self.load_bytes(str(item["name"]), bytes(item["content"]))
        self.upload.value = ()  # so the same file can be loaded again after an edit
