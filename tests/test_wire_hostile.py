"""Hostile implementations under test: each one costs at most its timeout plus a second, leaves no
process behind (checked in the process table), and never a traceback or a report-less exit.

The modes live in tests/impl/hostile/iut.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import psutil
import pytest
from turnbound.properties.cli.main import main
from turnbound.properties.conformance.cases import bundled_cases, run_case
from turnbound.properties.conformance.machine import run_machine
from turnbound.properties.conformance.process import MARKER
from turnbound.properties.conformance.wire import WireScheduler
from turnbound.properties.scheduler import BREAKER, MAX_STUCK, ThreadedScheduler
from turnbound.reference.host import Host
from turnbound.reference.table import Table

IMPL = Path(__file__).resolve().parent / "impl"
HOSTILE = [sys.executable, str(IMPL / "hostile" / "iut.py")]
ROOT = Path(__file__).resolve().parent.parent


def _marked(owner: int) -> set[int]:
    """Live processes started as an implementation under test by process `owner` (or below them)."""
    found = set()
    for p in psutil.process_iter():
        try:
            if p.status() == psutil.STATUS_ZOMBIE:
                continue
            if p.environ().get(MARKER, "").startswith(f"{owner}-"):
                found.add(p.pid)
        except (psutil.Error, OSError):
            continue
    return found


@pytest.fixture
def nothing_left() -> Iterator[None]:
    """The test leaves no implementation process of ours running."""
    before = _marked(os.getpid())
    yield
    deadline = time.monotonic() + 2
    while (left := _marked(os.getpid()) - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"left running: {[psutil.Process(p).cmdline() for p in left]}"


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("hang", "no message within 0.5s (the implementation hangs)"),
        ("exit-at-once", "the implementation "),
        ("garbage", "invalid JSON (Expecting value): this is not json"),
        ("deep-json", "invalid JSON (nested too deeply): [[[["),
        ("huge-int", "protocol error: an integer of 5000 digits, outside the 64-bit range"),
        ("flood-line", "flood: a line longer than 1048576 bytes"),
    ],
)
@pytest.mark.usefixtures("nothing_left")
def test_each_hostile_implementation_fails_its_case_in_time(deeptutor: Table, mode: str, reason: str) -> None:
    wire = WireScheduler([*HOSTILE, mode], deeptutor, timeout=0.5)
    began = time.monotonic()
    result = run_case(wire, bundled_cases(deeptutor)[0])
    wire.close()
    assert time.monotonic() - began < 0.5 + 5  # no hang: the timeout, plus room for a loaded machine
    assert result.observed.fault is not None and result.observed.fault.startswith(reason)
    assert result.divergence is not None and "\n" not in result.divergence


@pytest.mark.usefixtures("nothing_left")
def test_a_100_megabyte_line_is_refused_after_the_bound_not_read_to_the_end(
    deeptutor: Table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted in what the implementation managed to write, not in time: once turnbound stops
    reading at the 1 MiB bound, the writer blocks on the full pipe until it is killed."""
    progress = tmp_path / "megabytes-written"
    monkeypatch.setenv("HOSTILE_PROGRESS", str(progress))
    wire = WireScheduler([*HOSTILE, "flood-line", "100"], deeptutor, timeout=5)
    result = run_case(wire, bundled_cases(deeptutor)[0])
    wire.close()
    assert result.observed.fault == "flood: a line longer than 1048576 bytes"
    written = int(progress.read_text())
    assert 1 <= written <= 3  # of 100: the bound, plus what the pipe holds


@pytest.mark.parametrize("mode", ["setsid-grandchild", "daemon"])
@pytest.mark.usefixtures("nothing_left")
def test_a_grandchild_that_left_the_process_group_is_found_and_ended(deeptutor: Table, mode: str) -> None:
    wire = WireScheduler([*HOSTILE, mode], deeptutor, timeout=0.5)
    began = time.monotonic()
    result = run_case(wire, bundled_cases(deeptutor)[0])
    assert time.monotonic() - began < 0.5 + 5  # no hang: the timeout, plus room for a loaded machine
    fault = result.observed.fault
    assert fault is not None and "stderr: grandchild " in fault
    grandchild = int(fault.rsplit("grandchild ", 1)[1])
    assert _gone(grandchild)


