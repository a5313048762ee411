"""Seeded generator of realistic `sacct --parsable2` exports, for samples, tests and benchmarks.

Three estates mirror the preset scenarios (data/scenarios): `research-lab` (training heavy),
`inference-platform` (services, fine-tuning and batch scoring) and `enterprise-mixed`. Each
export carries what real ones do: `.batch`/`.extern`/`.0`/`.interactive` step rows, array
tasks and a pending array, CANCELLED (some `by <uid>`, some never started, `None` start),
FAILED, TIMEOUT, OUT_OF_MEMORY and NODE_FAIL jobs, RUNNING and PENDING jobs at the export
time, typed and untyped GPU TRES (`gres/gpu:h100=8,gres/gpu=8`, `gres/gpu=8`,
`gres/gpu:h100=8`), and local times without offset across a daylight-saving change.

Calibration (research/domain-tables/traces.csv): job-state mixes are the job fractions of
Helios (SenseTime: completed 0.624, cancelled 0.221, failed 0.155) for research-lab and
enterprise-mixed, and of Philly (0.604, 0.090, 0.305) for inference-platform; single-GPU
jobs dominate job counts while large gangs dominate GPU-hours, as in Helios and Acme
(median 1 GPU per job); experimentation waits follow Helios' median wait of ~0 and training
waits its mean of ~15 minutes, stretched for large gangs. Class sizes follow the presets'
GPU-hours per month, so a derived scenario resembles its preset. Pre-training runs, as in the
presets, in checkpointed 24-hour segments resubmitted as the last one ends (planned
arrivals, gap SCV 0.25; run-time SCV about 0.1 before failures cut some short), with waits
as long as a nearly full gang partition gives (p90 about 10 hours in research-lab, 18 in
enterprise-mixed). Other batch waits are set so the SLOs derived from them (p90, rounded up)
land on the presets' (inference-platform: a 4-hour fine-tuning wait, 8-hour scoring).
"""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from cluster_decide.base.constants import HOURS_PER_MONTH, HOURS_PER_WEEK

__all__ = [
    "ESTATES",
    "SACCT_FIELDS",
    "SAMPLES",
    "ClassSpec",
    "EstateSpec",
    "generate_jobs",
    "generate_sacct",
    "to_sacct",
    "week_profile",
    "write_sacct",
    "write_samples",
]

SACCT_FIELDS = (
    "JobID",
    "JobName",
    "User",
    "Account",
    "Partition",
    "State",
    "Submit",
    "Start",
    "End",
    "Elapsed",
    "NNodes",
    "NCPUS",
    "ReqTRES",
    "AllocTRES",
    "ExitCode",
)
"""The `sacct -P -o` fields of generated exports, in order."""

GPUS_PER_NODE = 8


def week_profile(name: str) -> np.ndarray:
    """168 arrival weights (0 = Monday 00:00): flat, business_hours, nightly, diurnal."""
    hour = np.arange(HOURS_PER_WEEK) % 24
    weekday = np.arange(HOURS_PER_WEEK) // 24 < 5
    if name == "flat":
        return np.ones(HOURS_PER_WEEK)
    if name == "business_hours":
        return np.where(weekday & (hour >= 9) & (hour < 18), 1.0, 0.08)
    if name == "nightly":
        return np.where(hour < 5, 1.0, np.where(hour >= 22, 0.5, 0.03))
    if name == "diurnal":
        day = 0.25 + 0.75 * np.clip(np.sin((hour - 6) / 16 * np.pi), 0, None)
        return day * np.where(weekday, 1.0, 0.7)
    raise ValueError(f"unknown profile {name!r}")


@dataclass(frozen=True)
class ClassSpec:
    """One kind of job an estate runs, and how much of it.

    `volume` is GPU-hours per month for batch classes, concurrent users for interactive
    ones, and peak replica GPUs for services. `arrival_scv` below 1 makes submissions
    planned rather than random (checkpointed segments resubmitted as the last one ends):
    gaps are gamma-distributed with that squared coefficient of variation. `kind` is the
    intended workload kind, kept as ground truth for tests (the export itself carries only
    names, partitions and shapes).
    """

    kind: str
    team: str
    names: tuple[str, ...]
    partition: str
    gpu_sizes: tuple[int, ...]
    gpu_probs: tuple[float, ...]
    gpu_type: str
    median_hours: float
    volume: float
    profile: str = "flat"
    median_wait_hours: float = 0.25
    sigma: float = 0.8
    users: int = 8
    interactive: bool = False
    service: bool = False
    array_size: int = 0
    arrival_scv: float = 1.0


