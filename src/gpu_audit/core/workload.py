"""Workload inference for resources whose source did not say: name patterns, as configured.

A tag (`workload: training`) or the job kind is the best evidence, and the collectors and job
parsers use it. What is left `unknown` may still say what it is in its name (`jupyter-alice`,
`sd-notebook`): the patterns here, shell-style and case-insensitive, fill the workload in and
leave a note that says so. Without a match the workload stays unknown, and rules scoped on it
are not evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from fnmatch import translate

from gpu_audit.core.resource import Resource, Workload

# Names that say "notebook" are the one default: a forgotten notebook is the costliest mistake
# the pattern can catch, and the words are unambiguous. Training and inference patterns are the
# team's own (settings: workload_patterns).
DEFAULT_PATTERNS: Mapping[str, tuple[str, ...]] = {
    "notebook": ("*notebook*", "*jupyter*", "*workbench*"),
}


def compile_patterns(
    patterns: Mapping[str, Iterable[str]],
) -> tuple[tuple[Workload, str, re.Pattern[str]], ...]:
    """(workload, pattern, compiled) in the order given; ValueError names an unknown workload."""
    compiled = []
    for name, globs in patterns.items():
        workload = Workload(name)  # ValueError for a workload that does not exist
        for glob in globs:
            compiled.append((workload, glob, re.compile(translate(glob.lower()))))
    return tuple(compiled)


def infer_workloads(
    resources: Iterable[Resource], patterns: Mapping[str, Iterable[str]] = DEFAULT_PATTERNS
) -> Iterator[Resource]:
    """Each resource, with an unknown workload filled in from the first pattern its name
    matches."""
    compiled = compile_patterns(patterns)
    for resource in resources:
        if resource.workload is not Workload.UNKNOWN or not resource.name or not compiled:
            yield resource
            continue
        name = resource.name.lower()
        for workload, glob, regex in compiled:
            if regex.match(name):
                note = f"workload {workload.value} inferred from the name (pattern '{glob}')"
                old = resource.source.note
                source = replace(resource.source, note=f"{old}; {note}" if old else note)
                yield replace(resource, workload=workload, source=source)
                break
        else:
            yield resource
