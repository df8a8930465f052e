"""One finding per problem: job findings that repeat another at the same key are dropped."""

from __future__ import annotations

from gpu_audit.core.resource import Kind
from gpu_audit.core.results import Finding

# Rules that judge the same missing thing, most specific first: where both fire at one place in a
# file, the later one repeats the earlier (a tuning job's cap is `tuning-job-cap`'s to report).
SAME_PROBLEM: dict[str, str] = {"job-runtime-cap": "tuning-job-cap"}


def merge_repeats(findings: list[Finding]) -> list[Finding]:
    """Findings with a job file's repeats left out, in their order.

    A repeat is a finding of the same rule, on the same file, document and line, with the same
    expectation and the same value found: one line of a Ray cluster's file that states no tags
    is one problem, however many node types the file declares. A rule named in `SAME_PROBLEM`
    repeats its partner at the same place.
    """
    seen: set[tuple[object, ...]] = set()
    kept: list[Finding] = []
    for finding in findings:
        resource = finding.resource
        if resource.kind is not Kind.JOB or not resource.source.path:
            kept.append(finding)
            continue
        place = (resource.source.path, resource.source.document, finding.line)
        key = (finding.rule_id, *place, finding.expected, finding.actual)
        partner = SAME_PROBLEM.get(finding.rule_id)
        if key in seen or (partner is not None and (partner, *place) in seen):
            continue
        seen.add(key)
        seen.add((finding.rule_id, *place))
        kept.append(finding)
    return kept
