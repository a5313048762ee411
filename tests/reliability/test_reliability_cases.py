"""The reliability suite: every hostile input and fault of ``cases.toml``, run through the CLI.

For each case: the documented exit code, no traceback anywhere, the file, key or line named in
the message, and nothing half-written or lost — every file that existed before is byte-for-byte
unchanged, a refused command creates nothing, and no temporary file is left behind. CLI cases
run in-process (``cli.main(argv)``); only the killed writer needs a subprocess.
"""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from cluster_decide import cli
from cluster_decide.base.tomlread import tomllib
from cluster_decide.inputs.scenario import preset_path, scenario_ranges
from cluster_decide.planning import solve as solving_solve

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SAMPLE = ROOT / "data" / "samples" / "research-lab-14d.sacct.txt"
DATA = tomllib.loads((HERE / "cases.toml").read_text(encoding="utf-8"))
RANGED = {path for path, _ in scenario_ranges()}


@dataclass(frozen=True)
class Case:
    """One hostile input: how to set it up, the command, and what must hold afterwards."""

    id: str
    group: str
    argv: tuple[str, ...]
    exit: int
    names: tuple[str, ...]
    setup: dict[str, Any] = field(default_factory=dict)


def _where(key: str) -> str:
    """``workloads.0.gpus_per_job`` as messages write it: ``workloads[0].gpus_per_job``."""
    out = ""
    for part in key.split("."):
        out += f"[{part}]" if part.isdigit() else (("." if out else "") + part)
    return out


def _ranged(key: str) -> bool:
    parts = ["[]" if p.isdigit() else p for p in key.split(".")]
    generic = ".".join(parts).replace(".[]", "[]")
    if generic.startswith("gpus."):
        generic = "gpus.<type>." + generic.split(".", 2)[2]
    if generic.startswith("platforms."):
        generic = "platforms.<platform>." + generic.split(".", 2)[2]
    if generic.startswith("team."):
        generic = "team.<skill>." + generic.split(".", 2)[2]
    return generic in RANGED


