"""Per-rule precision and recall of the shipped pack on the labelled set in fixtures/precision/.

`python -m tests.precision` runs `gpu-audit check --format json` over every config of the set (the
command a pre-commit hook runs), compares the rules each file gets open findings for with the
rules fixtures/precision/labels.yaml expects, and prints the table docs/pre-commit.md publishes:
per rule its true and false positives, misses, precision and recall, and the share of files that
would fail CI at `--fail-on high`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / "fixtures" / "precision"
LABELS = SET / "labels.yaml"
FAILING = ("high", "critical")


@dataclass(frozen=True, slots=True)
class RuleScore:
    rule: str
    severity: str
    true_positives: int
    false_positives: int
    missed: int

    @property
    def precision(self) -> float | None:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else None

    @property
    def recall(self) -> float | None:
        expected = self.true_positives + self.missed
        return self.true_positives / expected if expected else None


@dataclass(frozen=True, slots=True)
class Measure:
    files: int
    failing_high: int
    scores: tuple[RuleScore, ...]
    wrong: tuple[str, ...]  # "file: rule (unexpected|missed)", for a reader to check

    @property
    def failing_share(self) -> float:
        return self.failing_high / self.files if self.files else 0.0


def labels() -> dict[str, set[str]]:
    raw = yaml.safe_load(LABELS.read_text(encoding="utf-8"))
    return {name: set(rules or ()) for name, rules in raw.items()}


def found_rules() -> tuple[dict[str, set[str]], dict[str, str], set[str]]:
    """(rules with open findings per file, severity per rule, files failing at high)."""
    files = sorted(str(p) for p in SET.iterdir() if p.name != LABELS.name)
    command = [sys.executable, "-m", "gpu_audit", "check", "--format", "json", *files]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"gpu-audit check exited {done.returncode}: {done.stderr.strip()}")
    report = json.loads(done.stdout)
    found: dict[str, set[str]] = {Path(f).name: set() for f in files}
    failing: set[str] = set()
    for finding in report["findings"]:
        if finding["waiver"] or finding["suppressed"]:
            continue
        resource = report["resources"][finding["resource"]]  # version 3: an index
        name = Path(resource["source"]["path"]).name
        found[name].add(finding["rule_id"])
        if finding["severity"] in FAILING:
            failing.add(name)
    severities = {rule["id"]: rule["severity"] for rule in report["rules"]}
    return found, severities, failing


def measure() -> Measure:
    expected = labels()
    found, severities, failing = found_rules()
    unlabelled = sorted(set(found) - set(expected))
    if unlabelled:
        raise RuntimeError(f"configs without labels in {LABELS.name}: {unlabelled}")
    counts: dict[str, Counter[str]] = {}
    wrong: list[str] = []
    for name, want in sorted(expected.items()):
        got = found.get(name)
        if got is None:
            raise RuntimeError(f"{LABELS.name} labels {name}, which is not in {SET}")
        for rule in want | got:
            outcome = "tp" if rule in want and rule in got else "fp" if rule in got else "fn"
            counts.setdefault(rule, Counter())[outcome] += 1
            if outcome != "tp":
                wrong.append(f"{name}: {rule} ({'unexpected' if outcome == 'fp' else 'missed'})")
    scores = tuple(
        RuleScore(rule, severities.get(rule, "?"), c["tp"], c["fp"], c["fn"])
        for rule, c in sorted(counts.items())
    )
    return Measure(len(expected), len(failing), scores, tuple(wrong))


def table(result: Measure) -> str:
    def pct(value: float | None) -> str:
        return "–" if value is None else f"{value:.0%}"

    lines = [
        "| rule | severity | found right | found wrong | missed | precision | recall |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for s in sorted(result.scores, key=lambda s: (s.severity not in FAILING, s.rule)):
        lines.append(
            f"| `{s.rule}` | {s.severity} | {s.true_positives} | {s.false_positives} | "
            f"{s.missed} | {pct(s.precision)} | {pct(s.recall)} |"
        )
    lines.append("")
    lines.append(
        f"{result.failing_high} of {result.files} files ({result.failing_share:.0%}) would fail "
        "CI at `--fail-on high`."
    )
    return "\n".join(lines)


def main() -> None:
    result = measure()
    print(table(result))
    if result.wrong:
        print("\nDisagreements with the labels:")
        for line in result.wrong:
            print(f"- {line}")


if __name__ == "__main__":
    main()
