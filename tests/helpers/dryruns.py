"""Dry runs of the shipped configurations, background runs (tests/helpers/background.py)
that several modules check: each is planned once per session.

``dry-run:<configfile>``: ``snakemake -n --cores 64 --configfile <configfile>`` (made
absolute) in a folder of its own (64 cores: no job's declared threads are capped by this
machine's), so that the file is laid over the embedded default, as the workflow
tests that run elsewhere do; tests/test_workflow.py counts its jobs and outputs, and
tests/test_paper_scale.py reads the resources of config/paper.yaml's jobs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from . import background, snakerun

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CONFIGS = ["config/config.yaml", "config/full.yaml", "config/paper.yaml"]


def name(configfile: str) -> str:
    """The background run of ``configfile``'s dry run."""
    return f"dry-run:{configfile}"


def _dry_run(folder: Path, configfile: str) -> subprocess.CompletedProcess:
    # more cores than any job declares: its threads show as declared, not capped
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "-n",
           "--cores", "64", "--configfile", str(ROOT / configfile), "--directory", str(folder)]
    proc = snakerun.run(cmd[3:], cwd=ROOT, timeout=1500)
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


for _configfile in SHIPPED_CONFIGS:
    background.register(name(_configfile))(
        lambda folder, configfile=_configfile: _dry_run(folder, configfile))
