"""report/values.py: the one way every command writes money, a share and a missing value."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpu_audit.report.formats import COMMANDS
from gpu_audit.report.values import MINUS, MISSING, money, percent


@pytest.mark.parametrize(
    ("amount", "kwargs", "shown"),
    [
        (1234.5, {}, "$1,234.50"),
        (0.609, {}, "$0.61"),
        (-12.5, {}, "-$12.50"),
        (-0.001, {}, "$0.00"),  # rounds to nothing: never `-$0.00`
        (0, {}, "$0.00"),
        (Decimal("0.125"), {}, "$0.13"),  # a bill's Decimal: half up, as invoices round
        (0.125, {}, "$0.12"),  # a float as Python writes it (the reports' cents are rounded)
        (Decimal("-1234.565"), {}, "-$1,234.57"),
        (98.32, {"places": 4}, "$98.3200"),  # a price list's price per hour
        (Decimal("2.3456"), {"places": 3}, "$2.346"),  # a bill's cost per GPU-hour
        (600020.4, {"places": 0}, "$600,020"),  # whole dollars
        (12.0, {"signed": True}, "+$12.00"),
        (-12.0, {"signed": True}, f"{MINUS}$12.00"),  # a decrease reads as one
        (27.45, {"per": "/h"}, "$27.45/h"),
        (1.5, {"fmt": "markdown"}, "\\$1.50"),  # GitHub reads a pair of `$` as math
        (-3, {"fmt": "markdown", "signed": True}, f"{MINUS}\\$3.00"),
    ],
)
def test_money(amount: float | Decimal, kwargs: dict[str, object], shown: str) -> None:
    assert money(amount, **kwargs) == shown  # type: ignore[arg-type]


def test_a_missing_amount_is_the_formats_mark_and_takes_no_unit() -> None:
    formats = {name for offered in COMMANDS.values() for name in offered}
    assert formats <= set(MISSING), "every format has its mark"
    assert money(None) == "-" and money(None, "table", per="/h", signed=True) == "-"
    assert money(None, "markdown") == "–" and money(None, "csv") == ""


@pytest.mark.parametrize(
    ("share", "kwargs", "shown"),
    [
        (0.253, {}, "25.3%"),
        (Decimal("0.12345"), {}, "12.3%"),
        (Decimal("0.00125"), {"places": 1}, "0.1%"),  # half up
        (12.5, {"scaled": False, "places": None}, "12.5%"),
        (40.0, {"scaled": False, "places": None}, "40%"),
        (None, {}, "-"),
        (None, {"fmt": "markdown"}, "–"),
    ],
)
def test_percent(share: float | Decimal | None, kwargs: dict[str, object], shown: str) -> None:
    assert percent(share, **kwargs) == shown  # type: ignore[arg-type]
