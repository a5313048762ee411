"""docs/scenario.md is the scenario file reference: checked key by key against the models."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

import cluster_decide as cd
from cluster_decide.base import ranges
from cluster_decide.inputs import scenario as s

DOC = Path(__file__).resolve().parents[1] / "docs" / "scenario.md"
BASE = tuple(s._WorkloadBase.model_fields)
SECTIONS: dict[str, tuple[type[BaseModel], tuple[str, ...]]] = {
    "top level": (s.Scenario, ()),
    "[scenario]": (s.ScenarioInfo, ()),
    "[team.hpc], [team.kubernetes]": (s.Team, ()),
    "[hiring]": (s.Hiring, ()),
    "[procurement]": (s.Procurement, ()),
    "[policy]": (s.Policy, ()),
    "[[pools]]": (s.PoolSpec, ()),
    "[[workloads]], every kind": (s._WorkloadBase, ()),
    "[[workloads]], kind distributed_training or fine_tuning": (s.TrainingWorkload, BASE),
    "[[workloads]], kind batch_inference or pipeline": (s.DeadlineWorkload, BASE),
    "[[workloads]], kind experimentation": (s.ExperimentationWorkload, BASE),
    "[[workloads]], kind realtime_inference": (s.RealtimeWorkload, BASE),
    "[gpus.<type>]": (s.GpuOverride, ()),
    "[platforms.<platform>]": (s.PlatformOverride, ()),
    "[costs]": (s.CostOverride, ()),
}


def _every_key() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split("## Every key", 1)[1].split("\n## ", 1)[0]


def _documented() -> dict[str, dict[str, list[str]]]:
    """Section title -> key -> [type, unit, range, default, meaning], as the page states them."""
    out: dict[str, dict[str, list[str]]] = {}
    for block in _every_key().split("\n### ")[1:]:
        title = block.splitlines()[0].strip("`")
        rows = {}
        for line in block.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| `") and len(cells) == 6:
                rows[cells[0].strip("`")] = cells[1:]
        out[title] = rows
    return out


def _range(annotation: typing.Any, field: FieldInfo) -> ranges.Range | None:
    found = [m for m in field.metadata if isinstance(m, ranges.Range)]
    stack = [annotation]
    while stack and not found:
        a = stack.pop()
        found = [m for m in getattr(a, "__metadata__", ()) if isinstance(m, ranges.Range)]
        stack.extend(typing.get_args(a))
    return found[0] if found else None


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    d = field.default
    if d is None:
        return "none"
    if isinstance(d, bool):
        return str(d).lower()
    if isinstance(d, BaseModel):
        return "(table)"
    if isinstance(d, tuple):
        return "[" + ", ".join(f'"{x}"' for x in d) + "]"
    if isinstance(d, str):
        return f'"{d}"'
    if isinstance(d, dict):
        return "{}"
    return repr(d)


def test_every_section_of_the_models_is_documented() -> None:
    assert set(_documented()) == set(SECTIONS)


@pytest.mark.parametrize("title", list(SECTIONS))
def test_keys_defaults_units_and_ranges_match_the_models(title: str) -> None:
    model, inherited = SECTIONS[title]
    rows = _documented()[title]
    fields = {k: f for k, f in model.model_fields.items() if k not in inherited}
    assert list(rows) == list(fields), f"{title}: documented keys differ from the model's"
    for key, field in fields.items():
        typ, unit, span, default, meaning = rows[key]
        assert default == _default(field), f"{title} {key}: default"
        r = _range(field.annotation, field)
        assert (unit, span) == ((r.unit, r.text()) if r else ("", "")), f"{title} {key}: range"
        assert typ and meaning, f"{title} {key}: type and meaning must be stated"


def test_the_examples_form_a_scenario_that_loads(tmp_path: Path) -> None:
    blocks = re.findall(r"```toml\n(.*?)```", _every_key(), flags=re.S)
    path = tmp_path / "example.toml"
    path.write_text("\n".join(blocks), encoding="utf-8")
    scn = s.load_scenario(path)
    assert {w.kind for w in scn.workloads} == {
        "experimentation",
        "fine_tuning",
        "batch_inference",
        "realtime_inference",
    }
    assert scn.catalog.gpus["H100"].usd_per_gpu_hour_reserved == pytest.approx(2.10)
    assert scn.procurement.gpu_price_scale == pytest.approx(0.9)


def test_the_providers_listed_are_the_catalogs_sellers() -> None:
    """``procurement.providers`` takes the catalog's sellers by name; the page lists them."""
    text = (DOC.parent / "scenario.md").read_text(encoding="utf-8")
    listed = re.search(r"Names are the catalog's sellers \(([^;]*);", text)
    assert listed is not None
    names = re.findall(r"`([^`]+)`", listed.group(1))
    assert names == sorted({o.seller for o in cd.load_scenario().catalog.offers})
