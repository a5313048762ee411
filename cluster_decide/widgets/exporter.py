"""The workbook's export button: the current plan as a slide deck and an HTML report to download.

Building a deck takes a few seconds (it solves every archetype for the alternatives slide and
renders the charts), so it happens only when asked, and a failure becomes a message.
"""

from __future__ import annotations

import re

import ipywidgets as w

from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.plan import Plan
from cluster_decide.widgets.html import download_link, message_html

__all__ = ["PPTX_MIME", "ExportPanel"]

PPTX_MIME = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


class ExportPanel:
    """A button that turns the plan on screen into a deck and a report, offered as downloads."""

    def __init__(self) -> None:
        self.button = w.Button(
            description="Export deck and report",
            icon="download",
            layout=w.Layout(width="max-content"),
        )
        self.links = w.HTML("")
        self.box = w.VBox([self.button, self.links])
        self.plan: Plan | None = None
        self.scenario: Scenario | None = None
        self.button.on_click(lambda _b: self.export())

    def update(self, plan: Plan, scenario: Scenario) -> None:
        """Remember the plan on screen; links from an earlier plan are withdrawn."""
        if plan is not self.plan:
            self.links.value = ""
        self.plan, self.scenario = plan, scenario

    def export(self) -> None:
        """Build the deck and the report of the current plan and show their download links."""
        if self.plan is None or self.scenario is None:
            self.links.value = message_html("There is no plan to export yet.")
            return
        from cluster_decide.export import build_deck, gather, report_html

        self.button.disabled = True
        self.links.value = message_html("Building the deck and the report…", "info")
        try:
            bundle = gather(self.plan, scenario=self.scenario)
            stem = re.sub(r"[^A-Za-z0-9]+", "-", self.scenario.name).strip("-").lower() or "plan"
            self.links.value = download_link(
                build_deck(bundle), f"{stem}.pptx", "Download the deck (PowerPoint)", PPTX_MIME
            ) + download_link(
                report_html(bundle), f"{stem}.html", "Download the report (HTML)", "text/html"
            )
        except Exception as exc:  # the room must never see a traceback
            self.links.value = message_html(f"The export failed; nothing was written.\n{exc}")
        finally:
            self.button.disabled = False
