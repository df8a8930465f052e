"""Which files each side of a diff reads: `check`'s discovery, on the worktree or a git tree.

PATHS are what `check` takes (files, directories, quoted globs), relative to the working
directory. On a git revision the same rules run over its tree: `.gitignore` files of that
revision, `--exclude` and the settings' `exclude`, YAML/JSON names only from directories and
globs, an explicitly named file always read. Every file is named repository-relative with `/`.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from gpu_audit.diff.git import Revision, abbreviated, link_targets, read_blobs, tree_files
from gpu_audit.errors import InputError
from gpu_audit.jobs.discover import NOT_UTF8, Walker, expand, not_utf8, utf8_name
from gpu_audit.jobs.syntax import OPENING
from gpu_audit.report.escape import terminal_safe

if TYPE_CHECKING:  # pathspec is imported where a directory is walked
    from pathspec import GitIgnoreSpec

_GLOB_CHARS = frozenset("*?[")


def relative(path: str, root: str) -> str:
    """`path` (as given, from the working directory) relative to the repository root; a link is
    named as itself (its directory resolved, not the link)."""
    parent, name = os.path.split(os.path.abspath(path))
    rel = os.path.relpath(os.path.join(os.path.realpath(parent), name), root).replace(os.sep, "/")
    if rel == ".." or rel.startswith("../"):
        raise InputError(f"diff: {terminal_safe(path)}: outside the repository {root}")
    return rel


def worktree_files(
    arguments: Sequence[str], excludes: Sequence[str], root: str
) -> tuple[dict[str, str], list[str], list[str]]:
    """Load path → repository-relative file, as `check` would read them from the worktree; the
    explicit file arguments that do not exist here (they may exist at the base); and one line
    per file whose name is not UTF-8 (not read)."""
    present = [a for a in arguments if os.path.lexists(a) or _GLOB_CHARS & set(a)]
    missing = [a for a in arguments if a not in present]
    found, unmatched = expand(present, excludes)  # a glob may match on one side only
    refused = [m for m in unmatched if m.endswith(NOT_UTF8)]
    return {os.path.normpath(path): relative(path, root) for path in found}, missing, refused


class TreeWalker(Walker):
    """`Walker`'s rules over a revision's tree: its `.gitignore` files, read from git."""

    def __init__(
        self,
        excludes: Sequence[str],
        revision: Revision,
        files: Sequence[str],
        targets: Mapping[str, str],  # symbolic link → the file it names
    ) -> None:
        super().__init__(excludes)
        self._root = revision.root
        self._files = sorted(files)
        ignores = [f for f in files if f == ".gitignore" or f.endswith("/.gitignore")]
        blobs = read_blobs(revision, [targets.get(f, f) for f in ignores])
        self._ignore_text = {f: blobs.get(targets.get(f, f), b"") for f in ignores}
        self._pruned: dict[tuple[str, str], bool] = {}
        self._revision = revision
        self._targets = targets
        self._openings: dict[str, str] | None = None

    def opening(self, here: str, name: str) -> str:
        """The first bytes of the file at the revision (not in the worktree): what a syntax
        sniffs. Every file a syntax may sniff is read in one `cat-file` call, on first need."""
        if self._openings is None:
            sniffed = [f for f in self._files if self.sniffable(f.rsplit("/", 1)[-1])]
            blobs = read_blobs(self._revision, [self._targets.get(f, f) for f in sniffed])
            self._openings = {
                f: blobs.get(self._targets.get(f, f), b"")[:OPENING].decode("utf-8", "replace")
                for f in sniffed
            }
        rel = os.path.relpath(os.path.realpath(here), self._root).replace(os.sep, "/")
        return self._openings.get(name if rel == "." else f"{rel}/{name}", "")

    def _is_root(self, directory: str) -> bool:
        return os.path.realpath(directory) == self._root

    def _gitignore(self, directory: str) -> GitIgnoreSpec | None:
        if directory not in self._ignores:
            rel = os.path.relpath(os.path.realpath(directory), self._root).replace(os.sep, "/")
            raw = self._ignore_text.get(".gitignore" if rel == "." else f"{rel}/.gitignore", b"")
            lines = raw.decode("utf-8", "replace").splitlines()
            spec = self._pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
            self._ignores[directory] = spec
        return self._ignores[directory]

    def walk_tree(self, top: str, top_rel: str) -> Iterator[str]:
        """The files `walk(top)` would yield had the revision been checked out."""
        prefix = "" if top_rel == "." else top_rel + "/"
        for path in self._files:
            if not path.startswith(prefix):
                continue
            *dirs, name = path[len(prefix) :].split("/")
            here = top
            for part in dirs:
                key = (here, part)
                if key not in self._pruned:
                    self._pruned[key] = self.prunes(here, part)
                if self._pruned[key]:
                    break
                here = os.path.join(here, part)
            else:
                if self.wanted(here, name):
                    yield path

    def glob_tree(self, pattern_rel: str) -> Iterator[str]:
        """The tree's files matching the relative glob `pattern_rel` that discovery would read
        (excludes and formats applied)."""
        pattern = pattern_rel.split("/")
        for path in self._files:
            if _matches(pattern, path.split("/")):
                shown = os.path.relpath(os.path.join(self._root, path))
                here, name = os.path.split(shown)
                if self.wanted(here or ".", name):
                    yield path


def _matches(pattern: list[str], parts: list[str]) -> bool:
    """`glob.glob(recursive=True)` on one path: `**` spans directories, `*` skips dot-names."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_matches(rest, parts[i:]) for i in range(len(parts) + 1))
    if not parts or (parts[0].startswith(".") and not head.startswith(".")):
        return False
    return fnmatch.fnmatchcase(parts[0], head) and _matches(rest, parts[1:])


def revision_files(
    arguments: Sequence[str], excludes: Sequence[str], revision: Revision
) -> tuple[dict[str, str], Mapping[str, bytes], list[str], list[str]]:
    """Load path (`REV:file`) → repository-relative file at the revision, their bytes, the
    explicit file arguments the revision does not have, and one line per file whose name is not
    UTF-8 (not read: no report could name it faithfully)."""
    regular, links = tree_files(revision)
    targets = link_targets(revision, links, set(regular))  # followed, as a checkout would be
    files = [*regular, *targets]
    known = set(files)
    walker = TreeWalker(excludes, revision, files, targets)
    chosen: dict[str, None] = {}
    absent: list[str] = []
    for argument in arguments:
        rel = relative(argument, revision.root)
        if rel == "." or any(f.startswith(rel + "/") for f in files):
            chosen.update(dict.fromkeys(walker.walk_tree(argument, rel)))
        elif rel not in known and _GLOB_CHARS & set(argument):
            chosen.update(dict.fromkeys(walker.glob_tree(rel)))
        elif rel in known:
            chosen[rel] = None  # explicit: always read, as `check` reads it
        else:
            absent.append(argument)
    label = abbreviated(revision.name)
    refused = [not_utf8(f"{label}:{rel}") for rel in chosen if not utf8_name(rel)]
    chosen = {rel: None for rel in chosen if utf8_name(rel)}
    blobs = read_blobs(revision, [targets.get(rel, rel) for rel in chosen])
    names = {f"{label}:{rel}": rel for rel in chosen}
    contents = {load: blobs.get(targets.get(rel, rel), b"") for load, rel in names.items()}
    return names, contents, absent, refused
