"""Beran-type estimators against lifelines and against direct transcriptions of the formulas."""

import numpy as np
import pytest
from lifelines import KaplanMeierFitter, NelsonAalenFitter

from dprepro.mechanisms.indicator_draws import laplace_indicators
from dprepro.survival.conditional import (
    beran_cdf,
    conditional_nelson_aalen,
    generalized_beran_cdf,
    presmoothed_indicator_sets,
    presmoothed_indicators,
    private_beran_cdf,
)


def sample(n=200, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=n)
    t = rng.exponential(1 / (1 + x + x**2))
    c = rng.exponential(1 / (0.5 + 0.5 * x))
    y = np.minimum(t, c)
    if ties:
        y = np.round(y, 1) + 0.05  # heavy ties, all > 0
    return y, (t <= c).astype(int), x


def beran_by_definition(y, e, x, *, x0, h, t):
    """Textbook formula with explicit weights, one observation at a time."""
    order = np.lexsort((-e, y))
    y, e, x = y[order], e[order], x[order]
    k = 0.5 * (np.abs((x0 - x) / h) <= 1)
    w = k / k.sum()
    out = []
    for tt in t:
        prod = 1.0
        for i in range(len(y)):
            if y[i] > tt:
                break
            remaining = w[i:].sum()  # = 1 - sum_{j<i} W_(j), without round-off
            if w[i] > 0:
                base = 1 - w[i] / remaining
                prod *= 1.0 if e[i] == 0 else base ** e[i]
        out.append(1 - prod)
    return np.array(out)


@pytest.mark.parametrize("ties", [False, True])
def test_beran_with_full_window_is_kaplan_meier(ties):
    y, d, x = sample(ties=ties)
    grid = np.linspace(0, y.max() * 1.1, 57)
    kmf = KaplanMeierFitter().fit(y, d)
    expected = 1 - kmf.survival_function_at_times(grid).to_numpy()
    got = beran_cdf(y, d, x, x=0.5, h=10.0, t=grid)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_beran_matches_definition_with_partial_window():
    y, d, x = sample(n=150, seed=3)
    grid = np.linspace(0.01, 3, 40)
    for x0, h in [(0.5, 0.2), (0.1, 0.15), (0.9, 0.3)]:
        np.testing.assert_allclose(beran_cdf(y, d, x, x=x0, h=h, t=grid),
                                   beran_by_definition(y, d, x, x0=x0, h=h, t=grid), atol=1e-12)


def test_beran_stays_a_distribution_function_after_last_window_observation():
    y, d, x = sample(n=300, seed=5)
    d[:] = 1
    grid = np.linspace(0, y.max() + 1, 200)
    f = beran_cdf(y, d, x, x=0.5, h=0.1, t=grid)
    assert np.all((f >= 0) & (f <= 1))
    assert np.all(np.diff(f) >= -1e-15)
    assert f[-1] == 1.0  # the last in-window observation is an event


def test_generalized_beran_with_phat_equal_delta_is_beran():
    y, d, x = sample(n=120, seed=7)
    grid = np.linspace(0.01, 2, 30)
    # a presmoothing window smaller than any gap between points gives p̂_i = δ_i
    gaps = min(np.diff(np.sort(y)).min(), np.diff(np.sort(x)).min())
    phat = presmoothed_indicators(y, d, x, b=gaps / 4)
    np.testing.assert_array_equal(phat, d)
    np.testing.assert_allclose(
        generalized_beran_cdf(y, d, x, x=0.5, h=0.3, t=grid, b=gaps / 4),
        beran_cdf(y, d, x, x=0.5, h=0.3, t=grid), atol=0)


def test_presmoothing_matches_nadaraya_watson_definition():
    y, d, x = sample(n=80, seed=11)
    z = d + np.random.default_rng(1).laplace(0, 2, size=d.shape)
    b = 0.35
    expected = []
    for i in range(len(y)):
        k = (np.abs(x[i] - x) <= b) & (np.abs(y[i] - y) <= b)
        expected.append(z[k].sum() / k.sum())
    np.testing.assert_allclose(presmoothed_indicators(y, z, x, b=b), expected, rtol=1e-13)