@dataclass(frozen=True)
class EstateSpec:
    """An estate: its time zone, its job classes and its job-state mix (fractions)."""

    name: str
    tz: str
    classes: tuple[ClassSpec, ...]
    states: dict[str, float] = field(default_factory=dict)


_HELIOS = {
    "COMPLETED": 0.624,
    "CANCELLED": 0.221,
    "FAILED": 0.125,
    "TIMEOUT": 0.018,
    "OUT_OF_MEMORY": 0.008,
    "NODE_FAIL": 0.004,
}
_PHILLY = {
    "COMPLETED": 0.604,
    "CANCELLED": 0.090,
    "FAILED": 0.265,
    "TIMEOUT": 0.025,
    "OUT_OF_MEMORY": 0.01,
    "NODE_FAIL": 0.006,
}
_CPU = ClassSpec(
    "excluded",
    "data",
    ("preprocess-cpu", "backup"),
    "cpu",
    (0,),
    (1.0,),
    "",
    1.0,
    3000.0,
    "nightly",
    0.1,
    users=4,
)

ESTATES: dict[str, EstateSpec] = {
    "research-lab": EstateSpec(
        "research-lab",
        "America/New_York",
        (
            ClassSpec(
                "distributed_training",
                "pretraining",
                ("pretrain-llm", "pretrain-moe"),
                "train",
                (64, 128),
                (0.35, 0.65),
                "h100",
                24.0,
                60000.0,
                "flat",
                0.7,
                0.3,
                users=6,
                arrival_scv=0.25,
            ),
            ClassSpec(
                "fine_tuning",
                "alignment",
                ("sft-ablation", "lora-sweep", "dpo-run"),
                "train",
                (8, 16),
                (0.4, 0.6),
                "h100",
                6.0,
                15000.0,
                "flat",
                0.5,
                users=10,
            ),
            ClassSpec(
                "experimentation",
                "all-researchers",
                ("_interactive", "jupyter"),
                "interactive",
                (1,),
                (1.0,),
                "a100",
                2.0,
                16.0,
                "business_hours",
                0.02,
                users=30,
                interactive=True,
            ),
            ClassSpec(
                "batch_inference",
                "evaluation",
                ("eval-benchmarks", "eval-harness"),
                "batch",
                (8,),
                (1.0,),
                "a100",
                2.0,
                4000.0,
                "nightly",
                0.5,
                users=5,
                array_size=8,
            ),
            _CPU,
        ),
        _HELIOS,
    ),
    "inference-platform": EstateSpec(
        "inference-platform",
        "Europe/Berlin",
        (
            ClassSpec(
                "realtime_inference",
                "product",
                ("serve-chat",),
                "serving",
                (8,),
                (1.0,),
                "h100",
                4.0,
                168.0,
                "diurnal",
                0.01,
                0.1,
                users=2,
                service=True,
            ),
            ClassSpec(
                "realtime_inference",
                "search",
                ("serve-embeddings",),
                "serving",
                (1,),
                (1.0,),
                "l4",
                4.0,
                30.0,
                "diurnal",
                0.01,
                0.1,
                users=2,
                service=True,
            ),
            ClassSpec(
                "fine_tuning",
                "ml-platform",
                ("finetune-adapter", "lora-customer"),
                "train",
                (8,),
                (1.0,),
                "h100",
                4.0,
                6000.0,
                "business_hours",
                1.0,
                users=6,
            ),
            ClassSpec(
                "batch_inference",
                "recommendations",
                ("score-nightly", "embed-catalog"),
                "batch",
                (1,),
                (1.0,),
                "l40s",
                1.0,
                5000.0,
                "nightly",
                0.8,
                users=4,
                array_size=20,
            ),
            _CPU,
        ),
        _PHILLY,
    ),
    "enterprise-mixed": EstateSpec(
        "enterprise-mixed",
        "America/Chicago",
        (
            ClassSpec(
                "distributed_training",
                "research",
                ("pretrain-llm",),
                "train",
                (128, 256),
                (0.3, 0.7),
                "h100",
                24.0,
                150000.0,
                "flat",
                1.25,
                0.3,
                users=8,
                arrival_scv=0.25,
            ),
            ClassSpec(
                "fine_tuning",
                "applied-ml",
                ("finetune-model", "sft-domain"),
                "train",
                (8,),
                (1.0,),
                "h100",
                6.0,
                20000.0,
                "business_hours",
                0.5,
                users=12,
            ),
            ClassSpec(
                "experimentation",
                "research",
                ("jupyter", "_interactive"),
                "interactive",
                (1,),
                (1.0,),
                "a100",
                2.0,
                24.0,
                "business_hours",
                0.02,
                users=40,
                interactive=True,
            ),
            ClassSpec(
                "batch_inference",
                "research",
                ("eval-nightly",),
                "batch",
                (4,),
                (1.0,),
                "l40s",
                3.0,
                8000.0,
                "nightly",
                0.5,
                users=5,
                array_size=6,
            ),
            ClassSpec(
                "pipeline",
                "data",
                ("etl-features", "tokenize-corpus"),
                "batch",
                (1,),
                (1.0,),
                "l4",
                1.0,
                3000.0,
                "nightly",
                0.3,
                users=4,
            ),
            ClassSpec(
                "realtime_inference",
                "product",
                ("serve-support",),
                "serving",
                (8,),
                (1.0,),
                "l40s",
                4.0,
                110.0,
                "business_hours",
                0.01,
                0.1,
                users=2,
                service=True,
            ),
            ClassSpec(
                "realtime_inference",
                "product",
                ("serve-code",),
                "serving",
                (8,),
                (1.0,),
                "h100",
                4.0,
                70.0,
                "diurnal",
                0.01,
                0.1,
                users=2,
                service=True,
            ),
            _CPU,
        ),
        _HELIOS,
    ),
}
"""The three built-in estates, keyed by the preset scenario they mirror."""

