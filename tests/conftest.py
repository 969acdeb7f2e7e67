"""Fixtures shared by several test modules."""

from pathlib import Path

import pytest

from dprepro.ldp_mechanisms import IndicatorMechanism, register, unregister
from dprepro.mechanisms import laplace_indicators
from helpers import smallruns

# the test that compares the --cores 1 run with the --cores 2 one (test_workflow.py)
CORES1_TEST = "test_tables_are_byte_identical_across_runs_and_cores"


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
def small_run(request, tmp_path_factory) -> Path:
    """The small configuration run from nothing with ``--cores 2``, once per test session.

    The reference of every test that runs the workflow: test_workflow checks its outputs and
    reruns against it, and the fault (SIGKILL resume) and SLURM tests compare their own runs'
    tables byte for byte with it, instead of each module running the configuration again.
    Tests must not change it (copy it first, as test_single_figure_rebuilds_alone does).
    When test_workflow's determinism test is selected, its ``--cores 1`` run starts at the
    same time, in the background (helpers.smallruns).
    """
    if any(item.name == CORES1_TEST for item in request.session.items):
        smallruns.start("1", tmp_path_factory.mktemp("small_cores1"))
    return smallruns.wait("2", tmp_path_factory.mktemp("small_cores2"))
