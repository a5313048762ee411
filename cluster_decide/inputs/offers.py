"""The catalog's market tables: rental offers, owned-node extras, the resale curve, burst caps.

Read from ``data/catalog`` (``offers.csv``, ``onprem.csv``, ``resale.csv``, ``burst_caps.csv``),
every row checked for its provenance: a source with a URL and date, or the source
``assumption`` with its reasoning. :mod:`cluster_decide.inputs.catalog` loads them with the rest of the
catalog; :mod:`cluster_decide.inputs.market` prices a scenario's GPUs from them.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Final

__all__ = [
    "CLOUD_CLASSES",
    "PROVIDER_CLASSES",
    "TERMS",
    "Offer",
    "OnPremNode",
    "read_burst_caps",
    "read_offers",
    "read_onprem",
    "read_resale",
]

PROVIDER_CLASSES: Final = ("on_prem", "hyperscaler", "gpu_cloud", "marketplace")
"""Where GPUs come from: owned, or rented from one of three kinds of seller."""
CLOUD_CLASSES: Final = ("hyperscaler", "gpu_cloud", "marketplace")
"""Provider classes that rent GPUs (a scenario's ``procurement.provider_classes``)."""
TERMS: Final = ("on_demand", "commit_1y", "commit_3y", "spot")
"""How rented GPUs are paid for: by the hour, on a 1- or 3-year commitment, or as spot."""


@dataclass(frozen=True)
class Offer:
    """One way to rent a GPU type: seller class, seller, term and price per GPU-hour."""

    gpu: str
    provider_class: str
    provider: str
    term: str
    usd_per_gpu_hour: float
    multi_node: bool
    """Sold as a cluster with a fabric between nodes, so multi-node gangs can run on it."""
    gpus_per_instance: int | None = None
    """GPUs of the instance the price is for, where it holds fewer than a node of the GPU type
    (AWS g6e.xlarge: one L40S); None for a whole node. No job of more GPUs runs on it."""

    def holds(self, job_gpus: int, gpus_per_node: int) -> bool:
        """Whether one job of ``job_gpus`` GPUs runs on this offer's machines.

        A job within a node needs an instance that holds it; one that spans nodes needs whole
        nodes on a fabric (``multi_node``).
        """
        instance = self.gpus_per_instance or gpus_per_node
        if job_gpus > gpus_per_node:
            return self.multi_node and instance >= gpus_per_node
        return instance >= job_gpus

    @property
    def seller(self) -> str:
        """The company the offer is bought from: "AWS" for "AWS g6e.xlarge" (an instance named).

        A scenario's ``procurement.providers`` lists sellers, and a plan's words name them.
        """
        return self.provider.split()[0]


@dataclass(frozen=True)
class OnPremNode:
    """What an owned node needs besides the server: its share of the network fabric and storage."""

    fabric_usd: float
    storage_usd: float


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _check_provenance(path: Path, line: int, row: Mapping[str, str]) -> None:
    """A figure needs a source with a URL and date, or the source ``assumption`` with a note."""
    where = f"data/catalog/{path.name}, line {line}"
    source, url, date, note = (row.get(k, "").strip() for k in ("source", "url", "date", "note"))
    if source == "assumption":
        if not note:
            raise ValueError(f"{where}: an assumption needs its reasoning in the note column")
        return
    if not source or not date:
        raise ValueError(
            f"{where}: every figure needs a source and a date (or source 'assumption' and a note)"
        )
    if not url and not note:
        raise ValueError(f"{where}: a source without a URL must say why in the note column")


def read_offers(folder: Path) -> tuple[Offer, ...]:
    """The rental offers of ``offers.csv``, each checked for its provenance."""
    path = folder / "offers.csv"
    offers = []
    for line, row in enumerate(_rows(path), start=2):
        _check_provenance(path, line, row)
        if row["provider_class"] not in CLOUD_CLASSES or row["term"] not in TERMS:
            raise ValueError(
                f"data/catalog/offers.csv, line {line}: provider_class must be one of "
                f"{', '.join(CLOUD_CLASSES)} and term one of {', '.join(TERMS)}"
            )
        offers.append(
            Offer(
                gpu=row["gpu"],
                provider_class=row["provider_class"],
                provider=row["provider"],
                term=row["term"],
                usd_per_gpu_hour=float(row["usd_per_gpu_hour"]),
                multi_node=row["multi_node"].strip().lower() == "true",
                gpus_per_instance=_instance_gpus(line, row.get("gpus_per_instance")),
            )
        )
    return tuple(offers)


def _instance_gpus(line: int, text: str | None) -> int | None:
    """The ``gpus_per_instance`` column: empty for a whole node, else a whole number of GPUs."""
    if text is None or not text.strip():
        return None
    try:
        gpus = int(text)
    except ValueError:
        gpus = 0
    if gpus < 1:
        raise ValueError(
            f"data/catalog/offers.csv, line {line}: gpus_per_instance must be a whole number of "
            f"GPUs of at least 1, or empty for a whole node (got {text!r})"
        )
    return gpus


def read_resale(folder: Path) -> tuple[tuple[int, float], ...]:
    """The resale curve of ``resale.csv``: (months owned, fraction of the outlay), sorted."""
    path = folder / "resale.csv"
    points = []
    for line, row in enumerate(_rows(path), start=2):
        _check_provenance(path, line, row)
        points.append((int(row["months"]), float(row["residual_fraction"])))
    points.sort()
    fractions = [1.0] + [f for _m, f in points]
    if any(b > a for a, b in pairwise(fractions)):
        raise ValueError("data/catalog/resale.csv: the residual fraction must never rise with age")
    return tuple(points)


def read_onprem(folder: Path) -> dict[str, OnPremNode]:
    """Fabric and storage shares per owned node of each GPU type (``onprem.csv``)."""
    path = folder / "onprem.csv"
    values: dict[str, dict[str, float]] = {}
    for line, row in enumerate(_rows(path), start=2):
        _check_provenance(path, line, row)
        values.setdefault(row["gpu"], {})[row["attribute"]] = float(row["value"])
    return {
        gpu: OnPremNode(fabric_usd=v["fabric_usd_per_node"], storage_usd=v["storage_usd_per_node"])
        for gpu, v in values.items()
    }


def read_burst_caps(folder: Path) -> dict[str, int]:
    """On-demand GPUs an estate can rent per hour, per GPU type (``burst_caps.csv``)."""
    path = folder / "burst_caps.csv"
    caps = {}
    for line, row in enumerate(_rows(path), start=2):
        _check_provenance(path, line, row)
        caps[row["gpu"]] = int(row["gpus"])
    return caps
