"""LNTE as the RRR paper's authors implemented it: deterministic skeleton and noise.

At epsilon = inf (no noise) the estimator is a deterministic function of the data
whose deviations from Kaplan–Meier are the implementation's flaws; these tests pin
them. With noise, the vectorised code must equal a literal port of the authors'
loop, and the noise must be Laplace(1/epsilon).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dprepro.mechanisms.lnte import lnte_median, lnte_survival
from dprepro.survival.kaplan_meier import kaplan_meier

ALPHA = 1e-9
KIDNEY = Path(__file__).resolve().parents[1] / "resources" / "kidney" / "kidney.csv"


def _uncensored(seed=0, n=60):
    rng = np.random.default_rng(seed)
    t = rng.integers(1, 25, size=n).astype(float)  # with ties
    return t, np.ones(n, dtype=int)


def test_zero_noise_uncensored_is_km_without_its_first_factor():
    t, e = _uncensored()
    res = lnte_survival(t, e, epsilon=np.inf, rng=np.random.default_rng(0), draws=3)
    km = kaplan_meier(t, e)
    first_factor = 1 - km.events_[0] / km.at_risk_[0]
    assert first_factor < 1  # the skipped first event matters in this sample
    np.testing.assert_array_equal(res.timeline, km.timeline_)
    for row in res.survival:
        np.testing.assert_allclose(row, km.survival_ / first_factor, rtol=1e-12, atol=1e-15)
    # Without censoring the event-only recursion reproduces the true risk sets.
    np.testing.assert_array_equal(res.at_risk[0], km.at_risk_)


def test_zero_noise_with_censoring_ignores_the_censorings():
    raw = pd.read_csv(KIDNEY)
    t, e = raw.time.to_numpy() / 30, raw.status.to_numpy()
    res = lnte_survival(t, e, epsilon=np.inf, rng=np.random.default_rng(0))
    km = kaplan_meier(t, e)
    r, d = km.at_risk_.astype(float), km.events_.astype(float)
    # By hand: r'_j = r_0 - sum_{i<j} d_i; S'_0 = 1; S'_j = S'_{j-1} (r'_j - d_j) / r'_j.
    expected = np.ones(r.size)
    r_prime = r[0] - np.concatenate([[0.0], np.cumsum(d[:-1])])
    for j in range(1, r.size):
        expected[j] = expected[j - 1] * (r_prime[j] - d[j]) / r_prime[j] if r_prime[j] > 0 else 1
    np.testing.assert_allclose(res.at_risk[0], r_prime, rtol=1e-15)
    np.testing.assert_allclose(res.survival[0], expected, rtol=1e-12)
    # The censorings inflate the risk sets, so LNTE sits above KM — visibly.
    assert (r_prime >= r).all() and (r_prime > r).any()
    assert (res.survival[0] >= km.survival_ - 1e-12).all()
    assert np.max(res.survival[0] - km.survival_) > 0.1


def _authors_loop(r_noisy: np.ndarray, d_noisy: np.ndarray) -> np.ndarray:
    """Literal port of ``lnto_grouped`` (Kekkodf/DP-SurvAnalysis) given its noisy matrix."""
    m = r_noisy.size
    M = np.column_stack([r_noisy, d_noisy]).astype(float)
    S = np.ones(m)
    for j in range(1, m):
        r_prime = M[j - 1, 0] - M[j - 1, 1]
        M[j, 0] = r_prime
        if r_prime > 0:
            S[j] = S[j - 1] * (r_prime - M[j, 1]) / r_prime
    return S


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_vectorised_recursion_equals_the_authors_loop(eps):
    raw = pd.read_csv(KIDNEY)
    part = raw[raw.disease == "PKD"]  # small group: noise drives r' <= 0 (resets)
    res = lnte_survival(
        part.time / 30, part.status, epsilon=eps, rng=np.random.default_rng(4), draws=300
    )
    resets = 0
    for r in range(res.survival.shape[0]):
        want = _authors_loop(res.noisy_at_risk[r], res.noisy_events[r])
        np.testing.assert_allclose(res.survival[r], want, rtol=1e-12, atol=1e-12)
        resets += int((res.at_risk[r, 1:] <= 0).any())
    if eps == 0.2:
        assert resets > 10  # the reset-to-1 branch was exercised
        assert (res.survival < 0).any() or (res.survival > 1).any()  # S' leaves [0, 1]


def test_noise_is_laplace_one_over_epsilon():
    t, e = _uncensored(n=30)
    eps = 0.7
    res = lnte_survival(t, e, epsilon=eps, rng=np.random.default_rng(8), draws=20_000)
    noise_r0 = res.noisy_at_risk[:, 0] - res.true_at_risk[0]
    noise_d = (res.noisy_events - res.true_events)[:, 3]
    for sample in (noise_r0, noise_d):
        assert stats.kstest(sample, stats.laplace(scale=1 / eps).cdf).pvalue > ALPHA
        # Power: a Laplace with half or double the scale is rejected.
        assert stats.kstest(sample, stats.laplace(scale=0.5 / eps).cdf).pvalue < ALPHA
        assert stats.kstest(sample, stats.laplace(scale=2 / eps).cdf).pvalue < ALPHA
    # Rows and the two count types use independent noise.
    assert abs(np.corrcoef(noise_r0, noise_d)[0, 1]) < 0.05


def test_median_first_crossing_and_not_reached():
    t, e = _uncensored()
    res = lnte_survival(t, e, epsilon=np.inf, rng=np.random.default_rng(0))
    med = lnte_median(res)
    first = res.timeline[np.argmax(res.survival[0] <= 0.5)]
    assert med["median"].iloc[0] == first
    assert med.ci_lower.iloc[0] <= first <= med.ci_upper.iloc[0]
    # Censorings ignored + first event skipped: KM reaches 0 here, LNTE stays at 7/9.
    t = np.arange(1.0, 11.0)
    e = np.array([1, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    res = lnte_survival(t, e, epsilon=np.inf, rng=np.random.default_rng(0))
    assert res.survival[0, -1] == pytest.approx(7 / 9, rel=1e-14)
    assert kaplan_meier(t, e).median_ == 9.0
    assert np.isinf(lnte_median(res)["median"].iloc[0])


def test_grid_evaluation_and_determinism():
    t, e = _uncensored()
    a = lnte_survival(t, e, epsilon=1.0, rng=np.random.default_rng(5), draws=4)
    b = lnte_survival(t, e, epsilon=1.0, rng=np.random.default_rng(5), draws=4)
    np.testing.assert_array_equal(a.survival, b.survival)
    grid = np.array([0.0, a.timeline[0], a.timeline[-1] + 1])
    on = a.on_grid(grid)
    assert on.shape == (4, 3)
    np.testing.assert_array_equal(on[:, 0], 1.0)
    np.testing.assert_array_equal(on[:, 1], a.survival[:, 0])
    np.testing.assert_array_equal(on[:, 2], a.survival[:, -1])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"epsilon": float("nan")}, ValueError, "epsilon"),
        ({"epsilon": None}, TypeError, "epsilon"),
        ({"rng": 1}, TypeError, "rng"),
        ({"draws": 0}, ValueError, "draws"),
        ({"draws": None}, TypeError, "draws"),
    ],
)
def test_lnte_validation(kwargs, error, match):
    args = {"epsilon": 1.0, "rng": np.random.default_rng(0), "draws": 2}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        lnte_survival([1.0, 2.0], [1, 0], **args)


def test_published_band_on_a_hand_computed_example():
    """Without noise: t = 1..4, events 1, 1, 0, 1 (the censoring at 3 is ignored by LNTE).

    r' = 4, 3, 2, 2; S' = 1, 2/3, 2/3, 1/3; V' = 0, 1/6, 1/6 (d = 0 adds nothing), 2/3;
    band S' -/+ 1.959964 sqrt(V'). Median: first S' <= 0.5 at t = 4; lower band first
    <= 0.5 at t = 2 (2/3 - 1.96 * 0.408 < 0); upper band never (inf, not NaN).
    """
    from dprepro.mechanisms.lnte import lnte_band

    res = lnte_survival([1.0, 2, 3, 4], [1, 1, 0, 1], epsilon=np.inf,
                        rng=np.random.default_rng(0))
    np.testing.assert_allclose(res.at_risk[0], [4, 3, 2, 2])
    np.testing.assert_allclose(res.survival[0], [1, 2 / 3, 2 / 3, 1 / 3], rtol=1e-14)
    np.testing.assert_allclose(res.greenwood[0], [0, 1 / 6, 1 / 6, 2 / 3], rtol=1e-14)
    lower, upper = lnte_band(res)
    z = 1.959963984540054
    np.testing.assert_allclose(lower[0], [1, 2 / 3 - z * np.sqrt(1 / 6), 2 / 3 - z * np.sqrt(1 / 6),
                                          1 / 3 - z * np.sqrt(2 / 3)], rtol=1e-12)
    np.testing.assert_allclose(upper[0] - res.survival[0], res.survival[0] - lower[0])
    med = lnte_median(res).iloc[0]
    assert (med["median"], med["ci_lower"], med["ci_upper"]) == (4.0, 2.0, np.inf)


def _published_loop(r, d, noise_r, noise_d):
    """The published recursion written as a plain loop over times (one draw)."""
    k = len(r)
    rn, dn = r + noise_r, d + noise_d
    s, v = np.ones(k), np.zeros(k)
    at_risk = rn[0]
    for j in range(1, k):
        at_risk = at_risk - dn[j - 1]
        if at_risk > 0:
            s[j] = s[j - 1] * (at_risk - dn[j]) / at_risk
            v[j] = v[j - 1] + (dn[j] / (at_risk * (at_risk - dn[j])) if dn[j] > 0 else 0.0)
    return s, v


def test_vectorised_lnte_equals_the_published_loop_with_resets():
    """Small ε makes r' <= 0 happen: S' restarts at 1 and V' at 0 there, as published."""
    rng = np.random.default_rng(21)
    t = np.round(rng.exponential(10, size=25), 1)
    e = rng.integers(0, 2, size=25)
    eps = 0.3
    res = lnte_survival(t, e, epsilon=eps, rng=np.random.default_rng(5), draws=200)
    noise = np.random.default_rng(5).laplace(0.0, 1 / eps, size=(2, 200, res.timeline.size))
    resets = 0
    for i in range(200):
        s, v = _published_loop(res.true_at_risk, res.true_events, noise[0, i], noise[1, i])
        np.testing.assert_allclose(res.survival[i], s, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(res.greenwood[i], v, rtol=1e-9, atol=1e-12)
        resets += int((res.at_risk[i, 1:] <= 0).any())
    assert resets > 20  # the reset branch was exercised


def test_a_negative_noisy_interval_sum_gives_an_undefined_band_without_a_warning():
    """At small ε the noisy Greenwood-type sum goes negative: the published band is NaN
    there (as in the authors' code), silently: an expected case, not log noise."""
    import warnings

    from dprepro.mechanisms.lnte import lnte_band

    rng = np.random.default_rng(4)
    times = rng.exponential(10.0, 60)
    result = lnte_survival(times, np.ones(60, dtype=int), epsilon=0.1, rng=rng, draws=50)
    assert (result.greenwood < 0).any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lower, upper = lnte_band(result)
        medians = lnte_median(result)
    assert np.isnan(lower[result.greenwood < 0]).all()
    assert np.isfinite(lower[result.greenwood >= 0]).all()
    assert len(medians) == 50
