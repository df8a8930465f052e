"""Small derived values of the data model that every report relies on."""

from __future__ import annotations

import pytest

from gpu_audit.core.results import CoverageGap


@pytest.mark.parametrize(
    ("gap", "location"),
    [
        (
            CoverageGap("aws", "account/region", "Throttling", "", "123456789012", "us-west-2"),
            "aws 123456789012/us-west-2",
        ),
        (
            CoverageGap("gcp", "project ml-prod", "Forbidden (403)", "", "ml-prod"),
            "gcp project ml-prod",
        ),
        (
            CoverageGap("aws", "account", "AccessDenied", "", "123456789012"),
            "aws account 123456789012",
        ),
        (
            CoverageGap("aws", "111122223333/eu-west-1", "AccessDenied", ""),
            "aws 111122223333/eu-west-1",
        ),
    ],
)
def test_coverage_gap_location_names_what_could_not_be_read(
    gap: CoverageGap, location: str
) -> None:
    assert gap.location == location
