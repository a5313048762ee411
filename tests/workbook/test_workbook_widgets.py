"""Widget behaviour: set widget values as a user would, assert on the plan and the output."""

from __future__ import annotations

import base64
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import cluster_decide as cd
from cluster_decide.inputs.scenario import preset_path
from cluster_decide.planning.explain import ARCHETYPE_WORDS, money
from cluster_decide.widgets import Dashboard, PlanCache, executive_app, read_upload
from cluster_decide.widgets.apps import _what


def _svg_in(html: str) -> bool:
    return "<svg" in html and 'class="cd-chart"' in html


def test_dashboard_starts_with_the_default_plan(dash: Dashboard) -> None:
    plan = dash.plan
    assert plan is not None and plan.feasible and plan.archetype
    assert ARCHETYPE_WORDS[plan.archetype][1:] in dash.answer.headline.value
    assert money(plan.total_monthly_usd) in dash.answer.headline.value
    assert _svg_in(dash.answer.parts["architecture"].value)
    assert dash.answer.message.value == ""


def test_control_change_redraws_headline_and_architecture(dash: Dashboard) -> None:
    before_headline = dash.answer.headline.value
    before_arch = dash.answer.parts["architecture"].value
    before = dash.plan
    assert before is not None
    dash.controls.set_value("demand:distributed_training", 0.25)
    dash.controls.set_value("demand:fine_tuning", 0.25)
    plan = dash.plan
    assert plan is not None and plan is not before
    assert plan.total_monthly_usd < before.total_monthly_usd
    assert dash.answer.headline.value != before_headline
    assert money(plan.total_monthly_usd) in dash.answer.headline.value
    assert dash.answer.parts["architecture"].value != before_arch
    assert _svg_in(dash.answer.parts["architecture"].value)


def test_every_control_maps_to_the_scenario(dash: Dashboard) -> None:
    dash.controls.set_value("fte:hpc", 3.0)
    dash.controls.set_value("fte:kubernetes", 6.0)
    dash.controls.set_value("hiring", False)
    dash.controls.set_value("procurement", "on_prem")
    dash.controls.set_value("gpu_prices", 1.5)
    dash.controls.set_value("slo:latency", 2.0)
    dash.controls.set_value("budget", "2.5")
    dash.controls.set_value("platforms", ("slurm", "kubernetes", "kubernetes_batch"))
    scn = dash.scenario
    assert scn is not None
    assert scn.team.hpc.fte == 3.0 and scn.team.kubernetes.fte == 6.0
    assert not scn.hiring.allowed
    assert scn.procurement.mode == "on_prem" and scn.procurement.gpu_price_scale == 1.5
    assert scn.workload("support-assistant").p99_latency_ms == 3000
    assert scn.policy.budget_usd_per_month == 2.5e6
    assert scn.policy.platforms == ("slurm", "kubernetes", "kubernetes_batch")
    assert dash.plan is not None and dash.plan.feasible
    assert dash.plan.pools.filter(dash.plan.pools["platform"] == "shared").height == 0


def test_invalid_upload_shows_a_message_and_keeps_the_last_plan(dash: Dashboard) -> None:
    plan, headline = dash.plan, dash.answer.headline.value
    bad = (
        b'schema_version = 1\n[scenario]\nname = "x"\n[[workloads]]\nname = "a"\nkind = "pipelin"\n'
    )
    assert not dash.picker.load_bytes("bad.toml", bad)
    assert dash.plan is plan and dash.answer.headline.value == headline
    message = dash.answer.message.value
    assert "bad.toml" in message and "kept" in message and "pipeline" in message
    assert "Traceback" not in message
    assert not dash.picker.load_bytes("broken.toml", b"this is = = not toml")
    assert "invalid TOML" in dash.answer.message.value and dash.plan is plan
    assert not dash.picker.load_bytes("binary.toml", b"\xff\xfe\x00")
    assert "UTF-8" in dash.answer.message.value and dash.plan is plan


