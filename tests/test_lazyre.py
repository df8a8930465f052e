"""`core/lazyre.lazy`: a pattern compiled on first use answers as `re.compile` would, and each
gated pattern's `needs` holds: every text it can match contains one of them (generated from the
pattern itself by hypothesis), so the gate never hides a match."""

from __future__ import annotations

import importlib
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_audit.catalog import lifecycle
from gpu_audit.core import lazyre
from gpu_audit.core.lazyre import lazy
from tests.conftest import ROOT

TEXTS = ["", "abc", "aaa b", "x = a+b", "A", "line\nline a"]


def _every_gated() -> list[lazyre._Gated]:
    for path in sorted((ROOT / "src" / "gpu_audit").rglob("*.py")):
        parts = path.relative_to(ROOT / "src").with_suffix("").parts
        if "__main__" not in parts:
            importlib.import_module(".".join(p for p in parts if p != "__init__"))
    lifecycle._families()  # the lifecycle table's family patterns: gated by their `lead`
    return list(lazyre.GATED)


GATED = _every_gated()


def test_a_lazy_pattern_compiles_on_first_use_and_answers_as_the_compiled_one() -> None:
    pattern = lazy(r"(a+)\s*(b)?", re.IGNORECASE)
    assert "compiled" not in vars(pattern)
    compiled = re.compile(r"(a+)\s*(b)?", re.IGNORECASE)
    for text in TEXTS:
        found, expected = pattern.search(text), compiled.search(text)
        assert (found and found.span()) == (expected and expected.span())
        assert pattern.sub("-", text) == compiled.sub("-", text)
        assert pattern.findall(text) == compiled.findall(text)
        assert pattern.split(text) == compiled.split(text)
        assert [m.span() for m in pattern.finditer(text)] == [
            m.span() for m in compiled.finditer(text)
        ]
    assert vars(pattern)["compiled"].pattern == compiled.pattern
    assert pattern.groups == 2 and pattern.pattern == compiled.pattern


def test_a_gated_pattern_is_not_compiled_for_a_text_without_its_needles() -> None:
    pattern = lazy(r"--save[_-]steps\s+(-1)", re.IGNORECASE, needs=("save",))
    assert pattern.search("torchrun train.py") is None
    assert list(pattern.finditer("torchrun train.py")) == []
    assert pattern.sub("x", "torchrun") == "torchrun" and pattern.findall("nothing") == []
    assert "compiled" not in vars(pattern)
    found = pattern.search("python t.py --SAVE_STEPS -1")
    assert found is not None and found.group(1) == "-1"


def test_an_ignorecase_gate_sees_every_spelling_the_pattern_matches() -> None:
    """Every character `re.IGNORECASE` equates with an ASCII letter reaches the gate as that
    letter: `ſync` matches `sync`, so its gate must not call it absent."""
    pattern = lazy(r"sync|kill|dir", re.IGNORECASE, needs=("sync", "kill", "dir"))
    for text in ("\u017fync", "\u212aill", "d\u0131r", "d\u0130r", "SYNC"):
        assert re.search(pattern.pattern, text, re.IGNORECASE), text
        assert pattern.search(text) is not None, text
    letters = re.compile("[a-z]", re.IGNORECASE)
    for code in range(0x80, 0x10000):
        char = chr(code)
        if letters.fullmatch(char):
            folded = char.translate(lazyre._ASCII_FOLD).lower()
            assert folded.isascii() and letters.fullmatch(folded), hex(code)


def test_the_package_gates_patterns_where_it_reads_run_scripts() -> None:
    assert len(GATED) >= 10
    modules = {g.pattern for g in GATED}
    assert any("rsync" in p for p in modules) and any("tpu" in p for p in modules)


@pytest.mark.parametrize("gated", GATED, ids=lambda g: g.pattern[:40])
@settings(max_examples=60, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_of_a_gated_pattern_holds_one_of_its_needles(
    gated: lazyre._Gated, data: st.DataObject
) -> None:
    compiled = re.compile(gated.pattern, gated.flags)
    text = data.draw(st.from_regex(compiled))
    found = compiled.search(text)
    assert found is not None
    assert not gated.absent(found.group(0)), (gated.pattern, found.group(0), gated.needs)
    answered = gated.search(text)
    assert answered is not None and answered.span() == found.span()


@pytest.mark.parametrize(
    ("source", "start"),
    [
        (r"p3\..+", "p3."),
        (r"g3s?\..+", "g3"),
        (r"standard_nc\d+r?(_promo)?", "standard_nc"),
        ("ab{2}c", "a"),
        ("a+b", "a"),
        ("ab*", "a"),
        (r"x\-y", "x-y"),
        (r"\d+x", ""),
        ("^abc", ""),
        ("[ab]c", ""),
        ("(ab)c", ""),
        ("abc|xyz", ""),
        ("a", "a"),
        ("", ""),
    ],
)
def test_lead_is_the_literal_start_every_match_has(source: str, start: str) -> None:
    assert lazyre.lead(source) == start
    compiled = re.compile(source)
    for text in ("p3.2xlarge", "g3.4xlarge", "g3s.xlarge", "standard_nc24r", "abbc", "aab", "a"):
        found = compiled.fullmatch(text)
        assert found is None or text.startswith(start), (source, text)


def test_the_lifecycle_families_are_gated_and_still_cover_their_types() -> None:
    families = lifecycle._families()
    assert families and all(isinstance(p, lazyre._Gated) for p, _ in families)
    p3 = next(p for p, n in families if n.item == r"p3\..+")
    assert p3.absent("p4d.24xlarge") and p3.fullmatch("p4d.24xlarge") is None  # not compiled for it
    found = p3.fullmatch("p3.16xlarge")
    assert found is not None and found.group(0) == "p3.16xlarge"
    assert lifecycle.lifecycle("aws", None, "p3.2xlarge", None, lifecycle.date(2026, 12, 4))[0]


def test_a_gate_refuses_an_inline_ignorecase_flag_it_could_not_see() -> None:
    with pytest.raises(ValueError, match="not inline"):
        lazy(r"(?i)token", needs=("token",))


def test_fold_lets_a_lower_case_pattern_match_without_ignorecase() -> None:
    for text in ("P4D.24XLARGE", "Standard_NC24ads_A100_v4", "\u017ftandard_nc6", "G5.xlarge"):
        pattern = r"^(?:p\d[a-z]*|g\d[a-z]*)\.\w+$|^standard_n[cdv]\w*$"
        expected = re.search(pattern, text, re.IGNORECASE) is not None
        assert (re.search(pattern, lazyre.fold(text)) is not None) is expected, text
