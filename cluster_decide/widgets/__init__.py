"""Widgets for the workbook and the Voila app: scenario picker, controls, answer, A/B.

Notebooks stay thin: ``cluster_decide.widgets.dashboard()`` is the review-meeting dashboard and
``cluster_decide.widgets.executive_app()`` the executive app; the parts are exported for notebooks
that arrange their own.
"""

from cluster_decide.widgets.answer import CHARTS, AnswerPanel
from cluster_decide.widgets.cache import INTERACTIVE_TIME_LIMIT_S, PlanCache
from cluster_decide.widgets.compare import ABCompare, ab_rows, scenario_changes
from cluster_decide.widgets.controls import (
    DASHBOARD_CONTROLS,
    EXECUTIVE_CONTROLS,
    Control,
    Controls,
    control,
)
from cluster_decide.widgets.dashboard import Dashboard, dashboard, executive_app
from cluster_decide.widgets.picker import ScenarioPicker, read_upload

__all__ = [
    "CHARTS",
    "DASHBOARD_CONTROLS",
    "EXECUTIVE_CONTROLS",
    "INTERACTIVE_TIME_LIMIT_S",
    "ABCompare",
    "AnswerPanel",
    "Control",
    "Controls",
    "Dashboard",
    "PlanCache",
    "ScenarioPicker",
    "ab_rows",
    "control",
    "dashboard",
    "executive_app",
    "read_upload",
    "scenario_changes",
]