def test_invalid_control_value_shows_a_message_and_keeps_the_last_plan(dash: Dashboard) -> None:
    plan = dash.plan
    dash.controls.set_value("platforms", ())
    assert dash.plan is plan
    assert "at least one" in dash.answer.message.value
    dash.controls.set_value("platforms", ("slurm", "kubernetes", "kubernetes_batch", "shared"))
    assert dash.answer.message.value == ""


def test_infeasible_change_shows_each_fix_once_without_contradiction(dash: Dashboard) -> None:
    dash.controls.set_value("budget", "0.5")
    assert dash.plan is not None and not dash.plan.feasible
    assert "No plan meets every limit" in dash.answer.headline.value
    fixes = dash.answer.relaxations.value
    assert "Smallest changes that make it work" in fixes
    assert fixes.count("Raise the budget") == 1
    page = dash.answer.headline.value + fixes + dash.answer.reasons.value
    assert page.count("Raise the budget") == 1  # once on the page, not three times
    assert ":</li>" not in page and "ties:" not in page  # no dangling colon
    cap = re.search(r"to \$([\d.]+)([kM]) a month", fixes)
    assert cap is not None
    millions = float(cap.group(1)) * (1e-3 if cap.group(2) == "k" else 1.0)
    dash.controls.set_value("budget", f"{millions:.3f}")
    assert dash.plan.feasible  # the fix works as written
    assert dash.plan.cash_monthly_usd <= millions * 1e6 + 5e3
    assert "Traceback" not in dash.answer.message.value


def test_upload_then_save_and_download_round_trip(dash: Dashboard) -> None:
    text = cd.load_scenario("research-lab").to_toml().encode()
    assert dash.picker.load_bytes("lab.toml", text)
    assert dash.plan is not None and dash.plan.archetype == "slurm_only"
    dash.controls.set_value("fte:hpc", 1.0)
    key = dash.save_in_session("one engineer")
    assert key in dash.picker.scenarios and dash.picker.dropdown.value == key
    link = dash.download.value
    payload = re.search(r"base64,([A-Za-z0-9+/=]+)", link)
    assert payload is not None
    downloaded = base64.b64decode(payload.group(1))
    again = read_upload("download.toml", downloaded)
    assert again.team.hpc.fte == 1.0
    assert again.to_toml() == dash.scenario.to_toml()  # type: ignore[union-attr]


def test_pin_and_compare_shows_deltas(dash: Dashboard) -> None:
    assert dash.ab is not None
    dash.ab.pin()
    dash.controls.set_value("demand:realtime_inference", 2.0)
    view = dash.ab.view.value
    assert "A (pinned)" in view and "B (now)" in view
    assert "cd-up" in view  # doubling online inference costs more
    assert "peak_requests_per_second" in view  # what changed, by key
    dash.ab.clear()
    assert "Pin a plan" in dash.ab.view.value


def test_tabs_render_when_opened(dash: Dashboard) -> None:
    tabs = dash.answer.tabs
    assert tabs is not None
    for index, name in enumerate(dash.answer.tab_names):
        tabs.selected_index = index
        value = dash.answer.parts[name].value
        assert value, name
        if name in ("costs", "placements", "service_levels", "staffing", "sharing"):
            assert _svg_in(value), name


def test_preset_pick_resets_controls(dash: Dashboard) -> None:
    dash.controls.set_value("fte:hpc", 7.0)
    dash.picker.dropdown.value = "inference-platform"
    assert dash.controls.value("fte:hpc") == 0.0
    assert dash.plan is not None and dash.plan.archetype == "kubernetes_batch"
    hidden = dash.controls["demand:distributed_training"].layout.display
    assert hidden == "none"


def test_executive_app_shows_every_limit(plan_cache: PlanCache) -> None:
    app = executive_app(debounce_s=0.0, cache=plan_cache, recommend=None)
    assert {"budget", "platforms", "hiring", "gpu_prices"} <= set(app.controls.controls)
    assert app.controls.value("budget") == "3"  # the preset's $3M cap is on screen
    line = app.scenario_line.value
    assert "Set by the scenario" in line and "hiring up to 4 engineers" in line
    assert "×1.00 is today" in app.assumptions.value and "href=" in app.assumptions.value
    assert app.ab is None
    reasons = app.answer.reasons.value
    assert reasons.count("<li>") == 3
    assert _svg_in(app.answer.parts["costs"].value)