@pytest.mark.usefixtures("nothing_left")
def test_a_setsid_grandchild_holding_the_pipes_costs_no_extra_time(deeptutor: Table) -> None:
    """Its inherited stdout and stderr stay open until it is killed: nothing may wait on them."""
    wire = WireScheduler([*HOSTILE, "setsid-grandchild"], deeptutor, timeout=0.3)
    began = time.monotonic()
    results = [run_case(wire, c) for c in bundled_cases(deeptutor)[:4]]
    wire.close()
    assert all(r.observed.fault for r in results)
    assert time.monotonic() - began < 4 * (0.3 + 0.5)


def _conform_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(["conform", "deeptutor-scheduler", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("mode", "kind"), [("hang", "hangs"), ("exit-at-once", "exits"), ("garbage", "breaks")]
)
@pytest.mark.usefixtures("nothing_left")
def test_the_circuit_breaker_stops_a_run_that_cannot_pass(
    capsys: pytest.CaptureFixture[str], mode: str, kind: str
) -> None:
    began = time.monotonic()
    code, report = _conform_json(capsys, "--timeout", "0.3", "--", *HOSTILE, mode)
    assert time.monotonic() - began < BREAKER * (0.3 + 1)
    assert (code, report["failed"], report["passed"]) == (1, BREAKER, 0)
    assert report["not_run"] == report["cases"] - BREAKER > 200
    assert report["stopped"].startswith(f"{BREAKER} cases in a row: the implementation {kind}")
    assert report["restarts"] == BREAKER - 1
    assert sum(1 for r in report["results"] if r.get("not_run")) == report["not_run"]


@pytest.mark.usefixtures("nothing_left")
def test_keep_going_runs_every_case(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["--vectors", str(tmp_path), "--fuzzer", "scripts", "--fuzz", "6", "--keep-going"]
    code, report = _conform_json(capsys, *args, "--", *HOSTILE, "exit-at-once")
    assert (code, report["failed"], report["not_run"], report["stopped"]) == (1, 6, 0, None)
    assert sum(1 for r in report["results"] if r.get("same_divergence_as")) == 5  # one is shrunk
    assert report["restarts"] >= 5


def test_a_command_that_does_not_exist_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "deeptutor-scheduler", "--", "/nonexistent/iut"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "turnbound: error: cannot start '/nonexistent/iut': No such file or directory\n"


def test_no_progress_display_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    node = ["node", str(IMPL / "node" / "deeptutor-scheduler.js")]
    assert main(["conform", "deeptutor-scheduler", "--", *node]) == 0
    assert capsys.readouterr().err == ""


def test_a_progress_bar_on_a_terminal() -> None:
    import pty

    master, slave = pty.openpty()
    node = ["node", str(IMPL / "node" / "deeptutor-scheduler.js")]
    command = [sys.executable, "-m", "turnbound.properties", "conform", "deeptutor-scheduler", "--", *node]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=slave, cwd=ROOT)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed: turnbound exited
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert out.decode().splitlines()[-1].endswith("passed, 0 failed")
    assert b"conform" in seen and b"/354" in seen  # 11 cases and 343 vectors


DRIVER = """
import sys
from turnbound.properties.conformance.cases import bundled_cases, run_case
from turnbound.properties.conformance.wire import WireScheduler
from turnbound.reference.profiles import load_profile
table = load_profile("deeptutor-scheduler")
run_case(WireScheduler(sys.argv[1:], table, timeout=30), bundled_cases(table)[0])
"""


@pytest.mark.parametrize(
    ("signum", "cli"), [(signal.SIGTERM, True), (signal.SIGHUP, False), (signal.SIGINT, False)]
)
def test_a_signal_to_turnbound_ends_the_implementation_too(signum: int, cli: bool) -> None:
    """SIGTERM to the command (as `timeout` sends it); SIGHUP and SIGINT to a lighter driver."""
    if cli:
        command = [sys.executable, "-m", "turnbound.properties", "conform", "deeptutor-scheduler"]
        command += ["--timeout", "30", "--", *HOSTILE, "hang"]
    else:
        command = [sys.executable, "-c", DRIVER, *HOSTILE, "hang"]
    # The signal's disposition as a terminal gives it: a shell starting the tests in the
    # background hands its children SIGINT ignored, which turnbound rightly keeps.
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        preexec_fn=lambda: signal.signal(signum, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 30
        while not _marked(proc.pid):
            assert time.monotonic() < deadline and proc.poll() is None, "the implementation never started"
            time.sleep(0.05)
        implementation = _marked(proc.pid)
        proc.send_signal(signum)
        code = proc.wait(timeout=15)  # seconds only on a loaded machine: the wait is the no-hang check
        assert code == -signum  # the signal's own effect, after the implementation was killed
        if cli:
            assert proc.stderr is not None and b"Traceback" not in proc.stderr.read()
        deadline = time.monotonic() + 5
        while _marked(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _marked(proc.pid)
        assert all(_gone(p) for p in implementation)
    finally:
        proc.kill()
        proc.wait()


def _hang(params: Mapping[str, int], host: Host) -> tuple[str, dict[str, int]]:
    threading.Event().wait(3600)
    return "finish", {}


def test_a_hanging_in_process_scheduler_leaks_a_bounded_number_of_threads(deeptutor: Table) -> None:
    before = threading.active_count()
    scheduler = ThreadedScheduler(_hang, timeout=0.1)
    began = time.monotonic()
    result = run_machine(deeptutor, scheduler, examples=20, seed=0)
    scheduler.close()
    assert not result.passed
    assert threading.active_count() - before <= MAX_STUCK
    assert time.monotonic() - began < 20


@pytest.mark.usefixtures("nothing_left")
def test_a_hanging_implementation_costs_the_hypothesis_machine_a_bounded_time(deeptutor: Table) -> None:
    wire = WireScheduler([*HOSTILE, "hang"], deeptutor, timeout=0.3)
    began = time.monotonic()
    result = run_machine(deeptutor, wire, examples=50, seed=0)
    wire.close()
    assert not result.passed and result.message is not None
    assert time.monotonic() - began < BREAKER * (0.3 + 1) + 5


class _Raising:
    """An in-process implementation whose own code raises."""

    def start(self, params: Mapping[str, int]) -> None:
        raise RuntimeError("not implemented yet")

    def send(self, outcome: object) -> None:
        raise AssertionError("never reached")

    def close(self) -> None:
        pass


def test_an_in_process_implementation_that_raises_is_named_for_what_it_is(deeptutor: Table) -> None:
    result = run_case(_Raising(), bundled_cases(deeptutor)[0])  # type: ignore[arg-type]
    assert result.observed.fault == "the implementation raised RuntimeError: not implemented yet"
    assert result.observed.fault_kind == "raised"


def test_a_forked_worker_forgets_the_implementations_and_the_signal_handlers() -> None:
    """The explorer's and mutation's pool workers are forks: turnbound's handler, which kills the
    parent's implementations, must not be theirs (a worker that survived SIGTERM hung
    `Pool.terminate` in a test run), and neither may the parent's implementations be."""
    from turnbound.properties.conformance import process

    process._prepare()
    handled = {s for s in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) is process._on_signal}
    assert handled  # unless the shell running the tests ignores both
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running anything of the parent's
        kept = [s for s in handled if signal.getsignal(s) is process._on_signal]
        os.write(write, b"clean" if not kept and not process._live and not process._ready else b"kept")
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 16) == b"clean"
    os.close(read)
    assert all(signal.getsignal(s) is process._on_signal for s in handled)  # the parent keeps its own
