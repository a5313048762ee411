"""The room's words: model sentences as the workbook shows them."""

from __future__ import annotations

from builders import two_clusters

import cluster_decide as cd
from cluster_decide.widgets.html import plain, reasons_html


def test_pool_names_become_platform_words_that_still_tell_two_pools_apart() -> None:
    """A sentence that opened with a pool's name read "The the Slurm pool is sized ..." (the
    lower-case "the" alone was folded), and the default's two Slurm pools were both "the Slurm
    pool". Now the capital stays, and a platform with two pools keeps each pool's name."""
    plan = cd.solve(cd.load_scenario("research-lab"), workers=1)
    shown = [plain(s, plan) for s in plan.explanations]
    assert not [s for s in shown if "the the " in s.lower()]
    assert "The Slurm pool (lab-h100) needs 22 of its 24 H100 nodes" in " ".join(shown)
    assert any(
        s.startswith("The Slurm pool (lab-a100) is sized for its busiest hour") for s in shown
    )
    assert "the the" not in reasons_html(plan).lower()
    # One pool of a platform is named by the platform alone.
    assert plain("The k8s pool is sized for its busiest hour.", _one_kubernetes_pool()) == (
        "The Kubernetes pool is sized for its busiest hour."
    )


def _one_kubernetes_pool() -> cd.Plan:
    return cd.solve(two_clusters(10_000.0), workers=1)
