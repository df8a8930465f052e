"""Each format's markers never turn away a document its parser would take, and `check` imports a
format's parser only for a document its markers claim (jobs/lazy.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import SHARED, need_shared

from gpu_audit.core.yamlsrc import LineMap, Templated, load_documents, read_text
from gpu_audit.errors import InputError
from gpu_audit.jobs import FORMATS
from gpu_audit.jobs.mentions import MAX_NODES, mentions

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "fixtures" / "jobs", SHARED / "corpus"]
PARSERS = [f"gpu_audit.jobs.{name}.parser" for name in FORMATS]


def _documents() -> list[tuple[str, object]]:
    found = []
    for folder in SOURCES:
        for path in sorted(folder.rglob("*")):
            if path.suffix not in {".yaml", ".yml", ".json"} or ".expected." in path.name:
                continue
            try:
                documents = load_documents(str(path), read_text(str(path)))
            except InputError:
                continue
            found += [(str(path), d) for d in documents if isinstance(d.data, dict)]
    return found


DOCUMENTS = _documents()


def test_the_documents_cover_every_format() -> None:
    taken = {
        name
        for path, document in DOCUMENTS
        for name, fmt in FORMATS.items()
        if _parser_takes(fmt.format, document, path)
    }
    assert taken == {name for name, fmt in FORMATS.items() if fmt.syntax.reader == "yaml"}


def test_a_text_formats_syntax_claims_every_file_its_parser_takes() -> None:
    """A format read as text has no YAML markers: its syntax (name, opening) is what says a
    file is its own, so it must claim every fixture its parser yields a job from."""
    text_formats = {name: fmt for name, fmt in FORMATS.items() if fmt.syntax.reader != "yaml"}
    for name, fmt in text_formats.items():
        files = [
            p
            for p in sorted((ROOT / "fixtures" / "jobs" / name).rglob("*"))
            if p.is_file() and p.suffix not in {".md", ".yaml"}
        ]
        assert files, name
        for path in files:
            text = path.read_text(encoding="utf-8")
            if fmt.parse_text(text, str(path)):
                assert fmt.syntax.claims(path.name, text), path
            assert not fmt.claims({"kind": "Job"}), name  # never a YAML document


def _parser_takes(parser: object, document: object, path: str) -> bool:
    try:
        return parser.parse(document, path) is not None  # type: ignore[attr-defined]
    except Exception:  # a parser that fails on a document must be asked it
        return True


@pytest.mark.parametrize("name", list(FORMATS))
def test_markers_claim_every_document_the_parser_takes(name: str) -> None:
    fmt = FORMATS[name]
    missed = [
        path
        for path, document in DOCUMENTS
        if _parser_takes(fmt.format, document, path) and not fmt.claims(document.data)
    ]
    assert not missed, f"{name}'s markers turn away documents its parser takes: {missed}"
    assert len(DOCUMENTS) > 50  # the fixtures alone hold 86 documents


def test_the_corpus_is_asked_too() -> None:
    """The real-world configs of ../shared/corpus are among the documents (where it is laid)."""
    need_shared(SHARED / "corpus")
    corpus = str(SHARED / "corpus")
    assert sum(path.startswith(corpus) for path, _ in DOCUMENTS) > 100


# Formats whose documents may be Kubernetes objects: SageMaker reads its operator's and ACK's CRDs.
KUBERNETES_OBJECTS = {"kubernetes", "sagemaker"}


def test_markers_turn_most_documents_away() -> None:
    """The point of markers: a Kubernetes object is claimed by no other format's (but those in
    KUBERNETES_OBJECTS), so its parser alone is imported."""
    kubernetes = [d for _, d in DOCUMENTS if FORMATS["kubernetes"].claims(d.data)]
    assert len(kubernetes) > 20
    for name in set(FORMATS) - KUBERNETES_OBJECTS:
        assert not any(FORMATS[name].claims(d.data) for d in kubernetes), name


def test_mentions_reads_keys_as_the_aws_lookup_does() -> None:
    keys = frozenset({"resourceconfig"})
    assert mentions(_line_map({"a": [{"b": {"resourceConfig.$": "$.x"}}]}), keys)
    assert not mentions(_line_map({"a": [{"b": {"ResourceConfigs": 1}}]}), keys)
    assert mentions({"Definition": '{"ResourceConfig": {}}'}, frozenset())  # embedded JSON
    assert mentions({"Body": Templated('!Sub {"ProductionVariants": []}')}, frozenset())
    assert mentions({"Type": "AWS::X"}, frozenset(), frozenset({"AWS::X"}))
    assert not mentions({"Type": "AWS::Y"}, frozenset(), frozenset({"AWS::X"}))


def _line_map(values: dict[str, object]) -> LineMap:
    mapping = LineMap(1)
    mapping.update(values)
    return mapping


def test_mentions_gives_up_on_a_huge_document_by_saying_yes() -> None:
    shared = list(range(MAX_NODES))  # not a key in sight, but too many nodes to look at
    assert mentions({"a": shared}, frozenset({"x"}))
    looped: dict[str, object] = {}
    looped["self"] = looped  # an alias cycle ends the walk
    assert not mentions(looped, frozenset({"x"}))


PROBE = """
import json, sys
from gpu_audit.jobs import load_jobs
load = load_jobs(sys.argv[1:])
print(json.dumps({"jobs": len(load.resources), "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize(
    ("fixture", "name"),
    [
        ("kubernetes/pytorchjob-spot.yaml", "kubernetes"),
        ("skypilot/serve-on-demand.yaml", "skypilot"),
        ("dstack/task-spot.dstack.yml", "dstack"),
    ],
)
def test_only_the_parser_of_the_format_given_is_imported(fixture: str, name: str) -> None:
    path = ROOT / "fixtures" / "jobs" / fixture
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["jobs"] >= 1
    imported = [p for p in PARSERS if p in answer["modules"]]
    assert imported == [f"gpu_audit.jobs.{name}.parser"]
