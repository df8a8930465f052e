"""Hypothesis strategies: real configs from fixtures/ mutated with hostile scalars, tags and shapes.

A seed file is loaded, a few of its values or keys are replaced, deleted or wrapped, and it is
written back as YAML or JSON. Hostile values that no serialiser writes (`!!int abc`, a 4,301-digit
integer, 30,000 `[`) are spliced in as raw text in place of a sentinel string.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from gpu_audit.core.yamlsrc import Templated, load_documents, read_text
from gpu_audit.errors import InputError
from tests.conftest import FIXTURES, SHARED

SENTINEL = "__hostile_{}__"

# Raw YAML written in place of a value (block context, after `key: ` or `- `).
YAML_RAW = [
    "2026-02-30",
    "2026-13-01T25:61:00Z",
    "!!bool maybe",
    "!!int abc",
    "!!float abc",
    "!!map [1]",
    "!!seq {a: 1}",
    "!!set [1]",
    "!!omap {a: 1}",
    "!!timestamp nope",
    "!!binary aGVsbG8=",
    "!!str [1]",
    "!!null x",
    "!!python/object:os.system {}",
    "!Ref Missing",
    "!GetAtt [A, B]",
    "1" * 4301,
    "-" + "9" * 5000,
    "0x" + "f" * 4000,
    "1e400",
    "-1e400",
    ".nan",
    ".inf",
    "-.inf",
    "-1",
    "-0.0",
    "1:20:30",
    "0o777",
    "~",
    "yes",
    "Off",
    "[task]",
    "[]",
    "{}",
    "{a: [1, {b: 2}]}",
    "&anchor [1, 2]",
    "*nowhere",
    "'${ENV_VAR}'",
    "'{{ .Values.gpu }}'",
    "'<placeholder>'",
    '"\\e]0;pwned\\a"',
    '"\\e[31mred\\e[0m"',
    '"line one\\nline two"',
    '"\\u202eevil\\u202c"',
    '"\\u0000nul"',
    '"\\x85next"',
    '"\\ud800"',
    '=HYPERLINK("http://x")',
    "@SUM(A1)",
    "' leading space'",
    '"' + "x" * 10_000 + '"',
    "0.5",  # a count that is not whole (issue 26: `parallelism: 0.5` reached a report)
    "2.25",
    "1e15",
    "12345678901234567890",
]
DEEP = [5, 99, 101, 1000, 30_000]
JSON_RAW = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "1" * 4301,
    "-1",
    "1.5",
    "true",
    "null",
    "[]",
    "{}",
    '["task"]',
    '"2026-02-30"',
    '"\\u001b]0;x\\u0007"',
    '"\\u202e"',
    '"\\ud800"',
    '"line\\nbreak"',
    "\"=cmd|' /C calc'!A0\"",
    "0.5",
    "1e15",
    "12345678901234567890",
]
HOSTILE_KEYS = ["", "colour", "capcity", "a\nb", "\u202ekey", "x" * 300, "1", "<<", "resources:"]
# Keys YAML reads as something other than text (`8: x`, `true:`, a date): every mapping may get one
NOT_TEXT_KEYS: list[Any] = [8, True, False, 0.5, None, date(2026, 1, 1)]
# Keys that hold a count in some format: a mutation puts a fraction or a huge number there
COUNT_KEYS = frozenset(
    ["replicas", "parallelism", "num_nodes", "nodes", "numNodes", "count", "instance_count",
     "InstanceCount", "replicaCount", "minReplicas", "maxReplicas", "completions", "workers",
     "num_workers", "maxTrialCount", "MaxNumberOfTrainingJobs", "nvidia.com/gpu"]
)  # fmt: skip
COUNTS = [0.5, 1.5, 2.25, 1e15, 10**20, 7.000001]
MANY = 300  # keys a "many" mutation adds to one mapping: many errors in one file


@cache
def seeds(kind: str) -> list[Path]:
    """Seed files that load: the fixtures (for jobs in a campaign, the shared corpus too)."""
    return [path for path in _candidates(kind) if _loads(path)]


def _loads(path: Path) -> bool:
    try:
        _loaded(path)
    except InputError:
        return False
    return True


def _candidates(kind: str) -> list[Path]:
    if kind == "jobs":
        found = sorted(  # the job formats, and the sweep files whose ceilings `estimate` works out
            p
            for folder in ("jobs", "sweeps")
            for p in (FIXTURES / folder).rglob("*")
            if p.is_file() and p.suffix in (".yaml", ".yml", ".json")
            if not p.name.endswith(".expected.yaml")
        )
        # job files that state knobs (precision, workers, a DeepSpeed config they name): their
        # own folder's configs and scripts are not job files, so only the top level
        found += sorted(
            p for p in (FIXTURES / "knobs").glob("*") if p.suffix in (".yaml", ".yml", ".json")
        )
        corpus = SHARED / "corpus"
        if corpus.is_dir() and os.environ.get("GPU_AUDIT_FUZZ_EXAMPLES"):
            found += sorted(
                p
                for p in corpus.rglob("*")
                if p.is_file() and p.suffix in (".yaml", ".yml", ".json")
            )[:400]
        return found
    if kind == "policies":
        root = FIXTURES.parent / "policies"
        return [*sorted(root.rglob("*.yaml")), FIXTURES / "inventory" / "demo-policy.yaml"]
    if kind == "prices":
        return sorted((FIXTURES / "prices").glob("*.json"))
    if kind == "interruptions":  # `--interruption-rates FILE`: a user's file, the shipped one
        shipped = FIXTURES.parent / "src" / "gpu_audit" / "catalog" / "data" / "interruptions.json"
        return [FIXTURES / "interruptions" / "gcp-capacity-advice.json", shipped]
    if kind == "shards":
        return [shard_seeds()[1]]  # shard 2 of 3: merged beside the good shards 1 and 3
    # the demo fleet, and capacity bought ahead (kind reservation, `reservation.*`, the join)
    return [FIXTURES / "inventory" / "demo.yaml", FIXTURES / "inventory" / "reservations.yaml"]


@cache
def shard_seeds() -> tuple[Path, ...]:
    """Three shard reports of one run (`scan --shard K/3` as tests/collectors writes them, no
    cloud), in a directory kept for the process."""
    import sys
    import tempfile

    sys.path.insert(0, str(FIXTURES.parent / "tests" / "collectors"))  # as pytest's rootdir mode
    from test_shard_reports import fleet, write

    directory = Path(tempfile.mkdtemp(prefix="gpu-audit-shards-"))
    held = fleet()
    return tuple(Path(write(directory / f"shard-{k}.json", k, held[k])) for k in (1, 2, 3))


def plain(value: Any) -> Any:
    """Our loader's values as plain data a serialiser writes back (tags become their text)."""
    if isinstance(value, dict):
        return {_key(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, Templated):
        return str(value)
    return value


def _key(key: Any) -> Any:
    if isinstance(key, str | int | float | bool | date) or key is None:
        return key
    return str(key)


def load_seed(path: Path) -> list[Any]:
    return copy.deepcopy(_loaded(path))


@cache
def _loaded(path: Path) -> list[Any]:
    documents = load_documents(str(path), read_text(str(path)))
    return [plain(d.data) for d in documents]


def value_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key/index path into a document, the document itself first."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += value_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += value_paths(item, (*prefix, index))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


@st.composite
def mutated(draw: st.DrawFn, kind: str, json_out: bool | None = None) -> tuple[str, str]:
    """(file name, text): a seed of `kind` with 1–4 mutations, as YAML or JSON."""
    files = seeds(kind)
    seed = draw(st.sampled_from(files))
    documents = load_seed(seed)
    if kind == "inventory":  # judging 39 resources per example is slow; a few show the shapes
        documents[0]["resources"] = documents[0]["resources"][: draw(st.integers(1, 4))]
    raw: dict[str, str] = {}
    as_json = draw(st.booleans()) if json_out is None else json_out
    if seed.suffix == ".json":
        as_json = True
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(documents) - 1))
        documents[index] = _mutate(draw, documents[index], raw, as_json)
    text = _write(documents, raw, as_json)
    if draw(st.integers(0, 9)) == 0:
        text = draw(_raw_edit(text))
    name = seed.name if not as_json else seed.with_suffix(".json").name
    if seed.name.endswith(".dstack.yml") and not as_json:
        name = seed.name
    return name, text


