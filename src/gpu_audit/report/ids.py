"""A resource id as a reader tells it apart: its distinguishing tail (`instance/i-0a1b…`,
`virtualmachines/gpu-01`), not its first 60 characters (an ARN's or ARM path's prefix, the
same for every resource of an account)."""

from __future__ import annotations

import re
from collections.abc import Iterable

_SEPARATORS = re.compile(r"[/:]")
# ids the billing report makes up from account/region/GPU: every part of them says something
_WHOLE = ("unattributed:", "unused:")


def tail(resource_id: str, segments: int = 2) -> str:
    """The last `segments` parts of an ARN, ARM id or API path (`kind/name`); a short or
    made-up id whole."""
    text = resource_id.rstrip("/:")
    if text.startswith(_WHOLE) or not text:
        return resource_id
    cuts = [m.start() for m in _SEPARATORS.finditer(text)]
    if len(cuts) < segments:
        return text
    return text[cuts[-segments] + 1 :]


def distinct_tails(ids: Iterable[str]) -> dict[str, str]:
    """Each id by its tail (`kind/name`), and where two ids share a tail, with the nearest part
    that tells them apart before it (`ml/…/virtualmachines/gpu-01`): two instances of one
    account read apart, and two `gpu-01`s of two resource groups too."""
    unique = list(dict.fromkeys(ids))
    shown = {rid: tail(rid) for rid in unique}
    groups: dict[str, list[str]] = {}
    for rid in unique:
        groups.setdefault(shown[rid], []).append(rid)
    for end, rids in groups.items():
        if len(rids) < 2:
            continue
        parts = {rid: _SEPARATORS.split(rid.rstrip("/:")) for rid in rids}
        for rid in rids:
            others = [parts[o] for o in rids if o != rid]
            mine = parts[rid]
            skip = len(_SEPARATORS.split(end))
            for back in range(skip + 1, len(mine) + 1):
                if all(len(o) < back or o[-back] != mine[-back] for o in others):
                    gap = "/" if back == skip + 1 else "/…/"
                    shown[rid] = f"{mine[-back]}{gap}{end}"
                    break
            else:
                shown[rid] = rid  # no one part tells it apart: all of it
    return shown


def shown_ids(ids: Iterable[str]) -> dict[str, str]:
    """`distinct_tails`, checked: any two that still read alike are shown whole."""
    shown = distinct_tails(ids)
    counts: dict[str, int] = {}
    for text in shown.values():
        counts[text] = counts.get(text, 0) + 1
    return {rid: rid if counts[text] > 1 else text for rid, text in shown.items()}