def test_presmoothing_restricted_to_window_agrees_with_full():
    y, d, x = np.stack([sample(n=90, seed=s)[0] for s in range(4)]), None, None
    d = np.stack([sample(n=90, seed=s)[1] for s in range(4)])
    x = np.stack([sample(n=90, seed=s)[2] for s in range(4)])
    where = np.abs(x - 0.5) <= np.array([0.1, 0.2, 0.3, 0.05])[:, None]
    full = presmoothed_indicators(y, d, x, b=0.4)
    (part,) = presmoothed_indicator_sets(y, x, [d], b=0.4, where=where)
    np.testing.assert_array_equal(part[where], full[where])
    assert np.all(np.isnan(part[~where]))


def test_private_estimator_at_zero_noise_is_generalized_beran():
    y, d, x = sample(n=200, seed=13)
    grid = np.linspace(0.01, 2, 25)
    np.testing.assert_array_equal(
        private_beran_cdf(y, d.astype(float), x, x=0.5, h=0.25, t=grid),
        generalized_beran_cdf(y, d, x, x=0.5, h=0.25, t=grid))


def test_private_estimator_clipping_keeps_a_distribution_function():
    y, d, x = sample(n=300, seed=17)
    z = laplace_indicators(d, alpha=0.2, rng=np.random.default_rng(2))
    grid = np.linspace(0.01, 3, 60)
    f = private_beran_cdf(y, z, x, x=0.5, h=0.3, t=grid)
    assert np.all((f >= 0) & (f <= 1)) and np.all(np.diff(f) >= -1e-15)
    raw = private_beran_cdf(y, z, x, x=0.5, h=0.3, t=grid, clip=False)
    assert not np.allclose(raw, f)  # the noise really pushes p̂ outside [0, 1]


def test_replicates_are_vectorised_rows():
    samples = [sample(n=100, seed=s) for s in range(5)]
    y, d, x = (np.stack(parts) for parts in zip(*samples, strict=True))
    h = np.array([0.2, 0.25, 0.3, 0.35, 0.4])
    grid = np.linspace(0.01, 2, 20)
    batch = generalized_beran_cdf(y, d, x, x=0.5, h=h, t=grid)
    for r in range(5):
        np.testing.assert_allclose(
            batch[r], generalized_beran_cdf(y[r], d[r], x[r], x=0.5, h=h[r], t=grid), atol=0)


def test_nelson_aalen_with_full_window_is_lifelines():
    y, d, x = sample(n=150, seed=19, ties=True)
    grid = np.linspace(0, y.max(), 33)
    naf = NelsonAalenFitter().fit(y, d)
    expected = naf.cumulative_hazard_at_times(grid).to_numpy()
    got = conditional_nelson_aalen(y, d, x, x=0.5, h=5.0, t=grid)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_nelson_aalen_is_linear_in_the_indicators():
    y, d, x = sample(n=100, seed=23)
    z = laplace_indicators(d, alpha=0.5, rng=np.random.default_rng(3))
    grid = np.linspace(0.01, 2, 10)
    a = conditional_nelson_aalen(y, z, x, x=0.5, h=0.3, t=grid)
    b = conditional_nelson_aalen(y, d, x, x=0.5, h=0.3, t=grid)
    c = conditional_nelson_aalen(y, z - d, x, x=0.5, h=0.3, t=grid)
    np.testing.assert_allclose(a, b + c, atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"times": [1.0, np.nan]}, "times contains non-finite"),
        ({"indicators": [1, 0, 1]}, "same shape"),
        ({"h": 0.0}, "h must be finite and > 0"),
        ({"h": -1.0}, "h must be finite and > 0"),
        ({"t": []}, "t must be a non-empty"),
        ({"covariates": [[[0.1, 0.2]]]}, "covariates must be 1-D"),
    ],
)
def test_bad_inputs_raise_clear_errors(kwargs, message):
    args = {"times": [1.0, 2.0], "indicators": [1, 0], "covariates": [0.4, 0.6], "h": 0.5,
            "t": [1.5]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        beran_cdf(args["times"], args["indicators"], args["covariates"], x=0.5, h=args["h"],
                  t=args["t"])
