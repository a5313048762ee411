"""The dashboard's "what would change the answer" panel: break-evens and what each lever is worth.

Both come from re-solving the model (``cluster_decide.analysis``): break-evens by bisection over
a few key inputs, lever values by solving once per lever. That takes tens of seconds on a busy
machine, so it runs in the background (:class:`BackgroundJob`) with a progress bar and a Cancel
button, while the controls keep answering. A result is shown only for the scenario on screen:
moving a control withdraws it, and an analysis of an earlier scenario that finishes late is
dropped.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w

from cluster_decide import charts
from cluster_decide.base.constants import WORKLOAD_KINDS
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.plan import Plan
from cluster_decide.widgets.background import BackgroundJob
from cluster_decide.widgets.html import message_html

__all__ = ["BREAK_EVEN_INPUTS", "InsightPanel", "break_even_inputs"]

BREAK_EVEN_INPUTS = ["demand:realtime_inference", "demand:distributed_training", "gpu_price"]
"""The inputs a review asks about first; each costs about ten solves a direction."""


def break_even_inputs(scn: Scenario) -> list[str]:
    """:data:`BREAK_EVEN_INPUTS` for ``scn``: a demand kind it lacks gives way to one it has.

    Two demand kinds at most (real-time inference and distributed training first, then the
    others in the vocabulary's order), then GPU prices. Asked about a kind the estate does not
    run, the panel said "Slurm only stays best for real-time inference demand from 1× to 4×" of
    an HPC centre with no service at all: true, and nothing a meeting can use.
    """
    kinds = {w.kind for w in scn.workloads}
    first = [i for i in BREAK_EVEN_INPUTS if i.removeprefix("demand:") in kinds]
    others = [f"demand:{k}" for k in WORKLOAD_KINDS if k in kinds and f"demand:{k}" not in first]
    return [*first, *others][:2] + [i for i in BREAK_EVEN_INPUTS if not i.startswith("demand:")]


class InsightPanel:
    """A button and what it computes: break-even sentences, a lever table and their charts."""

    def __init__(self, width: int = charts.WIDTH) -> None:
        self.width = width
        self.button = w.Button(
            description="What would change the answer?",
            icon="search",
            layout=w.Layout(width="300px"),
        )
        self.cancel_button = w.Button(
            description="Cancel", icon="stop", layout=w.Layout(width="110px", display="none")
        )
        self.progress = w.IntProgress(
            value=0, min=0, max=1, layout=w.Layout(width="300px", display="none")
        )
        self.status = w.HTML("")
        self.output = w.HTML("")
        self.box = w.VBox(
            [w.HBox([self.button, self.cancel_button]), self.progress, self.status, self.output]
        )
        self.scenario: Scenario | None = None
        self.plan: Plan | None = None
        self.job: BackgroundJob | None = None
        self._why_cancel = "Analysis cancelled."
        self.button.on_click(lambda _b: self.compute())
        self.cancel_button.on_click(lambda _b: self.cancel())

    def update(self, scenario: Scenario, plan: Plan | None = None) -> None:
        """The scenario on screen; an analysis of an earlier one is withdrawn (and stopped)."""
        if scenario != self.scenario:
            self.settings_changed()
            self.output.value = ""
        self.scenario, self.plan = scenario, plan

    def settings_changed(self) -> None:
        """The controls moved: stop an analysis under way now, before the new answer's solve."""
        self._why_cancel = (
            "The settings changed, so the analysis of the earlier ones was stopped; ask "
            "again for these."
        )
        self.cancel(quiet=True)

    def cancel(self, quiet: bool = False) -> None:
        """Stop the analysis under way, if any.

        The reason is set before the stop: the job's thread may stop at once and show it (until
        2026-12-04 it was set after, and a stop that won the race showed the previous reason,
        then "Stopping…" for good).
        """
        job = self.job
        if job is not None and not job.cancelled:
            if not quiet:
                self._why_cancel = "Analysis cancelled."
                self.status.value = message_html("Stopping…", "info")
            job.cancel()

    def _running(self, running: bool) -> None:
        self.button.disabled = running
        self.cancel_button.layout.display = None if running else "none"
        self.progress.layout.display = None if running else "none"

    def compute(self) -> BackgroundJob | None:
        """Start the analysis of the scenario on screen in the background; returns its job."""
        scn = self.scenario
        if scn is None:
            self.status.value = message_html("There is no plan to analyse yet.")
            return None
        if self.plan is not None and not self.plan.feasible:
            self.status.value = message_html(
                "No plan meets every limit, so nothing can change it yet: apply one of the fixes "
                "listed with the answer first.",
                "info",
            )
            return None
        from cluster_decide import analysis
        from cluster_decide.analysis.inputs import input_label

        steps: list[tuple[str, Any]] = [
            (
                f"break-even of {input_label(i)}",
                lambda i=i: analysis.break_evens(scn, inputs=[i]),
            )
            for i in break_even_inputs(scn)
        ]
        steps.append(("what each lever is worth", lambda: analysis.lever_values(scn)))
        self.output.value = ""
        self.progress.max, self.progress.value = len(steps), 0
        self._running(True)

        def progress(i: int, n: int, what: str) -> None:
            if self.job is job:
                self.progress.value = i
                self.status.value = message_html(
                    f"Step {i + 1} of {n}: solving the {what}…", "info"
                )

        # Each ending enables the button before it says how the analysis ended: a user (or a
        # browser test) who reads "Analysis cancelled" can ask again at once.
        def done(results: list[Any]) -> None:
            self._running(False)
            if self.job is job and self.scenario == scn:
                self.progress.value = len(steps)
                self.output.value = self._render(results)
                self.status.value = ""

        def error(exc: Exception) -> None:
            self._running(False)
            if self.job is job:
                self.status.value = message_html(
                    f"The analysis failed; the plan above is unchanged.\n{exc}"
                )

        def cancelled() -> None:
            self._running(False)
            if self.job is job:
                self.status.value = message_html(self._why_cancel, "info")

        job = BackgroundJob(steps, progress, done, error, cancelled)
        self.job = job
        return job.start()

    def _render(self, results: list[Any]) -> str:
        import polars as pl

        from cluster_decide.charts import analysis as analysis_charts

        evens = pl.concat(results[:-1], how="vertical_relaxed")
        levers = results[-1]
        sentences = [s for s in evens["sentence"].to_list() if s and not s.startswith("None ")]
        sentences += [s for s in levers["sentence"].head(5).to_list() if s]
        items = "".join(f"<li>{html.escape(s)}</li>" for s in sentences)
        return (
            f'<div class="cd cd-insight"><ul class="cd-reasons">{items}</ul></div>'
            + charts.to_svg(analysis_charts.break_even_chart(evens, self.width))
            + charts.to_svg(analysis_charts.levers_chart(levers, self.width))
        )
