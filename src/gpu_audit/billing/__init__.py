"""The quarter from the bill: FOCUS billing exports read with GPU semantics (`gpu-audit billing`).

Stages, left to right: `exports` finds the files each cloud's layout makes current (manifests,
repeated runs), `query` is the one aggregation (rendered per engine's dialect), `duck` runs it on
DuckDB (`athena` and `bigquery` where the bill already lives), `model` holds what comes back,
`summary` adds it up exactly, `judge` turns it into resources for the policy engine, `coverage`
joins it to the scan history and `rates` writes the billed rates as a price file.
"""
