"""Estimates and option tables as table (terminal), text, json or markdown; values in, text out."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from gpu_audit.estimate import FORMATS
from gpu_audit.estimate.model import JobEstimate, Option, OptionTable, Rate, Sweep
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.markdown_text import inline, prose
from gpu_audit.report.values import MISSING, money

JSON_VERSION = 1
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
JOB_HEADERS = [
    "job",
    "GPUs",
    "runtime",
    "GPU-h",
    "rate on-demand",
    "run on-demand",
    "rate spot",
    "run spot",
    "budget",
]
OPTION_HEADERS = [
    "instance type",
    "cloud",
    "region",
    "GPU",
    "GPUs/node",
    "GiB/GPU",
    "nodes",
    "capacity",
    "$/hour",
    "run",
    "budget",
]
# Markdown: at most six columns, so a table fits GitHub's 980 px page; the others grouped
MARKDOWN_JOB_HEADERS = [
    "job",
    "GPUs",
    "runtime",
    "on-demand rate · run",
    "spot rate · run",
    "budget",
]
MARKDOWN_OPTION_HEADERS = ["instance type", "where", "GPUs", "capacity", "$/hour", "run"]


def _gpu_hours(value: float | None) -> str:
    return MISSING["text"] if value is None else f"{value:g}"


def _clean(value: object) -> str:
    """A value from a file as one inert line: breaks folded, bidi and controls shown escaped."""
    return terminal_safe(" ".join(_CONTROLS.sub(" ", str(value)).split()))


def _gpus(e: JobEstimate) -> str:
    if e.gpu_count is None:
        return "unknown"
    if e.gpu_model is None:  # a Hydra launcher's `gpus_per_node`, Determined's `slots_per_trial`
        each = " per trial" if e.sweep is not None else ""
        return f"{e.gpu_count}{each} (GPU model not stated)"
    if e.nodes and e.gpus_per_node:
        return f"{e.gpu_model} × {e.gpus_per_node} × {e.nodes} node{'s' if e.nodes != 1 else ''}"
    return f"{e.gpu_model} × {e.gpu_count}"


def _hours(e: JobEstimate) -> str:
    return "unknown" if e.hours is None else f"{e.hours:g} h ({e.hours_from})"


_BUDGET_WORDS = {"over": "OVER", "within": "ok", "not evaluated": "not evaluated"}


def _budget(e: JobEstimate) -> str:
    if e.budget_state is None:
        return "-"
    return f"{money(e.budget_usd)} {_BUDGET_WORDS[e.budget_state]}"


def _job_row(e: JobEstimate) -> list[str]:
    od, spot = e.on_demand, e.spot
    return [
        _clean(e.job),
        _gpus(e),
        _hours(e),
        _gpu_hours(e.gpu_hours),
        money(od.hourly_usd if od else None, per="/h"),
        money(od.run_usd if od else None),
        money(spot.hourly_usd if spot else None, per="/h"),
        money(spot.run_usd if spot else None),
        _budget(e),
    ]


def _notes(e: JobEstimate) -> list[str]:
    """The lines under a job: where its price and region came from, and tuning worst cases."""
    lines = [f"{_clean(e.job)} ({_clean(e.location)}, {_clean(e.provider)}, {e.capacity}):"]
    rate = e.on_demand or e.spot
    if rate is not None:
        lines.append(
            f"  price: {_clean(rate.instance_type)}, {_clean(e.region_note)}; as of {rate.as_of}"
        )
        lines.append(f"  source: {_clean(rate.source)}")
    if e.hours is None:
        lines.append("  runtime unknown: the job sets no runtime cap; give --hours to cost a run")
    if e.budget_reason:
        lines.append(f"  budget {money(e.budget_usd)} not evaluated ({e.budget_reason})")
    if e.sweep is not None:
        lines.extend(f"  {line}" for line in _sweep_lines(e, e.sweep))
    if e.note:
        lines.append(f"  {_clean(e.note)}")
    if e.spot_lost_note:
        lines.append(f"  {_clean(e.spot_lost_note)}")
    return lines


def _sweep_lines(e: JobEstimate, sweep: Sweep) -> list[str]:
    """A sweep's ceiling, how it was reached, its wall clock and the pruned estimate."""
    if sweep.run_hours is None:
        why = (
            "no trial cap"
            if sweep.trials is None
            else f"{sweep.trials} trials, but no per-trial cap and no sweep timeout"
        )
        lines = [f"sweep ceiling not evaluated: {why}, so nothing in the file bounds it"]
    elif e.tuning_on_demand_usd is None and e.tuning_spot_usd is None:
        lines = [
            f"sweep ceiling not priced: at most {sweep.run_hours:g} h of one trial's capacity "
            f"({_how(sweep)})"
        ]
    else:
        lines = [
            f"sweep ceiling: on-demand {money(e.tuning_on_demand_usd)}, spot "
            f"{money(e.tuning_spot_usd)} ({_how(sweep)})"
        ]
    wall = []
    if sweep.parallel is not None:
        wall.append(f"up to {sweep.parallel} trials at once")
    if sweep.sweep_hours is not None:
        wall.append(f"wall clock at most {sweep.sweep_hours:g} h")
    if sweep.gpu_hours is not None:
        wall.append(f"{sweep.gpu_hours:g} GPU-hours at most")
    if wall:
        lines.append("sweep: " + "; ".join(wall))
    if sweep.pruned_share is not None and sweep.expected_run_hours is not None:
        priced = sweep.expected_on_demand_usd is not None or sweep.expected_spot_usd is not None
        figure = (
            f"on-demand {money(sweep.expected_on_demand_usd)}, spot "
            f"{money(sweep.expected_spot_usd)}"
            if priced
            else f"{sweep.expected_run_hours:,.2f} h of one trial's capacity"
        )
        lines.append(
            f"expected with pruning: {figure} (an estimate: an average trial runs "
            f"{sweep.pruned_share:.2%} of a full one under the pruner's schedule; the ceiling "
            "stays the bound)"
        )
    if e.budget_state in ("over", "within"):
        word = "over it" if e.budget_state == "over" else "within it"
        lines.append(
            f"budget {money(e.budget_usd)} held to the sweep ceiling on its own capacity "
            f"({money(e.ceiling_usd)}), not one trial: {word}"
        )
    return lines + list(sweep.notes)