_JOB_SCHEMA = pl.Schema(
    {
        "seq": pl.Int64,
        "parent": pl.Int64,
        "task": pl.Int64,
        "kind": pl.String,
        "team": pl.String,
        "user": pl.String,
        "name": pl.String,
        "partition": pl.String,
        "gpus": pl.Int64,
        "gpu_type": pl.String,
        "submit_s": pl.Float64,
        "wait_s": pl.Float64,
        "run_s": pl.Float64,
        "state": pl.String,
        "never_started": pl.Boolean,
        "interactive": pl.Boolean,
    }
)


def _arrivals(rng: np.random.Generator, n: int, profile: str, days: float) -> np.ndarray:
    """Draw n arrival times (seconds from a Monday 00:00) from the hour-of-week profile."""
    weights = week_profile(profile)
    weeks = int(np.ceil(days / 7.0))
    hourly = np.tile(weights, weeks)[: int(days * 24)]
    hours = rng.choice(hourly.size, size=n, p=hourly / hourly.sum())
    return (hours + rng.random(n)) * 3600.0


def _planned_arrivals(
    rng: np.random.Generator, n: int, arrival_scv: float, days: float
) -> np.ndarray:
    """Draw n submission times over the window, gaps of squared coefficient `arrival_scv`.

    Gamma gaps (shape 1/scv) laid end to end and stretched to the window; the stretch keeps
    their coefficient of variation.
    """
    gaps = rng.gamma(1.0 / arrival_scv, 1.0, n + 1)
    return np.cumsum(gaps)[:n] / gaps.sum() * days * 86400.0


