"""When hardware and platforms stop being sold, per cloud: the dated rows of data/lifecycle.csv.

A GPU is retired on a cloud once the date of a notice covering it (its model on that cloud, its
machine family, or the service that runs it) has passed; before that date it is still offered, and
at most retiring. A row without a date makes no verdict. A job that names GPUs but no machine is
retired only where every cloud that sells the GPU (the catalog's machines) has dated its end.
"""

from __future__ import annotations

import csv
import os
import re
from datetime import date
from functools import cache, lru_cache

from gpu_audit.catalog.gpus import canonical_gpu
from gpu_audit.catalog.lookup import instance_spec, instance_types, normalise_type
from gpu_audit.core.frozen import record
from gpu_audit.core.lazyre import lazy, lead

# GPUs Compute Engine attaches to N1 machines one at a time; A100, H100 and L4 come only in their
# own machine types (A2, A3, G2), whose rows the catalog has (Compute Engine GPU docs, 2026-11).
N1_ATTACHABLE = frozenset({"T4", "V100", "P100", "P4", "K80"})


@record
class Notice:
    """One row of lifecycle.csv: what stops, on which cloud, when, and who says so."""

    cloud: str
    scope: str  # gpu | family | service
    item: str
    name: str
    ends: date | None  # None: no dated notice found, no verdict
    checked: str
    source: str

    def phrase(self, today: date) -> str:
        """`NVIDIA K80 on Compute Engine, retired 2024-05-01` (`retires` for a date ahead)."""
        past = self.ends is not None and self.ends <= today
        if self.scope == "service":  # a platform is shut down, not retired
            return f"{self.name}, {'shut down' if past else 'shuts down'} {self.ends}"
        return f"{self.name}, {'retired' if past else 'retires'} {self.ends}"


@cache
def notices() -> tuple[Notice, ...]:
    """Every row of the table, in file order."""
    path = os.path.join(os.path.dirname(__file__), "data", "lifecycle.csv")
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle.read().splitlines() if line and line[0] != "#"]
    header, *rows = list(csv.reader(lines))
    found = []
    for raw in rows:
        row = dict(zip(header, raw, strict=True))
        ends = date.fromisoformat(row["ends"]) if row["ends"] else None
        found.append(
            Notice(
                cloud=row["cloud"],
                scope=row["scope"],
                item=row["item"],
                name=row["name"],
                ends=ends,
                checked=row["checked"],
                source=row["source"],
            )
        )
    return tuple(found)


@cache
def _families() -> tuple[tuple[re.Pattern[str], Notice], ...]:
    """Each family notice with its pattern, compiled when a type holding the pattern's literal
    start is first tested (`p3.` for `p3\\..+`): most types never compile one."""
    found = []
    for notice in notices():
        if notice.scope == "family":
            start = lead(notice.item)
            pattern = lazy(notice.item, needs=(start,)) if start else lazy(notice.item)
            found.append((pattern, notice))
    return tuple(found)


def _covering(
    cloud: str | None, model: str | None, instance_type: str | None, service: str | None
) -> list[Notice]:
    """The dated notices that cover what a resource asks for, on its cloud."""
    found = []
    if instance_type:
        key = normalise_type(instance_type)
        # SageMaker sells its `ml.` types on its own list: an EC2 family's end is not theirs
        managed = instance_type.strip().lower().startswith("ml.")
        found += [
            n
            for p, n in _families()
            if p.fullmatch(key) and n.ends and not (managed and n.name.startswith("Amazon EC2"))
        ]
    for notice in notices():
        if notice.ends is None:
            continue
        by_service = notice.scope == "service" and service == notice.item
        by_model = notice.scope == "gpu" and model == notice.item and cloud == notice.cloud
        if by_service or by_model:
            found.append(notice)
    return found


@lru_cache(maxsize=4096)
def lifecycle(
    cloud: str | None,
    gpu_model: str | None,
    instance_type: str | None,
    service: str | None,
    today: date,
) -> tuple[str | None, str | None]:
    """(retired, retiring): what the resource asks for that is no longer sold, and what stops
    being sold on a date still ahead, each as one phrase naming the item and its date."""
    model = canonical_gpu(gpu_model)
    spec = instance_spec(instance_type)
    if cloud is None and spec is not None:
        cloud = spec.cloud
    covering = _covering(cloud, model, instance_type, service)
    if model is not None and spec is None and not any(n.scope == "gpu" for n in covering):
        covering += _by_model(model, today, cloud)
    past = [n for n in covering if n.ends is not None and n.ends <= today]
    ahead = [n for n in covering if n.ends is not None and n.ends > today]
    retired = "; ".join(n.phrase(today) for n in past) or None
    retiring = None if retired else ("; ".join(n.phrase(today) for n in ahead) or None)
    return retired, retiring


def _by_model(model: str, today: date, cloud: str | None) -> list[Notice]:
    """GPUs asked for by model, with no machine the catalog knows, on `cloud` (None: any cloud
    the catalog sells it on): the notices of the clouds that sell it, if every one of them has
    dated its end; none while one cloud sells it with no date (it is offered there)."""
    clouds = {s.cloud for s in instance_types() if s.gpu_model == model}
    clouds |= {n.cloud for n in notices() if n.scope == "gpu" and n.item == model}
    if model in N1_ATTACHABLE:  # attached to an N1 host on Compute Engine, not a machine type
        clouds.add("gcp")
    found: list[Notice] = []
    for each in sorted(clouds) if cloud is None else [cloud]:
        ending = _ends_on(each, model)
        if ending is None:
            return []
        found += ending
    if any(n.ends is not None and n.ends > today for n in found):
        return [n for n in found if n.ends is not None and n.ends > today]  # still offered
    return found


def _ends_on(cloud: str, model: str) -> list[Notice] | None:
    """The dated notices ending `model` on `cloud` (a model-wide notice, else one per machine
    family the catalog sells it in); None when some machine with it has no dated end."""
    whole = [
        n for n in notices() if n.scope == "gpu" and n.item == model and n.cloud == cloud and n.ends
    ]
    if whole:
        return whole
    types = [s for s in instance_types() if s.gpu_model == model and s.cloud == cloud]
    if not types:
        return None
    found: list[Notice] = []
    for spec in types:
        key = normalise_type(spec.instance_type)
        ending = [n for p, n in _families() if n.ends and p.fullmatch(key)]
        if not ending:
            return None
        found += [n for n in ending if n not in found]
    return found


def retired_type(instance_type: str, today: date) -> bool:
    """Whether a machine type is no longer sold (its family's or its GPU's date has passed)."""
    spec = instance_spec(instance_type)
    if spec is None:
        return False
    retired, _ = lifecycle(spec.cloud, spec.gpu_model, instance_type, None, today)
    return retired is not None


def ended(instance_type: str, today: date) -> Notice | None:
    """The notice that ended a machine type (its family's, or its GPU's on its cloud), if its
    date has passed: what `catalog lookup` says of a type the cloud no longer sells."""
    spec = instance_spec(instance_type)
    if spec is None:
        return None
    covering = _covering(spec.cloud, canonical_gpu(spec.gpu_model), instance_type, None)
    return next((n for n in covering if n.ends is not None and n.ends <= today), None)
