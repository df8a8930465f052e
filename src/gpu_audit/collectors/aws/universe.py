"""AWS work items: `aws:ACCOUNT:REGION` per target and configured region (see workitems.py).

An account is named by the id its role ARN holds; a profile or the default credentials, whose
account is known only after a call, by `profile/NAME` or `default`. Without configured regions
the item is the account (`aws:ACCOUNT`): its enabled regions are discovered by the one shard that
holds it, so no shard assumes a role into an account it does not scan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gpu_audit.collectors.aws.sessions import Target, targets
from gpu_audit.collectors.aws.settings import AwsSettings


def account_label(target: Target) -> str:
    """How a target is named in work items: its account id, `profile/NAME`, the role's label, or
    `default`."""
    if target.account_hint:
        return target.account_hint
    if target.profile:
        return f"profile/{target.profile}"
    return target.label if target.role_arn else "default"


def item_key(target: Target, region: str | None) -> str:
    """The work item of `target` in `region` (None: the whole account, regions unknown)."""
    account = account_label(target)
    return f"aws:{account}:{region}" if region else f"aws:{account}"


def target_items(target: Target, regions: Iterable[str]) -> list[str]:
    """The target's work items, one per region sorted (one without a region when none is
    configured)."""
    listed = sorted(set(regions))
    return [item_key(target, r) for r in listed] if listed else [item_key(target, None)]


def work_items(settings: AwsSettings, org_accounts: Callable[[], list[str]]) -> list[str]:
    """Every work item the settings name; `org_accounts` (Organizations ListAccounts) if needed."""
    found = targets(settings, org_accounts)
    return sorted({key for target in found for key in target_items(target, settings.regions)})
