"""Instance type → GPU, GPU class ranks, and hourly prices; constant-time lookups over bundled data.

The data files in `data/` are loaded once, on first use, into dictionaries:
- `instances.csv`: one row per GPU instance type (AWS, GCP, Azure), with GPUs per instance.
- `prices.csv`: on-demand and spot hourly prices per (item, region), each with `as_of` and `source`.
  An item is an instance type, or `gpu:<MODEL>` for GPUs billed per attached accelerator (GCP N1);
  either may carry a managed service's rate card as a prefix (`sagemaker:ml.g5.xlarge`,
  `vertex:gpu:T4`), since SageMaker and Vertex AI bill their own rates.
"""

from __future__ import annotations

import csv
import os
from dataclasses import replace
from functools import cache

from gpu_audit.catalog.gpus import canonical_gpu
from gpu_audit.core.frozen import record

# Managed services' rate cards: a price row's item `<card>:<item>`. SageMaker hosting rows
# override the SageMaker card where real-time inference is billed differently.
RATE_CARDS = ("sagemaker", "sagemaker-hosting", "vertex")


def rate_cards(service: str | None, workload: str | None) -> tuple[str, ...]:
    """The rate cards a resource of this service and workload is billed on, most specific first."""
    if service == "sagemaker":
        return ("sagemaker-hosting", "sagemaker") if workload == "inference" else ("sagemaker",)
    if service == "vertex":
        return ("vertex",)
    return ()


# Where a region is not priced, the reference region of its cloud is used and the quote says so.
REFERENCE_REGION = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus"}


@record
class InstanceSpec:
    """An instance type's GPUs, CPUs and memory (a row of instances.csv)."""

    cloud: str
    instance_type: str
    gpu_model: str
    gpu_count: int
    gpu_memory_gib: float
    vcpus: int | None
    memory_gib: float | None


@record
class PriceQuote:
    """Hourly on-demand and spot prices of one item in one region, with their source."""

    on_demand: float | None
    spot: float | None
    region: str
    as_of: str
    source: str
    exact_region: bool
    item: str | None = None  # the instance type (or gpu:<MODEL>) the prices are of


def normalise_type(instance_type: str) -> str:
    """Lower-case, with SageMaker's `ml.` prefix stripped: `ml.g5.xlarge` → `g5.xlarge`."""
    key = instance_type.strip().lower()
    return key[3:] if key.startswith("ml.") else key


def _table(name: str) -> list[list[str]]:
    """A data file's header and rows, comment lines left out (`csv.reader`: half the time of
    `DictReader`, paid on every commit the hook sees)."""
    # Beside the module: pip unpacks wheels, and importlib.resources costs ~15 ms to import.
    with open(os.path.join(os.path.dirname(__file__), "data", name), encoding="utf-8") as handle:
        text = handle.read()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return list(csv.reader(lines))


def _float(text: str) -> float | None:
    return float(text) if text.strip() else None


@cache
def _instances() -> dict[str, InstanceSpec]:
    table: dict[str, InstanceSpec] = {}
    header, *rows = _table("instances.csv")
    columns = ("cloud", "instance_type", "gpu_model", "gpu_count", "gpu_memory_gib", "vcpus")
    order = [header.index(name) for name in (*columns, "memory_gib")]
    for raw in rows:
        cloud, instance_type, model, count, memory, vcpus, host_memory = (raw[i] for i in order)
        spec = InstanceSpec(
            cloud=cloud,
            instance_type=instance_type,
            gpu_model=model,
            gpu_count=int(count),
            gpu_memory_gib=float(memory),
            vcpus=int(vcpus) if vcpus else None,
            memory_gib=_float(host_memory),
        )
        table[normalise_type(instance_type)] = spec
    return table


class _PriceIndex:
    """prices.csv as look-up tables, read once per process. A row becomes its `PriceQuote` when
    first asked for: a commit's check prices a few items of the table's ~450."""

    def __init__(self) -> None:
        # (item, region) → a row of prices.csv (columns in `_COLUMNS` order), or its quote
        self._entries: dict[tuple[str, str], list[str] | PriceQuote] = {}
        self.clouds: dict[str, str] = {}  # item → cloud, also for GCP N1 hosts (no GPU row)
        self.first_region: dict[str, str] = {}  # item → its alphabetically first priced region

    def put(self, cloud: str, item: str, region: str, entry: list[str] | PriceQuote) -> None:
        """Keep a catalog row (or a quote) for (item, region), remember the item's cloud and its
        first region in sort order."""
        self._entries[(item, region)] = entry
        self.clouds.setdefault(item, cloud)
        if region < self.first_region.get(item, "\uffff"):
            self.first_region[item] = region

    def get(self, item: str, region: str) -> PriceQuote | None:
        """The quote for (item, region), built from its CSV row on first use and kept; None when the
        catalog has none."""
        entry = self._entries.get((item, region))
        if entry is None or isinstance(entry, PriceQuote):
            return entry
        quote = self._entries[(item, region)] = _row_quote(entry)
        return quote

    def pairs(self) -> list[tuple[str, str]]:
        """Every (item, region) the index holds, in the order they were put."""
        return list(self._entries)


