"""Fixtures shared by several test modules."""

import subprocess
import sys
from pathlib import Path

import pytest

from dprepro.ldp_mechanisms import IndicatorMechanism, register, unregister
from dprepro.mechanisms import laplace_indicators

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "tests" / "data" / "small_config.yaml"


def _toy_wide_laplace(delta, *, alpha, rng):
    """Toy registered mechanism: Laplace with twice the scale, so (α/2)-LDP."""
    return laplace_indicators(delta, alpha=alpha / 2, rng=rng)


@pytest.fixture
def toy():
    """A mechanism registered for one test only (a new mechanism is one function + a name)."""
    mechanism = register(IndicatorMechanism(
        name="toy_wide_laplace", function=_toy_wide_laplace,
        description="toy: Z = δ + Laplace(0, 2/α)", true_epsilon=lambda alpha: alpha / 2))
    yield mechanism
    unregister(mechanism.name)


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> Path:
    """The small configuration run from nothing with ``--cores 2``, once per test session.

    The reference of every test that runs the workflow: test_workflow checks its outputs and
    reruns against it, and the fault (SIGKILL resume) and SLURM tests compare their own runs'
    tables byte for byte with it, instead of each module running the configuration again.
    Tests must not change it (copy it first, as test_single_figure_rebuilds_alone does).
    """
    work = tmp_path_factory.mktemp("small_cores2")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
           "--cores", "2", "--configfile", str(SMALL), "--directory", str(work)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd=ROOT)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n"
                             f"{proc.stderr[-5000:]}")
    return work