def test_debounced_changes_solve_once_and_show_the_last(plan_cache: PlanCache) -> None:
    app = executive_app(debounce_s=0.05, cache=plan_cache, prefetch=False, recommend=None)
    misses = plan_cache.misses
    for value in (1.05, 1.1, 1.15):
        app.controls.set_value("demand:training", value)
    assert 'data-busy="true"' in app.answer.busy.value
    app.wait()
    assert plan_cache.misses - misses == 1
    assert app.scenario is not None and app.controls.value("demand:training") == 1.15
    assert 'data-busy="false"' in app.answer.busy.value


def test_prefetch_solves_the_next_slider_step_ahead(plan_cache: PlanCache) -> None:
    app = executive_app(debounce_s=0.0, cache=plan_cache, prefetch=True, recommend=None)
    app.controls.set_value("fte:kubernetes", 4.5)
    app.wait(timeout_s=300)
    base = app.controls.base
    for value in (5.0, 4.0):
        assert app.controls.scenario_with("fte:kubernetes", value) in plan_cache
    assert base.team.kubernetes.fte == 4.0
    misses = plan_cache.misses
    app.prefetch = False  # count only the foreground solve
    app.controls.set_value("fte:kubernetes", 5.0)
    assert plan_cache.misses == misses  # answered from the prefetched plan


def test_the_upload_widget_loads_a_file_and_clears_itself(dash: Dashboard) -> None:
    content = cd.load_scenario("research-lab").to_toml().encode()
    upload = {
        "name": "lab.toml",
        "type": "application/toml",
        "size": len(content),
        "content": memoryview(content),
        "last_modified": datetime.now(timezone.utc),
    }
    dash.picker.upload.value = (upload,)
    assert dash.picker.dropdown.value == "uploaded: lab.toml"
    assert dash.plan is not None and dash.plan.scenario == cd.load_scenario("research-lab").name
    assert dash.picker.upload.value == ()


def test_export_button_offers_the_deck_and_the_report(dash: Dashboard) -> None:
    import io

    from pptx import Presentation

    dash.exporter.button.click()
    links = re.findall(
        r'download="([^"]+)" href="data:([^;]+);base64,([^"]+)"', dash.exporter.links.value
    )
    assert [name.rsplit(".", 1)[1] for name, _, _ in links] == ["pptx", "html"]
    deck = Presentation(io.BytesIO(base64.b64decode(links[0][2])))
    assert len(deck.slides) >= 8
    report = base64.b64decode(links[1][2]).decode("utf-8")
    assert money(dash.plan.total_monthly_usd) in report  # type: ignore[union-attr]
    assert not dash.exporter.button.disabled


def test_what_would_change_the_answer_panel(dash: Dashboard) -> None:
    assert dash.insight is not None
    job = dash.insight.compute()
    assert job is not None
    assert dash.insight.button.disabled  # running in the background
    job.join(300)
    assert not dash.insight.button.disabled
    html = dash.insight.output.value
    assert "None stays" not in html
    assert "traceback" not in html.lower()
    assert html.count("<svg") == 2, "break-even and lever charts"
    assert "<li>" in html


def test_the_panel_asks_about_the_demand_the_estate_has() -> None:
    """It asked every estate about real-time inference and distributed training: of an HPC
    centre with no service it said "Slurm only stays best for real-time inference demand from 1×
    to 4×", true of demand that is not there. It asks about the kinds the estate runs."""
    from cluster_decide.widgets.insight import InsightPanel

    scn = cd.load_scenario(Path(__file__).parent.parent / "data" / "hpc-outgrown.toml")
    panel = InsightPanel()
    panel.update(scn, cd.solve(scn))
    job = panel.compute()
    assert job is not None
    job.join(300)
    said = panel.output.value
    assert "traceback" not in said.lower() and "real-time inference" not in said
    assert "distributed training demand" in said and "batch inference demand" in said
    assert "GPU prices" in said