def _label(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _cases() -> Iterator[Case]:
    for entry in DATA["value"]:
        key = entry["key"]
        for value in entry["bad"]:
            names = ["scenario.toml", _where(key)]
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if _ranged(key) and number:
                names.append("expected")
            yield Case(
                f"value:{key}={_label(value)}",
                "value",
                ("solve", "{scenario}", "--out", "{out}"),
                2,
                tuple(names),
                {"base": entry.get("base", "research-lab"), "key": key, "value": value},
            )
    for entry in DATA["file"]:
        yield Case(
            f"file:{entry['id']}",
            "file",
            ("solve", "{scenario}", "--out", "{out}"),
            entry["exit"],
            tuple(entry["names"]),
            {"text": entry.get("text"), "generator": entry.get("generator")},
        )
    for entry in DATA["flag"]:
        yield Case(
            f"flag:{' '.join(entry['argv'])}",
            "flag",
            tuple(entry["argv"]),
            entry.get("exit", 2),
            tuple(entry["names"]),
        )
    for entry in DATA["ingest"]:
        yield Case(
            f"ingest:{entry['id']}",
            "ingest",
            ("ingest", "{tmp}/log.txt", "--out", "{tmp}/old.toml"),
            entry.get("exit", 2),
            tuple(entry["names"]),
            {"text": entry.get("text"), "generator": entry.get("generator")},
        )
    for entry in DATA["fault"]:
        yield Case(
            f"fault:{entry['id']}",
            entry["kind"],
            tuple(entry.get("argv", ())),
            entry["exit"],
            tuple(entry["names"]),
        )


CASES = list(_cases())


def test_the_suite_holds_at_least_150_hostile_cases() -> None:
    assert len(CASES) >= 150
    assert len({c.id for c in CASES}) == len(CASES)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"checks this with {len(CASES)} hostile cases" in readme  # the figure it quotes


# -- building the inputs ------------------------------------------------------------------


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node: Any = data
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    last = parts[-1]
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value


def _scenario_text(base: str, key: str, value: Any) -> str:
    data = tomllib.loads(preset_path(base).read_text(encoding="utf-8"))
    data = copy.deepcopy(data)
    _set(data, key, value)
    return tomli_w.dumps(data)


def _generated(kind: str, path: Path) -> None:
    """Write (or make) the hostile file ``kind`` at ``path``."""
    preset = preset_path("research-lab").read_bytes()
    if kind == "latin1":
        path.write_bytes(preset.replace(b'"Research lab"', b'"Recherche \xe9t\xe9"'))
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * 16)
    elif kind == "deep_array":
        path.write_text("schema_version = 1\nx = " + "[" * 2000 + "]" * 2000 + "\n")
    elif kind == "deep_table":
        path.write_text("schema_version = 1\nx = " + "{a = " * 2000 + "1" + "}" * 2000 + "\n")
    elif kind == "huge_integer":
        path.write_text("schema_version = 1\nx = " + "9" * 5000 + "\n")
    elif kind == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + preset)
    elif kind == "unknown_key":
        path.write_bytes(preset.replace(b"[[workloads]]", b"[[workload]]", 1))
    elif kind == "huge_estate":
        text = _scenario_text("research-lab", "workloads.2.concurrent_users", 10_000)
        data = tomllib.loads(text)
        data["workloads"][2]["gpus_per_user"] = 1024
        path.write_text(tomli_w.dumps(data))
    elif kind == "dear_estate":
        data = tomllib.loads(preset.decode())
        data["procurement"]["gpu_price_scale"] = 100.0
        data["gpus"] = {g: {"usd_per_gpu_hour_on_demand": 9000.0} for g in ("H100", "A100")}
        data["workloads"][0]["gpu_hours_per_month"] = 2_000_000.0
        path.write_text(tomli_w.dumps(data))
    elif kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "missing":
        pass
    elif kind == "misspelt_preset":
        raise AssertionError("handled by the caller")
    elif kind == "sacct_header":
        path.write_text(SAMPLE.read_text().splitlines()[0] + "\n")
    else:
        raise AssertionError(f"unknown generator {kind}")


