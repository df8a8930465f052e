"""How the billing report spells its figures in every format: each is the exact sum rounded
once (dollars to the cent, hours to the hundredth)."""

from __future__ import annotations

from decimal import Decimal

_DIMENSION_TITLES = {
    "cloud": "cloud",
    "account": "account / subscription / project",
    "region": "region",
    "instance_type": "instance type",
    "capacity": "capacity",
}


def hours(amount: Decimal) -> str:
    """Hours to the hundredth with thousands separators (`1,234.50`)."""
    return f"{amount.quantize(Decimal('0.01')):,}"


def dimension_title(name: str) -> str:
    """A breakdown's title: tag `team` for the dimension `tag:team`, else the dimension's words."""
    return f"tag `{name[4:]}`" if name.startswith("tag:") else _DIMENSION_TITLES.get(name, name)


def key_label(name: str, key: str | None) -> str:
    """A breakdown line's label: its key, or `(untagged)` (a tag dimension) or `(not stated)` for
    None."""
    if key is not None:
        return key
    return "(untagged)" if name.startswith("tag:") else "(not stated)"
