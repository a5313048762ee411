"""Plausible ranges for every number a scenario, the catalog overrides and the CLI accept.

A value outside its range is refused before any arithmetic, with a message that states the range
("expected 1–100,000, got 1e+20"). The bounds are generous on purpose: each admits every
realistic estate, from a start-up with one GPU to a hyperscale estate of 100,000 GPUs and more,
and each ``why`` says what real figure the bound leaves room for. What they shut out is the
value that would overflow the model's integer arithmetic or make it answer nonsense (a hiring
limit of 2^63 − 1, a price scale of a billion, a node of a billion GPUs), which the model would
otherwise report as "infeasible" or as an absurd plan.

``docs/scenario.md`` lists every range; a test keeps the two the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic is imported where a check fails, so the CLI starts without it
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

__all__ = [
    "CLI_FLAGS",
    "Range",
    "markdown_table",
    "show_number",
]


def _fmt(x: float) -> str:
    """A bound in words a reader scans: thousands separated, no trailing zeros."""
    if x == int(x) and abs(x) >= 1:
        return f"{int(x):,}"
    return f"{x:g}"


def show_number(value: Any) -> str:
    """A value for a message, never a 4,000-digit integer (Python refuses to print those)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value.bit_length() > 100:
        if value.bit_length() > 13_000:  # str() refuses integers above 4,300 digits
            return f"an integer of about {int(value.bit_length() * math.log10(2)):,} digits"
        return f"an integer of {len(str(abs(value))):,} digits"
    if isinstance(value, str):
        return f"'{value[:40]}{'...' if len(value) > 40 else ''}'"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


@dataclass(frozen=True)
class Range:
    """The plausible values of one number: ``lo`` to ``hi`` (``lo`` itself excluded when open).

    ``unit`` names what the number counts; ``why`` says what real figure the bounds leave room
    for. Put in a type (``Annotated[int, Field(strict=True), GPUS_PER_JOB]``) it checks type
    and range before pydantic's own checks, so the message always states the range.
    """

    lo: float
    hi: float
    unit: str
    why: str
    integer: bool = False
    lo_open: bool = False

    def text(self) -> str:
        """The range as a message states it: ``1–100,000`` or ``above 0 to 10,000``."""
        if self.lo_open:
            return f"above {_fmt(self.lo)} to {_fmt(self.hi)}"
        return f"{_fmt(self.lo)}–{_fmt(self.hi)}"

    def expected(self) -> str:
        """``an integer 1–100,000`` or ``a number 0–1,000``."""
        return f"{'an integer' if self.integer else 'a number'} {self.text()}"

    def contains(self, value: float) -> bool:
        """Whether ``value`` (finite) is inside the range."""
        above = value > self.lo if self.lo_open else value >= self.lo
        return above and value <= self.hi

    def check(self, value: Any) -> Any:
        """Pass a value of the right type inside the range; raise a message stating it otherwise."""
        number = isinstance(value, int | float) and not isinstance(value, bool)
        right_type = number and (isinstance(value, int) or not self.integer)
        finite = right_type and (isinstance(value, int) or math.isfinite(value))
        if not (finite and self.contains(value)):
            from pydantic_core import PydanticCustomError

            raise PydanticCustomError(
                "value_range",
                "expected {expected}{unit}, got {got}",
                {
                    "expected": self.expected(),
                    "unit": f" {self.unit}" if self.unit else "",
                    "got": show_number(value),
                },
            )
        return value

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """Run :meth:`check` before the strict type's own validation."""
        from pydantic_core import core_schema

        return core_schema.no_info_before_validator_function(self.check, handler(source))


# -- people ------------------------------------------------------------------------------

