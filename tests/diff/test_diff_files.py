"""The base side is read as `check` would read a checkout of it: the same discovery (.gitignore
of that revision, --exclude, YAML/JSON names, explicit files) over git's tree, with no checkout."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from gpu_audit.diff.files import relative, revision_files
from gpu_audit.diff.git import repository, resolve
from gpu_audit.jobs.discover import expand
from tests.diff.conftest import EVAL_L4, SWEEP_A10G, Repo, cli, diff_json

TREE = {
    ".gitignore": "generated/\n*.tmp.yaml\n",
    "jobs/a.yaml": EVAL_L4,
    "jobs/sub/b.yml": SWEEP_A10G,
    "jobs/sub/c.JSON": "{}\n",
    "jobs/sub/.gitignore": "local.yaml\n",
    "jobs/sub/local.yaml": EVAL_L4,
    "jobs/notes.txt": "not yaml\n",
    "generated/x.yaml": EVAL_L4,
    "legacy/old.yaml": EVAL_L4,
    "legacy/keep/k.yaml": EVAL_L4,
    "x.tmp.yaml": EVAL_L4,
    ".hidden/h.yaml": EVAL_L4,
}
CASES = [
    ((), ()),
    ((), ("legacy/",)),
    (("jobs",), ()),
    (("jobs/sub/local.yaml", "jobs/a.yaml"), ()),  # explicit files: always read
    (("jobs/**/*.yaml", "legacy/*/*.yaml"), ()),
    (("*.yaml", "jobs/*.yaml"), ()),
    ((".", "legacy/keep"), ("*.yml", "keep")),
]


@pytest.fixture
def tree(repo: Repo) -> Repo:
    repo.write(TREE)
    os.symlink("a.yaml", repo.path / "jobs/linked.yaml")  # read through, as a checkout is
    repo.git("add", "-A")
    repo.git("add", "-f", "generated/x.yaml", "jobs/sub/local.yaml", "x.tmp.yaml")  # tracked anyway
    repo.git("commit", "-q", "-m", "tree")
    return repo


def _checkout(repo: Repo, into: Path) -> Path:
    """The revision as files (git archive), with a `.git` marking the repository root."""
    archive = subprocess.run(
        ["git", "archive", "HEAD"], cwd=repo.path, capture_output=True, check=True, timeout=60
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / ".git").mkdir()
    return into


@pytest.mark.parametrize(("arguments", "excludes"), CASES)
def test_the_tree_is_read_as_check_reads_a_checkout(
    tree: Repo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    arguments: tuple[str, ...],
    excludes: tuple[str, ...],
) -> None:
    revision = resolve(repository(os.getcwd()), "HEAD", "--base")
    names, contents, absent, _refused = revision_files(arguments or (".",), excludes, revision)
    assert absent == []
    from_git = sorted(names.values())
    checkout = _checkout(tree, tmp_path / "checkout")
    monkeypatch.chdir(checkout)
    found, _ = expand(arguments or (".",), excludes)
    from_disk = sorted(relative(p, str(checkout.resolve())) for p in found)
    assert from_git == from_disk and from_git
    assert "generated/x.yaml" not in from_git  # the revision's .gitignore applies
    if not arguments or arguments[0] == "jobs":
        assert "jobs/linked.yaml" in from_git
    assert all(contents[f"HEAD:{f}"] == (checkout / f).read_bytes() for f in from_git)


def test_from_a_subdirectory_the_default_is_the_whole_repository(
    tree: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree.write({"legacy/old.yaml": None})
    monkeypatch.chdir(tree.path / "jobs/sub")
    _, report = diff_json("--base", "HEAD")
    files = {j["file"]: j["change"] for j in report["jobs"]}
    assert files["legacy/old.yaml"] == "removed" and files["jobs/a.yaml"] == "unchanged"
    assert "generated/x.yaml" not in files and "jobs/sub/local.yaml" not in files


def test_exclude_applies_to_both_sides(tree: Repo) -> None:
    tree.write({"legacy/old.yaml": None})
    _, report = diff_json("--base", "HEAD", "--exclude", "legacy/")
    assert all(not j["file"].startswith("legacy/") for j in report["jobs"])
    assert {j["change"] for j in report["jobs"]} == {"unchanged"}


def test_settings_exclude_applies_too(tree: Repo) -> None:
    tree.write({"legacy/old.yaml": None, ".gpu-audit.yaml": "exclude: [legacy/]\n"})
    code, out, err = cli("diff", "--base", "HEAD", "--format", "json")
    assert code == 0, err
    assert "legacy/" not in out


def test_a_gitignore_added_by_the_change_hides_the_file_on_the_head_side_only(tree: Repo) -> None:
    """Each side is read as `check` would read it then: the new rule removes the job at head."""
    tree.write({".gitignore": TREE[".gitignore"] + "legacy/\n"})
    _, report = diff_json("--base", "HEAD")
    assert {j["file"] for j in report["jobs"] if j["change"] == "removed"} == {
        "legacy/old.yaml",
        "legacy/keep/k.yaml",
    }
    assert {j["change"] for j in report["jobs"] if not j["file"].startswith("legacy/")} == {
        "unchanged"
    }


def test_a_linked_job_file_is_read_through_on_both_sides(repo: Repo) -> None:
    repo.write({"jobs/a.yaml": EVAL_L4})
    os.symlink("a.yaml", repo.path / "jobs/linked.yaml")
    repo.commit({}, "base")
    _, report = diff_json("--base", "HEAD")
    assert sorted((j["file"], j["change"]) for j in report["jobs"]) == [
        ("jobs/a.yaml", "unchanged"),
        ("jobs/linked.yaml", "unchanged"),
    ]
    repo.write({"jobs/a.yaml": EVAL_L4.replace('"2"', '"5"')})
    _, report = diff_json("--base", "HEAD")
    assert {j["change"] for j in report["jobs"]} == {"modified"}


SLURM = "#!/bin/bash\n#SBATCH --gres=gpu:a100:4\n#SBATCH --time=02:00:00\nsrun python train.py\n"
SHELL = "#!/bin/bash\nmake build\n"


def test_a_sniffed_script_is_judged_by_its_text_at_the_revision(repo: Repo) -> None:
    """A `.sh` file is a Slurm job only when its opening holds `#SBATCH`: at the base that is
    the revision's text, not the worktree's (here the script was deleted, and a plain script
    became a job)."""
    repo.commit({"jobs/train.sh": SLURM, "jobs/build.sh": SHELL, "jobs/a.yaml": EVAL_L4}, "base")
    revision = resolve(repository(str(repo.path)), "HEAD", "--base")
    repo.write(
        {
            "jobs/train.sh": None,
            "jobs/build.sh": SLURM.replace("--time", "--job-name=build\n#SBATCH --time"),
        }
    )
    names, contents, absent, _refused = revision_files((".",), (), revision)
    assert absent == []
    assert sorted(names.values()) == ["jobs/a.yaml", "jobs/train.sh"]
    assert contents["HEAD:jobs/train.sh"] == SLURM.encode()
    _, report = diff_json("--base", "HEAD")
    assert sorted((j["file"], j["change"]) for j in report["jobs"]) == [
        ("jobs/a.yaml", "unchanged"),
        ("jobs/build.sh", "added"),
        ("jobs/train.sh", "removed"),
    ]
