"""Finding AWS request bodies anywhere in a document: keys, nested JSON strings, template defaults.

SageMaker and Batch bodies appear bare, in CloudFormation resources, in Step Functions
definitions (as YAML, or as a JSON string under `DefinitionString`) and in SageMaker pipeline
definitions. The helpers here look keys up case-insensitively (ACK CRDs are camelCase), read
Step Functions `Key.$` as a JSONPath placeholder (missing, with its line), and resolve
CloudFormation `!Ref Param` and pipeline `{Get: Parameters.X}` to the parameter's default.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import field
from functools import cache
from typing import Any

from gpu_audit.catalog import canonical_gpu, class_rank, instance_spec, instance_types
from gpu_audit.core.frozen import record
from gpu_audit.core.yamlsrc import LineList, LineMap, Templated, load_documents
from gpu_audit.errors import InputError
from gpu_audit.jobs.mentions import EMBED_MARKERS

MAX_NODES = 200_000  # a bounded walk: alias-expanded documents can be large
MAX_DEPTH = 64
_JSONPATH = Templated("$ (Step Functions JSONPath)")


@record(frozen=False)
class Refs:
    """Parameter defaults in scope: CloudFormation and SageMaker pipeline `Parameters`."""

    cfn: dict[str, Any] = field(default_factory=dict)
    pipeline: dict[str, Any] = field(default_factory=dict)
    used: list[str] = field(default_factory=list)

    def resolve(self, value: Any) -> Any:  # Any: YAML/JSON of any shape
        """A parameter reference replaced by the parameter's default; anything else unchanged."""
        name: str | None = None
        table: dict[str, Any] = {}
        if isinstance(value, Templated) and value.text.startswith("!Ref "):
            name, table = value.text[5:].strip(), self.cfn
        elif isinstance(value, dict) and len(value) == 1:
            ((key, target),) = value.items()
            if key == "Ref" and isinstance(target, str):
                name, table = target, self.cfn
            elif key == "Get" and isinstance(target, str) and target.startswith("Parameters."):
                name, table = target[len("Parameters.") :], self.pipeline
        if name is None or name not in table:
            return value
        self.used.append(name)
        return table[name]


def lookup(node: Any, name: str) -> tuple[Any, int | None]:
    """`node[name]` matched case-insensitively, and its key's line; `(None, None)` when absent.

    A Step Functions `Name.$` key holds a JSONPath filled in at run time: it reads as a templated
    (missing) value that keeps its line.
    """
    if not isinstance(node, dict):
        return None, None
    if name in node:
        return node[name], _line(node, name)
    wanted = name.lower()
    for key in node:
        if not isinstance(key, str):
            continue
        folded = key.lower()
        if folded == wanted:
            return node[key], _line(node, key)
        if folded == wanted + ".$":
            return _JSONPATH, _line(node, key)
    return None, None


def has(node: Any, *names: str) -> bool:
    """Is any of these keys present (case-insensitive, `Key.$` included)?"""
    return any(lookup(node, name) != (None, None) for name in names)


def _line(node: Any, key: Any) -> int | None:
    return node.line_of(key) if isinstance(node, LineMap) else None


def items(value: Any) -> list[tuple[Any, int | None]]:
    """A list's items with their lines; a single mapping written for a list is one item."""
    if isinstance(value, LineList):
        return list(zip(value, value.item_lines, strict=False))
    if isinstance(value, list):
        return [(item, None) for item in value]
    if isinstance(value, dict):
        return [(value, getattr(value, "line", None))]
    return []


# --- the bounded search -------------------------------------------------------------------------

Match = Callable[[Any], bool]


@record
class Found:
    """An AWS job body found in a file, with what it refers to."""

    body: LineMap
    refs: Refs
    parent: Any  # the mapping holding the body (a CloudFormation resource, a CRD), if any
    trail: tuple[Any, ...] = ()  # the keys from the document's root to the body

    @property
    def line(self) -> int | None:
        """The line of the key holding the body: a CloudFormation logical id, a state's name."""
        if self.trail and isinstance(self.parent, LineMap) and self.trail[-1] in self.parent:
            return self.parent.line_of(self.trail[-1])
        return None

    def scoped(self) -> Refs:
        """The parameter defaults in scope, with a fresh record of which ones a parse used."""
        return Refs(cfn=self.refs.cfn, pipeline=self.refs.pipeline)


def search(data: Any, path: str, match: Match) -> list[Found]:
    """Every mapping `match` accepts, outermost first, without descending into a match.

    JSON strings that embed a definition (`DefinitionString`, `PipelineDefinitionBody`) are
    parsed and searched too, with their lines shifted to the file's lines.
    """
    walk = _Walk(path, match)
    walk.visit(data, Refs(), None, (), embedded=0)
    return walk.found


