"""The one reader: values YAML cannot build, deep nesting, non-regular files and syntax errors are
each one located line (exit 2 through the CLI), and the other files of the run are still judged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.core import yamlsrc
from gpu_audit.core.yamlsrc import load_documents, load_json, read_text
from gpu_audit.errors import InputError
from tests.conftest import ROOT, SHARED

GOOD = "name: ok\nresources:\n  accelerators: L4:1\nrun: python train.py\n"


def _error(text: str, path: str = "f.yaml") -> str:
    with pytest.raises(InputError) as raised:
        load_documents(path, text)
    message = str(raised.value)
    assert "\n" not in message, message
    return message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 1\nx: 2026-02-30\n", "f.yaml:2:4: '2026-02-30' is not a valid date or time"),
        ("x: [2026-13-01]\n", "f.yaml:1:5: '2026-13-01' is not a valid date or time"),
        ("x: !!bool maybe\n", "f.yaml:1:4: 'maybe' is not a YAML boolean"),
        ("x: !!int abc\n", "f.yaml:1:4: 'abc' cannot be read as !!int"),
        ("x: !!float abc\n", "f.yaml:1:4: 'abc' cannot be read as !!float"),
        ("x: !!map [1]\n", "f.yaml:1:4: !!map needs a mapping, found a sequence"),
        ("x: !!seq {a: 1}\n", "f.yaml:1:4: !!seq needs a sequence, found a mapping"),
        ("x: !!set [1]\n", "f.yaml:1:4: !!set needs a mapping"),
        ("x: !!omap {a: 1}\n", "f.yaml:1:4: !!omap needs a sequence"),
        ("x: !!timestamp nope\n", "f.yaml:1:4: 'nope' is not a valid date or time"),
        ("k:\n  x: " + "7" * 4301 + "\n", "f.yaml:2:6: an integer of 4,301 digits is too long"),
    ],
)
def test_values_yaml_cannot_build_are_located(text: str, expected: str) -> None:
    assert _error(text).startswith(expected)


def test_documented_yaml_1_1_shapes_load() -> None:
    [doc] = load_documents("f.yaml", "b: !!binary aGVsbG8=\ns: !!set {a, b}\no: !!omap [a: 1]\n")
    assert doc.data == {"b": "aGVsbG8=", "s": {"a": None, "b": None}, "o": [{"a": 1}]}


def test_huge_json_integer_is_located() -> None:
    text = '{\n  "a": ' + "1" * 4301 + "\n}"
    for path in ("f.json", "f.yaml"):
        assert _error(text, path).startswith(f"{path}:2:8: an integer of 4,301 digits")
    with pytest.raises(InputError, match=r"^f.json:2:8: a"):
        load_json("f.json", text)


@pytest.mark.parametrize(
    "text",
    [
        "x: " + "[" * 30_000,
        "x: " + "{a: " * 30_000,
        "- " * 30_000 + "x\n",
        "[" * 30_000,
        "a:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 150)),
    ],
)
def test_deep_nesting_is_refused_before_the_parser_recurses(tmp_path: Path, text: str) -> None:
    """In a subprocess: libyaml's composer used to recurse in C until SIGSEGV (exit 139)."""
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    code = (
        "import sys\nfrom gpu_audit.core.yamlsrc import load_documents, read_text\n"
        "load_documents(sys.argv[1], read_text(sys.argv[1]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, done  # an InputError, not a signal
    assert f"InputError: {path}:" in done.stderr and "nested more than 100 levels" in done.stderr


def test_moderate_nesting_and_brackets_load() -> None:
    [doc] = load_documents("f.yaml", "x: " + "[" * 99 + "]" * 99 + "\ny: " + "[1] " * 0 + "[]\n")
    assert doc.data["y"] == []
    many = "items:\n" + "".join(f"  - [{i}, {{a: {i}}}]\n" for i in range(500))
    assert len(load_documents("f.yaml", many)[0].data["items"]) == 500


def test_control_character_is_one_located_line() -> None:
    assert _error("a: 1\nb: x\x07y\n") == (
        "f.yaml:2:5: invalid YAML: unacceptable character #x0007: "
        "control characters are not allowed"
    )


def test_syntax_error_names_where_the_construct_starts() -> None:
    text = "a: 1\n" * 9 + "b: {c: 1,\n" + "d: 2\n" * 30
    assert _error(text) == (
        "f.yaml:10:4: invalid YAML: a flow mapping starts here and is not closed: "
        "did not find expected ',' or '}' (line 12, column 2)"
    )
    assert _error("a: 1\nb: 'open\n\nc: 2\n").startswith(
        "f.yaml:2:4: invalid YAML: a quoted scalar starts here and is not closed"
    )
    # A block structure broke where the parser stopped: that line leads.
    assert _error("a:\n  b: 1\n c: 2\n").startswith("f.yaml:3:2: invalid YAML: did not find")


def _read_in_child(path: str) -> subprocess.CompletedProcess[str]:
    code = "from gpu_audit.core.yamlsrc import read_text\nread_text(__import__('sys').argv[1])"
    return subprocess.run(
        [sys.executable, "-c", code, path], capture_output=True, text=True, timeout=30
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "jobs.yaml"
    os.mkfifo(fifo)
    done = _read_in_child(str(fifo))  # used to block forever: the timeout would fire
    assert f"{fifo}: a FIFO (named pipe), not a regular file; refused" in done.stderr


def test_directories_and_devices_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r": a directory, not a regular file"):
        read_text(str(tmp_path))
    if os.path.exists("/dev/null"):
        with pytest.raises(InputError, match=r"^/dev/null: a character device"):
            read_text("/dev/null")


def test_check_reports_every_bad_file_and_judges_the_rest(tmp_path: Path) -> None:
    """Through the CLI: each bad input is one `gpu-audit: error: file:line:` line, exit 2."""
    good = tmp_path / "good.yaml"
    good.write_text(GOOD)
    bad = {
        "date.yaml": GOOD + "x: 2026-02-30\n",
        "tag.yaml": GOOD + "y: !!int abc\n",
        "big.yaml": GOOD + "z: " + "9" * 5000 + "\n",
        "deep.yaml": GOOD + "w: " + "[" * 30_000 + "\n",
        "ctrl.yaml": GOOD + "v: \x1b]0;x\x07\n",
    }
    for name, text in bad.items():
        (tmp_path / name).write_text(text)
    paths = [str(good), *(str(tmp_path / n) for n in bad), os.devnull]
    result = CliRunner().invoke(main, ["check", "--format", "json", *paths])
    assert result.exit_code == 2, result.output
    assert '"path": "' + str(good) in result.stdout  # the good file is still judged
    errors = [line for line in result.stderr.splitlines() if line.startswith("gpu-audit: error:")]
    assert len(errors) == len(bad) + 1, result.stderr
    for name in bad:
        [line] = [e for e in errors if f"/{name}:" in e]
        assert f"/{name}:5:" in line, line
    assert (
        f"gpu-audit: error: {os.devnull}: a character device, not a regular file; refused" in errors
    )


def test_hex_integers_past_the_limit_are_refused() -> None:
    assert _error("x: 0x" + "f" * 4000 + "\n").startswith(
        "f.yaml:1:4: an integer of 4,002 characters is too long"
    )


def test_json_nan_and_infinity_are_not_json() -> None:
    """Python's json module accepts them; reports would carry them on (and no parser reads them)."""
    with pytest.raises(InputError, match=r"^f.json:3:8: invalid JSON: NaN is not a JSON number$"):
        load_json("f.json", '{\n  "a": "NaN",\n  "b": NaN\n}')
    with pytest.raises(InputError, match=r"^f.json:1:5: invalid JSON: -Infinity is not a JSON"):
        load_documents("f.json", "[1, -Infinity]")


def test_lone_json_surrogates_are_refused_where_they_are() -> None:
    with pytest.raises(InputError, match=r"^f.json:2:9: invalid JSON: \\ud800 is half of a"):
        load_json("f.json", '{\n  "a": "\\ud800"\n}')
    assert load_json("f.json", '["\\ud83d\\ude00", "\\\\ud800"]') == ["\U0001f600", "\\ud800"]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "d.dstack.yml",
            "type: [task]\nresources: {gpu: A100}\n",
            ":1: dstack parser: a list",  # parsing is recognising (no separate detection stage)
        ),
        (
            "cf.yaml",
            "AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  J:\n"
            "    Type: [AWS::SageMaker::NotebookInstance]\n    Properties: {InstanceType: x}\n",
            ":1: batch parser: a list or mapping where a name was expected",
        ),
        ("d.dstack.yml", "type: {'a\\nb': task}\n", ":1: dstack parser: a list or mapping"),
    ],
)
def test_a_list_where_a_name_was_expected_is_located(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    from gpu_audit.jobs import load_jobs

    good = tmp_path / "good.sky.yaml"
    good.write_text(GOOD)
    bad = tmp_path / name
    bad.write_text(text)
    load = load_jobs([str(good), str(bad)])
    assert [r.source.path for r in load.resources] == [str(good)]
    errors = [s.reason for s in load.skipped if s.error]
    [error] = errors
    assert error.startswith(f"{bad}{expected}") and "\n" not in error, error


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_every_reader_refuses_a_fifo(tmp_path: Path) -> None:
    """Job file, inventory, policy, `extends:` target and settings file: each used to block.
    Named relative to the run's folder, so no message is clipped by the temp path's length."""
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "good.sky.yaml").write_text(GOOD)
    (tmp_path / "policy.yaml").write_text("version: 1\nextends: pipe.yaml\n")
    fifo, good, extends = "pipe.yaml", "good.sky.yaml", "policy.yaml"
    cli = str(Path(sys.executable).with_name("gpu-audit"))
    runs = {
        "job": ["check", good, fifo],
        "inventory": ["scan", "--inventory", fifo],
        "policy": ["check", "--policy", fifo, good],
        "extends": ["check", "--policy", extends, good],
        "settings": ["check", "--config", fifo, good],
    }
    for name, args in runs.items():
        done = subprocess.run(
            [cli, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
        assert done.returncode == 2, (name, done)
        refused = f"{fifo}: a FIFO (named pipe), not a regular file; refused"
        if name == "extends":  # the policy loader checks the target first, located at extends:
            refused = f"{extends}:2: policy: extends: not a policy file '{fifo}'"
        assert refused in done.stderr, (name, done.stderr)
        assert "Traceback" not in done.stderr, name


def test_the_pure_python_parser_is_guarded_too() -> None:
    """Without libyaml the pure parser is used: its composer recurses in Python instead."""
    import yaml

    from gpu_audit.core.yamlguard import check_yaml_depth

    with pytest.raises(InputError, match=r"^f.yaml:2:103: nested more than 100 levels deep"):
        check_yaml_depth("f.yaml", "a: 1\nx: " + "[" * 5000, yaml.SafeLoader)
    check_yaml_depth("f.yaml", "x: " + "[" * 99 + "]" * 99, yaml.SafeLoader)


def _same(built: object, constructed: object, where: str) -> None:
    """Equal values of the same types, with the same lines, all the way down."""
    assert type(built) is type(constructed), where
    if isinstance(built, yamlsrc.LineMap):
        assert isinstance(constructed, yamlsrc.LineMap)
        assert (built.line, built.key_lines) == (constructed.line, constructed.key_lines), where
        assert list(built) == list(constructed), where
        for key in built:
            _same(built[key], constructed[key], f"{where}.{key}")
    elif isinstance(built, yamlsrc.LineList):
        assert isinstance(constructed, yamlsrc.LineList)
        assert (built.line, built.item_lines) == (constructed.line, constructed.item_lines), where
        assert len(built) == len(constructed), where
        for index, (a, b) in enumerate(zip(built, constructed, strict=True)):
            _same(a, b, f"{where}[{index}]")
    else:
        assert built == constructed or built != built, where  # NaN is NaN


def _yaml_files() -> list[Path]:
    roots = [ROOT / "fixtures", ROOT / "policies", ROOT / "docs"]
    if SHARED.is_dir():
        roots.append(SHARED / "corpus")
    return sorted(p for root in roots for p in root.rglob("*") if p.suffix in {".yaml", ".yml"})


def test_the_fast_build_makes_what_the_loader_constructs_on_every_file() -> None:
    """`yamlsrc._build` (documents without anchors) against PyYAML's own construction with the
    same guarded constructors, over every YAML file of the fixtures, docs, policies and corpus
    (the corpus, when it lies beside the checkout)."""
    compared = 0
    for path in _yaml_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if yamlsrc.may_anchor(text):
            continue  # maybe an anchor: load_documents constructs it the plain way
        for builder in ("fast", "plain"):
            loader = yamlsrc._LineLoader(text)
            try:
                documents = []
                while loader.check_node():
                    node = loader.get_node()
                    if builder == "fast":
                        documents.append(yamlsrc._build(loader, node))
                    else:
                        documents.append(loader.construct_document(node))
            except yaml.YAMLError:
                documents = ["error"]
            finally:
                loader.dispose()
            if builder == "fast":
                fast = documents
        for index, (a, b) in enumerate(zip(fast, documents, strict=True)):
            _same(a, b, f"{path}#{index}")
        compared += 1
    assert compared >= 150


ANCHORED = [
    "a: &x 1\nb: *x\n",
    "&x a: 1\n",
    "- &x [1]\n- *x\n",
    "{a:&x 1, b: *x}\n",
    "[&x 1,&y 2, *x]\n",
    "a: !!str &x v\nb: *x\n",
    "W&B: &x 1\nb: *x\n",
    "--- &x\na: 1\n",
    "a: {b: [&x 1]}\n",
    "? &k a\n: 1\n",
]
NOT_ANCHORED = ["team: W&B\n", "tag: !a&b v\n", "url: x?a=1&b=2\n", "R&D: 1\n"]


@pytest.mark.parametrize("text", ANCHORED + NOT_ANCHORED)
def test_may_anchor_is_true_wherever_the_parser_sees_an_anchor(text: str) -> None:
    """The test that picks the fast build (no alias, no alias-bomb walk) is never false where
    PyYAML's parser reads an anchor, and is false for an `&` inside a word (the runbook's W&B)."""
    anchored = any(getattr(e, "anchor", None) for e in yaml.parse(text, Loader=yaml.SafeLoader))
    assert anchored == (text in ANCHORED)
    assert yamlsrc.may_anchor(text) == anchored


def test_may_anchor_holds_over_every_file() -> None:
    """Over every YAML file of the fixtures, docs, policies and corpus: where the parser reads
    an anchor, `may_anchor` says so; and the shipped pack takes the fast build."""
    for path in _yaml_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            events = list(yaml.parse(text, Loader=yaml.SafeLoader))
        except yaml.YAMLError:
            continue
        if any(getattr(e, "anchor", None) for e in events):
            assert yamlsrc.may_anchor(text), path
    assert not yamlsrc.may_anchor((ROOT / "policies" / "runbook.yaml").read_text())


def test_an_alias_bomb_after_a_word_with_an_ampersand_is_still_refused() -> None:
    """`W&B` before the anchors does not hide them from the expansion check."""
    layers = ["W&B: 1", 'a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for index in range(1, 8):
        prev = "a" if index == 1 else f"l{index - 1}"
        layers.append(f"l{index}: &l{index} [{', '.join(['*' + prev] * 10)}]")
    with pytest.raises(InputError, match="alias bomb"):
        load_documents("bomb.yaml", "\n".join(layers) + "\n")


def test_a_byte_order_mark_is_dropped_and_bad_bytes_are_counted_in_the_file() -> None:
    assert read_text("x.yaml", b"\xef\xbb\xbfname: a\n") == "name: a\n"
    assert read_text("x.yaml", b"name: a\n") == "name: a\n"
    with pytest.raises(InputError, match=r"x.yaml: not UTF-8 text \(byte 9: invalid start byte"):
        read_text("x.yaml", b"\xef\xbb\xbfname: \xff\n")
    with pytest.raises(InputError, match=r"byte 6: invalid start byte"):
        read_text("x.yaml", b"name: \xff\n")
