"""CONTRIBUTING.md's job-format and field recipes match the code, and cannot go stale.

The job-format recipe is walked with a format the registry does not have: every file that the
doc-list, provider-field and fixture checks would then name is a step marked *named by*, and
every such step names such a file. Every file that names all the formats is in the recipe, every
path exists, and the names the recipes give (`LazyFormat`'s arguments, `canonical`'s parameters,
`JobDraft`'s methods, the current report schema) are the code's.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import pytest

from gpu_audit.collectors.registry import PROVIDERS
from gpu_audit.core.resource import Resource, canonical
from gpu_audit.core.yamlsrc import Document
from gpu_audit.jobs import FORMATS, registry
from gpu_audit.jobs.discover import expand
from gpu_audit.jobs.interface import JobDraft, JobFormat, TextFormat
from gpu_audit.jobs.lazy import LazyFormat
from gpu_audit.jobs.syntax import Syntax
from tests.conftest import ROOT
from tests.jobs.test_job_fixtures import formats_without_fixtures
from tests.test_doc_lists import (
    REGISTERED,
    SYNTAXES,
    hook_files,
    hook_types,
    provider_field_problems,
    stale_hook,
    stale_lists,
    table_problems,
)
from tests.test_fields import CURRENT_SCHEMA, FIELD_TABLE_DOC

# A format that is not YAML, to walk the recipe's non-YAML half with: `//@job gpus=H100:8` lines
# in `.fake` files (or `.txt` ones whose opening has one), `//` comments.
FAKE_SYNTAX = Syntax(
    reader="text",
    suffixes=(".fake",),
    hook_types=("text",),
    sniffed=(".txt",),
    first_line=r"^//@job ",
    comment="//",
    directives=("//@job",),
)


class FakeFormat(TextFormat):
    """`//@job gpus=MODEL:COUNT` at a line: one job of those GPUs."""

    name = "recipe-walk"

    def parse_text(self, text: str, path: str) -> list[Resource] | None:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.startswith("//@job gpus="):
                model, _, count = line.removeprefix("//@job gpus=").partition(":")
                draft = JobDraft(self.name, path, Document(data=None, line=number, index=0))
                draft.set("gpu.model", model, number)
                draft.set("gpu.count", int(count), number)
                return [draft.build()]
        return []


CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
NEW = {"recipe-walk": "Recipe Walk"}  # a format to walk the recipe with
# Where a list of every format is expected without being a recipe's step: data, not docs.
NOT_LISTS = ("tests/", "fixtures/golden/", "fixtures/inventory/", "fixtures/precision/")
MOST_HAND_EDITED = 5  # files beyond a format's own folder, fixtures and tests (issue 40)


def _section(title: str) -> str:
    start = CONTRIBUTING.index(f"\n### {title}\n")
    end = CONTRIBUTING.find("\n#", start + 1)
    return CONTRIBUTING[start : end if end != -1 else len(CONTRIBUTING)]


def _steps(title: str) -> list[str]:
    """The numbered steps of a recipe, each as one line."""
    steps: list[str] = []
    for line in _section(title).splitlines():
        if re.match(r"\d+\. ", line):
            steps.append(line)
        elif steps and line.startswith("   "):
            steps[-1] += " " + line.strip()
        elif steps and not line.strip():
            steps.append("")
    return [step for step in steps if step]


def _paths(text: str) -> list[str]:
    """The repository paths in a recipe's text, in order: a bare file name (`parser.py`) is in
    the folder of the path before it."""
    found: list[str] = []
    base = ""
    for token in re.findall(r"`([^`\s]+)`", " ".join(text.split())):
        if token.startswith("..") or not re.fullmatch(r"[\w.<>/*-]+", token):
            continue
        if "/" in token:
            base = token if token.endswith("/") else token.rpartition("/")[0] + "/"
            found.append(token)
        elif (ROOT / token).is_file():  # a file at the root (README.md, .pre-commit-hooks.yaml)
            found.append(token)
        elif re.search(r"\.(py|md|ya?ml|json|toml|sarif|csv)$", token) and not token.startswith(
            "."
        ):
            found.append(base + token)
    return found


def _targets(step: str, name: str) -> list[str]:
    """The files a step changes (its tests are the ones that name them), `<format>` filled."""
    return [p.replace("<format>", name) for p in _paths(step) if not p.startswith("tests/")]


def test_a_new_format_leaves_stale_exactly_the_files_the_recipe_marks() -> None:
    formats = {**REGISTERED, **NEW}
    (name,) = NEW
    problems = [
        *stale_lists(formats),
        *table_problems(formats),
        *provider_field_problems(formats),
        *formats_without_fixtures(formats),
    ]
    named = {problem.partition(":")[0] for problem in problems}
    # the field table's provider row follows the provider field (python -m tests.test_fields),
    # and a golden that shows the formats a check reads (a skipped file's reason) is rewritten
    named.add(FIELD_TABLE_DOC)
    for golden in sorted((ROOT / "fixtures" / "golden").iterdir()):
        if "not a job config of a supported format (" in golden.read_text(encoding="utf-8"):
            named.add(golden.relative_to(ROOT).as_posix())
    marked = {
        path
        for step in _steps("Add a job format")
        if "*Named by*" in step
        for path in _targets(step, name)
    }
    assert named - marked == set(), "CONTRIBUTING.md's job-format recipe does not name these"
    assert marked - named == set(), "CONTRIBUTING.md marks these named by a test; none is"


def test_a_new_syntax_leaves_the_hook_stale_and_the_recipe_regenerates_it(tmp_path: Path) -> None:
    """A format that is not YAML changes what the pre-commit hook must hand `check`: the hook's
    `types_or` and `files` go stale (named by tests/test_doc_lists.py), and the recipe's
    regeneration step writes them; rewritten, they take the new files (pre-commit's own rule:
    one of the file's types, and a name `files` matches)."""
    from identify.identify import tags_from_path

    syntaxes = {**SYNTAXES, "recipe-walk": FAKE_SYNTAX}
    stale = {problem.partition(":")[0] for problem in stale_hook(syntaxes)}
    assert stale == {".pre-commit-hooks.yaml"}
    regenerating = [s for s in _steps("Add a job format") if "python -m tests.test_doc_lists" in s]
    assert len(regenerating) == 1 and "`types_or` and `files`" in regenerating[0]
    types = set(hook_types(syntaxes).strip("[]").split(", "))
    files = re.compile(hook_files(syntaxes).strip("'"))
    for name in ("train.fake", "plan.txt", "job.yaml", "train.sbatch", "train.sh"):
        (tmp_path / name).write_text("//@job gpus=H100:8\n")
        tags = tags_from_path(str(tmp_path / name))  # as pre-commit reads the file
        assert files.search(f"jobs/{name}") and tags & types, (name, tags)
    assert not files.search("README.md")


def test_a_text_format_is_found_read_and_ignored_by_its_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fake text format, registered as the recipe says: `check DIR` finds its files (by
    suffix, and by opening for a sniffed suffix), the loader reads them as text, and an ignore
    comment in its own comment syntax above a directive applies to the directive's line."""
    fake = LazyFormat("recipe-walk", lambda data: False, f"{__name__}:FakeFormat", "Recipe Walk",
                      FAKE_SYNTAX)  # fmt: skip
    monkeypatch.setitem(registry.FORMATS, "recipe-walk", fake)
    monkeypatch.setattr(registry, "TEXT_FORMATS", (*registry.TEXT_FORMATS, fake))
    (tmp_path / "train.fake").write_text(
        "// a fake job\n// gpu-audit: ignore[gpu-class-cap] approved\n//@job gpus=H100:8\nrun\n"
    )
    (tmp_path / "plan.txt").write_text("//@job gpus=L4:1\n")
    (tmp_path / "notes.txt").write_text("nothing here\n")
    files, unmatched = expand([str(tmp_path)])
    assert sorted(Path(f).name for f in files) == ["plan.txt", "train.fake"] and not unmatched
    load = registry.load_jobs(files)
    found = {Path(r.source.path).name: r for r in load.resources}
    assert {name: (r.gpu.model, r.gpu.count) for name, r in found.items()} == {
        "plan.txt": ("L4", 1),
        "train.fake": ("H100", 8),
    }
    assert found["train.fake"].provider == "recipe-walk"
    assert dict(found["train.fake"].source.suppressions) == {3: {"gpu-class-cap": "approved"}}


def test_a_new_format_edits_few_files_by_hand() -> None:
    """Beyond its own folder, fixtures and tests, and the regenerations (a step that starts with
    a command: `python -m …`, `.venv/bin/pytest … --update-golden`)."""
    by_hand = []
    for step in _steps("Add a job format"):
        paths = _paths(step)
        own = not paths or "<format>" in paths[0] or paths[0].startswith("tests/")
        if not own and not re.match(r"\d+\. `[^`]* [^`]*`", step):
            by_hand.append(paths[0])
    assert by_hand == [
        "src/gpu_audit/jobs/registry.py",
        "src/gpu_audit/core/resource.py",
        "docs/pre-commit.md",
        "docs/estimate.md",
    ]
    assert len(by_hand) <= MOST_HAND_EDITED


def test_every_file_that_lists_every_format_is_in_the_recipe() -> None:
    """A new list of all the formats, written out by hand in a doc or a module, must be a step
    of the recipe (or generated by one), or it goes stale with the next format."""
    recipe = set(_paths(_section("Add a job format")))
    own = {f"src/gpu_audit/jobs/{n}/" for n in FORMATS} | {f"fixtures/jobs/{n}/" for n in FORMATS}
    listing = []
    for path in _sources():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith((*NOT_LISTS, *own)) or relative == "CONTRIBUTING.md":
            continue
        text = path.read_text(encoding="utf-8", errors="replace").casefold()
        if all(
            re.search(rf"\b{name}\b", text) or fmt.title.casefold() in text
            for name, fmt in FORMATS.items()
        ):
            listing.append(relative)
    assert listing, "the docs list the formats somewhere"
    unnamed = [path for path in listing if path not in recipe]
    assert unnamed == [], (
        "these files list every job format, and CONTRIBUTING.md's job-format recipe does not name "
        "them: generate the list (tests/test_doc_lists.py) or add the file to the recipe"
    )


def _sources() -> list[Path]:
    """The checkout's source, doc and data files (no hidden folder, virtualenv or build)."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in {"build", "dist", "__pycache__"}
            and not d.endswith(".egg-info")
        )
        for name in sorted(files):
            if Path(name).suffix in {".py", ".md", ".yaml", ".yml", ".toml", ".json"}:
                found.append(Path(folder) / name)
    return found


def test_every_path_the_recipes_name_exists() -> None:
    for title in ("Add a job format", "Add a field"):
        for path in _paths(_section(title)):
            names = FORMATS if "<format>" in path else PROVIDERS if "<provider>" in path else [""]
            for name in names:
                concrete = path.replace("<format>", name).replace("<provider>", name)
                assert list(ROOT.glob(concrete.rstrip("/"))), f"CONTRIBUTING.md ({title}): {path}"


def test_the_recipes_give_the_codes_names() -> None:
    section = " ".join(_section("Add a job format").split())
    call = re.search(r"`LazyFormat\(([^)]*)\)`", section)
    assert call is not None
    stated = [arg.strip().strip('"') for arg in call.group(1).split(",")]
    assert len(stated) == len(inspect.signature(LazyFormat).parameters)
    assert stated[3] == "title" and all(fmt.title for fmt in FORMATS.values())
    assert stated[4] == "syntax" and list(inspect.signature(LazyFormat).parameters)[4] == "syntax"
    for attribute in ("name", "hints", "parse"):
        assert f"`{attribute}`" in section
        assert attribute in vars(JobFormat) or attribute in JobFormat.__annotations__
    assert callable(JobDraft.count) and "`JobDraft.count`" in section
    field = " ".join(_section("Add a field").split())
    named = {m.partition("=")[0] for m in re.findall(r"`(\w+(?:=\w+)?)`", field)}
    parameters = set(inspect.signature(canonical).parameters)
    assert parameters <= named, (
        f"canonical(...)'s parameters the recipe leaves out: {parameters - named}"
    )
    assert {"set", "put"} <= named and callable(JobDraft.set) and callable(JobDraft.put)
    assert CURRENT_SCHEMA in _paths(field) and FIELD_TABLE_DOC in _paths(field)
    assert Path(ROOT / "fixtures" / "golden").is_dir()
