"""The dashboard's "what would change the answer" panel: break-evens and what each lever is worth.

Both come from re-solving the model (``cluster_decide.analysis``): break-evens by bisection over
a few key inputs, lever values by solving once per lever. That takes seconds, so the panel
computes only when asked, for the plan on screen, and keeps the last result until then.
"""

from __future__ import annotations

import ipywidgets as w

from cluster_decide import charts
from cluster_decide.scenario import Scenario
from cluster_decide.widgets.html import message_html

__all__ = ["BREAK_EVEN_INPUTS", "InsightPanel"]

BREAK_EVEN_INPUTS = ["demand:realtime_inference", "demand:distributed_training", "gpu_price"]
"""The inputs a review asks about first; each costs about ten solves a direction."""


class InsightPanel:
    """A button and what it computes: break-even sentences, a lever table and their charts."""

    def __init__(self, width: int = charts.WIDTH) -> None:
        self.width = width
        self.button = w.Button(
            description="What would change the answer?",
            icon="search",
            layout=w.Layout(width="300px"),
        )
        self.output = w.HTML("")
        self.box = w.VBox([self.button, self.output])
        self.scenario: Scenario | None = None
        self.button.on_click(lambda _b: self.compute())

    def update(self, scenario: Scenario) -> None:
        """The scenario on screen; an analysis of an earlier one is withdrawn."""
        if scenario != self.scenario:
            self.output.value = ""
        self.scenario = scenario

    def compute(self) -> None:
        """Solve the break-evens and lever values of the scenario on screen and show them."""
        if self.scenario is None:
            self.output.value = message_html("There is no plan to analyse yet.")
            return
        from cluster_decide import analysis, analysis_charts

        self.button.disabled = True
        self.output.value = message_html("Solving the alternatives (a few seconds)…", "info")
        try:
            evens = analysis.break_evens(self.scenario, inputs=BREAK_EVEN_INPUTS)
            levers = analysis.lever_values(self.scenario)
            items = "".join(f"<li>{s}</li>" for s in evens["sentence"].to_list())
            items += "".join(f"<li>{s}</li>" for s in levers["sentence"].head(5).to_list())
            self.output.value = (
                f'<div class="cd"><ul>{items}</ul></div>'
                + charts.to_svg(analysis_charts.break_even_chart(evens, self.width))
                + charts.to_svg(analysis_charts.levers_chart(levers, self.width))
            )
        except Exception as exc:  # the room must never see a traceback
            self.output.value = message_html(
                f"The analysis failed; the plan above is unchanged.\n{exc}"
            )
        finally:
            self.button.disabled = False
