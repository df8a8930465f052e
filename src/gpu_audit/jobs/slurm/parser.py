"""Slurm batch scripts: the `#SBATCH` directives before the first command, as `sbatch` reads them.

GPUs: `--gres=gpu[:type][:count]` (per node), `--gpus`/`-G` (the job's), `--gpus-per-node` and
`--gpus-per-task`, times `--nodes`/`-N` (a range `2-4` judged at its most). `--time`/`-t` in each of
Slurm's forms is the runtime cap; `--partition`, `--array` (tasks of the same shape, one after
another or `%N` at a time) and the script's commands (its workload) are read too. `#SBATCH hetjob`
(`packjob` before Slurm 20.02) starts a heterogeneous job's next component: one resource per
component with GPUs, named `<job>+<k>` as Slurm names them. A script runs on its site's own
cluster: it bills on no cloud (`service: slurm`), so it is priced by no cloud's rate.
"""

from __future__ import annotations

import shlex
from typing import ClassVar

from gpu_audit.core.resource import Capacity, Resource
from gpu_audit.core.yamlsrc import Document
from gpu_audit.errors import InputError
from gpu_audit.jobs.evidence import Ran, infer
from gpu_audit.jobs.interface import JobDraft, TextFormat

DIRECTIVE = "#SBATCH"
SEPARATORS = frozenset({"hetjob", "packjob"})
# Long options that take a value when written `--name value` (any may be `--name=value`).
_VALUED = frozenset(
    {
        "account",
        "array",
        "begin",
        "chdir",
        "clusters",
        "comment",
        "constraint",
        "cpus-per-gpu",
        "cpus-per-task",
        "dependency",
        "distribution",
        "error",
        "exclude",
        "export",
        "gpus",
        "gpus-per-node",
        "gpus-per-socket",
        "gpus-per-task",
        "gres",
        "input",
        "job-name",
        "licenses",
        "mail-type",
        "mail-user",
        "mem",
        "mem-per-cpu",
        "mem-per-gpu",
        "nodefile",
        "nodelist",
        "nodes",
        "ntasks",
        "ntasks-per-node",
        "output",
        "partition",
        "qos",
        "reservation",
        "signal",
        "time",
        "time-min",
        "tmp",
        "wckey",
    }
)
_SHORT = {
    "a": "array",
    "A": "account",
    "b": "begin",
    "c": "cpus-per-task",
    "C": "constraint",
    "d": "dependency",
    "D": "chdir",
    "e": "error",
    "F": "nodefile",
    "G": "gpus",
    "i": "input",
    "J": "job-name",
    "L": "licenses",
    "m": "distribution",
    "M": "clusters",
    "n": "ntasks",
    "N": "nodes",
    "o": "output",
    "p": "partition",
    "q": "qos",
    "t": "time",
    "w": "nodelist",
    "x": "exclude",
}
_VENDORS = frozenset({"nvidia", "amd", "intel", "gpu"})
Options = dict[str, tuple[str, int]]  # long option → (value, line)


class Slurm(TextFormat):
    name: ClassVar[str] = "slurm"
    hints: ClassVar[dict[str, str]] = {
        "gpu.model": "name the GPU type, e.g. `#SBATCH --gres=gpu:a100:4`",
        "limits.max_runtime_hours": "set `#SBATCH --time=HH:MM:SS` (not UNLIMITED)",
    }
    fixes: ClassVar[dict[str, str]] = {
        "limits.max_runtime_hours": "set `#SBATCH --time`, e.g. `--time=12:00:00`",
        "gpu.model": "ask for a smaller GPU type in `--gres=gpu:<type>:<count>`",
    }

    def parse_text(self, text: str, path: str) -> list[Resource] | None:
        components, commands = directives(text, path)
        first = components[0][0]
        resources = []
        for index, (options, line) in enumerate(components):
            count, model, gpu_line = gpus(options, first, path)
            if not count:
                continue
            document = Document(data=None, line=line, index=index)
            draft = JobDraft(self.name, path, document, name=_name(first, index, components))
            draft.anchor = line
            draft.set("gpu.count", count, gpu_line)
            draft.set("gpu.model", model, gpu_line)
            draft.set("service", "slurm")
            draft.set("capacity", Capacity.RESERVED)  # the site's own nodes: no spot market
            _runtime(draft, options, first, path)
            _describe(draft, options, first, path)
            if len(components) > 1:
                draft.add_note(f"component {index} of a heterogeneous job")
            infer(draft, [Ran(commands[0], "the script's commands", commands[1])])
            resources.append(draft.build())
        return resources


