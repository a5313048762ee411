"""The standalone report: one self-contained HTML file, and the same story in Markdown.

The HTML file embeds every chart as inline SVG and its style inline, and its content security
policy forbids any fetch, so it opens the same on a laptop with no network, from an e-mail
attachment or on an intranet share. The Markdown version links chart PNGs written to a folder
beside it (``<name>-images/``), for wikis and pull requests.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import polars as pl

from cluster_decide.export.atomic import write_atomic
from cluster_decide.export.content import Bundle, Section, Table, gather, headline, sections
from cluster_decide.export.figures import CHART_TITLES, Rendered, render
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.plan import Plan
from cluster_decide.style import FONT, INK, PALETTE, WIDTH

__all__ = ["html_report", "markdown_report", "report", "report_html"]

_CSS: Final = f"""
body {{ margin: 0; background: #fff; color: {INK}; font-family: {FONT}; line-height: 1.45; }}
main {{ max-width: 1040px; margin: 0 auto; padding: 24px 32px 48px; }}
h1 {{ font-size: 30px; margin: 8px 0 4px; }}
h2 {{ font-size: 22px; margin: 40px 0 6px; padding-left: 10px;
      border-left: 6px solid {PALETTE["blue"]}; }}
p.lead {{ font-size: 18px; margin: 6px 0 14px; }}
dl.rows {{ display: grid; grid-template-columns: max-content 1fr; gap: 10px 18px; font-size: 18px; }}
dl.rows dt {{ font-weight: 600; color: {PALETTE["blue"]}; }}
dl.rows dd {{ margin: 0; }}
h2.appendix {{ border-left-color: {PALETTE["grey"]}; }}
figure.chart {{ margin: 12px 0; overflow-x: auto; }}
figure.chart svg {{ max-width: 100%; height: auto; }}
table {{ border-collapse: collapse; margin: 10px 0; font-size: 14px; }}
th, td {{ padding: 5px 10px; border-bottom: 1px solid {PALETTE["light"]}; vertical-align: top;
          text-align: left; }}
th {{ background: {PALETTE["blue"]}; color: #fff; }}
td.num, th.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
td.num, td.short {{ white-space: nowrap; }}
details {{ margin: 8px 0; }}
summary {{ cursor: pointer; color: {PALETTE["blue"]}; }}
nav ol {{ columns: 2; padding-left: 20px; }}
footer {{ margin-top: 48px; color: {PALETTE["grey"]}; font-size: 13px; }}
"""
_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _scoped_svg(name: str, svg: str) -> str:
    """The SVG with its ids prefixed by the chart name, so charts on one page cannot clash."""
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{name}-\1"', svg)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{_e(CHART_TITLES[name])}" ', 1)


def _cell_class(value: str, numeric: bool) -> str:
    """Numbers right-aligned; short words (dates, levels) kept on one line."""
    if numeric:
        return " class=num"
    return " class=short" if len(value) <= 12 else ""


def _html_table(table: Table) -> str:
    head = "".join(
        f"<th{' class=num' if num else ''}>{_e(c)}</th>"
        for c, num in zip(table.columns, table.numeric, strict=True)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{_cell_class(v, num)}>{_e(v)}</td>"
            for v, num in zip(row, table.numeric, strict=True)
        )
        + "</tr>"
        for row in table.rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_section(sec: Section, charts: Mapping[str, Rendered]) -> str:
    klass = ' class="appendix"' if sec.appendix else ""
    parts = [f'<section id="{_e(sec.key)}">', f"<h2{klass}>{_e(sec.title)}</h2>"]
    if sec.rows:
        parts.append(
            '<dl class="rows">'
            + "".join(f"<dt>{_e(label)}</dt><dd>{_e(text)}</dd>" for label, text in sec.rows)
            + "</dl>"
        )
    if sec.lead:
        parts.append(f'<p class="lead">{_e(sec.lead)}</p>')
    if sec.chart and sec.chart in charts:
        parts.append(
            f'<figure class="chart" data-chart="{_e(sec.chart)}">'
            f"{_scoped_svg(sec.chart, charts[sec.chart].svg)}</figure>"
        )
    if sec.table is not None and sec.table.rows:
        parts.append(_html_table(sec.table))
    if sec.bullets:
        parts.append("<ul>" + "".join(f"<li>{_e(b)}</li>" for b in sec.bullets) + "</ul>")
    if sec.notes:
        parts.append(
            "<details><summary>Talking points</summary><ul>"
            + "".join(f"<li>{_e(n)}</li>" for n in sec.notes if n)
            + "</ul></details>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def html_report(
    bundle: Bundle, charts: Mapping[str, Rendered], timestamp: datetime | None = None
) -> str:
    """The report as one HTML document: inline style, inline SVG charts, no external fetch."""
    plan = bundle.plan
    title = f"How to run the GPU estate: {plan.scenario}"
    story = sections(bundle)
    nav = "".join(f'<li><a href="#{_e(s.key)}">{_e(s.topic or s.title)}</a></li>' for s in story)
    stamp = f" on {timestamp:%Y-%m-%d %H:%M}" if timestamp is not None else ""
    body = "\n".join(_html_section(s, charts) for s in story)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
        f'<h1>{_e(title)}</h1>\n<p class="lead">{_e(headline(plan))}</p>\n'
        f"<nav><ol>{nav}</ol></nav>\n{body}\n"
        f"<footer>Made with cluster_decide{_e(stamp)}. Every figure's source is listed under "
        "Key assumptions and sources.</footer>\n"
        "</main>\n</body>\n</html>\n"
    )


def report_html(bundle: Bundle, timestamp: datetime | None = None) -> str:
    """The HTML report of ``bundle`` as text, charts rendered here (for a download button)."""
    return html_report(bundle, render(bundle, width=WIDTH, png=False), timestamp)


def _md(text: str) -> str:
    """Text for Markdown: HTML and link syntax escaped, so a name like ``<script>`` stays text."""
    return html.escape(text, quote=False).replace("[", "\\[").replace("]", "\\]")


def _md_cell(text: str) -> str:
    return _md(text).replace("|", "\\|").replace("\n", " ")


def _md_table(table: Table) -> str:
    head = "| " + " | ".join(_md_cell(c) for c in table.columns) + " |"
    rule = "|" + "|".join("---:" if n else "---" for n in table.numeric) + "|"
    rows = ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in table.rows]
    return "\n".join([head, rule, *rows])


def markdown_report(
    bundle: Bundle, image_folder: str | None = None, timestamp: datetime | None = None
) -> str:
    """The report in Markdown; charts are linked as ``image_folder/NAME.png`` when given."""
    plan = bundle.plan
    lines = [f"# How to run the GPU estate: {_md(plan.scenario)}", ""]
    charts = set(CHART_TITLES)
    for sec in sections(bundle):
        lines += [f"## {_md(sec.title)}", ""]
        if sec.rows:
            lines += [f"- **{_md(label)}:** {_md(text)}" for label, text in sec.rows] + [""]
        if sec.lead:
            lines += [_md(sec.lead), ""]
        if sec.chart and image_folder is not None and sec.chart in charts:
            lines += [f"![{CHART_TITLES[sec.chart]}]({image_folder}/{sec.chart}.png)", ""]
        if sec.table is not None and sec.table.rows:
            lines += [_md_table(sec.table), ""]
        if sec.bullets:
            lines += [f"- {_md(b)}" for b in sec.bullets] + [""]
        if sec.notes:
            lines += ["<details><summary>Talking points</summary>", ""]
            lines += [f"- {_md(n)}" for n in sec.notes if n] + ["", "</details>", ""]
    stamp = f" on {timestamp:%Y-%m-%d %H:%M}" if timestamp is not None else ""
    lines += [f"_Made with cluster_decide{stamp}._", ""]
    return "\n".join(lines)


def report(
    source: Plan | Scenario | Bundle,
    html_path: str | os.PathLike[str] | None = None,
    markdown_path: str | os.PathLike[str] | None = None,
    *,
    scenario: Scenario | None = None,
    alternatives: pl.DataFrame | None = None,
    analyses: Mapping[str, pl.DataFrame] | None = None,
    timestamp: datetime | None = None,
    run_compare: bool = True,
    time_limit_s: float = 10.0,
    recommendation: Any = None,
) -> list[Path]:
    """Write the HTML report and/or the Markdown report; returns the paths written.

    ``recommendation`` is a verdict (``cd.recommend``'s result) the summary states.
    The Markdown file's chart PNGs go to ``<stem>-images/`` beside it. Everything is rendered
    before the first file is written, and each file is written atomically.
    """
    if html_path is None and markdown_path is None:
        raise ValueError("report: give html_path, markdown_path or both")
    bundle = gather(
        source, scenario, alternatives, analyses, run_compare, time_limit_s, recommendation
    )
    charts = render(bundle, width=WIDTH, png=markdown_path is not None)
    files: list[tuple[Path, bytes | str]] = []
    if html_path is not None:
        files.append((Path(html_path), html_report(bundle, charts, timestamp)))
    if markdown_path is not None:
        md = Path(markdown_path)
        folder = f"{md.stem}-images"
        files.append((md, markdown_report(bundle, folder, timestamp)))
        files += [(md.parent / folder / f"{n}.png", r.png) for n, r in charts.items()]
    return [write_atomic(path, data) for path, data in files]
