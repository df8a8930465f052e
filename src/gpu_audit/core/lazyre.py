"""Regular expressions compiled on first use: a pattern the hook's files never need costs nothing.

`re.compile` parses and compiles in Python, 0.1–0.9 ms a pattern, and a module-level pattern is
paid at import by every run, used or not: ~40 of them were 5 ms of a one-file `check`. `lazy`
returns an object with the compiled pattern's methods (`search`, `match`, `finditer`, `sub`, …),
compiling on the first call; after that each method is the compiled one, looked up directly.

`needs`: substrings one of which every match contains (lower-case for an `IGNORECASE` pattern).
A text without any of them has no match, so it is answered without compiling or searching: a
run script that syncs nothing never compiles the sync pattern. `tests/test_lazyre.py`
generates matches of every gated pattern and holds each to its `needs`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

# The characters outside ASCII that `re.IGNORECASE` takes for an ASCII letter, which `lower()`
# alone does not turn into it (`ſ` matches `s`, `ı` and `İ` match `i`, the Kelvin sign `k`).
_ASCII_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def fold(text: str) -> str:
    """`text` lower-cased so that a pattern of lower-case ASCII matches it without
    `re.IGNORECASE` exactly where it would match `text` with it (compiling with the flag costs
    up to 4 times as much)."""
    return text.translate(_ASCII_FOLD).lower()


_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")
GATED: list[_Gated] = []  # every gated pattern made, for the test that holds them to `needs`


class _Lazy:
    def __init__(self, source: str, flags: int) -> None:
        self.pattern = source
        self.flags = flags

    def __getattr__(self, name: str) -> Any:  # Any: what re.Pattern's attribute is
        """The first use: compile, and keep the compiled pattern's methods on the instance."""
        compiled = self.__dict__.get("compiled")
        if compiled is None:
            compiled = self.__dict__["compiled"] = re.compile(self.pattern, self.flags)
            for method in _METHODS:
                if method not in type(self).__dict__:
                    self.__dict__[method] = getattr(compiled, method)
        return compiled if name == "compiled" else getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self.flags!r})"


class _Gated(_Lazy):
    def __init__(self, source: str, flags: int, needs: tuple[str, ...]) -> None:
        super().__init__(source, flags)
        self.needs = needs
        self._fold = bool(flags & re.IGNORECASE)

    def absent(self, text: str) -> bool:
        """No substring of `needs` in `text`: it cannot match."""
        folded = fold(text) if self._fold else text
        return not any(needle in folded for needle in self.needs)

    def search(self, text: str, *args: Any) -> re.Match[str] | None:
        """`re.search`, None at once when none of the needed substrings is in `text`."""
        return None if self.absent(text) else self.compiled.search(text, *args)

    def match(self, text: str, *args: Any) -> re.Match[str] | None:
        """`re.match`, None at once when none of the needed substrings is in `text`."""
        return None if self.absent(text) else self.compiled.match(text, *args)

    def finditer(self, text: str, *args: Any) -> Iterator[re.Match[str]]:
        """`re.finditer`, an empty iterator at once when none of the needed substrings is in
        `text`."""
        return iter(()) if self.absent(text) else self.compiled.finditer(text, *args)

    def findall(self, text: str, *args: Any) -> list[Any]:
        """`re.findall`, `[]` at once when none of the needed substrings is in `text`."""
        return [] if self.absent(text) else self.compiled.findall(text, *args)

    def fullmatch(self, text: str, *args: Any) -> re.Match[str] | None:
        """`re.fullmatch`, None at once when none of the needed substrings is in `text`."""
        return None if self.absent(text) else self.compiled.fullmatch(text, *args)

    def sub(self, replacement: str | Callable[[re.Match[str]], str], text: str) -> str:
        """`re.sub`, `text` unchanged at once when none of the needed substrings is in it."""
        return text if self.absent(text) else self.compiled.sub(replacement, text)


_SPECIAL = frozenset(".^$*+?{}[]|()\\")


def lead(source: str) -> str:
    """The literal text every match of `source` starts with (`p3\\..+` → `p3.`, `g3s?` → `g3`):
    '' where it starts with a class, a group, an anchor, an escape such as `\\d` or an optional
    character, or holds an alternation anywhere. A gate for patterns that are data, not code."""
    if "|" in source:
        return ""
    chars: list[str] = []
    index = 0
    while index < len(source):
        char, step = source[index], 1
        if char == "\\":
            escaped = source[index + 1 : index + 2]
            if not escaped or escaped.isalnum():  # `\d`, `\b`, `\1`: not one literal
                break
            char, step = escaped, 2
        elif char in _SPECIAL:
            break
        after = source[index + step : index + step + 1]
        if after in ("*", "?", "{"):  # the character may be absent
            break
        chars.append(char)
        if after == "+":
            break
        index += step
    return "".join(chars)


def lazy(
    source: str, flags: int | re.RegexFlag = 0, needs: tuple[str, ...] = ()
) -> re.Pattern[str]:
    """`re.compile(source, flags)`, done when the pattern is first used (and a text holds one
    of `needs`, if given)."""
    if not needs:
        return _Lazy(source, int(flags))  # type: ignore[return-value]
    if "(?i" in source:
        raise ValueError(
            "a gated pattern takes re.IGNORECASE as a flag, not inline: the gate folds"
        )
    gated = _Gated(source, int(flags), needs)
    GATED.append(gated)
    return gated  # type: ignore[return-value]