def directives(text: str, path: str) -> tuple[list[tuple[Options, int]], tuple[str, int | None]]:
    """Each component's options and its first directive's line; and the commands after them
    (`sbatch` stops reading directives at the first line that is not a comment or blank)."""
    components: list[tuple[Options, int]] = [({}, 1)]
    lines = text.splitlines()
    start = len(lines)
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            start = number - 1
            break
        rest = stripped[len(DIRECTIVE) :]
        if not stripped.startswith(DIRECTIVE) or (rest and not rest[0].isspace()):
            continue  # a comment, `##SBATCH` or `# SBATCH` (switched off)
        try:
            tokens = shlex.split(rest, comments=True)
        except ValueError as exc:
            raise InputError(f"{path}:{number}: {DIRECTIVE}: {exc}") from None
        if len(tokens) == 1 and tokens[0] in SEPARATORS:
            components.append(({}, number))
            continue
        options = components[-1][0]
        if not options and len(components) == 1:
            components[0] = (options, number)
        for name, value in _options(tokens):
            options[name] = (value, number)
    body = [line for line in lines[start:] if line.strip() and not line.lstrip().startswith("#")]
    return components, ("\n".join(body), start + 1 if body else None)


def _options(tokens: list[str]) -> list[tuple[str, str]]:
    """`--name=value`, `--name value`, `-Xvalue`, `-X value`; flags (`--exclusive`) as ""."""
    found = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token.startswith("--"):
            name, equals, value = token[2:].partition("=")
            if not equals and name in _VALUED and index < len(tokens):
                value, index = tokens[index], index + 1
            found.append((name, value))
        elif token.startswith("-") and len(token) > 1 and token[1] in _SHORT:
            value = token[2:].removeprefix("=")
            if not value and index < len(tokens):
                value, index = tokens[index], index + 1
            found.append((_SHORT[token[1]], value))
    return found


def gpus(options: Options, first: Options, path: str) -> tuple[int | None, str | None, int | None]:
    """The component's GPUs in all: (count, model, line); count None when not a literal."""
    nodes = _most(options.get("nodes"), path) or 1
    for name in ("gpus", "gpus-per-node", "gres", "gpus-per-task"):
        if name not in options:
            continue
        value, line = options[name]
        if name == "gres":
            model, count = _gres(value, path, line)
        else:
            model, count = _typed(value, path, line, f"--{name}")
        if count is None:
            return None, model, line
        if name == "gpus-per-task":
            tasks = _most(options.get("ntasks"), path)
            per_node = _most(options.get("ntasks-per-node"), path)
            count *= tasks or (per_node or 1) * nodes
        elif name != "gpus":
            count *= nodes
        return count, model, line
    return 0, None, None


def _gres(value: str, path: str, line: int) -> tuple[str | None, int | None]:
    """`gpu`, `gpu:2`, `gpu:a100:4`, `gpu:a100:4(S:0-1)`, `gpu:1,mps:100`: the GPUs a node asks."""
    for entry in value.split(","):
        kind, _, rest = entry.partition("(")[0].strip().partition(":")
        if kind.strip().lower() != "gpu":
            continue
        parts = rest.split(":") if rest else []
        if parts and parts[-1].isdigit():
            return _model(":".join(parts[:-1])), int(parts[-1])
        if parts and parts[-1].startswith("$"):
            return _model(":".join(parts[:-1])), None  # a variable: not known here
        return _model(":".join(parts)), 1
    return None, 0