def test_a_cancelled_analysis_says_so_when_it_stops_at_once(
    dash: Dashboard, monkeypatch: Any
) -> None:
    """Cancel after the settings changed once: the job's thread stops before the click returns
    (as it may on a busy machine), and the panel says the user cancelled it, not the old reason."""
    from cluster_decide.widgets.background import BackgroundJob

    panel = dash.insight
    assert panel is not None
    panel.settings_changed()  # leaves its reason behind, as a moved slider does
    stop = BackgroundJob.cancel

    def stop_and_wait(job: BackgroundJob) -> None:
        stop(job)
        job.join(300)  # the thread has stopped and reported before cancel returns

    monkeypatch.setattr(BackgroundJob, "cancel", stop_and_wait)
    job = panel.compute()
    assert job is not None
    panel.cancel()
    assert job.cancelled and not job.thread.is_alive()
    assert "Analysis cancelled." in panel.status.value
    assert "Stopping" not in panel.status.value
    assert not panel.button.disabled


def test_the_analysis_button_is_enabled_before_the_panel_says_how_it_ended(
    dash: Dashboard,
) -> None:
    """The browser test read "Analysis cancelled", found the button still disabled and failed
    once in a CI run: the message was written before the button was enabled."""
    panel = dash.insight
    assert panel is not None
    seen: list[tuple[str, bool]] = []
    panel.status.observe(
        lambda change: seen.append((change["new"], panel.button.disabled)), names="value"
    )
    job = panel.compute()
    assert job is not None
    panel.cancel()
    job.join(300)
    said = [disabled for text, disabled in seen if "Analysis cancelled." in text]
    assert said == [False]


def test_grouped_slider_looks_ahead(plan_cache: PlanCache) -> None:
    app = executive_app(debounce_s=0.0, cache=plan_cache, prefetch=True, recommend=None)
    app.controls.set_value("demand:training", 1.2)
    app.wait(timeout_s=300)  # two look-ahead solves; a loaded machine takes a while
    assert app.controls.last_changed == "demand:training"
    for value in (1.25, 1.15):
        assert app.controls.scenario_with("demand:training", value) in plan_cache


def test_a_jump_is_explained_from_the_two_plans(plan_cache: PlanCache) -> None:
    app = executive_app(debounce_s=0.0, cache=plan_cache, prefetch=False, recommend=None)
    for old, new in ((1.0, 1.05), (1.05, 1.1), (1.1, 1.15)):
        before = app.plan
        app.controls.set_value("demand:training", new)
        after = app.plan
        assert before is not None and after is not None
        delta = after.total_monthly_usd - before.total_monthly_usd
        moved = after.archetype != before.archetype or abs(delta) > 0.03 * before.total_monthly_usd
        sentence = app.answer.change.value
        # A sentence exactly when the answer jumps, naming the change that caused it.
        assert bool(sentence) == moved, (old, new, sentence)
        if moved:
            assert f"Training demand ×{old:.2f} → ×{new:.2f}" in sentence
            assert f"({delta / before.total_monthly_usd:+.0%})" in sentence
        if after.archetype != before.archetype:
            assert "the answer moves from" in sentence


def test_reset_undo_and_share_link(plan_cache: PlanCache) -> None:
    app = executive_app(debounce_s=0.0, cache=plan_cache, prefetch=False, recommend=None)
    start = app.plan
    app.controls.set_value("demand:inference", 1.5)
    app.controls.set_value("fte:hpc", 3.0)
    query = app.share_query()
    assert query == "?scenario=enterprise-mixed&demand:inference=1.5&fte:hpc=3"
    other = executive_app(debounce_s=0.0, cache=plan_cache, prefetch=False, recommend=None)
    other.apply_query(query)
    assert other.controls.settings() == app.controls.settings()
    assert other.plan is app.plan  # the same question, the same answer
    app.undo()
    assert app.controls.value("fte:hpc") == 2.0 and app.controls.value("demand:inference") == 1.5
    app.reset()
    assert app.controls.value("demand:inference") == 1.0 and app.plan is start
    app.undo()  # a reset is undone like any change
    assert app.controls.value("demand:inference") == 1.5
    other.apply_query("?scenario=enterprise-mixed&fte:hpc=abc&nope=1")
    message = other.answer.message.value
    assert "fte:hpc=abc" in message and "nope" in message


