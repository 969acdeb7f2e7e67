"""The correct LNTE baseline (Laplace on binned event and censoring counts)."""

import numpy as np
import pytest

from dprepro.km import kaplan_meier
from dprepro.lnte_dp import GridLNTE, step_on_grid


def _data(seed=0, n=120):
    rng = np.random.default_rng(seed)
    t = rng.exponential(10, size=n)
    c = rng.uniform(0, 30, size=n)
    return np.minimum(t, c), (t <= c).astype(int)


def test_without_noise_it_is_kaplan_meier_of_the_binned_times():
    """ε → ∞: S at each bin end equals KM with times moved to their bin's right end."""
    t, e = _data()
    mech = GridLNTE(epsilon=1e12, bins=10)
    horizon = float(t.max())
    edges, survival = mech.release(t, e, horizon=horizon, rng=np.random.default_rng(1))
    binned = edges[np.minimum(np.searchsorted(edges, t, side="left"), 9)]
    km = kaplan_meier(binned, e)
    expected = [km.survival_[km.timeline_ <= x][-1] for x in edges]
    np.testing.assert_allclose(survival[0], expected, rtol=1e-9)


def test_noisy_curves_are_monotone_within_unit_interval_and_stop_when_empty():
    t, e = _data(2, 40)
    _, survival = GridLNTE(epsilon=0.3, bins=15).release(
        t, e, horizon=float(t.max()), rng=np.random.default_rng(3), draws=500)
    finite = np.where(np.isnan(survival), -1.0, survival)
    assert ((survival >= 0) | np.isnan(survival)).all() and (np.nan_to_num(survival) <= 1).all()
    steps = np.diff(np.where(np.isnan(survival), np.nan, survival), axis=1)
    assert (np.nan_to_num(steps, nan=0.0) <= 1e-12).all()
    # once undefined, undefined to the end
    undefined = finite < 0
    assert (np.maximum.accumulate(undefined, axis=1) == undefined).all()


def test_privacy_record_states_epsilon_per_person_and_sensitivity():
    record = GridLNTE(epsilon=2.0, bins=20, rows_per_person=2).privacy_record(
        privacy_unit="patient")
    assert record.mechanism == "lnte_grid" and record.stated == record.true_epsilon == 2.0
    assert "Laplace(1)" in record.note and "sensitivity 2 per patient" in record.note
    assert record.extra == {"calibration": "grid=20,rows=2"}


@pytest.mark.parametrize("bad", [{"epsilon": 0}, {"epsilon": 1, "bins": 1},
                                 {"epsilon": 1, "rows_per_person": 0}])
def test_bad_parameters_raise(bad):
    with pytest.raises(ValueError):
        GridLNTE(**bad)


def test_step_on_grid_reads_steps():
    edges = np.array([1.0, 2.0, 3.0])
    surv = np.array([[0.9, 0.8, 0.7]])
    np.testing.assert_allclose(step_on_grid(edges, surv, [0, 0.5, 1, 2.5, 3, 9]),
                               [[1, 1, 0.9, 0.8, 0.7, 0.7]])