FTE = Range(
    0, 1_000, "FTE", "ten times the largest GPU operations teams (hyperscalers run hundreds)"
)
HIRES = Range(0, 1_000, "FTE", "as many hires as the largest team could hold", integer=True)
SALARY = Range(
    100,
    10_000_000,
    "USD per FTE-year",
    "from offshore contractors (~$20k) to the most senior US staff fully loaded (~$1M), "
    "with room for analyses that scale it by 0.25 or 4",
)
ONE_OFF_USD = Range(0, 10_000_000, "USD", "recruiting fees and ramp-up run to tens of thousands")
FTE_EFFORT = Range(0, 1_000, "FTE", "a platform's staffing effort, far above any catalog figure")

# -- procurement and policy --------------------------------------------------------------

HORIZON_MONTHS = Range(
    1, 240, "months", "a month-to-month rental to a 20-year facility", integer=True
)
PRICE_SCALE = Range(
    0.01, 100, "x catalog prices", "a 99% discount to 100 times list: far beyond any quote"
)
BUDGET_USD_MONTH = Range(
    0,
    1e10,
    "USD per month",
    "$10 billion a month is ten times the largest AI estate's spend",
    lo_open=True,
)
POOLS = Range(1, 1_000, "pools", "far more pools than any estate runs", integer=True)
NODES = Range(
    1, 1_000_000, "nodes", "ten times the node count of a 100,000-GPU estate", integer=True
)

# -- workloads ---------------------------------------------------------------------------

GPUS_PER_JOB = Range(
    1,
    100_000,
    "GPUs",
    "Llama 3 405B trained on 16,384 H100s; room for runs six times larger",
    integer=True,
)
GPU_HOURS_MONTH = Range(
    0.001,
    1e9,
    "GPU-hours per month",
    "1.4 million GPUs busy all month; a 100,000-GPU estate is 73 million",
)
JOB_HOURS = Range(0.01, 10_000, "hours", "a 36-second job to one running more than a year")
WAIT_HOURS = Range(0.001, 10_000, "hours", "4 seconds to more than a year")
SCV = Range(
    0, 100, "", "0 is perfectly regular, 1 random (exponential); heavy-tailed traces reach tens"
)
USERS = Range(
    1, 1_000_000, "users", "every engineer of the largest companies at once", integer=True
)
GPUS_PER_USER = Range(1, 1_024, "GPUs", "a user may hold a few nodes for debugging", integer=True)
SESSION_HOURS = Range(
    0.01, 10_000, "hours", "a 36-second session to a notebook held open more than a year"
)
REQUESTS_PER_SECOND = Range(
    0.0001,
    1e8,
    "requests per second",
    "a request every few hours to a hundred times a global search engine's peak",
)
GPU_SECONDS = Range(
    0.000001, 3_600, "GPU-seconds", "a microsecond kernel to an hour-long generation"
)
LATENCY_MS = Range(0.1, 3_600_000, "ms", "a 0.1 ms lookup to an hour")
SERVICE_TIME_CV = Range(
    0, 100, "", "0 is fixed-length requests, 1 exponential; LLM generation lengths reach a few"
)
CONCURRENCY = Range(
    1, 4_096, "requests per GPU", "continuous batching holds hundreds per GPU", integer=True
)

# -- catalog overrides -------------------------------------------------------------------

