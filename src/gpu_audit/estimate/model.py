"""The values an estimate is made of: rates with their source, job estimates, priced options."""

from __future__ import annotations

from gpu_audit.core.frozen import record


@record
class Rate:
    """An hourly price for the whole job (all nodes) at one capacity, and where it came from."""

    capacity: str  # "on-demand" | "spot"
    hourly_usd: float
    run_usd: float | None  # hourly × runtime, rounded to the cent; None when the runtime is unknown
    instance_type: str  # the instance the price is of ("p4d.24xlarge", "p4d.24xlarge per GPU")
    region: str
    as_of: str
    source: str


@record(kw_only=True)
class Sweep:
    """A tuning sweep's bound (catalog/sweep.py): the inputs as the file states them, the
    capacity-hours it can bill, its wall clock and the expected cost under its pruner."""

    trials: int | None  # max trials
    parallel: int | None
    attempts: int  # runs per trial, each with a fresh cap (1 where one cap covers all)
    trial_hours: float | None  # per trial: its runtime cap, --hours or the platform's default
    trial_hours_from: str  # "runtime cap" | "--hours" | "platform default" | "unknown"
    timeout_hours: float | None  # the sweep-wide timeout
    run_hours: float | None  # hours of one trial's capacity the sweep can bill: the bound
    bound_by: str | None  # "trials" | "timeout"; None: unbounded
    gpu_hours: float | None  # run hours × GPUs per trial
    sweep_hours: float | None  # wall clock
    pruned_share: float | None
    expected_run_hours: float | None = None  # run hours under the pruner's schedule
    expected_on_demand_usd: float | None = None  # the pruned estimate at each rate
    expected_spot_usd: float | None = None
    notes: tuple[str, ...] = ()


@record
class JobEstimate:
    """One job: its GPUs, the runtime assumed, GPU-hours and the cost of one run."""

    job: str
    location: str
    provider: str
    gpu_model: str | None
    gpus_per_node: int | None
    nodes: int | None
    gpu_count: int | None
    hours: float | None
    hours_from: str  # "runtime cap" | "--hours" | "unknown"
    gpu_hours: float | None
    capacity: str  # the job's own capacity
    region_note: str  # how the region was chosen
    on_demand: Rate | None
    spot: Rate | None
    run_usd: float | None  # at the job's own capacity
    budget_usd: float | None
    trials: int | None = None  # tuning jobs: trial cap
    tuning_on_demand_usd: float | None = None  # the sweep's ceiling at each rate
    tuning_spot_usd: float | None = None
    note: str | None = None
    sweep: Sweep | None = None  # a tuning sweep's bound; None for a single job
    # Expected spot lost work per run (docs/spot.md) and the spot saving net of it; the note
    # names the interruption rate, its public figure, source and date, or why there is none.
    spot_lost_usd: float | None = None
    spot_net_usd: float | None = None
    spot_lost_note: str | None = None

    @property
    def ceiling_usd(self) -> float | None:
        """What the budget is held to: a sweep's ceiling on its own capacity, else one run."""
        if self.sweep is None:
            return self.run_usd
        return self.tuning_spot_usd if self.capacity == "spot" else self.tuning_on_demand_usd

    @property
    def over_budget(self) -> bool:
        """True when the estimate's ceiling is over the budget the file states (False without
        either)."""
        ceiling = self.ceiling_usd
        return self.budget_usd is not None and ceiling is not None and ceiling > self.budget_usd

    @property
    def budget_state(self) -> str | None:
        """`over`, `within`, or `not evaluated`: a run with no end (no runtime cap, no --hours)
        or no price cannot be shown within a budget, as `check` leaves `run-within-budget`.
        None when the job declares no budget."""
        if self.budget_usd is None:
            return None
        if self.ceiling_usd is None:
            return "not evaluated"
        return "over" if self.over_budget else "within"

    @property
    def budget_reason(self) -> str | None:
        """Why a declared budget is not evaluated, in one phrase."""
        if self.budget_state != "not evaluated":
            return None
        if self.sweep is not None and self.sweep.run_hours is None:
            return "the sweep has no bound: no trial cap, or no per-trial cap and no timeout"
        if self.hours is None:
            return "no runtime cap: a run with no end cannot be shown within a budget"
        return "no price: the run cannot be costed"


@record
class Option:
    """One choice for a GPU request: an instance type, region and capacity, priced for the run."""

    instance_type: str
    cloud: str
    region: str
    gpu_model: str
    gpus_per_node: int
    memory_gib_per_gpu: float
    nodes: int
    capacity: str
    hourly_usd: float  # all nodes
    run_usd: float | None  # None: no --hours, the rate alone
    over_budget: bool
    as_of: str
    source: str


@record
class OptionTable:
    """The options for one request, cheapest run first, and what the catalog cannot price."""

    gpu_model: str
    gpus_per_node: int
    nodes: int
    hours: float | None  # None: hourly rates only
    cloud: str | None
    max_usd: float | None
    options: tuple[Option, ...]
    unpriced: tuple[str, ...]
    asked: str | None = None  # the instance type asked for: listed first, the rest substitutes
    withdrawn: tuple[str, ...] = ()  # machines no longer sold, with why: never an option
