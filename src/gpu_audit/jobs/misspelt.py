"""A document that is a job of a known format but for a misspelt top-level key (`resource:`).

Only formats recognised by a closed set of top-level keys can miss a document this way (SkyPilot
today); the others are recognised by `kind`/`apiVersion`/`type` markers and report misspelt
fields through the parse. Such a document is an input error (exit 2, with a did-you-mean), as
yamllint and Checkov users expect, rather than a silent skip.
"""

from __future__ import annotations

from gpu_audit.core.yamlguard import printable
from gpu_audit.core.yamlsrc import Document, LineMap
from gpu_audit.jobs.skypilot.markers import MARKER_KEYS, TASK_KEYS

# format label → (its top-level keys, keys of which one must be present once spelt right)
CLOSED_FORMATS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "SkyPilot task": (TASK_KEYS, MARKER_KEYS),
}


def misspelt_key(document: Document, path: str) -> tuple[int, str] | None:
    """`(line, message)` when every top-level key is a key of one closed format or close to one,
    and with the close ones corrected the document would be recognised; else None."""
    data = document.data
    if not isinstance(data, LineMap) or not data:
        return None
    for label, (keys, markers) in CLOSED_FORMATS.items():
        wrong: list[tuple[str, str]] = []
        for key in data:
            if not isinstance(key, str):
                break
            if key in keys:
                continue
            from difflib import get_close_matches  # only for a document no format took

            close = get_close_matches(key, sorted(keys), n=1, cutoff=0.8)
            if not close:
                break
            wrong.append((key, close[0]))
        else:
            corrected = {k for k in data if k in keys} | {right for _, right in wrong}
            if wrong and corrected & markers:
                key = wrong[0][0]
                hints = "; ".join(f"'{printable(k, 40)}' (did you mean '{r}'?)" for k, r in wrong)
                message = (
                    f"{path}:{data.line_of(key)}: looks like a {label} but has unknown top-level "
                    f"key {hints}; the file was not checked"
                )
                return data.line_of(key), message
    return None
