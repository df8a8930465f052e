"""Bad input to `gpu-audit diff`: one clear line and the documented exit code, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.diff.conftest import (
    CPU_ONLY,
    EVAL_L4,
    TRAIN_A100_SPOT,
    TRAIN_H100_ON_DEMAND,
    Repo,
    by_name,
    cli,
    diff_json,
)

BROKEN = "name: train-llm\nresources:\n  accelerators: [A100:8\n"


def _one_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu-audit: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("ref", ["no-such-branch", "HEAD~5", "deadbeef" * 5])
def test_a_base_that_does_not_exist(repo: Repo, ref: str) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    code, out, err = cli("diff", "--base", ref)
    assert code == 2 and out == ""
    line = _one_error(err)
    assert f"--base '{ref}' is not a commit in this repository" in line


def test_an_option_like_ref_is_not_passed_to_git(repo: Repo) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    code, _, err = cli("diff", "--base=--output=/tmp/x")
    assert code == 2 and "not a revision" in _one_error(err)


def test_a_shallow_clone_without_the_base(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT}, "next")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", f"file://{repo.path}", str(clone)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    monkeypatch.chdir(clone)
    code, out, err = cli("diff", "--base", "HEAD~1")
    assert code == 2 and out == ""
    line = _one_error(err)
    assert "--base 'HEAD~1' is not in this shallow clone: fetch it first" in line
    assert "fetch-depth: 0" in line


def test_not_a_git_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("diff", "--base", "HEAD")
    assert code == 2 and "not in a git repository" in _one_error(err)


def test_a_file_that_parses_at_the_base_only(repo: Repo) -> None:
    """Its jobs are not compared (not reported removed), the rest is, and the exit is 2."""
    repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT, "jobs/eval.yaml": EVAL_L4}, "base")
    repo.write({"jobs/train.yaml": BROKEN, "jobs/eval.yaml": EVAL_L4.replace('"2"', '"4"')})
    code, report = diff_json("--base", "HEAD")
    assert code == 2
    assert list(by_name(report)) == ["eval"] and report["jobs"][0]["change"] == "modified"
    [error] = report["errors"]
    assert error.startswith("jobs/train.yaml:3:") and error.endswith("jobs are not compared")
    code, _, err = cli("diff", "--base", "HEAD", "--fail-on-increase", "1000000")
    line = _one_error(err)
    assert code == 2 and line.startswith("gpu-audit: error: jobs/train.yaml:3:")


def test_a_file_that_parses_at_the_head_only(repo: Repo) -> None:
    repo.commit({"jobs/train.yaml": BROKEN}, "base")
    repo.write({"jobs/train.yaml": TRAIN_H100_ON_DEMAND})
    code, report = diff_json("--base", "HEAD")
    assert code == 2 and report["jobs"] == []
    [error] = report["errors"]
    assert error.startswith("HEAD:jobs/train.yaml:3:")  # git's REV:path names the base side


def test_a_job_that_is_no_gpu_job_on_one_side(repo: Repo) -> None:
    """Not an error: the GPU job went away (or came), and the note says why."""
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    repo.write({"jobs/eval.yaml": CPU_ONLY})
    code, report = diff_json("--base", "HEAD", "--fail-on-increase", "0")
    assert code == 0
    [job] = report["jobs"]
    assert job["change"] == "removed" and job["delta_usd"] < 0
    assert job["notes"] == [
        "at working tree jobs/eval.yaml holds no GPU job: a skypilot config that requests no GPUs"
    ]
    repo.commit({}, "cpu")
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "gpu again")
    code, report = diff_json("--base", "HEAD~1")
    [job] = report["jobs"]
    assert job["change"] == "added" and job["notes"][0].startswith("at HEAD~1 jobs/eval.yaml held")


def test_an_explicit_file_on_neither_side(repo: Repo) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    code, _, err = cli("diff", "--base", "HEAD", "jobs/nope.yaml")
    assert code == 2 and "jobs/nope.yaml: no such file on either side" in _one_error(err)


def test_an_explicit_file_on_neither_revision(repo: Repo) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    repo.commit({"jobs/eval.yaml": None}, "gone")
    repo.write({"jobs/nope.yaml": EVAL_L4})  # in the worktree only: --head does not see it
    code, _, err = cli("diff", "--base", "HEAD~1", "--head", "HEAD", "jobs/nope.yaml")
    assert code == 2 and "jobs/nope.yaml: no such file on either side" in _one_error(err)
    code, report = diff_json("--base", "HEAD~1", "--head", "HEAD", "jobs/eval.yaml")
    assert code == 0 and report["jobs"][0]["change"] == "removed"


def test_the_output_extension_picks_the_format(repo: Repo) -> None:
    """Issue 38.7: `.sarif` (refused before) is the SARIF of the new findings."""
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    code, _, err = cli("diff", "--base", "HEAD", "-o", "../diff.sarif")
    assert code == 0 and "wrote the sarif report to ../diff.sarif" in err
    assert '"version": "2.1.0"' in (repo.path.parent / "diff.sarif").read_text()


def test_the_report_never_replaces_a_job_file_it_read(repo: Repo) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    code, _, err = cli("diff", "--base", "HEAD", "--format", "json", "-o", "jobs/eval.yaml")
    assert code == 2 and "jobs/eval.yaml" in _one_error(err)
    assert (repo.path / "jobs/eval.yaml").read_text() == EVAL_L4


def test_an_explicit_file_on_one_side_is_added_or_removed(repo: Repo) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    repo.write({"jobs/eval.yaml": None})
    code, report = diff_json("--base", "HEAD", "jobs/eval.yaml")
    assert code == 0 and report["jobs"][0]["change"] == "removed"


def test_a_path_outside_the_repository(repo: Repo, tmp_path: Path) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    code, _, err = cli("diff", "--base", "HEAD", str(tmp_path))
    assert code == 2 and "outside the repository" in _one_error(err)


def test_a_hostile_job_name_is_escaped_on_the_terminal(repo: Repo) -> None:
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    repo.write({"jobs/eval.yaml": EVAL_L4.replace("name: eval", 'name: "ev\\e[31mil\\u202e"')})
    code, out, _ = cli("diff", "--base", "HEAD", "--format", "table")
    assert code == 0
    assert "\x1b" not in out and "\u202e" not in out
    assert "ev\\x1b[31mil\\u202e" in out


def _named(repo: Repo, name: bytes, text: str) -> Path:
    path = Path(os.fsdecode(bytes(repo.path) + b"/" + name))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_name_with_a_line_break_is_compared_and_escaped(repo: Repo) -> None:
    """git's batch request is one name a line: such a name is asked for by its blob id."""
    odd = _named(repo, b"jobs/two\nlines.yaml", TRAIN_A100_SPOT)
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    odd.write_text(TRAIN_H100_ON_DEMAND, encoding="utf-8")
    code, report = diff_json("--base", "HEAD")
    assert code == 0 and report["errors"] == []
    assert "jobs/two\nlines.yaml" in {job["file"] for job in report["jobs"]}
    code, out, err = cli("diff", "--base", "HEAD", "--format", "table")
    assert code == 0 and "jobs/two\\x0alines.yaml" in out and not err


