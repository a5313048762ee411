"""How an export writes a fact: one formatter per unit and one display name per thing.

Every number on a slide, in the speaker notes, in the HTML and in the Markdown goes through one
of the formatters here, so the same fact reads the same everywhere ("1.75×" on one slide is
never "1.8×" on the next). Workloads, pools, platforms and architectures are shown by display
name, never by the scenario's slugs; :func:`Names.plain` rewrites a sentence that quotes them.
The glossary holds the few terms of art a deck cannot avoid, each glossed in plain words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import polars as pl

from cluster_decide.base.vocabulary import ARCHETYPE_LABELS, PLATFORM_LABELS, SKILL_LABELS
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.model.people import ADDON_SUFFIX
from cluster_decide.planning.explain import money
from cluster_decide.planning.plan import Plan
from cluster_decide.style import short_number

__all__ = [
    "GLOSSARY",
    "NOTE_WORDS",
    "Names",
    "article",
    "display",
    "effort",
    "finite",
    "fte",
    "gpu_hours",
    "gpus",
    "level",
    "multiple",
    "number",
    "pct",
    "platform",
    "skill",
    "text_table",
    "usd",
    "usd_year",
]

NOTE_WORDS: Final = 120
"""The most words of speaker notes a slide carries: what a presenter can say in a minute."""

_ACRONYMS: Final = {
    "api": "API",
    "llm": "LLM",
    "gpu": "GPU",
    "ml": "ML",
    "rl": "RL",
    "hpc": "HPC",
    "nlp": "NLP",
    "cv": "CV",
    "etl": "ETL",
    "rag": "RAG",
    "ci": "CI",
    "asr": "ASR",
    "tts": "TTS",
}
_SPELLING: Final = {
    "finetuning": "fine-tuning",
    "pretraining": "pre-training",
    "eval": "evaluation",
    "dev": "development",
    "k8s": "Kubernetes",
}
_POOL_NOUN: Final = {k: f"{label} cluster" for k, label in PLATFORM_LABELS.items()}
"""A pool's display name: its platform's label and "cluster" (numbered when there are more)."""
_ARCH_KEYS: Final = re.compile(r"\b(" + "|".join(sorted(ARCHETYPE_LABELS, key=len)[::-1]) + r")\b")
_INTERNAL: Final = (
    ("forced archetype", "required architecture"),
    ("forced", "required"),
    ("archetype", "architecture"),
)

GLOSSARY: Final = {
    "gang scheduling": "starting all the GPUs of a multi-node job at once, or none of them",
    "topology-aware": "placing a job's GPUs close together on the network so they talk fast",
    "p99": "the response time 99 requests in 100 beat (the slow tail users notice)",
    "Erlang C": "the standard queueing formula for waits when servers are busy",
    "GPU-hour": "one GPU used for one hour, the unit GPUs are priced and planned in",
    "on-demand": "GPUs rented by the hour for peaks, dearer than reserved capacity",
    "burst": "on-demand GPU-hours rented for peaks instead of buying for them",
    "FTE": "full-time equivalent: one engineer's working time",
    "NCCL": "NVIDIA's library for GPUs exchanging data during training",
    "ClusterQueue": "Kueue's per-team GPU quota on Kubernetes",
    "Kueue": "a Kubernetes add-on that queues batch jobs and shares GPUs fairly",
    "fair share": "a scheduler rule that gives each team its agreed slice over time",
    "QOS": "Slurm's quality-of-service limits per team or job class",
    "preemption": "pausing lower-priority work so urgent work can start",
    "break-even": "the value of an input at which another architecture becomes cheaper",
}
"""Terms a deck may not avoid, glossed for a non-specialist (the glossary slide lists those
that appear in the deck)."""


def usd(value: float) -> str:
    """Money the way it is said in a meeting ($1.25M, $85k, $900): every dollar figure."""
    return money(value)


def usd_year(value: float) -> str:
    """A yearly amount ($240k a year)."""
    return f"{money(value)} a year"


def fte(value: float) -> str:
    """Staff effort of the plan: one decimal, always (2.3 FTE, never 2.26 on another slide)."""
    return f"{value:.1f}"


def gpus(value: float) -> str:
    """A count of GPUs (whole GPUs, thousands separated)."""
    return f"{value:,.0f}"


def level(value: float) -> str:
    """A predicted or target service level (631 ms, 4.9 h), as the service-level chart prints it."""
    return short_number(value)


def multiple(value: float) -> str:
    """A multiplier on an input (1.75×): two decimals, everywhere it appears."""
    return f"{value:.2f}×"


def pct(value: float, digits: int = 0) -> str:
    """A share (53%); ``digits`` for small differences (1.2%)."""
    return f"{value:.{digits}%}"


def display(slug: str) -> str:
    """A slug as words: ``llm-pretraining`` → "LLM pre-training", ``chat-api`` → "Chat API"."""
    parts = [p for p in re.split(r"[-_\s]+", slug) if p]
    out = []
    for i, part in enumerate(parts):
        low = part.lower()
        word = _ACRONYMS.get(low) or _SPELLING.get(low) or (low if i else low.capitalize())
        if i == 0 and word == low:
            word = word[0].upper() + word[1:]
        out.append(word)
    return " ".join(out) if out else slug


@dataclass(frozen=True)
class Names:
    """Display names of one plan's workloads and pools (slug → words a room can repeat)."""

    workloads: dict[str, str]
    pools: dict[str, str]
    today: frozenset[str] = frozenset()
    """The clusters of today the scenario lists, by name (their pools are called so)."""

    @classmethod
    def of(cls, plan: Plan, scenario: Scenario | None = None) -> Names:
        """Names for every workload and pool the plan or its scenario mentions."""
        slugs = set(plan.placements["workload"].to_list())
        if scenario is not None:
            slugs |= {w.name for w in scenario.workloads}
        workloads = {s: display(s) for s in sorted(slugs)}
        platform_of = dict(zip(plan.pools["pool"], plan.pools["platform"], strict=True))
        platform_of.update(zip(plan.placements["pool"], plan.placements["platform"], strict=True))
        # A cluster of today the scenario lists is called by its own name (the room knows it
        # as hpc-a, not as "Slurm cluster A"), with or without the batch add-on the plan
        # installs on it. (An unlisted one, implied by workloads of today, has no name.)
        listed = scenario.current.clusters if scenario is not None and scenario.current else ()
        pools = {
            pool: f"{c.name} cluster" for c in listed for pool in (c.name, c.name + ADDON_SUFFIX)
        }
        by_platform: dict[str, list[str]] = {}
        for pool, platform in sorted(platform_of.items()):
            if pool not in pools:
                by_platform.setdefault(platform, []).append(pool)
        for platform, names in by_platform.items():
            noun = _POOL_NOUN.get(platform, PLATFORM_LABELS.get(platform, platform))
            noun = noun[0].upper() + noun[1:]
            for i, pool in enumerate(names):
                if len(names) == 1:
                    pools[pool] = noun
                else:
                    tail = pool.rsplit("-", 1)[-1]
                    pools[pool] = f"{noun} {tail.upper() if len(tail) <= 2 else i + 1}"
        return cls(workloads, pools, frozenset(c.name for c in listed))

    def workload(self, slug: str) -> str:
        """A workload's display name."""
        return self.workloads.get(slug) or display(slug)

    def pool(self, slug: str) -> str:
        """A pool's display name."""
        return self.pools.get(slug) or display(slug)

    def plain(self, text: str) -> str:
        """``text`` with workload slugs, pool ids and code names replaced by display names."""
        # A cluster of today keeps its own name where a sentence calls it a cluster, even when
        # a workload has the same name ("the train cluster" runs the workload train).
        kept = sorted(self.today, key=len, reverse=True)
        for i, name in enumerate(kept):
            text = re.sub(rf"(?<![\w-]){re.escape(name)} cluster\b", f"\x00{i}\x00 cluster", text)
        for slug in sorted(self.workloads, key=len, reverse=True):
            text = re.sub(rf"(?<![\w-]){re.escape(slug)}(?![\w-])", self.workloads[slug], text)
        for slug in sorted(self.pools, key=len, reverse=True):
            name = self.pools[slug]
            text = re.sub(rf"\b[Tt]he {re.escape(slug)} (pool|cluster)\b", f"the {name}", text)
            text = re.sub(
                rf"\b(on|in|and|to|from) {re.escape(slug)}(?![\w-])", rf"\1 the {name}", text
            )
        text = _ARCH_KEYS.sub(lambda m: ARCHETYPE_LABELS[m.group(1)], text)
        for key, label in PLATFORM_LABELS.items():
            if "_" in key:
                text = re.sub(rf"\b{key}\b", label, text)
        for code, words in _INTERNAL:
            text = re.sub(rf"\b{code}\b", words, text)
        for i, name in enumerate(kept):
            text = text.replace(f"\x00{i}\x00", name)
        text = re.sub(r"\bthe the\b", "the", text)
        text = re.sub(r"\bSLO(s?)\b", r"service target\1", text)
        text = _AN_NUMBER.sub(lambda m: m.group(1) + "n ", text)
        return re.sub(r"(^|[.!?]\s+)the\b", lambda m: m.group(1) + "The", text)