def test_invalid_budget_is_refused_and_the_control_restored(plan_cache: PlanCache) -> None:
    app = executive_app(debounce_s=0.0, cache=plan_cache, prefetch=False, recommend=None)
    plan = app.plan
    for bad in ("abc", "-5", "1e9"):
        app.controls.set_value("budget", bad)
        assert "refused" in app.answer.message.value and "Budget cap" in app.answer.message.value
        assert app.controls.value("budget") == "3" and app.plan is plan
    app.controls.set_value("budget", "")
    assert app.scenario is not None and app.scenario.policy.budget_usd_per_month is None


def test_a_file_value_outside_a_slider_range_is_kept(dash: Dashboard) -> None:
    scn = cd.load_scenario().set_fte("hpc", 15.0).scale_gpu_prices(2.5)
    assert dash.picker.load_bytes("big-team.toml", scn.to_toml().encode())
    assert dash.controls.value("fte:hpc") == 15.0 and dash.controls["fte:hpc"].max >= 15.0
    assert dash.controls.value("gpu_prices") == 2.5
    assert dash.scenario is not None and dash.scenario.team.hpc.fte == 15.0
    assert "widened" in dash.answer.message.value


def test_a_file_that_buys_where_cheapest_loads_and_keeps_its_procurement(dash: Dashboard) -> None:
    """The procurement toggle offered cloud and on-prem only, so a file with ``mode = "cheapest"``
    (the Slurm lab's) raised a TraitError out of the upload instead of showing its plan."""
    path = Path(__file__).parent.parent / "data" / "slurm-lab-inference.toml"
    assert dash.picker.load_bytes("lab.toml", path.read_bytes())
    assert dash.controls.value("procurement") == "cheapest"
    assert dash.scenario is not None and dash.scenario.procurement.mode == "cheapest"
    plan = dash.plan
    assert plan is not None and plan.feasible and "Traceback" not in dash.answer.message.value
    assert plan.total_monthly_usd == cd.solve(cd.load_scenario(path)).total_monthly_usd
    dash.controls.set_value("procurement", "cloud")
    assert dash.scenario is not None and dash.scenario.procurement.mode == "cloud"
    dash.controls.set_value("procurement", "cheapest")
    assert dash.scenario is not None and dash.scenario.procurement.mode == "cheapest"
    # A change sentence names the modes in words, never as codes ("on_prem").
    assert _what("procurement", "on_prem", "cheapest") == "procurement on-prem → cheapest"


def test_live_views_redraw_with_the_controls(dash: Dashboard) -> None:
    from cluster_decide.widgets import reasons_view

    view = dash.live(reasons_view)
    before = view.value
    assert before.startswith('<ul class="cd cd-reasons">')
    dash.controls.set_value("demand:realtime_inference", 3.0)
    assert view.value != before and view.value == reasons_view(dash.plan)  # type: ignore[arg-type]


def test_a_verdict_hook_shows_under_the_headline(plan_cache: PlanCache) -> None:
    import threading
    from dataclasses import dataclass

    @dataclass
    class StandIn:
        verdict: str
        sentence: str

    gate = threading.Event()

    def recommend(scn: cd.Scenario) -> StandIn:
        gate.wait(10)
        return StandIn("adopt", f"{scn.name}: the cheapest plan wins by a clear margin.")

    app = executive_app(debounce_s=0.0, cache=plan_cache, prefetch=False, recommend=recommend)
    assert "Checking alternatives" in app.answer.verdict.value
    gate.set()
    app.wait()
    assert 'data-verdict="adopt"' in app.answer.verdict.value
    assert "clear margin" in app.answer.verdict.value


