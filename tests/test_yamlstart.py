"""`yamlstart.import_yaml`: PyYAML's reader pattern, left to compile on first use, is the pattern
PyYAML compiles (its text as PyYAML's source writes it, the same matches), and nothing else of
`re` changes. Each case runs in a fresh interpreter: `yaml` is imported once per process."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import yaml

from gpu_audit.core.yamlstart import NON_PRINTABLE
from tests.conftest import ROOT

# Each side of every range of the class, and characters well inside and outside them
EDGES = (
    "\x00\x08\x09\x0a\x0b\x0c\x0d\x0e\x1f\x20\x41\x7e\x7f\x84\x85\x86\x9f\xa0\xe9"
    "\ud7ff\ud800\udfff\ue000\ufffd\ufffe\uffff\U00010000\U0001f600\U0010ffff"
)


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_twin_is_pyyamls_own_pattern_text() -> None:
    """The text seeded is the literal of `Reader.NON_PRINTABLE` in the installed PyYAML."""
    source = Path(yaml.reader.__file__).read_text(encoding="utf-8")
    literals = [
        node.args[0].value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", None) == "compile"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ]
    assert literals == [NON_PRINTABLE]


def test_the_program_imports_yaml_with_the_twin_and_re_is_left_as_it_was() -> None:
    out = _run(
        "import re\n"
        "from gpu_audit.core.yamlstart import NON_PRINTABLE, import_yaml\n"
        "print(import_yaml(), import_yaml())\n"
        "import yaml\n"
        "twin = yaml.reader.Reader.NON_PRINTABLE\n"
        "print(type(twin).__name__, twin.pattern == NON_PRINTABLE)\n"
        "print(isinstance(re.compile(NON_PRINTABLE), re.Pattern))\n"
    )
    assert out.split("\n")[:3] == ["True False", "_Lazy True", "True"]


def test_the_twin_matches_as_the_compiled_pattern() -> None:
    """Every edge character alone and in text, through `search` as the reader calls it."""
    out = _run(
        "import re\n"
        "from gpu_audit.core.yamlstart import NON_PRINTABLE, import_yaml\n"
        "import_yaml()\n"
        "import yaml\n"
        "twin, real = yaml.reader.Reader.NON_PRINTABLE, re.compile(NON_PRINTABLE)\n"
        f"edges = {EDGES!r}\n"
        "texts = [*edges, 'plain text', 'a' + edges + 'b', edges[::-1]]\n"
        "def seen(p, t):\n"
        "    m = p.search(t)\n"
        "    return None if m is None else (m.start(), m.group())\n"
        "print(all(seen(twin, t) == seen(real, t) for t in texts))\n"
        "print(sum(seen(real, t) is not None for t in edges))\n"
    )
    same, refused = out.split("\n")[:2]
    assert same == "True" and int(refused) >= 10


def test_the_pure_python_reader_refuses_a_control_character_as_before() -> None:
    code = (
        "import yaml\n"
        "try:\n"
        "    yaml.load('a: b\\x07', Loader=yaml.SafeLoader)\n"
        "except yaml.reader.ReaderError as exc:\n"
        "    print(exc)\n"
    )
    with_twin = _run("from gpu_audit.core.yamlstart import import_yaml\nimport_yaml()\n" + code)
    assert with_twin == _run(code)
    assert "unacceptable character #x0007" in with_twin