class _Walk:
    def __init__(self, path: str, match: Match) -> None:
        self.path = path
        self.match = match
        self.found: list[Found] = []
        self.seen: set[int] = set()
        self.budget = MAX_NODES

    def visit(
        self, node: Any, refs: Refs, parent: Any, trail: tuple[Any, ...], embedded: int
    ) -> None:
        """Search a node for request bodies (depth and node budgets bounded, each container once): a
        matching mapping is found, others are searched below."""
        if len(trail) > MAX_DEPTH or self.budget <= 0:
            return
        self.budget -= 1
        if isinstance(node, dict | list):
            if id(node) in self.seen:
                return
            self.seen.add(id(node))
        if isinstance(node, dict):
            refs = _scoped(node, refs)
            if isinstance(node, LineMap) and self.match(node):
                self.found.append(Found(node, refs, parent, trail))
                return
            for key, child in node.items():
                self.child(child, _line(node, key), refs, node, (*trail, key), embedded)
        elif isinstance(node, list):
            lines = node.item_lines if isinstance(node, LineList) else [None] * len(node)
            for index, (child, line) in enumerate(zip(node, lines, strict=False)):
                self.child(child, line, refs, parent, (*trail, index), embedded)

    def child(
        self,
        child: Any,
        line: int | None,
        refs: Refs,
        parent: Any,
        trail: tuple[Any, ...],
        embedded: int,
    ) -> None:
        """Search a child node; a string holding embedded JSON (at most two levels deep) is parsed
        and searched with its lines."""
        if embedded < 2 and isinstance(child, str | Templated):
            nested = _embedded(self.path, child, line)
            if nested is not None:
                self.visit(nested, refs, parent, trail, embedded + 1)
            return
        self.visit(child, refs, parent, trail, embedded)


def _scoped(node: dict[Any, Any], refs: Refs) -> Refs:
    """Parameters declared by this mapping (a template or a pipeline definition) come into scope."""
    params = node.get("Parameters")
    if isinstance(params, dict) and "Resources" in node:
        defaults = {
            str(name): spec["Default"]
            for name, spec in params.items()
            if isinstance(spec, dict) and "Default" in spec
        }
        return Refs(cfn={**refs.cfn, **defaults}, pipeline=refs.pipeline, used=refs.used)
    if isinstance(params, list) and "Steps" in node:
        defaults = {
            str(p["Name"]): p["DefaultValue"]
            for p in params
            if isinstance(p, dict) and "Name" in p and "DefaultValue" in p
        }
        return Refs(cfn=refs.cfn, pipeline={**refs.pipeline, **defaults}, used=refs.used)
    return refs


_BARE_SUB = re.compile(r"(?<=[:\[,])(\s*)(\$\{[^}\"]*\})")


def _embedded(path: str, value: str | Templated, line: int | None) -> object:
    """A definition embedded as a JSON (or `!Sub` JSON) string, with file lines; else None."""
    text = (
        value.text[5:] if isinstance(value, Templated) and value.text.startswith("!Sub ") else value
    )
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return None
    if not any(marker in text for marker in EMBED_MARKERS):
        return None
    text = _BARE_SUB.sub(r'\1"\2"', text)  # `"Count": ${N}` from Fn::Sub is not JSON yet
    try:
        documents = load_documents(path + "#embedded.json", text)
    except InputError:
        return None
    if not documents:
        return None
    # A block scalar's text starts on the line after its key; a flow scalar on the key's line.
    offset = (line or 1) if "\n" in text.strip() else (line or 1) - 1
    data = documents[0].data
    _shift(data, offset, budget=[MAX_NODES])
    return data


def _shift(node: Any, offset: int, budget: list[int]) -> None:
    budget[0] -= 1
    if budget[0] <= 0:
        return
    if isinstance(node, LineMap):
        node.line += offset
        node.key_lines = {k: v + offset for k, v in node.key_lines.items()}
        for child in node.values():
            _shift(child, offset, budget)
    elif isinstance(node, LineList):
        node.line += offset
        node.item_lines = [v + offset for v in node.item_lines]
        for child in node:
            _shift(child, offset, budget)


# --- AWS instance types → GPUs ------------------------------------------------------------------


@record
class AwsGpu:
    """The GPUs of an AWS instance family or type."""

    model: str | None  # canonical; None when a family mixes models
    count: int | None  # per instance; None when only the family is known


def aws_gpu(instance_type: Any) -> AwsGpu | None:
    """The GPUs of an AWS (or SageMaker `ml.`) instance type or family; None for non-GPU types.

    An exact type comes from the catalog. A bare family (`g5`) or a size the catalog lacks gives
    the family's GPU model with no count. Anything else is taken to have no GPU.
    """
    if not isinstance(instance_type, str) or not instance_type.strip():
        return None
    spec = instance_spec(instance_type)
    if spec is not None:
        return AwsGpu(canonical_gpu(spec.gpu_model) or spec.gpu_model, spec.gpu_count)
    key = instance_type.strip().lower()
    key = key[3:] if key.startswith("ml.") else key
    models = _aws_families().get(key.split(".", 1)[0])
    if models is None:
        return None
    return AwsGpu(next(iter(models)) if len(models) == 1 else None, None)


@cache
def _aws_families() -> dict[str, frozenset[str]]:
    families: dict[str, set[str]] = {}
    for spec in instance_types():
        if spec.cloud == "aws" and spec.gpu_count > 0:
            family = spec.instance_type.lower().removeprefix("ml.").split(".", 1)[0]
            families.setdefault(family, set()).add(canonical_gpu(spec.gpu_model) or spec.gpu_model)
    return {family: frozenset(models) for family, models in families.items()}


def largest(models: Iterable[str]) -> str | None:
    """The highest-ranked GPU class among models (off-ladder accelerators last)."""
    ranked = sorted(set(models), key=lambda m: (class_rank(m) is not None, class_rank(m) or 0, m))
    return ranked[-1] if ranked else None
