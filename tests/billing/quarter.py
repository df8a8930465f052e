"""A synthetic quarter (2026-Q3) of FOCUS billing exports for three clouds, and its row-level truth.

`build_quarter(root)` writes `root/aws/` (an AWS Data Exports folder, FOCUS 1.2 with AWS columns,
Parquet + manifests), `root/azure/` (an Azure Cost Management container, FocusCost 1.0r2 runs, gzip
CSV and one Parquet run) and `root/gcp/` (GCP's FOCUS table written with EXPORT DATA to Parquet), each
in the layout its cloud documents, and returns a `Quarter` whose `rows` say what every written row is
and whether it counts. The layouts follow the clouds' documentation (layout_aws.py, layout_azure.py,
layout_gcp.py say which traps each holds), not any reader, so a reader's tests can hold it to them.

    python -m tests.billing.quarter OUTDIR [--demo]

writes the quarter to OUTDIR and prints its GPU totals; `--demo` writes the small flavour checked in
under fixtures/billing/demo/ (monthly usage rows, a 2-instance forgotten cluster with weekly rows).
Everything here is synthetic: accounts, ids, tags and amounts are made up.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from tests.billing import layout_aws, layout_azure, layout_gcp
from tests.billing.periods import DEMO, FULL
from tests.billing.truth import KINDS, Q3_END, Q3_START, Quarter, Row

__all__ = ["KINDS", "Q3_END", "Q3_START", "Quarter", "Row", "build_quarter"]

CLOUDS = {"aws": layout_aws.build, "azure": layout_azure.build, "gcp": layout_gcp.build}


def build_quarter(root: Path, *, demo: bool = False) -> Quarter:
    """Write the quarter's three export folders under `root` (replacing them) and return its truth."""
    flavour = DEMO if demo else FULL
    rows: list[Row] = []
    for cloud, build in CLOUDS.items():
        folder = root / cloud
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        rows += build(folder, flavour)
    return Quarter(root=root, period=(Q3_START, Q3_END), rows=tuple(rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.billing.quarter", description=__doc__.split("\n")[0]
    )
    parser.add_argument("outdir", type=Path)
    parser.add_argument(
        "--demo", action="store_true", help="the small flavour (fixtures/billing/demo)"
    )
    args = parser.parse_args(argv)
    quarter = build_quarter(args.outdir, demo=args.demo)
    print(
        f"{len(quarter.rows)} rows written under {args.outdir}, {len(quarter.in_period())} count in 2026-Q3"
    )
    for kind in ("gpu", "unused"):
        for cloud, t in sorted(quarter.totals(kind=kind, by="cloud").items()):
            print(
                f"{kind:6} {cloud:5} effective {t['effective']:>14} billed {t['billed']:>14}"
                f" gpu-hours {t['gpu_hours']:>12} rows {t['rows']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