def _service_jobs(rng: np.random.Generator, spec: ClassSpec, days: float) -> dict:
    """Replica allocations of a service: each 4-hour block runs enough replicas for its load."""
    weights = week_profile(spec.profile)
    blocks = int(days * 24 // 4)
    replica_gpus = spec.gpu_sizes[0]
    peak_replicas = max(1, round(spec.volume / replica_gpus))
    starts, runs = [], []
    for b in range(blocks):
        hours = [(b * 4 + h) % HOURS_PER_WEEK for h in range(4)]
        load = float(np.mean(weights[hours])) / float(weights.max())
        for _ in range(max(1, int(np.ceil(peak_replicas * load)))):
            starts.append(b * 4 * 3600.0 + rng.uniform(0, 120))
            runs.append(4 * 3600.0 - rng.uniform(0, 300))
    n = len(starts)
    return {
        "submit_s": np.array(starts),
        "run_s": np.array(runs),
        "gpus": np.full(n, replica_gpus),
        "wait_s": rng.exponential(30.0, n),
    }


def _realized(states: dict[str, float]) -> float:
    """Expected share of a job's nominal run time it really runs, given the state mix.

    Cancelled jobs run a uniform 1-90% of it (30% never start), failed ones 1-90%; the rest
    run in full. Used to size job counts so GPU-hours come out at the class volume.
    """
    total = sum(states.values()) or 1.0
    cut = 0.455
    cancelled = states.get("CANCELLED", 0.0) * 0.7 * cut
    failed = sum(states.get(s, 0.0) for s in ("FAILED", "OUT_OF_MEMORY", "NODE_FAIL")) * cut
    full = sum(
        p
        for s, p in states.items()
        if s not in ("CANCELLED", "FAILED", "OUT_OF_MEMORY", "NODE_FAIL")
    )
    return (full + cancelled + failed) / total


def _batch_jobs(rng: np.random.Generator, spec: ClassSpec, days: float, realized: float) -> dict:
    """Jobs sized so their expected GPU-hours (or busy users) match the class volume."""
    probs = np.array(spec.gpu_probs) / np.sum(spec.gpu_probs)
    mean_hours = spec.median_hours * float(np.exp(spec.sigma**2 / 2))
    months = days * 24 / HOURS_PER_MONTH
    if spec.interactive:
        busy_share = float(week_profile(spec.profile).mean())
        n = int(spec.volume * busy_share * days * 24 / mean_hours)
    else:
        mean_gpus = max(float(np.dot(spec.gpu_sizes, probs)), 1.0)
        n = int(spec.volume * months / (mean_gpus * mean_hours * realized))
    n = max(n, 3)
    gpus = rng.choice(np.array(spec.gpu_sizes), size=n, p=probs)
    run = rng.lognormal(np.log(spec.median_hours * 3600.0), spec.sigma, n)
    gang = np.maximum(gpus, 1) / 8.0
    wait = rng.lognormal(np.log(max(spec.median_wait_hours, 1e-3) * 3600.0), 1.0, n)
    wait = wait * np.clip(gang, 1.0, 4.0)
    submit = (
        _planned_arrivals(rng, n, spec.arrival_scv, days)
        if spec.arrival_scv < 1.0
        else _arrivals(rng, n, spec.profile, days)
    )
    return {
        "submit_s": submit,
        "run_s": run,
        "gpus": gpus,
        "wait_s": wait,
    }


def _to_volume(
    run: np.ndarray, gpus: np.ndarray, never: np.ndarray, gpu_hours: float
) -> np.ndarray:
    """Scale run times so the class's GPU-hours equal its volume exactly, not just on average.

    A class of a few dozen multi-day gangs (pre-training) otherwise lands 10-15% off its
    volume by chance (seed to seed: 124k to 170k GPU-hours a month for a 150k class), enough
    to flip the plan of an estate whose archetypes are close in cost.
    """
    drawn = float(np.sum(np.where(never, 0.0, gpus * run))) / 3600.0
    return run * (gpu_hours / drawn) if drawn > 0 else run


def generate_jobs(
    estate: str | EstateSpec,
    *,
    days: float = 90.0,
    seed: int = 0,
    scale: float = 1.0,
) -> pl.DataFrame:
    """Ground-truth jobs of an estate (one row per allocation or array task), before export.

    `scale` multiplies every class's volume (use it to make a benchmark-sized export).
    Columns: seq, parent, task, kind, team, user, name, partition, gpus, gpu_type, submit_s,
    wait_s, run_s (seconds; submit from the window start), state, never_started, interactive.
    """
    spec = ESTATES[estate] if isinstance(estate, str) else estate
    rng = np.random.default_rng(seed)
    frames = []
    states = list(spec.states)
    state_p = np.array([spec.states[s] for s in states])
    state_p = state_p / state_p.sum()
    for idx, cls in enumerate(spec.classes):
        scaled = ClassSpec(**{**cls.__dict__, "volume": cls.volume * scale})
        raw = (
            _service_jobs(rng, scaled, days)
            if cls.service
            else _batch_jobs(rng, scaled, days, _realized(spec.states))
        )
        n = raw["gpus"].size
        if cls.service:
            state = rng.choice(["COMPLETED", "CANCELLED"], size=n, p=[0.7, 0.3])
        else:
            state = rng.choice(states, size=n, p=state_p)
        run = raw["run_s"].copy()
        shortened = np.isin(state, ["CANCELLED", "FAILED", "OUT_OF_MEMORY", "NODE_FAIL"])
        if not cls.service:
            run = np.where(shortened, run * rng.uniform(0.01, 0.9, n), run)
        never = (state == "CANCELLED") & (rng.random(n) < 0.3) & (not cls.service)
        if not (cls.service or cls.interactive):
            run = _to_volume(run, raw["gpus"], never, scaled.volume * days * 24 / HOURS_PER_MONTH)
        users = np.array([f"{cls.team[:3]}{i:02d}" for i in range(cls.users)])
        names = np.array(cls.names)
        frames.append(
            pl.DataFrame(
                {
                    "cls": np.full(n, idx),
                    "kind": np.full(n, cls.kind),
                    "team": np.full(n, cls.team),
                    "user": rng.choice(users, size=n),
                    "name": rng.choice(names, size=n),
                    "partition": np.full(n, cls.partition),
                    "gpus": raw["gpus"].astype(np.int64),
                    "gpu_type": np.full(n, cls.gpu_type),
                    "submit_s": raw["submit_s"],
                    "wait_s": np.where(never, 0.0, raw["wait_s"]),
                    "run_s": np.where(never, 0.0, run),
                    "state": state,
                    "never_started": never,
                    "interactive": np.full(n, cls.interactive),
                    "array_size": np.full(n, cls.array_size),
                }
            )
        )
    jobs = pl.concat(frames).sort("submit_s", "cls").with_row_index("seq", offset=1_000_000)
    jobs = jobs.with_columns(pl.col("seq").cast(pl.Int64))
    # Array classes: group consecutive jobs of the class into arrays of `array_size` tasks,
    # all submitted together under the first job's id.
    arr = (
        jobs.filter(pl.col("array_size") > 0)
        .with_columns(
            (pl.int_range(pl.len()).over("cls") // pl.col("array_size")).alias("_grp"),
            pl.int_range(pl.len()).over("cls").alias("_pos"),
        )
        .with_columns(
            pl.col("seq").first().over("cls", "_grp").alias("parent"),
            (pl.col("_pos") % pl.col("array_size")).alias("task"),
            pl.col("submit_s").first().over("cls", "_grp").alias("submit_s"),
        )
        .drop("_grp", "_pos")
    )
    plain = jobs.filter(pl.col("array_size") == 0).with_columns(
        pl.col("seq").alias("parent"), pl.lit(None, dtype=pl.Int64).alias("task")
    )
    out = pl.concat([plain, arr.select(plain.columns)]).sort("submit_s", "seq")
    return out.select(list(_JOB_SCHEMA)).cast(_JOB_SCHEMA)


def _fmt_duration(seconds: pl.Expr) -> pl.Expr:
    s = seconds.round(0).cast(pl.Int64)
    days, hours = s // 86400, (s % 86400) // 3600
    mins, secs = (s % 3600) // 60, s % 60
    hms = pl.format(
        "{}:{}:{}",
        hours.cast(pl.String).str.zfill(2),
        mins.cast(pl.String).str.zfill(2),
        secs.cast(pl.String).str.zfill(2),
    )
    return pl.when(days > 0).then(pl.format("{}-{}", days, hms)).otherwise(hms)


def to_sacct(
    jobs: pl.DataFrame,
    *,
    tz: str,
    start: datetime,
    days: float,
    seed: int = 0,
    header: bool = True,
) -> str:
    """Render ground-truth jobs as `sacct --parsable2` text, steps included.

    Times are local wall-clock times in `tz` without offset, as sacct prints them; jobs not
    started or not ended at `start + days` are PENDING or RUNNING with `Unknown` times.
    """
    rng = np.random.default_rng(seed + 1)
    t0 = start.replace(tzinfo=ZoneInfo(tz)).timestamp()
    horizon = days * 86400.0
    n = jobs.height
    variant = rng.integers(0, 3, n)
    canceller = rng.integers(1000, 99999, n)
    df = (
        jobs.with_columns(
            pl.Series("_variant", variant),
            pl.Series("_canceller", canceller),
            (pl.col("submit_s") + pl.col("wait_s")).alias("_start"),
        )
        .filter(pl.col("submit_s") < horizon)
        .with_columns((pl.col("_start") + pl.col("run_s")).alias("_end"))
    )
    pending = ~pl.col("never_started") & (pl.col("_start") >= horizon)
    running = ~pl.col("never_started") & ~pending & (pl.col("_end") >= horizon)

    def at(col: pl.Expr) -> pl.Expr:
        stamp = (col + t0).round(0).cast(pl.Int64)
        return (
            pl.from_epoch(stamp, time_unit="s")
            .dt.replace_time_zone("UTC")
            .dt.convert_time_zone(tz)
            .dt.strftime("%Y-%m-%dT%H:%M:%S")
        )

    gpus = pl.col("gpus")
    gtype = pl.col("gpu_type")
    typed = pl.format("gres/gpu:{}={}", gtype, gpus)
    untyped = pl.format("gres/gpu={}", gpus)
    gres = (
        pl.when(gpus == 0)
        .then(pl.lit(""))
        .when(pl.col("_variant") == 0)
        .then(pl.concat_str([pl.lit(","), typed, pl.lit(","), untyped]))
        .when(pl.col("_variant") == 1)
        .then(pl.concat_str([pl.lit(","), untyped]))
        .otherwise(pl.concat_str([pl.lit(","), typed]))
    )
    nodes = pl.max_horizontal((gpus + GPUS_PER_NODE - 1) // GPUS_PER_NODE, pl.lit(1))
    cpus = pl.max_horizontal(gpus * 12, pl.lit(4))
    tres = pl.format("billing={},cpu={},mem={}G,node={}", cpus, cpus, cpus * 8, nodes)
    state = (
        pl.when(pending)
        .then(pl.lit("PENDING"))
        .when(running)
        .then(pl.lit("RUNNING"))
        .when((pl.col("state") == "CANCELLED") & (pl.col("_variant") > 0))
        .then(pl.format("CANCELLED by {}", pl.col("_canceller")))
        .otherwise(pl.col("state"))
    )
    job_id = (
        pl.when(pl.col("task").is_not_null())
        .then(pl.format("{}_{}", pl.col("parent"), pl.col("task")))
        .otherwise(pl.col("seq").cast(pl.String))
    )
    exit_code = (
        pl.when(pl.col("state").is_in(["FAILED", "OUT_OF_MEMORY"]))
        .then(pl.lit("1:0"))
        .when(pl.col("state") == "CANCELLED")
        .then(pl.lit("0:15"))
        .otherwise(pl.lit("0:0"))
    )
    started = ~pl.col("never_started") & ~pending
    elapsed = (
        pl.when(running)
        .then(horizon - pl.col("_start"))
        .when(started)
        .then(pl.col("run_s"))
        .otherwise(0.0)
    )
    alloc = df.select(
        pl.col("seq").alias("_order"),
        pl.lit(0).alias("_step"),
        job_id.alias("JobID"),
        pl.col("name").alias("JobName"),
        pl.col("user").alias("User"),
        pl.col("team").alias("Account"),
        pl.col("partition").alias("Partition"),
        state.alias("State"),
        at(pl.col("submit_s")).alias("Submit"),
        pl.when(started)
        .then(at(pl.col("_start")))
        .when(pl.col("never_started"))
        .then(pl.lit("None"))
        .otherwise(pl.lit("Unknown"))
        .alias("Start"),
        pl.when(started & ~running)
        .then(at(pl.col("_end")))
        .when(pl.col("never_started"))
        .then(at(pl.col("submit_s") + 60.0))
        .otherwise(pl.lit("Unknown"))
        .alias("End"),
        _fmt_duration(elapsed).alias("Elapsed"),
        pl.when(started).then(nodes).otherwise(nodes).cast(pl.String).alias("NNodes"),
        cpus.cast(pl.String).alias("NCPUS"),
        pl.concat_str([tres, gres]).alias("ReqTRES"),
        pl.when(started).then(pl.concat_str([tres, gres])).otherwise(pl.lit("")).alias("AllocTRES"),
        exit_code.alias("ExitCode"),
        started.alias("_started"),
        pl.col("interactive").alias("_interactive"),
        (nodes > 1).alias("_multi"),
    )
    step_frames = []
    steps = alloc.filter(pl.col("_started"))
    step_names = [
        ("batch", ~pl.col("_interactive")),
        ("extern", pl.lit(True)),
        ("interactive", pl.col("_interactive")),
        ("0", pl.col("_multi")),
    ]
    for i, (step, cond) in enumerate(step_names, start=1):
        part = steps.filter(cond).with_columns(
            pl.lit(i).alias("_step"),
            pl.format("{}.{}", pl.col("JobID"), pl.lit(step)).alias("JobID"),
            pl.lit(step).alias("JobName"),
            pl.lit("").alias("User"),
            pl.lit("").alias("Partition"),
            pl.lit("").alias("ReqTRES"),
            pl.when(pl.col("State").str.starts_with("CANCELLED"))
            .then(pl.lit("CANCELLED"))
            .otherwise(pl.col("State"))
            .alias("State"),
        )
        step_frames.append(part)
    rows = pl.concat([alloc, *step_frames]).sort("_order", "_step").select(SACCT_FIELDS)
    arrays = jobs.filter(pl.col("task").is_not_null())
    if arrays.is_empty():
        return _lines(rows, header)
    last_parent = int(jobs.select(pl.col("seq").max()).item() or 0) + 1
    team, user, name = arrays.select("team", "user", "name").row(0)
    pending_array = pl.DataFrame(
        [
            {
                "JobID": f"{last_parent}_[0-9%2]",
                "JobName": name,
                "User": user,
                "Account": team,
                "Partition": "batch",
                "State": "PENDING",
                "Submit": (start + timedelta(days=days) - timedelta(minutes=5)).strftime(
                    "%Y-%m-%dT%H:%M:%S"
                ),
                "Start": "Unknown",
                "End": "Unknown",
                "Elapsed": "00:00:00",
                "NNodes": "1",
                "NCPUS": "12",
                "ReqTRES": "billing=12,cpu=12,mem=96G,node=1,gres/gpu=1",
                "AllocTRES": "",
                "ExitCode": "0:0",
            }
        ]
    )
    return _lines(pl.concat([rows, pending_array.select(SACCT_FIELDS)]), header)


def _lines(table: pl.DataFrame, header: bool) -> str:
    """The rows as `|`-separated text, written by polars (no Python list of lines)."""
    buf = io.BytesIO()
    table.write_csv(
        buf, separator="|", include_header=header, quote_style="never", line_terminator="\n"
    )
    return buf.getvalue().decode()


_DEFAULT_START = {
    "America/New_York": datetime(2024, 9, 2),
    "Europe/Berlin": datetime(2024, 9, 2),
    "America/Chicago": datetime(2024, 9, 2),
}


def generate_sacct(
    estate: str | EstateSpec,
    *,
    days: float = 90.0,
    seed: int = 0,
    scale: float = 1.0,
    start: datetime | None = None,
    header: bool = True,
) -> str:
    """A whole synthetic `sacct --parsable2` export of an estate, as text.

    The default start (Monday 2 September 2024) puts the autumn daylight-saving change of
    every built-in zone inside a 90-day window.
    """
    spec = ESTATES[estate] if isinstance(estate, str) else estate
    begin = start or _DEFAULT_START.get(spec.tz, datetime(2024, 9, 2))
    jobs = generate_jobs(spec, days=days, seed=seed, scale=scale)
    return to_sacct(jobs, tz=spec.tz, start=begin, days=days, seed=seed, header=header)


def write_sacct(
    path: str | Path,
    estate: str | EstateSpec,
    *,
    days: float = 90.0,
    seed: int = 0,
    scale: float = 1.0,
) -> Path:
    """Write `generate_sacct(...)` to `path`, gzip-compressed when it ends in `.gz`."""
    from cluster_decide.base.atomic import write_atomic

    out = Path(path)
    text = generate_sacct(estate, days=days, seed=seed, scale=scale).encode()
    return write_atomic(out, gzip.compress(text, mtime=0) if out.suffix == ".gz" else text)


SAMPLES = {
    "research-lab-90d.sacct.txt.gz": ("research-lab", 90.0, 0.1),
    "inference-platform-90d.sacct.txt.gz": ("inference-platform", 90.0, 0.1),
    "enterprise-mixed-90d.sacct.txt.gz": ("enterprise-mixed", 90.0, 0.1),
    "research-lab-14d.sacct.txt": ("research-lab", 14.0, 0.1),
}
"""The shipped samples in data/samples: file name -> (estate, days, scale), seed 7."""


def write_samples(folder: str | Path, seed: int = 7) -> list[Path]:
    """(Re)write the SAMPLES into `folder`; the same seed always gives the same bytes."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    return [
        write_sacct(out / name, estate, days=days, seed=seed, scale=scale)
        for name, (estate, days, scale) in SAMPLES.items()
    ]