def _item_key(item: str) -> str:
    card, separator, rest = item.partition(":")
    if separator and card in RATE_CARDS:
        return f"{card}:{_item_key(rest)}"
    if item.startswith(("gpu:", "slurm:gpu:")):  # a GPU model keeps its catalog spelling
        return item
    return normalise_type(item)


# Prices laid over the bundled ones (`gpu-audit ... --prices FILE`): (cloud, quote) pairs.
_OVERLAY: list[tuple[str, PriceQuote]] = []


def set_overlay(quotes: list[tuple[str, PriceQuote]]) -> None:
    """Lay these (cloud, quote) pairs over the bundled prices, per item, region and capacity;
    an empty list restores the bundled catalog. A capacity the overlay lacks keeps its bundled
    price, and the quote then names both sources and the older date."""
    _OVERLAY[:] = quotes
    _price_index.cache_clear()
    _per_gpu.cache_clear()


def _laid(bundled: PriceQuote | None, quote: PriceQuote) -> PriceQuote:
    if bundled is None:
        return quote
    on_demand = quote.on_demand if quote.on_demand is not None else bundled.on_demand
    spot = quote.spot if quote.spot is not None else bundled.spot
    kept = (quote.on_demand is None and on_demand is not None) or (
        quote.spot is None and spot is not None
    )
    if not kept:
        return replace(quote, item=bundled.item)
    return replace(
        quote,
        on_demand=on_demand,
        spot=spot,
        as_of=min(quote.as_of, bundled.as_of),
        source=f"{quote.source}; bundled: {bundled.source}",
        item=bundled.item,
    )


_COLUMNS = ("cloud", "item", "region", "on_demand_usd_hr", "spot_usd_hr", "as_of", "source")


def _row_quote(row: list[str]) -> PriceQuote:
    """A row of prices.csv (its columns in `_COLUMNS` order) as the quote it is."""
    _cloud, item, region, on_demand, spot, as_of, source = row
    return PriceQuote(
        on_demand=_float(on_demand),
        spot=_float(spot),
        region=region,
        as_of=as_of,
        source=source,
        exact_region=True,
        item=item,
    )


@cache
def _price_index() -> _PriceIndex:
    index = _PriceIndex()
    header, *rows = _table("prices.csv")
    order = [header.index(column) for column in _COLUMNS]
    for raw in rows:
        row = [raw[i] for i in order]
        item = _item_key(row[1])
        index.clouds[item] = row[0]  # the last row's cloud, as written
        index.put(row[0], item, row[2], row)
    for cloud, quote in _OVERLAY:
        item = _item_key(quote.item or "")
        index.put(cloud, item, quote.region, _laid(index.get(item, quote.region), quote))
    return index


def bundled_prices() -> tuple[tuple[str, PriceQuote], ...]:
    """Every (cloud, quote) of the bundled table as written, whatever overlay is in use."""
    header, *rows = _table("prices.csv")
    order = [header.index(column) for column in _COLUMNS]
    return tuple((raw[order[0]], _row_quote([raw[i] for i in order])) for raw in rows)


def instance_spec(instance_type: str | None) -> InstanceSpec | None:
    """The GPU spec of an instance type on any cloud; None for unknown and non-GPU types."""
    if not instance_type:
        return None
    return _instances().get(normalise_type(instance_type))


def instance_types() -> tuple[InstanceSpec, ...]:
    """Every instance type of the bundled catalog (instances.csv), in its order."""
    return tuple(_instances().values())


def regional_prices(instance_type: str) -> tuple[PriceQuote, ...]:
    """Every region the catalog prices this instance type in, alphabetically by region."""
    key = _item_key(instance_type)
    index = _price_index()
    regions = sorted(region for item, region in index.pairs() if item == key)
    return tuple(q for region in regions if (q := index.get(key, region)) is not None)


def _quote(item: str, region: str | None, cloud: str | None) -> PriceQuote | None:
    """The quote for (item, region); else the cloud's reference region; else any priced region.

    Every fallback is marked `exact_region=False` unless the caller asked for no region.
    """
    index = _price_index()
    if region:
        found = index.get(item, region)
        if found is not None:
            return found
    reference = REFERENCE_REGION.get(cloud or index.clouds.get(item, ""))
    found = index.get(item, reference) if reference else None
    if found is None and item in index.first_region:
        found = index.get(item, index.first_region[item])
    if found is None:
        return None
    exact = region is None or region == found.region
    return replace(found, exact_region=exact)


