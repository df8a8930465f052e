"""Amounts, shares and the mark for a missing value, written once for every command's outputs.

Every terminal table, text and Markdown output of every command (scan, check, merge, history,
estimate, diff, billing, catalog) writes money through `money` and a missing value as `MISSING`
says for its format. Where two outputs deliberately differ (a price per hour to a hundredth of
a cent, a diff's signed change), the difference is a parameter here, not a second formatter.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

# The mark for a value that is not known, per format: a terminal's ASCII hyphen, Markdown's en
# dash (a lone `-` in a table cell reads as a list), nothing in a CSV cell.
MISSING: dict[str, str] = {
    "table": "-",
    "text": "-",
    "markdown": "–",
    "csv": "",
    "json": "",
    "sarif": "",
}

MINUS = "\u2212"  # a decrease that must read as one (`−$12.00`), not a hyphen a reader may miss

_ZERO = {places: f"${0:.{places}f}" for places in range(7)}
_STEP = {places: Decimal(1).scaleb(-places) for places in range(7)}


def money(
    amount: float | Decimal | None,
    fmt: str = "text",
    *,
    places: int = 2,
    signed: bool = False,
    per: str = "",
) -> str:
    """An amount as every output writes it: `$12,345.67`, `-$5.00`, to `places` decimals (2:
    the cent, in every report; 4: a price-list price per hour; 0: whole dollars); a Decimal
    rounded half up (as invoices are), a float as Python formats it; `$0.00` never negative.
    `signed` (a change) writes `+` before a gain and `MINUS` before a loss; `per` follows a
    known amount (`/h`). Markdown escapes the `$` (GitHub reads a pair on one line as math);
    None is the format's `MISSING` mark."""
    if amount is None:
        return MISSING[fmt]
    if isinstance(amount, Decimal):
        amount = amount.quantize(_STEP[places], rounding=ROUND_HALF_UP)
    text = f"${abs(amount):,.{places}f}"
    if amount < 0 and text != _ZERO[places]:
        text = (MINUS if signed else "-") + text
    elif signed:
        text = "+" + text
    if fmt == "markdown":
        text = text.replace("$", "\\$")
    return text + per


def percent(
    share: float | Decimal | None,
    fmt: str = "text",
    *,
    places: int | None = 1,
    scaled: bool = True,
) -> str:
    """A share as a percentage to `places` decimals (None: as few as it needs, `12.5%`, `40%`);
    `scaled`: 0.253 is `25.3%`, else the value is in percent already. A Decimal is rounded half
    up; None is the format's `MISSING` mark."""
    if share is None:
        return MISSING[fmt]
    value = share * 100 if scaled else share
    if places is None:
        return f"{value:g}%"
    if isinstance(value, Decimal):
        value = value.quantize(_STEP[places], rounding=ROUND_HALF_UP)
    return f"{value:.{places}f}%"


def missing(fmt: str) -> str:
    """The mark for a value that is not known, in `fmt`."""
    return MISSING[fmt]
