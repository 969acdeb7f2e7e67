"""The randomized-response mechanism on δ: transition probabilities, de-biasing, audit.

Statistical checks use a 1e-9 significance level (no flaky tests) with enough
draws to catch a mis-set keep probability.
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from dprepro.audit.release_audits import audit_indicator_mechanism
from dprepro.mechanisms.indicator_draws import (
    debias_randomized_response,
    randomized_response_indicators,
    randomized_response_keep_probability,
)
from dprepro.mechanisms.registry import REFERENCE, get_mechanism, joint_records, records_of
from dprepro.survival.conditional import presmoothed_indicators

Z_1E9 = stats.norm.isf(1e-9 / 2)  # two-sided 1e-9


def keep_rate_z(sampler, alpha, draws=1_000_000, seed=0):
    """z statistics of the observed rates P(Z = δ) for δ = 1 and δ = 0 against e^α/(1+e^α)."""
    p = math.exp(alpha) / (1 + math.exp(alpha))  # written out, not the library's function
    rng = np.random.default_rng(seed)
    out = []
    for value in (1, 0):
        z = sampler(np.full(draws, value, dtype=np.int8), alpha=alpha, rng=rng)
        kept = np.count_nonzero(z == value)
        out.append((kept - draws * p) / math.sqrt(draws * p * (1 - p)))
    return out


@pytest.mark.parametrize("alpha", [0.2, 0.4, 2.0])
def test_transition_probabilities_are_e_alpha_over_one_plus_e_alpha(alpha):
    assert all(abs(z) < Z_1E9 for z in keep_rate_z(randomized_response_indicators, alpha))
    assert randomized_response_keep_probability(alpha) == pytest.approx(
        math.exp(alpha) / (1 + math.exp(alpha)), rel=1e-15)


def test_the_check_catches_a_mis_set_keep_probability():
    def mis_set(delta, *, alpha, rng):  # calibrated for α + 0.03 instead of α
        return randomized_response_indicators(delta, alpha=alpha + 0.03, rng=rng)

    assert any(abs(z) > Z_1E9 for z in keep_rate_z(mis_set, 0.3))


def test_outputs_are_bits_and_bad_inputs_fail():
    z = randomized_response_indicators(np.array([0, 1, 1]), alpha=1.0,
                                       rng=np.random.default_rng(1))
    assert set(np.unique(z)) <= {0.0, 1.0}
    with pytest.raises(ValueError, match="only 0 and 1"):
        randomized_response_indicators(np.array([0, 2]), alpha=1.0, rng=np.random.default_rng(1))
    with pytest.raises(TypeError, match="Generator"):
        randomized_response_indicators(np.array([0, 1]), alpha=1.0, rng=np.random.RandomState(1))
    with pytest.raises(ValueError, match="alpha must be a finite number > 0"):
        randomized_response_indicators(np.array([0, 1]), alpha=0.0, rng=np.random.default_rng(1))


def test_same_generator_gives_common_random_numbers_across_alpha():
    delta = np.random.default_rng(2).integers(0, 2, size=5000)
    low = randomized_response_indicators(delta, alpha=0.2, rng=np.random.default_rng(3))
    high = randomized_response_indicators(delta, alpha=2.0, rng=np.random.default_rng(3))
    # the same uniforms: a bit flipped at the larger α (keep prob. higher) is flipped at the
    # smaller α too
    assert np.all((high != delta) <= (low != delta))


def test_two_alphas_of_one_stream_reveal_delta_and_the_provenance_says_so():
    """Common random numbers: each α is α-LDP alone, two α together are not private."""
    delta = np.random.default_rng(5).integers(0, 2, size=20000)
    laplace = get_mechanism("laplace")
    z1, z2 = (laplace.privatize(delta, alpha=a, rng=np.random.default_rng(6)) for a in (0.2, 0.4))
    # α₁Z₁ − α₂Z₂ = (α₁ − α₂)δ: δ recovered exactly from the two "private" releases
    np.testing.assert_array_equal(np.rint((0.2 * z1 - 0.4 * z2) / (0.2 - 0.4)), delta)
    rr = get_mechanism("randomized_response")
    b1, b2 = (rr.privatize(delta, alpha=a, rng=np.random.default_rng(6)) for a in (0.2, 2.0))
    differ = b1 != b2
    # shared uniforms: where the releases differ, the larger α kept δ (its keep region
    # contains the smaller α's); this happens with probability p(2) − p(0.2) ≈ 0.33
    assert differ.mean() > 0.3
    np.testing.assert_array_equal(b2[differ], delta[differ])
    # the provenance: one record per α (α-LDP alone) plus the joint one (ε = ∞)
    records = records_of([("laplace", 0.2), ("laplace", 0.4), ("randomized_response", 0.2)])
    assert [(r.mechanism, r.stated, r.true_epsilon) for r in records[:3]] == [
        ("laplace_indicators", 0.2, 0.2), ("laplace_indicators", 0.4, 0.4),
        ("randomized_response", 0.2, 0.2)]
    joint, reference = records[3:]
    assert reference == REFERENCE
    assert joint.mechanism == "laplace_indicators" and math.isinf(joint.true_epsilon)
    assert joint.extra["joint_over"] == "laplace_indicators alpha=0.2, laplace_indicators alpha=0.4"
    assert "ε = ∞" in joint.note and joint.provenance()["true_epsilon"] == "inf"
    # a single α, or a mechanism with a stream per α, has no joint record
    assert joint_records([(laplace, 0.2), (rr, 0.2)]) == []
    per_alpha = dataclasses.replace(laplace, stream="privatize/x/cens{censoring}/n{n}/a{alpha}")
    assert joint_records([(per_alpha, 0.2), (per_alpha, 0.4)]) == []


def test_debiased_presmoother_is_unbiased_for_the_non_private_one():
    rng = np.random.default_rng(4)
    n, draws, alpha = 150, 4000, 0.3
    x, y = rng.uniform(size=n), rng.exponential(size=n)
    delta = (rng.uniform(size=n) < 0.7).astype(np.int8)
    target = presmoothed_indicators(y, delta, x, b=0.4)
    released = randomized_response_indicators(np.tile(delta, (draws, 1)), alpha=alpha, rng=rng)
    stacked = np.tile(y, (draws, 1)), np.tile(x, (draws, 1))

    def z_scores(values):
        phat = presmoothed_indicators(stacked[0], values, stacked[1], b=0.4)
        se = phat.std(axis=0, ddof=1) / math.sqrt(draws)
        return (phat.mean(axis=0) - target) / se

    bound = stats.norm.isf(1e-9 / (2 * n))  # Bonferroni over the n evaluation points
    assert np.max(np.abs(z_scores(debias_randomized_response(released, alpha=alpha)))) < bound
    # power: the raw bits are biased towards 1/2 and the test sees it
    assert np.max(np.abs(z_scores(released))) > bound
    # de-biased variance e^α/(e^α-1)^2, about half of Laplace's 2/α^2
    rr, laplace = get_mechanism("randomized_response"), get_mechanism("laplace")
    assert rr.noise_variance(alpha) == pytest.approx(
        np.var(debias_randomized_response(released[:, 0], alpha=alpha)), rel=0.1)
    assert 0.45 < rr.noise_variance(alpha) / laplace.noise_variance(alpha) < 0.55


def test_audit_of_randomized_response_is_tight_and_has_power():
    ok = audit_indicator_mechanism("randomized_response", alpha=0.3, draws=400_000,
                                   rng=np.random.default_rng(5))
    assert ok.verdict == "consistent" and ok.true_epsilon == pytest.approx(0.3)
    assert ok.empirical_epsilon_lower_bound > 0.8 * 0.3
    bad = audit_indicator_mechanism("randomized_response", alpha=0.3, run_alpha=0.6,
                                    draws=400_000, rng=np.random.default_rng(6))
    assert bad.verdict == "violation"
