"""action.yml and the GitLab example: they parse, declare what they must, and the shell they run
works: the action's fetch and diff steps in a shallow clone of a throw-away repository, and the
GitLab job's script against a loopback server in the shape of GitLab's notes API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from gpu_audit.diff.markdown import MARKER
from tests.conftest import ROOT
from tests.diff.conftest import EVAL_L4, TRAIN_A100_SPOT, TRAIN_H100_ON_DEMAND, Repo

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
GITLAB = yaml.safe_load((ROOT / "docs/examples/gitlab-ci.yml").read_text())["gpu-audit-diff"]
BIN = str(Path(sys.executable).parent)  # this venv's gpu-audit and python3


def _step(name: str) -> dict[str, Any]:
    return next(s for s in ACTION["runs"]["steps"] if s.get("name", "").startswith(name))


def test_the_action_is_a_composite_action_with_documented_inputs() -> None:
    assert ACTION["name"] and ACTION["description"]
    assert ACTION["runs"]["using"] == "composite"
    for name, spec in ACTION["inputs"].items():
        assert spec["description"], name
    assert ACTION["inputs"]["base"]["default"] == "${{ github.event.pull_request.base.sha }}"
    steps = ACTION["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    assert all(s["shell"] == "bash" for s in steps if "run" in s)
    assert _step("Install")["run"].endswith(
        'pip install --disable-pip-version-check --quiet "$GITHUB_ACTION_PATH"'
    )
    for step in steps:  # inputs reach the shell through env, never pasted into the script
        assert "${{" not in step.get("run", ""), step.get("name")


def test_the_comment_step_updates_the_marked_comment_with_gh_api() -> None:
    script = _step("Post or update")["run"]
    assert f"marker='{MARKER}'" in script
    assert 'gh api --paginate "repos/$REPO/issues/$PR/comments"' in script
    assert 'gh api --method PATCH "repos/$REPO/issues/comments/$id" -F "body=@$REPORT"' in script
    assert 'gh api --method POST "repos/$REPO/issues/$PR/comments" -F "body=@$REPORT"' in script
    assert _step("Post or update")["env"]["GH_TOKEN"] == "${{ inputs.github-token }}"


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = f"{BIN}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=cwd, env={**os.environ, "PATH": path, **env},
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


def _pushed(repo: Repo) -> tuple[str, str]:
    base = repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT, "jobs/eval.yaml": EVAL_L4}, "base")
    head = repo.commit({"jobs/train.yaml": TRAIN_H100_ON_DEMAND}, "H100")
    return base, head


def test_the_action_fetches_the_base_into_a_shallow_clone_and_runs_the_diff(
    repo: Repo, tmp_path: Path
) -> None:
    base, _ = _pushed(repo)
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", f"file://{repo.path}", str(clone)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    out, summary = tmp_path / "output", tmp_path / "summary"
    env = {
        "BASE": base, "PATHS": "", "ARGS": "--fail-on-increase 50% --fail-on high",
        "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary),
    }  # fmt: skip
    fetched = _bash(_step("Fetch the base")["run"], clone, env)
    assert fetched.returncode == 0, fetched.stderr
    done = _bash(_step("gpu-audit diff")["run"], clone, env)
    assert done.returncode == 0, done.stderr  # the code is an output; the last step exits with it
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert outputs["exit-code"] == "1"
    report = Path(outputs["report"]).read_text()
    assert report.startswith(MARKER) and "train-llm" in report
    assert summary.read_text() == report
    last = _bash(_step("Exit with")["run"], clone, {"CODE": outputs["exit-code"]})
    assert last.returncode == 1


class _Notes(BaseHTTPRequestHandler):
    """GitLab's merge-request notes API, as much of it as the example uses."""

    existing: ClassVar[list[dict[str, Any]]] = []
    calls: ClassVar[list[tuple[str, str, dict[str, Any] | None, str | None]]] = []

    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.calls.append((self.command, self.path, body, self.headers.get("PRIVATE-TOKEN")))
        payload = json.dumps(self.existing if self.command == "GET" else {"id": 1}).encode()
        self.send_response(200 if self.command != "POST" else 201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = _record

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def gitlab() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Notes)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/v4"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    "existing", [[], [{"id": 7, "body": f"{MARKER}\nold"}, {"id": 8, "body": "hi"}]]
)
def test_the_gitlab_job_posts_or_updates_one_note(
    repo: Repo, gitlab: str, existing: list[dict[str, Any]]
) -> None:
    assert GITLAB["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    assert "pip install --quiet gpu-audit" in GITLAB["before_script"]
    base, _ = _pushed(repo)
    _Notes.existing, _Notes.calls = existing, []
    env = {
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": base, "GPU_AUDIT_ARGS": GITLAB["variables"]["GPU_AUDIT_ARGS"],
        "CI_API_V4_URL": gitlab, "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "5",
        "GPU_AUDIT_GITLAB_TOKEN": "glpat-test",
    }  # fmt: skip
    done = _bash("\n".join(GITLAB["script"]), repo.path, env)
    assert done.returncode == 1, done.stderr  # --fail-on-increase 20%: the H100 run costs more
    notes = "/api/v4/projects/42/merge_requests/5/notes"
    listed, written = _Notes.calls
    assert listed[:2] == ("GET", f"{notes}?per_page=100") and listed[3] == "glpat-test"
    expected = ("PUT", f"{notes}/7") if existing else ("POST", notes)
    assert written[:2] == expected
    assert (
        written[2] is not None
        and written[2]["body"] == (repo.path / "gpu-audit-diff.md").read_text()
    )
    assert written[2]["body"].startswith(MARKER)
