"""Pair the jobs of two sides by file and job name (across renames), and price the change."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from gpu_audit.catalog.enrich import cents
from gpu_audit.core.fingerprint import fingerprint_of
from gpu_audit.diff.model import Cost, FindingNote, JobChange, Total
from gpu_audit.diff.sides import Job, Side

Key = tuple[str, str, int]  # (file at head, job name, occurrence of the name in the file)


def pair(base: Side, head: Side, moved: Mapping[str, str]) -> tuple[JobChange, ...]:
    """Every job of either side once: paired by (file, name); a base file git saw renamed is
    read under its new name. A job left alone on each side with the same name, from a file
    that exists on that side only, is the same job moved without git seeing a rename."""
    broken = {moved.get(f, f) for f in base.errors} | set(head.errors)
    before = {
        (moved.get(j.file, j.file), j.name, j.occurrence): j
        for j in base.jobs
        if moved.get(j.file, j.file) not in broken
    }
    after = {(j.file, j.name, j.occurrence): j for j in head.jobs if j.file not in broken}
    base_files = {moved.get(f, f) for f in base.files}
    pairs: list[tuple[Job | None, Job | None]] = []
    alone_before = [k for k in before if k not in after and k[0] not in head.files]
    alone_after = [k for k in after if k not in before and k[0] not in base_files]
    matched = _by_name(alone_before, alone_after)
    for key, job in after.items():
        old = matched.get(key)
        pairs.append((before.pop(old if old else key, None), job))
    pairs.extend((job, None) for job in before.values())
    changes = [_change(b, a, base, head) for b, a in pairs]
    return tuple(sorted(changes, key=lambda c: (c.file, c.name)))


def _by_name(alone_before: Sequence[Key], alone_after: Sequence[Key]) -> dict[Key, Key]:
    """head key → base key, for names that occur exactly once among the lone jobs of each side."""

    def unique(keys: Iterable[Key]) -> dict[tuple[str, int], Key]:
        found: dict[tuple[str, int], list[Key]] = {}
        for key in keys:
            found.setdefault((key[1], key[2]), []).append(key)
        return {name: keys[0] for name, keys in found.items() if len(keys) == 1}

    olds, news = unique(alone_before), unique(alone_after)
    return {news[name]: olds[name] for name in news.keys() & olds.keys()}


def _change(before: Job | None, after: Job | None, base: Side, head: Side) -> JobChange:
    job = after or before
    assert job is not None
    new, resolved = _findings(before, after, f"{job.file}#{job.name}#{job.occurrence}")
    was, now = (before.cost if before else None), (after.cost if after else None)
    notes: list[str] = []
    if before is not None and after is not None:
        renamed = before.file != after.file
        if renamed:
            notes.append(f"file renamed from {before.file}")
        if was is not None and now is not None and was.knobs != now.knobs:
            notes.append(knob_change(was.knobs, now.knobs))
        same = was == _moved(now, was) and not new and not resolved and not renamed
        change = "unchanged" if same else "modified"
    elif after is not None:
        change = "added"
        reason = base.no_gpu.get(after.file)
        if reason is not None:
            notes.append(f"at {base.label} {after.file} held no GPU job: {reason}")
    else:
        change = "removed"
        assert before is not None
        reason = head.no_gpu.get(before.file)
        if reason is not None:
            notes.append(f"at {head.label} {before.file} holds no GPU job: {reason}")
    run, percent, hourly = _delta(was, now)
    return JobChange(
        job.file, job.name, change, was, now, run, percent, hourly, new, resolved, tuple(notes)
    )


def knob_change(was: str, now: str) -> str:
    """`knobs changed: precision fp32 → bf16, workers 0 → 8`: what differs, knob by knob."""
    before, after = _knobs(was), _knobs(now)
    parts = [
        f"{name} {before.get(name, 'unstated')} → {after.get(name, 'unstated')}"
        for name in dict.fromkeys([*before, *after])
        if before.get(name) != after.get(name)
    ]
    return (
        "knobs changed: " + ", ".join(parts) + " (the run is priced at its cap either way; the "
        "knob rules' new and resolved findings say what the change saves)"
    )


def _knobs(text: str) -> dict[str, str]:
    pairs = (part.split("=", 1) for part in text.split("; ") if "=" in part)
    return {name: value for name, value in pairs if name != "measured"}


def _moved(now: Cost | None, was: Cost | None) -> Cost | None:
    """`now` compared as if at `was`'s place: a line moved by an edit above is no change."""
    if now is None or was is None:
        return now
    return replace(now, file=was.file, line=was.line)


def _findings(
    before: Job | None, after: Job | None, key: str
) -> tuple[tuple[FindingNote, ...], tuple[FindingNote, ...]]:
    """New and resolved findings, by fingerprint (rule id + the pair's stable key)."""
    old = {fingerprint_of(f.rule_id, key): f for f in (before.findings if before else ())}
    new = {fingerprint_of(f.rule_id, key): f for f in (after.findings if after else ())}
    return (
        tuple(f for p, f in new.items() if p not in old),
        tuple(f for p, f in old.items() if p not in new),
    )


def _delta(was: Cost | None, now: Cost | None) -> tuple[float | None, float | None, float | None]:
    """Per-run delta and its percent of the before run; the hourly delta (absent side: 0)."""
    sides = [c for c in (was, now) if c is not None]
    hourly = None
    if all(c.hourly_usd is not None for c in sides):
        hourly = round(_amount(now, "hourly_usd") - _amount(was, "hourly_usd"), 5)
    if any(c.run_usd is None for c in sides):
        return None, None, hourly
    before = _amount(was, "run_usd")
    delta = cents(_amount(now, "run_usd") - before)
    return delta, _percent(delta, before), hourly


def _amount(cost: Cost | None, name: str) -> float:
    value = getattr(cost, name) if cost is not None else None
    return 0.0 if value is None else float(value)


def _percent(delta: float, before: float) -> float | None:
    return round(100.0 * delta / before, 1) if before > 0 else None


def total(jobs: Sequence[JobChange]) -> Total:
    """The changed jobs' per-run sums (bounded, priced jobs only), and what they leave out."""
    changed = [j for j in jobs if j.change != "unchanged"]
    summed = [j for j in changed if j.delta_usd is not None]
    before = cents(sum(j.before.run_usd or 0.0 for j in summed if j.before))
    after = cents(sum(j.after.run_usd or 0.0 for j in summed if j.after))
    unbounded = [j for j in changed if j.unbounded and not j.unpriced]
    hourly = round(sum(j.delta_hourly_usd or 0.0 for j in unbounded), 5)
    delta = cents(after - before)
    return Total(
        before_run_usd=before,
        after_run_usd=after,
        delta_usd=delta,
        delta_percent=_percent(delta, before),
        changed_jobs=len(changed),
        unbounded_jobs=len(unbounded),
        unbounded_hourly_delta_usd=hourly,
        unpriced_jobs=sum(1 for j in changed if j.unpriced),
    )
