"""Debiased RRR: unbiased group curves from RRR-released labels (statistical tests)."""

import numpy as np
import pytest
from scipy import stats

from dprepro.cohorts import IPSSR_GROUPS, synthetic_ipssr_cohort
from dprepro.debiased_rrr import DebiasedRRR, bootstrap_medians, debiased_curves
from dprepro.km import km_batch
from dprepro.randomized_response import RevisedRandomizedResponse

LEVEL = 1e-9
LABELS = list(IPSSR_GROUPS)
GRID = np.array([3.0, 6.0, 12.0, 24.0])   # months where every group keeps many at risk
DRAWS = 300


@pytest.fixture(scope="module")
def setting():
    cohort = synthetic_ipssr_cohort(np.random.default_rng(1))
    mech = RevisedRandomizedResponse(epsilon=1.0, categories=LABELS)
    released = mech.privatize(cohort["group"].to_numpy(object), rng=np.random.default_rng(2),
                              draws=DRAWS)
    t, e = cohort["time"].to_numpy(), cohort["event"].to_numpy()
    original = km_batch(t, e, cohort["group"].to_numpy(object)[None, :], labels=LABELS)
    debiased = debiased_curves(t, e, mech.encode(released), p=mech.p, k=mech.k)
    plain = km_batch(t, e, released, labels=LABELS)
    return cohort, mech, original, debiased, plain


def test_debiased_curves_are_unbiased_over_draws(setting):
    """Mean over 300 RRR draws at ε = 1 equals the original KM within z·se (z at 1e-9);
    the plain RRR curves fail the same test (power)."""
    _, _, original, debiased, plain = setting
    target = original.on_grid(GRID)[0]                 # (groups, times)
    z = stats.norm.isf(LEVEL / 2 / target.size)        # Bonferroni over all checks
    deb = debiased.on_grid(GRID)
    assert np.isfinite(deb).all()
    se = deb.std(axis=0, ddof=1) / np.sqrt(DRAWS)
    assert (np.abs(deb.mean(axis=0) - target) < z * se).all()
    raw = plain.on_grid(GRID)
    se_raw = raw.std(axis=0, ddof=1) / np.sqrt(DRAWS)
    assert (np.abs(raw.mean(axis=0) - target) > z * se_raw).any()


def test_debiased_is_closer_to_the_original_than_plain_rrr(setting):
    """Mean sup-distance over draws and groups at ε = 1: debiased < plain RRR."""
    cohort, _, original, debiased, plain = setting
    grid = np.linspace(0, 36, 73)
    target = original.on_grid(grid)[0]
    sup_deb = np.nanmax(np.abs(debiased.on_grid(grid) - target), axis=-1).mean()
    sup_raw = np.nanmax(np.abs(plain.on_grid(grid) - target), axis=-1).mean()
    assert sup_deb < sup_raw


def test_without_noise_the_debiased_curve_is_the_km_curve():
    """p = 1 (no mixing): counts are the true counts and the curve is Kaplan–Meier."""
    cohort = synthetic_ipssr_cohort(np.random.default_rng(3), sizes={"a": 50, "b": 60},
                                    medians={"a": 10.0, "b": 20.0})
    t, e = cohort["time"].to_numpy(), cohort["event"].to_numpy()
    codes = (cohort["group"] == "b").to_numpy(int)[None, :]
    # transition_matrix needs p < 1; p close to 1 leaves M = I to ~1e-12
    curves = debiased_curves(t, e, codes, p=1 - 1e-12, k=2)
    km = km_batch(t, e, cohort["group"].to_numpy(object)[None, :], labels=["a", "b"])
    grid = np.linspace(0, 30, 31)
    np.testing.assert_allclose(np.nan_to_num(curves.on_grid(grid), nan=-1),
                               np.nan_to_num(km.on_grid(grid), nan=-1), atol=1e-8)


def test_bootstrap_medians_cover_and_record_states_rrr_privacy(setting):
    cohort, mech, _, _, _ = setting
    released = mech.encode(mech.privatize(cohort["group"].to_numpy(object),
                                          rng=np.random.default_rng(9)))
    boot = bootstrap_medians(cohort["time"], cohort["event"], released, np.arange(len(cohort)),
                             p=mech.p, k=mech.k, rng=np.random.default_rng(10), resamples=50)
    assert boot.shape == (50, len(LABELS))
    record = DebiasedRRR(mech).privacy_record(privacy_unit="patient")
    assert record.mechanism == "rrr_debiased"
    assert record.true_epsilon == pytest.approx(1 + np.log(len(LABELS) - 1))
    assert record.stated == 1.0 and "post-processing" in record.note