def _mutate(draw: st.DrawFn, document: Any, raw: dict[str, str], as_json: bool) -> Any:
    paths = value_paths(document)
    path = draw(st.sampled_from(paths))
    ops = ["hostile", "hostile", "hostile", "list", "map", "delete", "key", "count", "many"]
    op = draw(st.sampled_from(ops))
    if op == "count":
        counts = [p for p in paths if p and p[-1] in COUNT_KEYS]
        if counts:
            path = draw(st.sampled_from(counts))
            _get(document, path[:-1])[path[-1]] = draw(st.sampled_from(COUNTS))
            return document
        op = "hostile"
    if op == "many":
        target = _get(document, path)
        if isinstance(target, dict):
            for index in range(MANY):
                target[f"bad_key_{index}"] = index
            return document
        op = "key"
    if op == "hostile":
        new = _hostile(draw, raw, as_json)
    elif op == "list":
        new = [_get(document, path)]
    elif op == "map":
        new = {draw(st.sampled_from(HOSTILE_KEYS)): _get(document, path)}
    elif op == "key":
        target = _get(document, path)
        if isinstance(target, dict):
            keys = HOSTILE_KEYS if as_json else [*HOSTILE_KEYS, *NOT_TEXT_KEYS]
            target[draw(st.sampled_from(keys))] = _hostile(draw, raw, as_json)
        return document
    else:
        if not path:
            return document
        parent = _get(document, path[:-1])
        del parent[path[-1]]
        return document
    if not path:
        return new
    _get(document, path[:-1])[path[-1]] = new
    return document


