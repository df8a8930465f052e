"""Every dataclass a `gpu-audit check` loads has a docstring of its own. Without one,
`dataclasses` writes `Name(field: type, ...)` as its `__doc__` through `inspect.signature`, which
imports and runs `tokenize` on the class's signature: two interruption-data classes cost the
commit hook 5 ms that way (cProfile of a one-file `check`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import dataclasses, sys
from gpu_audit.__main__ import program
sys.argv = ["gpu-audit", "check", sys.argv[1], "--fail-on", "none", "-q"]
try:
    program()
except SystemExit:
    pass
for name, module in sorted(sys.modules.items()):
    if not name.startswith("gpu_audit"):
        continue
    for key, value in vars(module).items():
        if (isinstance(value, type) and dataclasses.is_dataclass(value)
                and value.__module__ == name and "__doc__" in vars(value)
                and (value.__doc__ or "").startswith(value.__name__ + "(")):
            print("missing", name + "." + key, file=sys.stderr)
"""


def test_every_dataclass_the_hook_loads_has_its_own_docstring() -> None:
    job = ROOT / "fixtures" / "jobs" / "skypilot" / "spot-multinode.yaml"  # spot training
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(job)], capture_output=True, text=True, check=False
    )
    missing = [line.split()[1] for line in done.stderr.splitlines() if line.startswith("missing")]
    assert not missing, f"write a one-line docstring for: {missing}"
    assert "Traceback" not in done.stderr, done.stderr