def test_a_file_name_that_is_not_utf8_is_one_line_per_side(repo: Repo) -> None:
    odd = _named(repo, b"jobs/\xff\xfe.yaml", TRAIN_A100_SPOT)
    repo.commit({"jobs/eval.yaml": EVAL_L4}, "base")
    odd.write_text(TRAIN_H100_ON_DEMAND, encoding="utf-8")
    repo.write({"jobs/eval.yaml": EVAL_L4.replace("L4:1", "L4:2")})
    code, out, err = cli("diff", "--base", "HEAD", "--format", "json")
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 2 and all("\\xff\\xfe.yaml: file name is not UTF-8" in x for x in lines)
    assert lines[0].startswith("gpu-audit: error: HEAD:jobs/")
    assert "eval" in {job["name"] for job in json.loads(out)["jobs"]}  # the rest is compared


def test_check_says_a_file_name_that_is_not_utf8_and_judges_the_rest(repo: Repo) -> None:
    _named(repo, b"jobs/\xff.yaml", TRAIN_A100_SPOT)
    repo.write({"jobs/eval.yaml": EVAL_L4})
    for fmt in ("json", "sarif", "table"):
        code, out, err = cli("check", "--format", fmt, "--fail-on", "none", "jobs")
        assert code == 2, err
        assert err.splitlines() == [
            "gpu-audit: error: jobs/\\xff.yaml: file name is not UTF-8; not read"
        ]
        assert "eval" in out or (fmt == "table" and "1 job" in out)  # judged, nothing to say


@pytest.mark.parametrize("target", [".git/HEAD", ".git/config", ".git/refs/heads/main"])
def test_a_report_is_never_written_into_the_git_directory(repo: Repo, target: str) -> None:
    repo.commit({"train.yaml": TRAIN_A100_SPOT})
    repo.write({"train.yaml": TRAIN_H100_ON_DEMAND})
    before = (repo.path / target).read_bytes()
    code, out, err = cli("diff", "--base", "HEAD", "--format", "json", "-o", target)
    assert code == 2 and not out
    assert "cannot write report: it is inside" in _one_error(err) and ".git" in err
    assert (repo.path / target).read_bytes() == before
    assert repo.git("status", "--porcelain").strip() == "M train.yaml"


def test_a_linked_worktrees_common_git_directory_is_an_input(repo: Repo, tmp_path: Path) -> None:
    repo.commit({"train.yaml": TRAIN_A100_SPOT})
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", str(linked), "-b", "side")
    os.chdir(linked)
    head = repo.path / ".git" / "HEAD"
    before = head.read_bytes()
    code, _, err = cli("diff", "--base", "main", "--format", "json", "-o", str(head))
    assert code == 2 and "an input of this run" in _one_error(err)
    assert head.read_bytes() == before


def test_a_report_never_replaces_the_diffs_policy_or_job(repo: Repo) -> None:
    repo.commit({"train.yaml": TRAIN_A100_SPOT})
    repo.write({"policy.json": '{"version": 1, "extends": "runbook"}\n'})
    for args in (["--policy", "policy.json", "-o", "policy.json"], ["-o", "train.yaml"]):
        victim = repo.path / args[-1]
        before = victim.read_bytes()
        code, _, err = cli("diff", "--base", "HEAD", "--format", "json", *args)
        assert code == 2 and "an input of this run" in _one_error(err)
        assert victim.read_bytes() == before


@pytest.mark.parametrize("flag", ["--base", "--head"])
def test_a_long_revision_comes_back_clipped(repo: Repo, flag: str) -> None:
    repo.commit({"train.yaml": TRAIN_A100_SPOT})
    name = "feature/" + "x" * 400_000 + "\x1b[2J"
    args = ["--base", name] if flag == "--base" else ["--base", "HEAD", "--head", name]
    code, out, err = cli("diff", "--format", "json", *args)
    assert code == 2 and not out
    line = _one_error(err)
    assert len(line) < 400 and "\x1b" not in line and f"{flag} 'feature/xxx" in line
