"""A diff as a pull-request comment: the total in the title, six columns, findings collapsed."""

from __future__ import annotations

from gpu_audit.diff.cells import across, cap, capacity, delta, gpus, headline, run, summary
from gpu_audit.diff.model import DiffResult, FindingNote, JobChange
from gpu_audit.report.markdown_text import inline

MARKER = "<!-- gpu-audit-diff -->"  # finds the comment to update (action.yml, the GitLab example)
HEADERS = ["job", "change", "GPUs", "capacity", "runtime cap", "per run"]  # six, no more


def _row(job: JobChange) -> str:
    where = f"{inline(job.name)}<br>{inline(job.file)}"
    cost = f"{inline(across(job, run))}<br>**{inline(delta(job))}**"
    cells = [
        where,
        job.change,
        inline(across(job, gpus)),
        inline(across(job, capacity)),
        inline(across(job, cap)),
        cost,
    ]
    return "| " + " | ".join(cells) + " |"


def _finding(note: FindingNote, resolved: bool = False) -> str:
    """A new finding as it reads now; a resolved one says what it `was` at base."""
    was = "was: " if resolved else ""
    return (
        f"- **{inline(note.severity)}** {inline(note.rule_id)} at {inline(note.location)}: "
        f"{was}{inline(note.message, 400)}"
    )


def render_markdown(result: DiffResult) -> str:
    """The diff as a pull-request comment: the total in its title, one row per changed job, new and
    resolved findings collapsed; every value escaped."""
    title = f"### GPU cost of this change: {inline(headline(result))}"
    lines = [MARKER, title, "", inline(summary(result), 600)]
    changed = result.changed
    if changed:
        lines += ["", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        lines += [_row(j) for j in changed]
    new = [f for j in changed for f in j.findings_new]
    resolved = [f for j in changed for f in j.findings_resolved]
    if new:
        noun = "finding" if len(new) == 1 else "findings"
        lines += ["", f"<details><summary>{len(new)} new {noun}</summary>", ""]
        lines += [_finding(f) for f in new] + ["", "</details>"]
    if resolved:
        noun = "finding" if len(resolved) == 1 else "findings"
        lines += ["", f"<details><summary>{len(resolved)} resolved {noun}</summary>", ""]
        lines += [_finding(f, resolved=True) for f in resolved] + ["", "</details>"]
    notes = [f"{inline(j.name)}: {inline(n)}" for j in changed for n in j.notes]
    notes += [f"not compared: {inline(e, 400)}" for e in result.errors]
    if notes:
        lines += ["", *(f"- {n}" for n in notes)]
    unchanged = len(result.jobs) - len(changed)
    footer = [f"{unchanged} GPU job(s) unchanged."] if unchanged else []
    if result.prices_as_of:
        footer.append(f"Prices as of {inline(', '.join(result.prices_as_of))} (gpu-audit catalog).")
    if footer:
        lines += ["", " ".join(footer)]
    return "\n".join(lines) + "\n"