MEMORY_GB = Range(1, 100_000, "GB", "B200 has 192 GB; room for whole-rack memory pools")
TDP_W = Range(1, 100_000, "W", "an L4 draws 72 W, a B200 1,000 W")
GPUS_PER_NODE = Range(
    1,
    1_024,
    "GPUs per node",
    "8 in an HGX server, 72 in an NVL72 rack, 576 announced",
    integer=True,
)
NODE_KW = Range(0.01, 10_000, "kW", "an NVL72 rack draws ~120 kW")
GPU_HOUR_USD = Range(0.001, 10_000, "USD per GPU-hour", "catalog prices run from $0.48 to $14")
CAPEX_USD = Range(1, 1e9, "USD per node", "an NVL72 rack costs ~$3 million")
SPEED = Range(0.001, 1_000, "x H100", "an L4 is 0.09–0.12, a B200 2.3–2.4")
LAG_MINUTES = Range(0, 100_000, "minutes", "from instant to a quarter's lead time")
POWER_USD_KWH = Range(0, 10, "USD per kWh", "industrial power costs $0.05–0.40")
PUE = Range(1, 5, "", "hyperscale 1.1, industry average 1.56, an old machine room 3")
FACILITY_USD_KW = Range(0, 100_000, "USD per kW-month", "colocation is $150–250 per kW-month")
BURST_CAP_GPUS = Range(
    0, 1_000_000, "GPUs", "ten times a 100,000-GPU estate rented for one hour", integer=True
)
SUPPORT_FRACTION = Range(
    0, 1, "of capex per year", "vendor support contracts run 5-15% of the hardware price a year"
)
USEFUL_LIFE_MONTHS = Range(
    1, 240, "months", "servers are depreciated over 3-6 years; 20 years is far past any GPU's life"
)
SPOT_INTERRUPTIONS = Range(
    0, 1_000, "per node-month", "the worst spot markets reclaim a node several times a day"
)
INTERVAL_HOURS = Range(0, 10_000, "hours", "from no delay to more than a year")
PROFILE_WEIGHT = Range(0, 1e12, "", "weights are relative; only their ratios matter")

# -- command-line flags ------------------------------------------------------------------

TIME_LIMIT_S = Range(
    0, 86_400, "seconds", "each solve's budget; a day is the longest sensible", lo_open=True
)
MAX_TIME_S = Range(0, 604_800, "seconds", "a whole command, up to a week of analysis", lo_open=True)
WORKERS = Range(
    1, 256, "threads", "CP-SAT's useful worker count is the number of cores", integer=True
)
SEED = Range(0, 2_147_483_647, "", "CP-SAT takes a 32-bit random seed", integer=True)
SAMPLES = Range(1, 100_000, "samples", "each sample is a solve; 200 is the default", integer=True)
VERDICT_SAMPLES = Range(
    0, 100_000, "samples", "0 skips the sampled futures; each sample is a solve", integer=True
)
JOBS = Range(1, 256, "processes", "one solver process per core", integer=True)
ALTERNATIVES = Range(0, 20, "plans", "each alternative is a further solve", integer=True)
SLACK = Range(0, 1, "", "a fraction of the optimal cost: 0.05 is 5%")
PCT = Range(0, 90, "%", "a tornado below -100% would make demand negative", lo_open=True)
SIM_DAYS = Range(
    1,
    3_650,
    "days",
    "the first day is warm-up; ten years is far past a plan's horizon",
    lo_open=True,
)
WINDOW_DAYS = Range(0.04, 36_500, "days", "an hour of logs to a century")
GPUS_PER_PROC = Range(
    0, 64, "GPUs", "a processor of an HPC log holds at most a few GPUs", lo_open=True
)

CLI_FLAGS = {
    "--time-limit": TIME_LIMIT_S,
    "--max-time": MAX_TIME_S,
    "--workers": WORKERS,
    "--seed": SEED,
    "--samples (uncertainty)": SAMPLES,
    "--samples (solve)": VERDICT_SAMPLES,
    "--jobs (sensitivity, uncertainty)": JOBS,
    "--alternatives": ALTERNATIVES,
    "--slack": SLACK,
    "--pct": PCT,
    "--days": SIM_DAYS,
    "--window-days": WINDOW_DAYS,
    "--gpus-per-proc": GPUS_PER_PROC,
}
"""The command-line flags that take a number, with their ranges (for the reference)."""


def markdown_table(rows: list[tuple[str, Range]], head: str = "key") -> str:
    """The rows as the Markdown table ``docs/scenario.md`` holds (a test keeps them equal)."""
    lines = [f"| {head} | accepted | unit | why these bounds |", "|---|---|---|---|"]
    for key, rng in rows:
        kind = "integer " if rng.integer else ""
        lines.append(f"| `{key}` | {kind}{rng.text()} | {rng.unit} | {rng.why} |")
    return "\n".join(lines)
