"""Runs of the small test configuration shared by a test session.

The ``--cores 2`` run (conftest.small_run) is the reference of the workflow, fault and
SLURM tests. The ``--cores 1`` run (only test_workflow's determinism test compares it, by
its tables; it draws no figures) is started in the background together with it when that
test is selected: one of the two cores idles through most of a ``--cores 2`` run (few
jobs are ready at a time), which the ``--cores 1`` run and the unit tests (conftest runs
them first) fill.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
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
_STARTED: dict[str, tuple[subprocess.Popen, Path, Path]] = {}


#: The rules that draw figures. The ``--cores 1`` run leaves them out: the determinism test
#: compares tables, and the figure jobs were a fifth of that run's CPU (19 of 75 jobs).
FIGURE_RULES = ("ldp_figure", "rrr_figure2", "rrr_km_bands", "rrr_utility", "repr_figure",
                "claims_figure", "privacy_audit_figure")


def command(cores: str, work: Path) -> list[str]:
    figures = ["--omit-from", *FIGURE_RULES] if cores == "1" else []
    return [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
            "--cores", cores, "--configfile", str(SMALL), "--directory", str(work), *figures]


def start(cores: str, work: Path) -> None:
    """Start the run with ``--cores cores`` into ``work`` in the background (once)."""
    if cores in _STARTED:
        return
    log = work.parent / f"{work.name}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(command(cores, work), stdout=out, stderr=subprocess.STDOUT,
                                cwd=ROOT)
    _STARTED[cores] = (proc, work, log)


def started(cores: str) -> bool:
    return cores in _STARTED


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
