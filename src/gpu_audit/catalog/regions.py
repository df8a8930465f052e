"""Region names a cloud could have: a lookup in an unknown region is refused, not repriced."""

from __future__ import annotations

import re
from difflib import get_close_matches

from gpu_audit.catalog.lookup import _price_index
from gpu_audit.errors import ConfigError

# The shapes of each cloud's region names (a region newer than the catalog still fits its
# cloud's shape, and is priced at the reference region, marked so): AWS `us-east-1`,
# `us-gov-west-1`, `ap-southeast-3`; GCP `us-central1`, `europe-west4`; Azure `eastus2`.
SHAPES = {
    "aws": re.compile(
        r"(us|eu|ap|sa|ca|me|af|il|mx|cn)(-gov|-iso[a-z]?)?-"
        r"(north|south|east|west|central)(east|west)?-\d{1,2}"
    ),
    "gcp": re.compile(
        r"(us|europe|asia|australia|northamerica|southamerica|me|africa)-"
        r"(north|south|east|west|central|northeast|northwest|southeast|southwest)\d{1,2}"
    ),
    "azure": re.compile(r"[a-z]*(central|east|west|north|south)[a-z]*\d?"),
}


def known_regions(cloud: str) -> list[str]:
    """The regions the catalog prices something of `cloud` in, alphabetically."""
    index = _price_index()
    return sorted({region for item, region in index.pairs() if index.clouds.get(item) == cloud})


def check_region(region: str, clouds: tuple[str, ...]) -> None:
    """Refuse `region` when no cloud of `clouds` prices anything there or could name a region so,
    suggesting the closest regions the catalog knows."""
    if any(region in known_regions(c) or SHAPES[c].fullmatch(region) for c in clouds):
        return
    known = [r for c in clouds for r in known_regions(c)]
    close = get_close_matches(region, known, n=3, cutoff=0.5)
    if close:
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)"
    else:
        more = f", … {len(known)} in all" if len(known) > 6 else ""
        hint = f" (the catalog prices it in {', '.join(known[:6])}{more})"
    where = " or ".join(clouds)
    raise ConfigError(f"--region: '{region}' is not a region of {where}{hint}")
