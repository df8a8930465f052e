"""How the billing report spells its figures in every format: each is the exact sum rounded
once (dollars to the cent, hours to the hundredth)."""

from __future__ import annotations

from decimal import Decimal

JSON_VERSION = 1
SCHEMA = "billing-v1.schema.json"
_DIMENSION_TITLES = {
    "cloud": "cloud",
    "account": "account / subscription / project",
    "region": "region",
    "instance_type": "instance type",
    "capacity": "capacity",
}


def hours(amount: Decimal) -> str:
    return f"{amount.quantize(Decimal('0.01')):,}"


def dimension_title(name: str) -> str:
    return f"tag `{name[4:]}`" if name.startswith("tag:") else _DIMENSION_TITLES.get(name, name)


def key_label(name: str, key: str | None) -> str:
    if key is not None:
        return key
    return "(untagged)" if name.startswith("tag:") else "(not stated)"
