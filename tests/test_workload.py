"""Workload inference from names: notebooks by default, the team's patterns when configured."""

from __future__ import annotations

import pytest

from gpu_audit.core.canonical import from_mapping
from gpu_audit.core.resource import Workload
from gpu_audit.core.workload import compile_patterns, infer_workloads


def resource(name: str | None, workload: str = "unknown") -> object:
    return from_mapping({"provider": "aws", "id": "i-1", "name": name, "workload": workload})


def test_a_notebook_name_says_notebook_and_leaves_a_note() -> None:
    [found] = infer_workloads([resource("Jupyter-Alice")])
    assert found.workload is Workload.NOTEBOOK
    assert found.source.note == "workload notebook inferred from the name (pattern '*jupyter*')"


def test_a_tag_wins_over_the_name_and_no_match_stays_unknown() -> None:
    tagged, plain, nameless = infer_workloads(
        [resource("jupyter-x", "training"), resource("llm-pretrain"), resource(None)]
    )
    assert tagged.workload is Workload.TRAINING
    assert plain.workload is Workload.UNKNOWN and plain.source.note is None
    assert nameless.workload is Workload.UNKNOWN


def test_the_teams_patterns_apply_in_order() -> None:
    patterns = {"training": ["*-pretrain", "*finetune*"], "inference": ["*-serve"]}
    found = list(infer_workloads([resource("llm-pretrain"), resource("chat-serve")], patterns))
    assert [r.workload for r in found] == [Workload.TRAINING, Workload.INFERENCE]


def test_an_unknown_workload_name_is_refused() -> None:
    with pytest.raises(ValueError):
        compile_patterns({"trainnig": ["*"]})
