"""Runs of the small test configuration shared by a test session.

The ``--cores 2`` run (conftest.small_run) is the reference of the workflow, fault and
SLURM tests. The ``--cores 1`` run (only test_workflow's determinism test compares it) is
started in the background together with it when that test is selected: one of the two
cores idles through most of a ``--cores 2`` run (few jobs are ready at a time), which the
``--cores 1`` run and the unit tests (conftest runs them first) fill.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "data" / "small_config.yaml"
TIMEOUT = 1500  # s
_STARTED: dict[str, tuple[subprocess.Popen, Path, Path]] = {}


def command(cores: str, work: Path) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
            "--cores", cores, "--configfile", str(SMALL), "--directory", str(work)]


def start(cores: str, work: Path) -> None:
    """Start the run with ``--cores cores`` into ``work`` in the background (once)."""
    if cores in _STARTED:
        return
    log = work.parent / f"{work.name}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(command(cores, work), stdout=out, stderr=subprocess.STDOUT,
                                cwd=ROOT)
    _STARTED[cores] = (proc, work, log)


def wait(cores: str, work: Path | None = None) -> Path:
    """The finished run with ``--cores cores``; started here (into ``work``) if it was not."""
    if cores not in _STARTED:
        start(cores, work)
    proc, work, log = _STARTED[cores]
    try:
        proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(command(cores, work))} failed "
                             f"(rc {proc.returncode}):\n{log.read_text()[-6000:]}")
    return work


def stop_unfinished() -> None:
    """Stop the runs still going (a session ended early, e.g. ``-x``): SIGTERM lets
    Snakemake stop its jobs and release its lock."""
    for proc, _, _ in _STARTED.values():
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
