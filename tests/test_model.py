"""Small derived values of the data model that every report relies on."""

from __future__ import annotations

import pytest

from gpu_audit.core.results import CoverageGap


@pytest.mark.parametrize(
    ("gap", "location"),
    [
        (
            CoverageGap(
                provider="aws",
                scope="account/region",
                error="Throttling",
                message="",
                account="123456789012",
                region="us-west-2",
            ),
            "aws 123456789012/us-west-2",
        ),
        (
            CoverageGap(
                provider="gcp",
                scope="project ml-prod",
                error="Forbidden (403)",
                message="",
                account="ml-prod",
            ),
            "gcp project ml-prod",
        ),
        (
            CoverageGap(
                provider="aws",
                scope="account",
                error="AccessDenied",
                message="",
                account="123456789012",
            ),
            "aws account 123456789012",
        ),
        (
            CoverageGap(
                provider="aws", scope="111122223333/eu-west-1", error="AccessDenied", message=""
            ),
            "aws 111122223333/eu-west-1",
        ),
    ],
)
def test_coverage_gap_location_names_what_could_not_be_read(
    gap: CoverageGap, location: str
) -> None:
    assert gap.location == location
