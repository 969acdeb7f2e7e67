"""Fixtures shared by several test modules."""

import pytest

from dprepro.ldp_mechanisms import IndicatorMechanism, register, unregister
from dprepro.mechanisms import laplace_indicators


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
