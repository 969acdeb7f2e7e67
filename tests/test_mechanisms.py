"""Statistical tests of the Laplace indicator mechanism (tiny significance levels)."""

import numpy as np
import pytest
from scipy import stats

from dprepro.mechanisms.indicator_draws import laplace_indicators

LEVEL = 1e-9


@pytest.mark.parametrize("alpha", [0.2, 1.0, 3.0])
def test_noise_is_laplace_with_scale_one_over_alpha(alpha):
    rng = np.random.default_rng(2024)
    delta = rng.integers(0, 2, size=200_000)
    noise = laplace_indicators(delta, alpha=alpha, rng=rng) - delta
    assert stats.kstest(noise, stats.laplace(scale=1 / alpha).cdf).pvalue > LEVEL
    # the same test rejects a noise scale off by 10 %: it has the power to catch a wrong scale
    assert stats.kstest(noise, stats.laplace(scale=1.1 / alpha).cdf).pvalue < LEVEL


def _ratio_lower_bound(alpha, scale, draws=400_000, seed=7):
    """Largest lower confidence bound on P(Z in bin | δ=1) / P(Z in bin | δ=0) over bins.

    Clopper–Pearson bounds at level LEVEL/bins per side (Bonferroni), in the
    style of empirical DP auditing: a bound above e^α proves a violation.
    """
    rng = np.random.default_rng(seed)
    z1 = 1 + rng.laplace(0, scale, size=draws)
    z0 = 0 + rng.laplace(0, scale, size=draws)
    edges = np.linspace(-1.5, 2.5, 17)
    c1, _ = np.histogram(z1, edges)
    c0, _ = np.histogram(z0, edges)
    a = LEVEL / (2 * len(c1))
    lower1 = stats.beta.ppf(a, c1, draws - c1 + 1)
    upper0 = stats.beta.ppf(1 - a, c0 + 1, draws - c0)
    return float(np.max(lower1 / upper0))


@pytest.mark.parametrize("alpha", [0.3, 1.0])
def test_density_ratio_of_neighbouring_inputs_never_exceeds_e_alpha(alpha):
    bound = _ratio_lower_bound(alpha, 1 / alpha)
    assert bound <= np.exp(alpha)
    # a mechanism with half the noise is 2α-LDP, and the same audit catches it
    assert _ratio_lower_bound(alpha, 0.5 / alpha) > np.exp(alpha)


def test_output_shape_and_mean():
    rng = np.random.default_rng(1)
    delta = np.zeros((3, 4), dtype=int)
    z = laplace_indicators(delta, alpha=1.0, rng=rng)
    assert z.shape == (3, 4) and z.dtype == float


@pytest.mark.parametrize(
    ("delta", "kwargs", "error", "message"),
    [
        ([0, 1], {"alpha": 0.0}, ValueError, "alpha must be a finite number > 0"),
        ([0, 1], {"alpha": -1}, ValueError, "alpha must be a finite number > 0"),
        ([0, 1], {"alpha": np.inf}, ValueError, "alpha must be a finite number > 0"),
        ([0, 1], {"alpha": "1"}, TypeError, "alpha must be a real number"),
        ([0, 2], {"alpha": 1.0}, ValueError, r"only 0 and 1, found \[2\]"),
        ([0.0, np.nan], {"alpha": 1.0}, ValueError, "non-finite"),
        (["a", "b"], {"alpha": 1.0}, TypeError, "numeric"),
    ],
)
def test_bad_inputs(delta, kwargs, error, message):
    with pytest.raises(error, match=message):
        laplace_indicators(delta, rng=np.random.default_rng(0), **kwargs)


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        laplace_indicators([0, 1], alpha=1.0, rng=np.random.RandomState(0))


def test_alpha_is_keyword_only():
    with pytest.raises(TypeError):
        laplace_indicators([0, 1], 1.0, np.random.default_rng(0))