def price(
    instance_type: str | None,
    region: str | None = None,
    gpu_model: str | None = None,
    gpu_count: int | None = None,
    cards: tuple[str, ...] = (),
) -> PriceQuote | None:
    """Hourly on-demand and spot price of an instance type (plus attached GPUs, for GCP N1).

    A region that is not priced falls back to the cloud's reference region (`exact_region=False`).
    With no instance type, the GPUs alone are priced per GPU-hour (see `gpu_hour_price`).
    `cards` (see `rate_cards`) are tried first, in order; a type no card prices gets the plain
    EC2 or Compute Engine price.
    """
    if instance_type:
        for card in cards:
            found = _price_on(f"{card}:", instance_type, region, gpu_model, gpu_count)
            if found is not None:
                return found
    return _price_on("", instance_type, region, gpu_model, gpu_count)


def _price_on(
    card: str,
    instance_type: str | None,
    region: str | None,
    gpu_model: str | None,
    gpu_count: int | None,
) -> PriceQuote | None:
    if not instance_type:
        if gpu_model and gpu_count:
            per_gpu = gpu_hour_price(gpu_model)
            return _scaled(per_gpu, gpu_count) if per_gpu else None
        return None
    key = normalise_type(instance_type)
    spec = _instances().get(key)
    cloud = spec.cloud if spec else None
    host = _quote(card + key, region, cloud)
    if host is None or spec is not None or not (gpu_model and gpu_count):
        return host
    # A host without built-in GPUs (GCP N1) plus attached accelerators billed per GPU.
    model = canonical_gpu(gpu_model)
    attached = _quote(f"{card}gpu:{model}", region, "gcp") if model else None
    if attached is None:
        return None
    return PriceQuote(
        on_demand=_add(host.on_demand, attached.on_demand, gpu_count),
        spot=_add(host.spot, attached.spot, gpu_count),
        region=host.region,
        as_of=min(host.as_of, attached.as_of),
        source=host.source
        if host.source == attached.source
        else f"{host.source}; {attached.source}",
        exact_region=host.exact_region and attached.exact_region,
        item=f"{key} + {gpu_count}× {attached.item}",
    )


def _add(host: float | None, per_gpu: float | None, count: int) -> float | None:
    if host is None or per_gpu is None:
        return None
    return round(host + per_gpu * count, 5)


def _scaled(quote: PriceQuote, count: int) -> PriceQuote:
    return PriceQuote(
        on_demand=None if quote.on_demand is None else round(quote.on_demand * count, 5),
        spot=None if quote.spot is None else round(quote.spot * count, 5),
        region=quote.region,
        as_of=quote.as_of,
        source=quote.source,
        exact_region=False,
        item=quote.item,
    )


@cache
def _per_gpu(model: str) -> PriceQuote | None:
    """One GPU-hour of this model, priced from one instance type in its cloud's reference region.

    The instance with the cheapest on-demand GPU-hour is chosen, and its own spot price is used:
    on-demand and spot always come from the same instance and region, and the source names it.
    A model no instance type holds is priced per attached GPU (GCP N1's `gpu:` rows).
    """
    index = _price_index()
    candidates: list[tuple[float, str, PriceQuote]] = []
    for key, spec in _instances().items():
        if spec.gpu_model != model or spec.gpu_count <= 0:
            continue
        quote = index.get(key, REFERENCE_REGION.get(spec.cloud, ""))
        if quote is None or quote.on_demand is None:
            continue
        per = PriceQuote(
            on_demand=round(quote.on_demand / spec.gpu_count, 5),
            spot=None if quote.spot is None else round(quote.spot / spec.gpu_count, 5),
            region=quote.region,
            as_of=quote.as_of,
            source=f"{quote.source} ({spec.instance_type} per GPU)",
            exact_region=False,
            item=spec.instance_type,
        )
        candidates.append((per.on_demand or 0.0, spec.instance_type, per))
    if candidates:
        return min(candidates, key=lambda c: (c[0], c[1]))[2]
    attached = index.get(f"gpu:{model}", REFERENCE_REGION["gcp"])
    if attached is not None and attached.on_demand:
        return replace(attached, exact_region=False)
    return None


def site_price(
    site: str, gpu_model: str | None, gpu_count: int | None, partition: str | None
) -> PriceQuote | None:
    """A site's own rate (a price file's `<site>:gpu:<MODEL>` row) × the GPUs, for the partition
    the job names, or the site's one row for that GPU when it names none; never a cloud's rate.
    A GPU of no named type is priced by a `<site>:gpu:any` row."""
    if not gpu_count:
        return None
    model = canonical_gpu(gpu_model) if gpu_model else None
    item = f"{site}:gpu:{model or gpu_model or 'any'}"
    index = _price_index()
    found = index.get(item, partition) if partition else None
    if found is None and partition is None:
        regions = [region for key, region in index.pairs() if key == item]
        found = index.get(item, regions[0]) if len(regions) == 1 else None
    return None if found is None else replace(_scaled(found, gpu_count), exact_region=True)


def gpu_hour_price(gpu_model: str | None) -> PriceQuote | None:
    """The cheapest known price of one GPU-hour of this model (jobs that name no instance type)."""
    model = canonical_gpu(gpu_model)
    return _per_gpu(model) if model else None
