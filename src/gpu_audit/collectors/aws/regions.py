"""AWS region names checked against botocore's endpoint data before a scan starts."""

from __future__ import annotations

import re
from difflib import get_close_matches

from gpu_audit.collectors.aws.sessions import shared_loader
from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError


def check_regions(regions: tuple[str, ...]) -> None:
    """Refuse a name no AWS partition could have (`us-east1`), suggesting the region meant.

    A name that botocore does not list but that fits a partition's pattern (a region newer than
    the installed botocore) is let through: the scan then reports it as a gap if it is wrong.
    """
    if not regions:
        return
    try:
        import botocore.session  # the [aws] extra, maybe absent; off start-up
    except ImportError:
        return  # the missing extra is reported when the collector is created

    # The scan's loader: the endpoint data is parsed once. A partition's regions are all there
    # is: botocore's `get_available_regions` lists only endpoints that are among them (and
    # would parse the whole EC2 model, 0.1 s, to learn that EC2's endpoint prefix is "ec2").
    partitions = shared_loader(botocore.session.Session()).load_data("endpoints")["partitions"]
    patterns = [re.compile(p["regionRegex"]) for p in partitions]
    known = sorted({r for p in partitions for r in p.get("regions", {})})
    for region in regions:
        if region in known or any(p.match(region) for p in patterns):
            continue
        close = get_close_matches(region[:80], known, n=1, cutoff=0.75)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise ConfigError(f"--region: '{printable(region, 80)}' is not an AWS region{hint}")
