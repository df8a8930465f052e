"""Times written as text: `strftime` with the year always four digits.

`datetime.strftime("%Y")` writes year 999 as `999` on glibc (and `0999` elsewhere): a report's
time before year 1000 would then fail its schema's `^\\d{4}-` and sort wrongly. Every writer of a
machine-read time goes through `stamp`.
"""

from __future__ import annotations

from datetime import date

UTC_SECONDS = "%Y-%m-%dT%H:%M:%SZ"


def stamp(moment: date, fmt: str = UTC_SECONDS) -> str:
    """`moment.strftime(fmt)` with `%Y` as the year in four digits (`0999`)."""
    return moment.strftime(fmt.replace("%Y", f"{moment.year:04d}"))
