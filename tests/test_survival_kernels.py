"""Internals of the survival kernels that speed work must not change (dprepro.survival.conditional).

Rows with tied times take a separate sorting path, grid evaluation is a binary
search, and p̂ is built in cache-sized blocks: each must give what the plain
definitions give, row by row, bit for bit where the workflow relies on it.
"""

import numpy as np
import pytest
from lifelines import KaplanMeierFitter

from dprepro.survival import conditional as survival
from dprepro.survival.conditional import (
    beran_cdf,
    conditional_nelson_aalen,
    presmoothed_indicator_sets,
)


def sample(n, seed, ties):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=n)
    t = rng.exponential(1 / (1 + x))
    c = rng.exponential(1.0, size=n)
    y = np.minimum(t, c)
    if ties:
        y = np.round(y, 1) + 0.05  # many events and censorings at the same time
    return y, (t <= c).astype(float), x


def stacked(ties_pattern, n=120):
    parts = [sample(n, seed, ties) for seed, ties in enumerate(ties_pattern)]
    return (np.stack(p) for p in zip(*parts, strict=True))


@pytest.mark.parametrize("estimator", [beran_cdf, conditional_nelson_aalen])
def test_rows_with_and_without_ties_in_one_stack_equal_the_rows_alone(estimator):
    y, d, x = stacked([False, True, False, True])
    grid = np.linspace(0, 3, 41)
    batch = estimator(y, d, x, x=0.5, h=0.3, t=grid)
    for r in range(4):
        alone = estimator(y[r], d[r], x[r], x=0.5, h=0.3, t=grid)
        assert batch[r].tobytes() == alone.tobytes()


def test_tied_rows_of_a_stack_put_events_first_as_kaplan_meier():
    y, d, x = stacked([False, True])
    assert len(np.unique(y[1])) < y.shape[1]  # the second row really has ties
    grid = np.linspace(0, 3, 41)
    got = beran_cdf(y, d, x, x=0.5, h=10.0, t=grid)[1]
    kmf = KaplanMeierFitter().fit(y[1], d[1])
    expected = 1 - kmf.survival_function_at_times(grid).to_numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_the_estimate_is_right_continuous_at_observed_times():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    d = np.array([1.0, 0.0, 1.0, 1.0])
    x = np.full(4, 0.5)
    f = beran_cdf(y, d, x, x=0.5, h=1.0, t=[0.999, 1.0, 2.0, 2.999, 3.0, 4.0, 9.0])
    # KM by hand: S = 3/4 after t = 1; the censoring at 2 keeps it; 3/4 * 1/2 after 3; 0 at 4
    np.testing.assert_allclose(f, [0, 0.25, 0.25, 0.25, 0.625, 1.0, 1.0], atol=1e-15)


def test_unsorted_grids_are_evaluated_pointwise():
    y, d, x = stacked([False, False])
    grid = np.array([2.0, 0.1, 1.0, 0.5])
    got = beran_cdf(y, d, x, x=0.5, h=0.3, t=grid)
    order = np.argsort(grid)
    sorted_result = beran_cdf(y, d, x, x=0.5, h=0.3, t=grid[order])
    np.testing.assert_array_equal(got[:, order], sorted_result)


@pytest.mark.parametrize("cache_budget", [1, 1 << 20, 1 << 40])
def test_presmoothing_blocks_do_not_change_a_bit(monkeypatch, cache_budget):
    y, d, x = stacked([False, True, False, False, True], n=90)
    z = d + np.random.default_rng(9).laplace(scale=3.0, size=d.shape)
    b = np.array([0.33, 0.41, 0.52, 0.37, 0.46])  # off the 0.1 grid of the tied times
    where = np.abs(x - 0.5) <= 0.3
    reference = np.stack(presmoothed_indicator_sets(y, x, [d, z], b=b, where=where))
    monkeypatch.setattr(survival, "_CACHE_BUDGET", cache_budget)
    blocked = np.stack(presmoothed_indicator_sets(y, x, [d, z], b=b, where=where))
    assert blocked.tobytes() == reference.tobytes()
    # and the values are the Nadaraya-Watson definition at every window point
    for r in range(5):
        for i in np.flatnonzero(where[r]):
            near = (np.abs(x[r] - x[r, i]) <= b[r]) & (np.abs(y[r] - y[r, i]) <= b[r])
            assert blocked[1, r, i] == pytest.approx(z[r, near].mean(), rel=1e-12)
    assert np.isnan(blocked[:, ~where]).all()