def _how(sweep: Sweep) -> str:
    if sweep.bound_by == "timeout":
        at_once = sweep.parallel if sweep.trials is None else min(sweep.parallel or 0, sweep.trials)
        return (
            f"the sweep timeout binds: {at_once} trials at once × {sweep.timeout_hours:g} h × "
            "the rate"
        )
    attempts = f" × {sweep.attempts} attempts" if sweep.attempts > 1 else ""
    return (
        f"{sweep.trials} trials{attempts} × {sweep.trial_hours:g} h per trial "
        f"({sweep.trial_hours_from}) × the rate"
    )


def render_jobs(estimates: Sequence[JobEstimate], fmt: str) -> str:
    """Job estimates in `fmt` (json, markdown, text, else the terminal table), every value
    escaped."""
    if fmt == "json":
        return _json({"kind": "job-estimates", "jobs": [_job_json(e) for e in estimates]})
    if not estimates:
        return "No GPU jobs found.\n"
    rows = [_job_row(e) for e in estimates]
    notes = [line for e in estimates for line in _notes(e)]
    if fmt == "markdown":
        bullets = [f"{'  ' if n.startswith(' ') else ''}- {prose(n.strip())}" for n in notes]
        grouped = [
            [r[0], r[1], f"{r[2]}, {r[3]} GPU-h", f"{r[4]} · {r[5]}", f"{r[6]} · {r[7]}", r[8]]
            for r in rows
        ]
        return "\n".join([*_markdown(MARKDOWN_JOB_HEADERS, grouped), "", *bullets]) + "\n"
    if fmt == "text":
        return "\n".join(_text_job(e) for e in estimates)
    drop = ["GPU-h", "rate on-demand", "rate spot", "runtime"]  # the runs stay, and a budget
    if all(row[-1] == "-" for row in rows):
        drop.append("budget")
    return "\n".join([_tabulate(JOB_HEADERS, rows, drop), "", *notes]) + "\n"


def _text_job(e: JobEstimate) -> str:
    od, spot = e.on_demand, e.spot
    lines = [
        *_notes(e)[:1],
        f"  GPUs: {_gpus(e)}; runtime: {_hours(e)}; GPU-hours: "
        + ("unknown" if e.gpu_hours is None else f"{e.gpu_hours:g}"),
        _capacity_line("on-demand", od),
        _capacity_line("spot", spot),
        f"  budget: {_budget(e)}",
        *_notes(e)[1:],
    ]
    return "\n".join(lines) + "\n"


def _capacity_line(capacity: str, rate: Rate | None) -> str:
    hourly, run = (rate.hourly_usd, rate.run_usd) if rate else (None, None)
    return f"  {capacity}: {money(hourly, per='/h')}, one run {money(run)}"


def _job_json(e: JobEstimate) -> dict[str, Any]:
    data = asdict(e)
    data["over_budget"] = e.over_budget
    data["budget_state"] = e.budget_state
    data["ceiling_usd"] = e.ceiling_usd
    return data


def _option_rows(table: OptionTable) -> list[list[str]]:
    def name(option: Option) -> str:
        asked = table.asked
        return option.instance_type + (
            " (substitute)" if asked and option.instance_type != asked else ""
        )

    return [
        [
            name(o),
            o.cloud,
            o.region,
            o.gpu_model,
            str(o.gpus_per_node),
            f"{o.memory_gib_per_gpu:g}",
            str(o.nodes),
            o.capacity,
            money(o.hourly_usd, per="/h"),
            money(o.run_usd),
            _option_budget(table, o),
        ]
        for o in table.options
    ]


def _option_budget(table: OptionTable, option: Option) -> str:
    if table.max_usd is None:
        return "-"
    if option.run_usd is None:  # an hourly rate has no end: never "ok" against a budget
        return "not evaluated"
    return "OVER" if option.over_budget else "ok"


