"""Read a git revision with git itself (no checkout, no network): its files, blobs and renames."""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
from collections.abc import Iterable, Sequence, Set

from gpu_audit.core.frozen import record
from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import InputError

TIMEOUT = 60.0  # seconds for any one git call; a repository that takes longer is reported
# No prompt, no lazy fetch from a partial clone's promisor remote, no lock on the index.
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_OPTIONAL_LOCKS": "0"}
_FILE_MODES = ("100644", "100755")  # regular files; submodules (commits) are not read
_LINK_MODE = b"120000"
_LONGEST_NAME = 4096  # a revision longer than this (PATH_MAX) names nothing git could hold


_HASH = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def abbreviated(ref: str) -> str:
    """A full commit hash (what CI passes as the base) shortened as git does; names as given."""
    return ref[:12] if _HASH.fullmatch(ref) else ref


@record
class Revision:
    """A commit the user named (`--base origin/main`) and the repository it is in."""

    name: str  # as given, for messages and reports
    commit: str  # full hash
    root: str  # the repository's top directory (absolute)


def _git(root: str, args: Sequence[str], stdin: bytes | None = None) -> bytes:
    """git's standard output; InputError with git's own first line when it fails."""
    try:
        done = subprocess.run(
            ["git", "-C", root, *args],
            input=stdin,
            capture_output=True,
            timeout=TIMEOUT,
            env={**os.environ, **_ENV},
            check=False,
        )
    except FileNotFoundError as exc:
        raise InputError("diff: git is not installed (or not on PATH)") from exc
    except subprocess.TimeoutExpired as exc:
        raise InputError(f"diff: git {args[0]} did not finish in {TIMEOUT:g} s") from exc
    except OSError as exc:  # an argument longer than the system takes (E2BIG), say
        raise InputError(f"diff: git {args[0]}: {exc.strerror or exc}") from exc
    if done.returncode != 0:
        first = done.stderr.decode("utf-8", "replace").strip().splitlines()
        said = printable(first[0], 200) if first else "failed"  # git may echo a long name
        raise InputError(f"diff: git {args[0]}: {said}")
    return done.stdout


def repository(directory: str) -> str:
    """The top directory of the git repository holding `directory`."""
    try:
        out = _git(directory, ["rev-parse", "--show-toplevel"])
    except InputError as exc:
        raise InputError(f"diff: {directory}: not in a git repository ({exc})") from None
    return os.path.realpath(out.decode().strip())


def git_directories(root: str) -> tuple[str, ...]:
    """The repository's git directory and, for a linked worktree, the common one: what `diff`
    reads, so no report is written inside them (`-o .git/HEAD`)."""
    out = _git(root, ["rev-parse", "--git-dir", "--git-common-dir"]).decode()
    found = (os.path.realpath(os.path.join(root, line)) for line in out.splitlines() if line)
    return tuple(dict.fromkeys(found))


def resolve(root: str, name: str, flag: str) -> Revision:
    """The commit `name` means; a missing one says whether a shallow clone is why."""
    if name.startswith("-") or not name.strip() or len(name) > _LONGEST_NAME:
        raise InputError(f"diff: {flag} '{printable(name, 80)}': not a revision")
    try:
        out = _git(
            root, ["rev-parse", "--verify", "--quiet", "--end-of-options", name + "^{commit}"]
        )
    except InputError:
        shallow = _git(root, ["rev-parse", "--is-shallow-repository"]).strip() == b"true"
        shown = printable(name, 80)
        if shallow:
            raise InputError(
                f"diff: {flag} '{shown}' is not in this shallow clone: fetch it first "
                f"(git fetch --depth=1 origin <branch or commit>, or check out with fetch-depth: 0)"
            ) from None
        hint = _branch_hint(root, name)
        raise InputError(
            f"diff: {flag} '{shown}' is not a commit in this repository "
            f"({hint or 'a typo, or a branch not fetched: git fetch origin <branch>'})"
        ) from None
    return Revision(name, out.decode().strip(), root)