def test_hostile_uploads_show_a_message_and_change_nothing(dash: Dashboard) -> None:
    """Deep nesting, an oversized file and a byte-order mark, uploaded as a user would.

    Nesting deeper than the TOML parser can follow once escaped the app as a RecursionError;
    each bad file now leaves the plan, the headline and the scenario list as they were and
    says what is wrong, naming the file.
    """
    plan, headline = dash.plan, dash.answer.headline.value
    offered = list(dash.picker.scenarios)
    hostile = {
        "deep-lists.toml": (b"schema_version = 1\nx = " + b"[" * 3000 + b"]" * 3000, "nested"),
        "deep-tables.toml": (b"x = " + b"{a = " * 3000 + b"1" + b"}" * 3000, "nested"),
        "huge.toml": (b"# padding\n" * 2_100_000, "at most 20 MB"),
        "tiny-deep.toml": (b"x = " + b"[" * 200_000, "nested"),
    }
    for name, (content, says) in hostile.items():
        assert not dash.picker.load_bytes(name, content)
        message = dash.answer.message.value
        assert name in message and "kept" in message and says in message, message
        assert "Traceback" not in message and "RecursionError" not in message
        assert dash.plan is plan and dash.answer.headline.value == headline
        assert list(dash.picker.scenarios) == offered
    # A byte-order mark (Windows editors write one) is not a reason to refuse a good file.
    with_bom = b"\xef\xbb\xbf" + preset_path("research-lab").read_bytes()
    assert dash.picker.load_bytes("bom.toml", with_bom), dash.answer.message.value
    assert "uploaded: bom.toml" in dash.picker.scenarios


def test_verdict_checks_run_one_at_a_time_and_the_last_answer_gets_its_own(
    plan_cache: PlanCache,
) -> None:
    """A slider moved three times while the first answer's check runs: the answers in between
    are never checked (at most one check competes with the next answer for the CPU; before,
    every answer started its own and four ran at once), and the verdict shown is the last
    answer's."""
    import threading
    from dataclasses import dataclass

    @dataclass
    class StandIn:
        verdict: str
        sentence: str

    gate = threading.Event()
    calls: list[float] = []
    running: list[int] = [0, 0]  # now, most at once

    def recommend(scn: cd.Scenario) -> StandIn:
        running[0] += 1
        running[1] = max(running)
        calls.append(scn.team.kubernetes.fte)
        gate.wait(10)
        running[0] -= 1
        return StandIn("close", f"checked at {calls[-1]:.1f} Kubernetes FTE")

    app = executive_app(debounce_s=0.0, cache=plan_cache, prefetch=False, recommend=recommend)
    start = float(app.controls.value("fte:kubernetes"))
    for step in (0.5, 1.0, 1.5):
        app.controls.set_value("fte:kubernetes", start + step)
        assert "Checking alternatives" in app.answer.verdict.value
    gate.set()
    app.wait()
    # The first answer's check, if it started before the slider moved, and the last one's.
    assert 1 <= len(calls) <= 2 and running[1] == 1, calls
    assert app.scenario is not None
    assert calls[-1] == app.scenario.team.kubernetes.fte == start + 1.5
    assert f"checked at {calls[-1]:.1f} Kubernetes FTE" in app.answer.verdict.value


def test_the_dashboard_states_the_verdict_too(plan_cache: PlanCache, monkeypatch: Any) -> None:
    """Everywhere the answer is shown, so is the verdict: the dashboard, like the executive
    app, checks the alternatives of each answer with ``cluster_decide.recommend``."""
    from dataclasses import dataclass

    from cluster_decide.widgets import dashboard

    @dataclass
    class StandIn:
        verdict: str
        sentence: str

    monkeypatch.setattr(cd, "recommend", lambda scn: StandIn("close", "Close call: stand-in."))
    dash = dashboard(debounce_s=0.0, cache=plan_cache, prefetch=False)
    dash.wait()
    assert 'data-verdict="close"' in dash.answer.verdict.value
    assert "<b>Close call:</b> stand-in." in dash.answer.verdict.value
    assert dashboard(debounce_s=0.0, cache=plan_cache, recommend=None).recommend is None