def _option_title(table: OptionTable) -> str:
    where = f" on {table.cloud}" if table.cloud else ""
    nodes = f" × {table.nodes} nodes" if table.nodes != 1 else ""
    if table.hours is None:
        span, order = " (hourly rates: give --hours to price a run)", "cheapest hour"
    else:
        span, order = f" for {table.hours:g} h", "cheapest run"
    first = f"{table.asked} first, then substitutes, each {order} first" if table.asked else ""
    title = (
        f"{table.gpu_model} × {table.gpus_per_node}{nodes}{span}{where}: "
        f"{len(table.options)} options, {first or order + ' first'}"
    )
    others = sorted({o.gpu_model for o in table.options} - {table.gpu_model})
    if others and not table.asked:
        hours = "at the same hours" if table.hours is not None else "per hour"
        title += (
            f". Other GPUs with at least the memory asked for are included ({', '.join(others)}),"
            f" {hours}"
        )
    return title


def _option_footer(table: OptionTable) -> list[str]:
    lines = []
    if table.max_usd is not None and table.hours is None:
        lines.append(
            f"Budget {money(table.max_usd)} not evaluated: without --hours a run has no end, so no "
            "option can be shown within it; give --hours to price a run."
        )
    if table.unpriced:
        lines.append(f"Not priced by the catalog: {', '.join(table.unpriced)}.")
    if table.withdrawn:
        lines.append(f"Not offered, no longer sold: {'; '.join(table.withdrawn)}.")
    dates = sorted({o.as_of for o in table.options})
    if dates:
        lines.append(f"Prices as of {dates[0]} to {dates[-1]}; sources per row: --format json.")
    return lines


def render_options(table: OptionTable, fmt: str) -> str:
    """The priced options of a GPU need in `fmt` (json, markdown, text, else the terminal table),
    every value escaped."""
    if fmt == "json":
        data = asdict(table)
        data["kind"] = "options"
        return _json(data)
    rows = _option_rows(table)
    if fmt == "markdown":  # six columns fit GitHub's page: the rest grouped
        grouped = [
            [
                r[0],
                f"{r[1]} {r[2]}",
                f"{_nodes(r[6])}{r[4]}× {r[3]} ({r[5]} GiB)",
                r[7],
                r[8],
                r[9] + ("" if r[10] == "-" else f" {r[10]}"),
            ]
            for r in rows
        ]
        body = _markdown(MARKDOWN_OPTION_HEADERS, grouped)
        head = f"**{inline(_option_title(table), 1000)}**"
        footer = [prose(line, 1000) for line in _option_footer(table)]
        return "\n".join([head, "", *body, "", *footer]) + "\n"
    if fmt == "text":
        lines = [
            f"{r[0]} {r[2]} {r[7]}: {r[8]}{'' if r[9] == '-' else ', run ' + r[9]} "
            f"({r[4]}× {r[3]}, {r[5]} GiB each)" + ("" if r[10] == "-" else f" {r[10]}")
            for r in rows
        ]
        return "\n".join([_option_title(table), *lines, *_option_footer(table)]) + "\n"
    drop = ["nodes", "GPUs/node", "cloud", "GiB/GPU", "GPU"]  # the instance type names its GPU
    if table.max_usd is None:  # --max-usd asked for the budget column: it stays
        drop.append("budget")
    drawn = _tabulate(OPTION_HEADERS, rows, drop)
    footer = [line for note in _option_footer(table) for line in _wrapped(note)]
    return "\n".join([*_wrapped(_option_title(table)), drawn, *footer]) + "\n"


def _wrapped(text: str) -> list[str]:
    """A title or note as lines that fit the terminal, as its table does."""
    import textwrap  # keeps textwrap off `estimate`'s start-up

    from gpu_audit.report.fit import terminal_width  # keeps report.fit off --help

    return textwrap.wrap(text, max(terminal_width(), 40), break_on_hyphens=False) or [text]


def _nodes(count: str) -> str:
    return "" if count == "1" else f"{count} nodes × "


def _tabulate(headers: Sequence[str], rows: Sequence[Sequence[str]], drop: Sequence[str]) -> str:
    """A table that fits the terminal as the scan table does (`drop`: the columns that go
    first when it is too wide); a budget verdict and a run's cost are never clipped."""
    from gpu_audit.report.fit import fitted, terminal_width  # keeps report.fit off --help

    keep = ("instance type", "budget", "run", "run on-demand", "run spot", "$/hour")
    return fitted(headers, rows, terminal_width(), drop, keep=keep)


def _markdown(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Every cell through `inline` (report/markdown_text.py): a job name's link, HTML tag or
    `|` stays text, and a rate's `$` cannot pair with the next one into inline math."""
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(inline(c, 400) for c in row) + " |" for row in rows]
    return out


def _json(data: dict[str, Any]) -> str:
    return json.dumps({"version": JSON_VERSION, **data}, indent=2, ensure_ascii=False) + "\n"


__all__ = ["FORMATS", "Rate", "render_jobs", "render_options"]
