"""Runs of the small test configuration shared by a test session.

The ``--cores 2`` run (conftest.small_run) is the reference of the workflow, fault and
SLURM tests. The ``--cores 1`` run (conftest.killed_run) is SIGKILLed once its first job
has started, unlocked and resumed with ``--rerun-incomplete``, as a user resumes after a
crash; its tables, compared byte for byte with the ``--cores 2`` run's, then show both
that a killed run resumes to the tables of an uninterrupted one (tests/test_faults.py)
and that the tables do not depend on ``--cores`` (tests/test_workflow.py): one run
instead of two. It draws no figures (the tests compare tables). It is started in the
background together with the ``--cores 2`` run when one of those tests is selected: one
of the two cores idles through most of a ``--cores 2`` run (few jobs are ready at a
time), which the ``--cores 1`` run and the unit tests (conftest runs them first) fill.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SMALL_SOURCE = ROOT / "tests" / "data" / "small_config.yaml"


def _small_config() -> Path:
    """tests/data/small_config.yaml with its `file` cohorts' paths made absolute.

    Every run of the small configuration (local, killed and resumed, SLURM) and every test
    that derives a configuration from it uses this one file, so their tables compare byte
    for byte; a `file` path is relative to the run's --directory, which is elsewhere.
    """
    config = yaml.safe_load(SMALL_SOURCE.read_text())
    for spec in config.get("datasets", {}).values():
        if spec.get("source") == "file":
            spec["path"] = str(ROOT / spec["path"])
    folder = Path(tempfile.mkdtemp(prefix="dprepro-small-config-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "small_config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


SMALL = _small_config()
TIMEOUT = 1500  # s
_STARTED: dict[str, _Run] = {}


#: The rules that draw figures. The ``--cores 1`` run leaves them out: the determinism test
#: compares tables, and the figure jobs were a fifth of that run's CPU (19 of 75 jobs).
#: tests/test_workflow.py checks that these are exactly the rules of the ``--cores 2`` run's
#: figures (by their sidecars), so a new figure rule cannot be missed here.
FIGURE_RULES = ("ldp_figure", "rrr_figure2", "rrr_km_bands", "rrr_utility", "repr_figure",
                "claims_figure", "privacy_audit_figure", "rrr_cox_forest_figure",
                "rrr_cox_bias_coverage_figure")


def command(cores: str, work: Path) -> list[str]:
    figures = ["--omit-from", *FIGURE_RULES] if cores == "1" else []
    return [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
            "--cores", cores, "--configfile", str(SMALL), "--directory", str(work), *figures]


def _tables(work: Path) -> dict[Path, bytes]:
    """Every CSV file under ``work``/results, by its path relative to ``work``."""
    return {p.relative_to(work): p.read_bytes() for p in (work / "results").rglob("*.csv")}


class _Run:
    """One run of the small configuration in the background; for ``--cores 1``, killed
    once its first job has started, then unlocked and resumed (in a thread)."""

    def __init__(self, cores: str, work: Path):
        self.cores, self.work = cores, work
        self.log = work.parent / f"{work.name}.log"
        self.proc: subprocess.Popen | None = None
        self.error: str | None = None
        self.killed: dict | None = None  # the killed run's return code and tables
        self.stopping = False
        self.thread = threading.Thread(target=self._main, name=f"small-run-{cores}",
                                       daemon=True)
        self.thread.start()

    def _popen(self, *extra: str) -> subprocess.Popen:
        with self.log.open("a") as out:
            out.write(f"\n$ {' '.join(command(self.cores, self.work))} {' '.join(extra)}\n")
            out.flush()
            return subprocess.Popen([*command(self.cores, self.work), *extra], stdout=out,
                                    stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)

    def _step(self, *extra: str) -> bool:
        """Run Snakemake with ``extra`` options to its end; False (error noted) on failure."""
        if self.stopping:
            self.error = "stopped"
            return False
        self.proc = self._popen(*extra)
        try:
            self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self.proc.returncode != 0:
            self.error = (f"{' '.join(command(self.cores, self.work))} {' '.join(extra)} "
                          f"failed (rc {self.proc.returncode})")
            return False
        return True

    def _main(self):
        try:
            if self.cores == "1" and not self._kill_once():
                return
            self._step(*(("--rerun-incomplete",) if self.cores == "1" else ()))
        except BaseException as error:  # reported by wait()
            self.error = f"{type(error).__name__}: {error}"

    def _kill_once(self) -> bool:
        """Start the run, SIGKILL its process group once a job has started (Snakemake marks
        its outputs incomplete) and is still running, then release the stale lock."""
        self.proc = self._popen()
        markers = self.work / ".snakemake" / "incomplete"
        deadline = time.monotonic() + KILL_WITHIN
        try:
            while not (markers.exists() and any(markers.iterdir())):
                if self.proc.poll() is not None:
                    self.error = "the --cores 1 run finished before it could be killed"
                    return False
                if self.stopping or time.monotonic() > deadline:
                    self.error = f"no job of the --cores 1 run started within {KILL_WITHIN} s"
                    return False
                time.sleep(0.02)
            os.killpg(self.proc.pid, signal.SIGKILL)
        finally:
            if self.proc.poll() is None and self.error is not None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=60)
        self.killed = {"returncode": self.proc.returncode, "tables": _tables(self.work)}
        # what a user does after a crash: release the stale lock, then resume
        return self._step("--unlock")


#: seconds within which the --cores 1 run's first job must start (the load of a shared
#: machine included)
KILL_WITHIN = 300


def start(cores: str, work: Path) -> None:
    """Start the run with ``--cores cores`` into ``work`` in the background (once)."""
    if cores not in _STARTED:
        _STARTED[cores] = _Run(cores, work)


def started(cores: str) -> bool:
    return cores in _STARTED


def wait(cores: str, work: Path | None = None) -> Path:
    """The finished run with ``--cores cores``; started here (into ``work``) if it was not."""
    if cores not in _STARTED:
        start(cores, work)
    run = _STARTED[cores]
    run.thread.join()
    if run.error is not None:
        raise AssertionError(f"{run.error}:\n{run.log.read_text()[-6000:]}")
    return run.work


def join(cores: str) -> None:
    """Block until the run with ``--cores cores`` has ended (at once if it never started);
    its outcome is :func:`wait`'s to report."""
    run = _STARTED.get(cores)
    if run is not None:
        run.thread.join()


def killed(cores: str = "1") -> dict:
    """The ``--cores 1`` run as it was when killed: ``returncode`` and ``tables`` (every
    CSV under results/, by path); after :func:`wait`."""
    return _STARTED[cores].killed


def stop_unfinished() -> None:
    """Stop the runs still going (a session ended early, e.g. ``-x``): SIGTERM lets
    Snakemake stop its jobs and release its lock."""
    for run in _STARTED.values():
        run.stopping = True
        proc = run.proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        run.thread.join(timeout=120)