def test_the_verdict_line_names_its_verdict_once() -> None:
    """The recommendation's sentence opens with its verdict ("Close call: …"): the line under
    the headline bolds that opening instead of repeating it ("Close — Close call: …")."""
    from dataclasses import dataclass

    from cluster_decide.widgets.html import verdict_html

    @dataclass
    class StandIn:
        verdict: str
        sentence: str

    line = verdict_html(StandIn("close", "Close call: separate clusters beat one pool by 0.2%."))
    assert "<b>Close call:</b> separate clusters beat one pool by 0.2%." in line
    assert "Close —" not in line and line.count("Close") == 1
    other = verdict_html(StandIn("adopt", "the cheapest plan wins."))
    assert "<b>Adopt</b> — the cheapest plan wins." in other


def test_the_verdict_line_lists_the_caveats_it_ends_with() -> None:
    """The default's verdict ends with three sentences that qualify the plan's cost (one cluster
    fewer, whole nodes, one company): the line keeps the verdict as one sentence and lists them
    under it, each once, in order."""
    from dataclasses import dataclass

    from cluster_decide.widgets.html import verdict_html

    @dataclass
    class StandIn:
        verdict: str
        sentence: str
        caveats: tuple[str, ...]

    caveats = ("With two clusters instead of three, it costs 1.3% more.", "From one company, 9.2%.")
    line = verdict_html(
        StandIn(
            "close",
            "Close call: separate clusters beat one pool by 0.1%. " + " ".join(caveats),
            caveats,
        )
    )
    assert "<b>Close call:</b> separate clusters beat one pool by 0.1%.<ul" in line
    assert line.count("With two clusters") == 1 and line.count("From one company") == 1
    assert (
        '<ul class="cd-caveats"><li>With two clusters instead of three, it costs 1.3% more.</li><li>From one company, 9.2%.</li></ul>'
        in line
    )
    # A sentence that does not end with its caveats (an older object) is shown whole.
    whole = verdict_html(StandIn("close", "Close call: one pool by 0.1%.", caveats))
    assert "<ul" not in whole and "Close call:</b> one pool by 0.1%." in whole


def test_a_meeting_can_say_its_slurm_starts_cloud_nodes(dash: Dashboard) -> None:
    """The verdict prices a Slurm that adds nodes; the checkbox shows that plan."""
    university = Path(__file__).parents[1] / "data" / "university-teaching.toml"
    assert dash.picker.load_bytes("university.toml", university.read_bytes())
    fixed, fixed_scn = dash.plan, dash.scenario
    assert fixed is not None and fixed.archetype == "kubernetes_only" and fixed_scn is not None
    assert dash.controls.value("slurm_nodes") is False
    dash.controls.set_value("slurm_nodes", True)
    scn, plan = dash.scenario, dash.plan
    assert scn is not None and scn.catalog.platforms["slurm"].node_autoscaling == "native"
    assert plan is not None and plan.archetype == "slurm_only"
    assert plan.total_monthly_usd < fixed.total_monthly_usd
    assert _what("slurm_nodes", False, True) == "Slurm starting cloud nodes on"
    # A scenario without Slurm among its candidate platforms does not show the box.
    no_slurm = fixed_scn.restrict_platforms(["kubernetes", "kubernetes_batch"])
    assert dash.picker.load_bytes("no-slurm.toml", no_slurm.to_toml().encode())
    assert dash.controls["slurm_nodes"].layout.display == "none"
    # Nor one whose Slurm autoscales services: its pools rent whatever the box says.
    services = fixed_scn.update(
        {"platforms": {"slurm": {"capabilities": {"autoscaling": "native"}}}}
    )
    assert services.catalog.platforms["slurm"].adds_nodes
    assert dash.picker.load_bytes("services.toml", services.to_toml().encode())
    assert dash.controls["slurm_nodes"].layout.display == "none"
    assert dash.controls.value("slurm_nodes") is True