# The default branch goes by either name: `--base main` in a `master` repository is that one.
_DEFAULT_NAMES = {"main": "master", "master": "main"}


def _branch_hint(root: str, name: str) -> str | None:
    """`did you mean 'master'?` from the repository's own branches (local, then remote)."""
    try:
        refs = ["for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes"]
        out = _git(root, refs)
    except InputError:
        return None
    branches = [b for b in out.decode(errors="replace").split("\n") if b and "\t" not in b]
    prefix, _, short = name.rpartition("/")
    other = _DEFAULT_NAMES.get(short)
    wanted = f"{prefix}/{other}" if prefix and other else other
    if wanted in branches:
        return f"did you mean '{wanted}'? this repository has '{wanted}', no '{name}'"
    from difflib import get_close_matches  # an error's hint: only then

    close = get_close_matches(name, branches, n=1, cutoff=0.6)
    return f"did you mean '{printable(close[0], 80)}'?" if close else None


def tree_files(revision: Revision) -> tuple[list[str], list[str]]:
    """The regular files and the symbolic links of the revision, repository-relative with `/`."""
    out = _git(revision.root, ["ls-tree", "-r", "-z", "--full-tree", revision.commit])
    files: list[str] = []
    links: list[str] = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, _ = meta.split(b" ", 2)
        name = path.decode("utf-8", "surrogateescape")
        if kind == b"blob" and mode.decode() in _FILE_MODES:
            files.append(name)
        elif kind == b"blob" and mode == _LINK_MODE:
            links.append(name)
    return files, links


def link_targets(revision: Revision, links: Iterable[str], files: Set[str]) -> dict[str, str]:
    """Symbolic link → the regular file of the tree it names (as a checkout would follow it);
    links to directories, to other links or out of the repository are left out."""
    targets = {}
    for link, raw in read_blobs(revision, links).items():
        target = raw.decode("utf-8", "surrogateescape")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
        if not target.startswith("/") and resolved in files:
            targets[link] = resolved
    return targets


def read_blobs(revision: Revision, paths: Iterable[str]) -> dict[str, bytes]:
    """The bytes of each path at the revision, in one `git cat-file --batch` call."""
    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return {}
    specs = [_object(revision, p) for p in wanted]
    request = "".join(f"{spec}\n" for spec in specs).encode("utf-8", "surrogateescape")
    out = _git(revision.root, ["cat-file", "--batch"], stdin=request)
    blobs: dict[str, bytes] = {}
    at = 0
    for path in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue  # missing: not in that revision
        size = int(header[2])
        blobs[path] = out[at : at + size]
        at += size + 1
    return blobs


def _object(revision: Revision, path: str) -> str:
    """What `cat-file --batch` is asked for: `commit:path`, or for a name with a line break
    (which that request's line cannot hold) its blob's id, from git's argument list."""
    if "\n" not in path:
        return f"{revision.commit}:{path}"
    spec = f"{revision.commit}:{path}"  # an argument may hold a line break
    out = _git(revision.root, ["rev-parse", "--verify", "--end-of-options", spec])
    return out.decode().strip()


def renames(base: Revision, head: Revision | None) -> dict[str, str]:
    """Old path → new path for each file git sees renamed from base to head (or the worktree)."""
    args = ["diff", "-M", "--name-status", "-z", "--no-ext-diff", base.commit]
    if head is not None:
        args.append(head.commit)
    fields = _git(base.root, args).split(b"\0")
    moved: dict[str, str] = {}
    index = 0
    while index < len(fields) and fields[index]:
        status = fields[index].decode()
        if status.startswith(("R", "C")):
            old, new = (f.decode("utf-8", "surrogateescape") for f in fields[index + 1 : index + 3])
            if status.startswith("R"):
                moved[old] = new
            index += 3
        else:
            index += 2
    return moved
