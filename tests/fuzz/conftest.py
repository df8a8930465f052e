"""Hypothesis profiles: a fixed, seeded run in the test suite; a long campaign for `make fuzz`.

`GPU_AUDIT_FUZZ_EXAMPLES=N` selects the campaign: N generated inputs spread over the fuzz tests,
random seeds, and failures recorded (not raised) to `GPU_AUDIT_FUZZ_LOG` when that is set, so one
finding does not end the campaign.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

TESTS = 4  # the fuzz tests in test_promises.py share the campaign's examples
EXAMPLES = int(os.environ.get("GPU_AUDIT_FUZZ_EXAMPLES", "0") or 0)
_QUIET = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.large_base_example,
]
settings.register_profile(
    "suite",
    max_examples=int(os.environ.get("GPU_AUDIT_FUZZ_SUITE_EXAMPLES", "100")),
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=_QUIET,
    print_blob=True,
)
settings.register_profile(
    "campaign",
    max_examples=max(1, EXAMPLES // TESTS),
    derandomize=False,
    deadline=None,
    database=None,
    suppress_health_check=_QUIET,
    print_blob=True,
)
settings.load_profile("campaign" if EXAMPLES else "suite")
