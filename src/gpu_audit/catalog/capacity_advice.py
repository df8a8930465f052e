"""Compute Engine capacity advice (`advice.capacity`, Spot) as interruption-rate rows.

The answer's first recommendation gives `scores.estimatedUptime`, "the estimated run time of
the majority of Spot VMs in the request before preemption" (a duration, `3600s`), and
`scores.obtainability` (0-1, the likelihood of getting them). A row's rate is one preemption
per estimated uptime: `per_hour = 3600 ÷ estimatedUptime seconds`. An answer with no uptime
gives no row (not evaluated); one of another shape is refused.
"""

from __future__ import annotations

import math
import re
from typing import Any

from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError

SOURCE = "gcp-capacity-advice"
_DURATION = re.compile(r"(\d+(?:\.\d+)?)s")


def uptime_seconds(text: Any) -> float | None:
    """`"3600s"` → 3600.0 (protobuf Duration JSON); anything else None."""
    if not isinstance(text, str):
        return None
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        return None
    seconds = float(match.group(1))
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def advice_row(answer: Any, kind: str, region: str, day: str) -> dict[str, Any] | None:
    """The row of one `advice.capacity` answer for `kind` in `region`, or None (no uptime)."""
    where = f"gcp capacity advice: {printable(kind)} in {printable(region)}"
    if not isinstance(answer, dict):
        raise ConfigError(f"{where}: expected an object with recommendations")
    recommendations = answer.get("recommendations") or []
    if not isinstance(recommendations, list):
        raise ConfigError(f"{where}: recommendations: expected a list")
    if not recommendations:
        return None
    first = recommendations[0]
    scores = first.get("scores") if isinstance(first, dict) else None
    if not isinstance(scores, dict):
        raise ConfigError(f"{where}: recommendations[0].scores: expected an object")
    raw = scores.get("estimatedUptime")
    if raw is None:
        return None
    seconds = uptime_seconds(raw)
    if seconds is None:
        raise ConfigError(
            f"{where}: estimatedUptime {printable(repr(raw))} is not a duration (`3600s`)"
        )
    obtainability = scores.get("obtainability")
    said = f"estimatedUptime {raw.strip()}"
    if isinstance(obtainability, int | float) and not isinstance(obtainability, bool):
        said += f", obtainability {obtainability:g}"
    return {
        "provider": "gcp",
        "type": kind,
        "region": region,
        "per_hour": round(3600 / seconds, 8),
        "public": said,
        "source": SOURCE,
        "date": day,
    }
