"""`gpu-audit diff` shows a changed knob: fp32 → bf16 on an A100 resolves the mixed-precision
finding (its saving said in the finding), and the job's cost row says the run is priced the same."""

from __future__ import annotations

from tests.diff.conftest import TRAIN_A100_SPOT, Repo, by_name, cli, diff_json

FP32 = TRAIN_A100_SPOT.replace(
    "run: python train.py --checkpoint-dir /ckpt",
    "run: accelerate launch --mixed_precision no train.py --checkpoint-dir /ckpt",
)
BF16 = FP32.replace("--mixed_precision no", "--mixed_precision bf16")


def test_a_changed_knob_is_shown_with_what_it_resolves(repo: Repo) -> None:
    repo.commit({"jobs/train.yaml": FP32}, "base")
    repo.commit({"jobs/train.yaml": BF16})
    code, report = diff_json("--base", "HEAD~1")
    assert code == 0
    job = by_name(report)["train-llm"]
    assert job["change"] == "modified"
    assert (job["before"]["knobs"], job["after"]["knobs"]) == ("precision=fp32", "precision=bf16")
    assert job["before"]["run_usd"] == job["after"]["run_usd"]  # priced at its cap either way
    assert any(n.startswith("knobs changed: precision fp32 → bf16") for n in job["notes"])
    resolved = [f["rule_id"] for f in job["findings_resolved"]]
    assert resolved == ["mixed-precision-on-tensor-cores"]
    code, out, _ = cli("diff", "--base", "HEAD~1", "--format", "markdown")
    assert "knobs changed: precision fp32 → bf16" in out
    assert "mixed-precision-on-tensor-cores" in out


def test_an_unchanged_knob_is_no_change(repo: Repo) -> None:
    repo.commit({"jobs/train.yaml": BF16}, "base")
    repo.commit({"README.md": "# jobs\n"})
    _, report = diff_json("--base", "HEAD~1")
    assert by_name(report)["train-llm"]["change"] == "unchanged"
