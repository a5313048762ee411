"""Widgets for the workbook and the Voila app: scenario picker, controls, answer, A/B.

Notebooks stay thin: ``cluster_decide.widgets.dashboard()`` is the review-meeting dashboard and
``cluster_decide.widgets.executive_app()`` the executive app; the parts are exported for notebooks
that arrange their own. ``Dashboard.live(render)`` gives a view that redraws with every answer.
"""

from cluster_decide.planning.plan import Plan
from cluster_decide.widgets.answer import CHARTS, AnswerPanel
from cluster_decide.widgets.apps import APP_TITLE, Dashboard, dashboard, executive_app
from cluster_decide.widgets.cache import INTERACTIVE_TIME_LIMIT_S, INTERACTIVE_WORK_LIMIT, PlanCache
from cluster_decide.widgets.change import change_sentence, is_jump
from cluster_decide.widgets.compare import ABCompare, ab_rows, scenario_changes
from cluster_decide.widgets.controls import (
    DASHBOARD_CONTROLS,
    EXECUTIVE_CONTROLS,
    Control,
    Controls,
    control,
)
from cluster_decide.widgets.html import reasons_html
from cluster_decide.widgets.picker import ScenarioPicker, read_upload
from cluster_decide.widgets.share import request_query

__all__ = [
    "APP_TITLE",
    "CHARTS",
    "DASHBOARD_CONTROLS",
    "EXECUTIVE_CONTROLS",
    "INTERACTIVE_TIME_LIMIT_S",
    "INTERACTIVE_WORK_LIMIT",
    "ABCompare",
    "AnswerPanel",
    "Control",
    "Controls",
    "Dashboard",
    "PlanCache",
    "ScenarioPicker",
    "ab_rows",
    "change_sentence",
    "control",
    "dashboard",
    "executive_app",
    "is_jump",
    "read_upload",
    "reasons_view",
    "request_query",
    "scenario_changes",
]


def reasons_view(plan: Plan) -> str:
    """Every reason of ``plan`` as a list (short first, detail on demand), for ``Dashboard.live``."""
    return reasons_html(plan)
