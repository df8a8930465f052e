"""The price basis of a run: which price data priced it, named so two runs can be compared.

`gpu-audit merge` refuses shards priced on different data. The basis names every price source a
run reads, each by content digest and its range of `as_of` dates; a price file laid over the
bundled catalog (`--prices`) extends `price_basis` with one more entry.
"""

from __future__ import annotations

import csv
import hashlib
import os
from collections.abc import Iterable
from functools import cache

_BUNDLED = os.path.join(os.path.dirname(__file__), "data", "prices.csv")


def price_basis(extra_files: Iterable[str] = ()) -> str:
    """`bundled sha256:… as_of A..B` for the catalog, then one such entry per extra price file."""
    return "; ".join([_describe("bundled", _BUNDLED), *(_describe(p, p) for p in extra_files)])


@cache
def _describe(label: str, path: str) -> str:
    with open(path, "rb") as handle:
        content = handle.read()
    lines = [
        line for line in content.decode("utf-8").splitlines() if line and not line.startswith("#")
    ]
    dates = sorted({row.get("as_of") or "" for row in csv.DictReader(lines)} - {""})
    span = f"{dates[0]}..{dates[-1]}" if dates else "undated"
    return f"{label} sha256:{hashlib.sha256(content).hexdigest()[:16]} as_of {span}"
