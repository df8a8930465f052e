"""What a run script says about checkpoints: synced to a bucket, or not written at all.

Read whole, a script can make a local checkpoint directory durable (`aws s3 sync ./ckpt
s3://b/ckpt`, `gsutil -m rsync -r`, `rclone sync`, `s5cmd sync`, `azcopy sync`, or a sync helper
script such as `sync_checkpoints.sh`), and it can state that no checkpoint is written at all
(`--save_steps -1`, `--save_strategy no`). The first makes `checkpoint.uri` the bucket; the second
clears it, so the spot-checkpoint rules report the job and the note says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpu_audit.core.lazyre import lazy
from gpu_audit.jobs.interface import JobDraft
from gpu_audit.jobs.scripts import says_checkpoint

_BUCKET = r"(?:s3|gs|gcs|az|abfss?|r2|oci|cos|hf)://[^\s\"';&|]+|[\w-]+:[\w./-]*"
_SYNC = lazy(
    r"\b(?:aws\s+s3\s+(?:sync|cp\s+--recursive|cp\s+-r)|gsutil\s+(?:-m\s+)?(?:rsync|cp\s+-r)"
    r"|gcloud\s+storage\s+(?:rsync|cp\s+-r)|rclone\s+(?:sync|copy)|s5cmd\s+(?:sync|cp)"
    r"|azcopy\s+(?:sync|copy))\s+(?:-\S+\s+)*(?P<src>\S+)\s+(?:-\S+\s+)*[\"']?(?P<dst>"
    + _BUCKET
    + ")",
    re.IGNORECASE,
    needs=("sync", "cp", "copy"),  # every tool's verb above
)
_HELPER = lazy(r"[\w./-]*sync[\w-]*\.(?:sh|py)\b", re.IGNORECASE, needs=("sync",))
_NONE = lazy(
    r"--save[_-]steps[=\s]+[\"']?-1\b|--save[_-]strategy[=\s]+[\"']?(?:no|none)\b"
    r"|\bsave_strategy:\s*[\"']?(?:no|none)\b|--no[_-]save\b|--save[_-]checkpoints?[=\s]+false\b",
    re.IGNORECASE,
    needs=("save",),
)


def read_checkpoints(draft: JobDraft, scripts: Iterable[tuple[str, int | None]]) -> None:
    """Apply what these scripts (text, line) say about checkpoints to the draft."""
    for script, line in scripts:
        stated = _NONE.search(script)
        if stated:
            draft.values.pop("checkpoint.uri", None)
            draft.mark("checkpoint.uri", line)
            draft.add_note(f"no checkpoint is written (`{stated.group(0).strip()}`)")
            return
    if draft.get("checkpoint.uri"):
        return
    for script, line in scripts:
        for match in _SYNC.finditer(script):
            src, dst = match.group("src"), match.group("dst")
            if says_checkpoint(src) or says_checkpoint(dst):
                draft.set("checkpoint.uri", dst.rstrip("/"), line)
                draft.add_note(f"checkpoints synced to a bucket (`{_first_words(match.group(0))}`)")
                return
        helper = _HELPER.search(script)
        if helper and says_checkpoint(script):  # a sync helper in a script about checkpoints
            draft.set("checkpoint.uri", f"script:{helper.group(0)}", line)
            draft.add_note(f"checkpoints synced by a helper script (`{helper.group(0)}`)")
            return


def _first_words(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
