"""`gpu-audit diff` between the CLI and the core: read both sides, judge, price, pair."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime

from gpu_audit.core.frozen import record
from gpu_audit.core.yamlguard import printable
from gpu_audit.diff.files import revision_files, worktree_files
from gpu_audit.diff.git import abbreviated, renames, repository, resolve
from gpu_audit.diff.model import DiffResult
from gpu_audit.diff.pair import pair, total
from gpu_audit.diff.sides import judge
from gpu_audit.errors import InputError
from gpu_audit.policy.loader import load_policy
from gpu_audit.settings import Settings

WORKTREE = "working tree"


@record
class DiffRequest:
    base: str
    head: str | None = None  # None: the working tree
    paths: tuple[str, ...] = ()  # as `check` takes them; default: the repository
    excludes: tuple[str, ...] = ()
    policies: tuple[str, ...] = ()


def run_diff(request: DiffRequest, settings: Settings) -> DiffResult:
    """`gpu-audit diff`: the job files of the base and head revisions (head: the worktree) judged
    and priced, then paired by path and renames; InputError for a path on neither side."""
    policy = load_policy(request.policies or settings.policies)
    root = repository(os.getcwd())
    base = resolve(root, request.base, "--base")
    head = resolve(root, request.head, "--head") if request.head is not None else None
    paths = request.paths or (os.path.relpath(root),)
    excludes = (*settings.exclude, *request.excludes)
    now = datetime.now(UTC)
    patterns = settings.workload_patterns
    base_files, base_bytes, base_absent, refused = revision_files(paths, excludes, base)
    head_bytes: Mapping[str, bytes] | None = None
    if head is None:
        head_files, head_absent, head_refused = worktree_files(paths, excludes, root)
    else:
        head_files, head_bytes, head_absent, head_refused = revision_files(paths, excludes, head)
    for argument in (a for a in base_absent if a in head_absent):
        raise InputError(f"diff: {printable(argument, 200)}: no such file on either side")
    before = judge(abbreviated(base.name), base_files, base_bytes, policy, patterns, now)
    label = abbreviated(head.name) if head else WORKTREE
    after = judge(label, head_files, head_bytes, policy, patterns, now)
    jobs = pair(before, after, renames(base, head))
    dates = {
        c.price_as_of for j in jobs for c in (j.before, j.after) if c is not None and c.price_as_of
    }
    errors = [*refused, *head_refused, *before.errors.values(), *after.errors.values()]
    return DiffResult(
        base=base.name,
        base_commit=base.commit,
        head=head.name if head else WORKTREE,
        head_commit=head.commit if head else None,
        jobs=jobs,
        total=total(jobs),
        prices_as_of=tuple(sorted(dates)),
        errors=tuple(f"{e}; this file's jobs are not compared" for e in errors),
        read=tuple(head_files) if head is None else (),
        rules=tuple(rule.info for rule in policy.rules),
    )