def _typed(value: str, path: str, line: int, option: str) -> tuple[str | None, int | None]:
    """`4`, `a100:4`: an optional type and a count."""
    kind, _, count = value.rpartition(":")
    if count.startswith("$"):
        return _model(kind), None
    if not count.isdigit():
        raise InputError(f"{path}:{line}: {option}: {value!r} is not [type:]count")
    return _model(kind), int(count)


def _model(kind: str) -> str | None:
    """The GPU type a site names (`a100`, `h100_80gb`); a vendor (`nvidia`) names none."""
    kind = kind.strip()
    return None if not kind or kind.lower() in _VENDORS else kind.replace("_", "-")


def _most(option: tuple[str, int] | None, path: str) -> int | None:
    """A count or a range (`2-4`, `2,4`: the most it allows); None when absent or a variable."""
    if option is None:
        return None
    value, line = option
    tops = [part.rpartition("-")[2] for part in value.replace(":", ",").split(",")]
    if any(top.startswith("$") for top in tops):
        return None
    if not tops or not all(top.isdigit() for top in tops):
        raise InputError(f"{path}:{line}: {value!r} is not a count or a range of counts")
    return max(int(top) for top in tops)


def hours(value: str) -> float | None:
    """Slurm's time forms (`M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`) in hours; None for
    no limit (`UNLIMITED`, `INFINITE`, `-1`); ValueError for anything else."""
    if value.strip().upper() in ("UNLIMITED", "INFINITE", "-1"):
        return None
    days, dash, clock = value.strip().partition("-")
    if not dash:
        days, clock = "0", days
    parts = clock.split(":")
    if not days.isdigit() or not all(p.isdigit() for p in parts) or len(parts) > 3:
        raise ValueError(value)
    numbers = [int(p) for p in parts]
    if dash:  # D-H, D-H:M, D-H:M:S
        h, m, s = [*numbers, 0, 0][:3]
    elif len(numbers) == 3:  # H:M:S
        h, m, s = numbers
    else:  # M, M:S
        h, m, s = 0, numbers[0], [*numbers, 0][1]
    return round(int(days) * 24 + h + m / 60 + s / 3600, 6)


def _runtime(draft: JobDraft, options: Options, first: Options, path: str) -> None:
    stated = options.get("time") or first.get("time")
    if stated is None:
        return
    value, line = stated
    if value.startswith("$"):
        draft.put("limits.max_runtime_hours", None, line, raw="${" + value.strip("${}") + "}")
        return
    try:
        limit = hours(value)
    except ValueError:
        raise InputError(
            f"{path}:{line}: --time: {value!r} is not a Slurm time "
            "(M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED)"
        ) from None
    if limit is None:
        draft.mark("limits.max_runtime_hours", line)
        draft.add_note(f"--time={value}: no runtime limit")
    else:
        draft.set("limits.max_runtime_hours", limit, line)


def _describe(draft: JobDraft, options: Options, first: Options, path: str) -> None:
    partition = options.get("partition") or first.get("partition")
    if partition is not None:  # where it runs: the site's rate for it (a price file) applies
        draft.set("region", partition[0], partition[1])
    array = first.get("array")
    if array is not None:
        value, line = array
        spec, _, limit = value.partition("%")
        tasks = _tasks(spec)
        if tasks is not None:
            draft.count("--array", tasks, line)
            at_once = f", {limit} at a time" if limit.isdigit() else ""
            draft.add_note(f"an array of {tasks} tasks of this shape{at_once}")


def _tasks(spec: str) -> int | None:
    """How many tasks an array spec holds (`0-9`, `1,3,5`, `1-9:2`); None when not literal."""
    total = 0
    for part in spec.split(","):
        span, _, step = part.partition(":")
        low, dash, high = span.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()) or (step and not step.isdigit()):
            return None
        if dash:
            total += len(range(int(low), int(high) + 1, int(step or 1) or 1))
        else:
            total += 1
    return total or None


def _name(first: Options, index: int, components: list[tuple[Options, int]]) -> str | None:
    stated = first.get("job-name")
    if stated is None or not stated[0].strip():
        return None
    return f"{stated[0]}+{index}" if len(components) > 1 else stated[0]
