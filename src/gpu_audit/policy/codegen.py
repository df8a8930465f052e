"""A rule's scope and requirement compiled into one Python function, once per policy load.

The closures of `conditions.py` are the reference semantics; this module emits the same
three-valued logic as straight-line code, with the common leaves (equality, membership, number
comparisons, presence) inlined as attribute reads, and every other leaf calling its closure.
A judge returns None (out of scope, or passes), False (a finding), or the missing field's name
(not evaluated). `tests/policy/test_codegen.py` checks it against the closures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpu_audit.model import Resource
from gpu_audit.policy.conditions import Condition, Group, Leaf
from gpu_audit.policy.fields import TAG_PREFIX

Judge = Callable[[Resource], "bool | str | None"]
_INLINE = {"eq": "==", "ne": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}


class _Emitter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.env: dict[str, Any] = {}
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, value: Any) -> str:
        name = self.name("c")
        self.env[name] = value
        return name

    def emit(self, line: str, depth: int) -> None:
        self.lines.append("    " * depth + line)

    def condition(self, node: Condition, target: str, depth: int) -> None:
        """Statements that leave True, False or a missing field's name in `target`."""
        if isinstance(node, Group):
            self.group(node, target, depth)
        elif isinstance(node, Leaf):
            self.leaf(node, target, depth)
        else:  # pragma: no cover - every compiled condition is a Group or a Leaf
            self.emit(f"{target} = {self.const(node.test)}(r)", depth)

    def group(self, node: Group, target: str, depth: int) -> None:
        part = self.name("p")
        if node.mode == "not":
            self.condition(node.parts[0], part, depth)
            self.emit(
                f"{target} = False if {part} is True else True if {part} is False else {part}",
                depth,
            )
            return
        decisive, neutral = ("False", "True") if node.mode == "all" else ("True", "False")
        self.emit(f"{target} = {neutral}", depth)
        for index, sub in enumerate(node.parts):
            inner = depth if index == 0 else depth + 1
            if index:
                self.emit(f"if {target} is not {decisive}:", depth)
            self.condition(sub, part, inner)
            self.emit(f"if {part} is {decisive}:", inner)
            self.emit(f"{target} = {decisive}", inner + 1)
            self.emit(f"elif {part} is not {neutral} and {target} is {neutral}:", inner)
            self.emit(f"{target} = {part}", inner + 1)

    def leaf(self, leaf: Leaf, target: str, depth: int) -> None:
        spec, op = leaf.field, leaf.operator
        tag = spec.name.startswith(TAG_PREFIX)
        access = f"r.tags.get({spec.name[len(TAG_PREFIX) :]!r})" if tag else f"r.{spec.name}"
        inline = spec.type in ("enum", "str", "gpu", "bool", "number", "tag")
        if op in ("present", "absent"):
            want = leaf.operand_text == "present"
            self.emit(f"{target} = {access} is {'not ' if want else ''}None", depth)
            return
        inlinable = op in _INLINE or op in ("in", "not-in")
        if not inline or leaf.other is not None or not inlinable:
            self.emit(f"{target} = {self.const(leaf.test)}(r)", depth)
            return
        operand = self.const(leaf.operand_value)
        value = self.name("x")
        if op in ("in", "not-in"):
            test = f"{value} {'in' if op == 'in' else 'not in'} {operand}"
        else:
            test = f"{value} {_INLINE[op]} {operand}"
        self.emit(f"{value} = {access}", depth)
        if tag:  # a tag map is complete: an unset tag is absent (None), a known value
            self.emit(f"{target} = {test}", depth)
            return
        self.emit(f"{target} = {spec.name!r} if {value} is None else {test}", depth)


def compile_judge(where: Condition | None, require: Condition) -> Judge:
    """One function: None (out of scope or passes), False (finding), or the missing field."""
    emitter = _Emitter()
    emitter.emit("def judge(r):", 0)
    if where is not None:
        emitter.condition(where, "s", 1)
        emitter.emit("if s is False:", 1)
        emitter.emit("return None", 2)
        emitter.emit("if s is not True:", 1)
        emitter.emit("return s", 2)
    emitter.condition(require, "v", 1)
    emitter.emit("return None if v is True else v", 1)
    source = "\n".join(emitter.lines) + "\n"
    namespace: dict[str, Any] = dict(emitter.env)
    exec(compile(source, "<gpu-audit rule>", "exec"), namespace)  # noqa: S102 - our own source
    judge: Judge = namespace["judge"]
    judge.__doc__ = source  # the generated code, for debugging
    return judge
