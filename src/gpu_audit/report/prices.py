"""Which prices a report used and how old they are: one line for the Markdown header and stderr."""

from __future__ import annotations

from datetime import date

from gpu_audit.core.results import ScanResult


def prices_text(result: ScanResult) -> str:
    """`bundled catalog; oldest price used 2026-07-20 (128 days before this scan)`."""
    used = result.scope.prices or "bundled catalog"
    dates = sorted({r.price.as_of for r in result.resources if r.price.as_of})
    if not dates:
        return f"{used}; no resource priced"
    oldest = dates[0]
    try:
        days = (result.generated_at.date() - date.fromisoformat(oldest[:10])).days
    except ValueError:
        return f"{used}; oldest price used {oldest}"
    return f"{used}; oldest price used {oldest} ({days} days before this scan)"


def interruptions_text(result: ScanResult) -> str:
    """The interruption data the lost-work figures used, each source with its date; `–` when
    no resource was priced against it."""
    sources = sorted(
        {r.interruption.rate_source for r in result.resources if r.interruption.rate_source}
    )
    return "; ".join(sources) or "–"