def _prepare(case: Case, tmp: Path) -> dict[str, str]:
    """Set up ``tmp`` for ``case``; the values the argv placeholders stand for."""
    out = tmp / "out"
    out.mkdir()
    (out / "plan.json").write_text("an old plan that must survive\n")
    (tmp / "old.toml").write_text("# an old scenario that must survive\n")
    (tmp / "README.md").write_text("# not a template\n")
    (tmp / "fake.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    (tmp / "jobs-missing-columns.csv").write_text("workload,submit_h\nx,1\n")
    (tmp / "not-parquet.parquet").write_text("workload,submit_h,gpus,duration_h\n")
    (tmp / "jobs-bad-gpus.csv").write_text(
        "workload,submit_h,gpus,duration_h\nfoundation-pretraining,1,8,2\n"
        "foundation-pretraining,2,many,2\n"
    )
    (tmp / "jobs-negative-duration.csv").write_text(
        "workload,submit_h,gpus,duration_h\nfoundation-pretraining,1,8,-2\n"
    )
    (tmp / "deep.toml").write_text("x = " + "[" * 3000 + "]" * 3000 + "\n")
    (tmp / "deep.json").write_text("[" * 3000 + "]" * 3000)
    sample = tmp / "jobs.sacct.txt"
    shutil.copyfile(SAMPLE, sample)
    scenario = tmp / "scenario.toml"
    setup = case.setup
    if case.group == "value":
        scenario.write_text(_scenario_text(setup["base"], setup["key"], setup["value"]))
    elif case.group == "file" and setup.get("generator") == "misspelt_preset":
        scenario = Path("research-lb")
    elif case.group == "file" and setup.get("generator"):
        _generated(setup["generator"], scenario)
    elif case.group == "file":
        scenario.write_text(setup["text"])
    else:
        shutil.copyfile(preset_path("research-lab"), scenario)
    if case.group == "ingest":
        log = tmp / "log.txt"
        if setup.get("generator"):
            _generated(setup["generator"], log)
        else:
            log.write_text(setup["text"])
    return {"scenario": str(scenario), "tmp": str(tmp), "out": str(out), "sample": str(sample)}


def _fill(argv: tuple[str, ...], values: dict[str, str]) -> list[str]:
    return [a.format(**values) for a in argv]


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (pipes and folders by kind) with a hash of its bytes."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_fifo():
            out[rel] = "fifo"
        elif path.is_dir():
            out[rel] = "folder"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _check(
    case: Case,
    code: int,
    out: str,
    err: str,
    before: dict[str, str],
    after: dict[str, str],
    values: dict[str, str],
) -> None:
    """The four promises: exit code, no traceback, the place named, nothing lost or half-written."""
    assert code == case.exit, f"exit {code}, expected {case.exit}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in out + err
    assert "\x1b" not in out + err, "a control character reached the terminal"
    for name in case.names:
        assert name.format(**values) in err, f"{name!r} not named in: {err}"
    if code != 0:
        assert err.startswith(("error:", "usage: cluster-decide")), err
    stray = [p for p in after if p.endswith(".tmp") or "/." in p or p.startswith(".")]
    assert stray == [], f"temporary files left behind: {stray}"
    for path, digest in before.items():
        if code == 0 and path.startswith("out/"):
            continue  # an answered command may replace its own outputs (whole, as checked above)
        assert after.get(path) == digest, f"{path} was changed or lost"
    if code != 0:
        assert set(after) == set(before), f"a refused command wrote {set(after) - set(before)}"


IN_PROCESS = [c for c in CASES if c.group in ("value", "file", "flag", "ingest", "plain")]


@pytest.mark.parametrize("case", IN_PROCESS, ids=[c.id for c in IN_PROCESS])
def test_hostile_input(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = _prepare(case, tmp_path)
    argv = _fill(case.argv, values)
    before = _snapshot(tmp_path)
    code, out, err = _run(argv, capsys)
    _check(case, code, out, err, before, _snapshot(tmp_path), values)


# -- faults -------------------------------------------------------------------------------

FAULTS = {c.group: c for c in CASES if c.group not in ("value", "file", "flag", "ingest", "plain")}


@contextmanager
def _small_disk(tmp: Path, read_only: bool = False) -> Iterator[Path]:
    """A 64 KiB tmpfs at ``tmp/small`` (skips where mounting is not permitted)."""
    small = tmp / "small"
    small.mkdir()
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("mounting a small tmpfs is not permitted here")
    try:
        yield small
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False, capture_output=True)


def _fill_disk(folder: Path) -> None:
    """Use every free byte of ``folder``'s file system."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


@pytest.mark.parametrize("case", [c for c in CASES if c.group == "full_disk"], ids=lambda c: c.id)
def test_full_disk_names_the_file_and_loses_nothing(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = _prepare(case, tmp_path)
    with _small_disk(tmp_path) as small:
        values["small"] = str(small)
        (small / "old.toml").write_text("# an old scenario that must survive\n")
        (small / "plan").mkdir()
        (small / "plan" / "staffing.csv").write_text("an old staffing table\n")
        _fill_disk(small)
        before = _snapshot(tmp_path)
        code, out, err = _run(_fill(case.argv, values), capsys)
        _check(case, code, out, err, before, _snapshot(tmp_path), values)


def test_read_only_folder_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = FAULTS["read_only"]
    values = _prepare(case, tmp_path)
    with _small_disk(tmp_path) as small:
        values["small"] = str(small)
        subprocess.run(["mount", "-o", "remount,ro", str(small)], check=True)
        before = _snapshot(tmp_path)
        code, out, err = _run(_fill(case.argv, values), capsys)
        _check(case, code, out, err, before, _snapshot(tmp_path), values)


def test_internal_error_is_one_line_and_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = FAULTS["internal_error"]
    values = _prepare(case, tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "details"))
    (tmp_path / "details").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)

    def broken(*args: Any, **kwargs: Any) -> Any:
        return 1 / 0

    # The CLI imports the solver when a command runs (lazy imports): patch it where it lives.
    monkeypatch.setattr(solving_solve, "solve", broken)
    code, out, err = _run(_fill(case.argv, values), capsys)
    assert code == 4
    assert "Traceback" not in out + err
    assert len(err.strip().splitlines()) == 1
    for name in case.names:
        assert name in err
    details = list((tmp_path / "details").glob("cluster-decide-error-*.txt"))
    assert len(details) == 1 and details[0].name in err
    assert "Traceback" in details[0].read_text() and "ZeroDivisionError" in details[0].read_text()


def test_time_limit_exits_3_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = FAULTS["time_limit"]
    values = _prepare(case, tmp_path)
    real = solving_solve.solve

    def slow(*args: Any, **kwargs: Any) -> Any:
        import time

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # Python work, as model building is
            sum(range(10_000))
        return real(*args, **kwargs)

    monkeypatch.setattr(solving_solve, "solve", slow)
    before = _snapshot(tmp_path)
    code, out, err = _run(_fill(case.argv, values), capsys)
    _check(case, code, out, err, before, _snapshot(tmp_path), values)


_KILLED = textwrap.dedent(
    """
    import os, sys, time
    from cluster_decide import cli
    calls = 0
    real = os.fsync
    def slow_fsync(fd):
        global calls
        calls += 1
        real(fd)
        if calls == 3:  # two files staged, the third being written: the process is killed
            print("writing", flush=True)
            time.sleep(60)
    os.fsync = slow_fsync
    sys.exit(cli.main(sys.argv[1:]))
    """
)


@pytest.mark.parametrize("command", ["solve", "save"])
def test_killed_writer_leaves_the_old_files_and_no_temporary(tmp_path: Path, command: str) -> None:
    """A writer killed with SIGKILL mid-write: old outputs intact, no stray temporary file."""
    case = FAULTS["killed_writer"]
    out = tmp_path / "plan"
    out.mkdir()
    (out / "plan.json").write_text("the old plan\n")
    (out / "staffing.csv").write_text("the old staffing\n")
    before = _snapshot(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if command == "solve":
        argv = [sys.executable, "-c", _KILLED, "solve", "research-lab", "--out", str(out)]
    else:
        target = out / "plan.json"
        script = _KILLED.replace(
            "sys.exit(cli.main(sys.argv[1:]))",
            "from cluster_decide.base.atomic import write_atomic\n"
            "for i in range(3): write_atomic(sys.argv[1], 'new' * 100000)",
        )
        argv = [sys.executable, "-c", script, str(target)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == b"writing", proc.stderr.read() if proc.stderr else b""
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == case.exit
    after = _snapshot(tmp_path)
    if command == "solve":
        assert after == before
    else:
        assert set(after) == set(before)  # replaced whole (two earlier writes) or not at all
        assert (out / "plan.json").read_text() in ("the old plan\n", "new" * 100000)


def test_every_fault_kind_has_a_test() -> None:
    tested: dict[str, Callable[..., None]] = {
        "full_disk": test_full_disk_names_the_file_and_loses_nothing,
        "read_only": test_read_only_folder_names_the_file,
        "internal_error": test_internal_error_is_one_line_and_a_file,
        "time_limit": test_time_limit_exits_3_and_writes_nothing,
        "killed_writer": test_killed_writer_leaves_the_old_files_and_no_temporary,
    }
    assert {
        c.group for c in CASES if c.group not in ("value", "file", "flag", "ingest", "plain")
    } <= set(tested)