_AN_NUMBER: Final = re.compile(r"\b([Aa]) (?=(?:8|11(?!\d)|18(?!\d)))")
"""``a`` before a number said with a vowel sound (8, 80, 11%, 18.5): "an"."""


def article(text: str) -> str:
    """``text`` with "a" before a number said with a vowel sound made "an" ("an 11% rise")."""
    phrase = text if text.startswith(("a ", "A ")) else f"a {text}"
    return _AN_NUMBER.sub(lambda m: m.group(1) + "n ", phrase)


def skill(name: str) -> str:
    """A skill's display name (HPC (Slurm), Kubernetes)."""
    return SKILL_LABELS.get(name, name)


def platform(name: str) -> str:
    """A platform kind's display name (Slurm, Kubernetes + batch add-on)."""
    return PLATFORM_LABELS.get(name, name)


def text_table(rows: Sequence[Mapping[str, str]], columns: Sequence[str]) -> pl.DataFrame:
    """Rows of words as a frame of strings with exactly ``columns`` (typed even when empty)."""
    return pl.DataFrame(list(rows), schema=dict.fromkeys(columns, pl.String))


def finite(value: Any) -> bool:
    """Whether ``value`` is a number to print (not None, not NaN or infinite)."""
    return number(value) is not None


def number(value: Any) -> float | None:
    """``value`` as a float when it is a finite number, else None (duck-typed inputs)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def effort(value: float) -> str:
    """A catalog staffing input in FTE (0.25, 0.8, 1): as the catalog gives it, no padding."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def gpu_hours(value: float) -> str:
    """GPU-hours (a month, usually): whole hours, thousands separated."""
    return f"{value:,.0f}"