def _hostile(draw: st.DrawFn, raw: dict[str, str], as_json: bool) -> Any:
    choice = draw(st.integers(0, 5))
    if choice == 0:  # a value a serialiser can write: text with any characters, odd numbers
        return draw(
            st.one_of(
                st.text(max_size=20),
                st.integers(min_value=-(10**30), max_value=10**30),
                st.floats(allow_nan=True, allow_infinity=True),
                st.booleans(),
                st.none(),
            )
        )
    sentinel = SENTINEL.format(len(raw))
    if choice == 1:
        depth = draw(st.sampled_from(DEEP))
        raw[sentinel] = "[" * depth + "]" * depth
    else:
        raw[sentinel] = draw(st.sampled_from(JSON_RAW if as_json else YAML_RAW))
    return sentinel


def _write(documents: list[Any], raw: dict[str, str], as_json: bool) -> str:
    if as_json:
        text = json.dumps(documents[0], indent=2, default=str, allow_nan=True)
        quote: Callable[[str], str] = json.dumps
    else:
        text = yaml.safe_dump_all(
            documents, default_flow_style=False, allow_unicode=True, width=4096
        )
        quote = str
    for sentinel, value in raw.items():
        text = text.replace(quote(sentinel), value)
    return text


@st.composite
def _raw_edit(draw: st.DrawFn, text: str) -> str:
    """Text-level damage: truncation (unclosed brackets and quotes), odd characters, line ends."""
    at = draw(st.integers(0, len(text)))
    edit = draw(st.sampled_from(["cut", "insert", "crlf", "bom", "tab"]))
    if edit == "cut":
        return text[:at]
    if edit == "insert":
        piece = draw(st.sampled_from(["\x07", "\x1b[2J", "\u202e", "{", "[", "'", '"', "\t", "\r"]))
        return text[:at] + piece + text[at:]
    if edit == "crlf":
        return text.replace("\n", "\r\n")
    if edit == "bom":
        return "\ufeff" + text
    return text[:at] + "\t" + text[at:]


SLURM_VALUES = [
    "", "gpu:a100:1e30", "gpu:a100:-4", "gpu:a100:99999999999", "gpu:\u202ea100:4", "gpu:" + "x" * 300,
    "${GPUS}", "gpu:a100:4,gpu:h100:2", "a100:4", "0", "99999-00:00:00", "1-25:99:99", "UNLIMITED",
    "infinite", "0-1000000%5", "\x1b[2J", "=", "--", "a b c",
]  # fmt: skip
SLURM_OPTIONS = ["--gres", "--gpus", "--gpus-per-node", "--gpus-per-task", "-G", "--time", "-t",
                 "--partition", "--array", "--nodes", "-N"]  # fmt: skip


def slurm_seeds() -> list[Path]:
    """The Slurm batch scripts of the fixtures, the public ones included."""
    folder = FIXTURES / "jobs" / "slurm"
    return sorted(p for p in folder.rglob("*") if p.suffix in (".sbatch", ".sh", ".slurm"))


@st.composite
def mutated_script(draw: st.DrawFn) -> tuple[str, str]:
    """(file name, text): a Slurm script with 1–4 directive edits (a hostile value for an option,
    a directive added or repeated, a line dropped), sometimes text-level damage as well."""
    seed = draw(st.sampled_from(slurm_seeds()))
    lines = seed.read_text(encoding="utf-8").splitlines()
    for _ in range(draw(st.integers(1, 4))):
        edit = draw(st.sampled_from(["value", "value", "add", "drop", "hetjob"]))
        option, value = draw(st.sampled_from(SLURM_OPTIONS)), draw(st.sampled_from(SLURM_VALUES))
        at = draw(st.integers(1, max(1, len(lines))))
        if edit == "drop" and len(lines) > 1:
            del lines[at - 1]
        elif edit == "hetjob":
            lines.insert(at, "#SBATCH hetjob")
        else:
            directive = (
                f"#SBATCH {option}={value}"
                if option.startswith("--")
                else (f"#SBATCH {option} {value}")
            )
            lines.insert(at if edit == "add" else 1, directive)
    text = "\n".join(lines) + "\n"
    if draw(st.integers(0, 4)) == 0:
        text = draw(_raw_edit(text))
    return seed.name, text
