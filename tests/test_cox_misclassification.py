"""Cox regression on a randomised-response label: MC-SIMEX and the corrected score."""

import warnings

import numpy as np
import pytest

from dprepro.survival.corrected_score import corrected_score_cox, corrected_score_cox_draws
from dprepro.survival.cox import CoxPH, treatment_dummies
from dprepro.survival.cox_misclassification import (
    check_misclassification_matrix,
    mc_simex_cox,
    mc_simex_cox_draws,
    misclassify,
    rrr_matrix,
    stochastic_matrix_power,
    unbiased_label_weights,
)

# a non-symmetric misclassification matrix with real positive eigenvalues
GENERAL = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7]])
TRUE_BETA = np.array([0.5, 1.0])  # log HR of groups 1 and 2 against group 0


def simulate(seed, *, n=2000, p=0.5):
    """3 groups, exponential times (rate 0.1 exp(beta_g)), uniform censoring (~37 %),
    labels released through RRR with keep-parameter p."""
    rng = np.random.default_rng(np.random.SeedSequence([20240611, seed]))
    g = rng.integers(0, 3, n)
    t0 = rng.exponential(1 / (0.1 * np.exp(np.r_[0.0, TRUE_BETA][g])))
    c = rng.uniform(0, 15, n)
    t, e = np.minimum(t0, c), (t0 <= c).astype(int)
    return t, e, g, misclassify(g, rrr_matrix(p, 3), rng=rng), rng


# --------------------------------------------------------------------------- Π^λ


@pytest.mark.parametrize("pi", [rrr_matrix(0.4, 3), rrr_matrix(0.7, 5), GENERAL])
def test_matrix_power_identities(pi):
    k = len(pi)
    np.testing.assert_array_equal(stochastic_matrix_power(pi, 0), np.eye(k))
    np.testing.assert_array_equal(stochastic_matrix_power(pi, 1), pi)
    np.testing.assert_allclose(stochastic_matrix_power(pi, 2), pi @ pi, atol=1e-15)
    for a, b in [(0.5, 0.5), (0.3, 1.2), (0.25, 1.5)]:
        np.testing.assert_allclose(
            stochastic_matrix_power(pi, a) @ stochastic_matrix_power(pi, b),
            stochastic_matrix_power(pi, a + b),
            atol=1e-12,
        )
    half = stochastic_matrix_power(pi, 0.5)
    assert np.all(half >= 0)
    np.testing.assert_allclose(half.sum(axis=1), 1, atol=1e-14)


def test_rrr_matrix_power_has_the_closed_form():
    p, k = 0.3, 4
    for lam in (0.5, 1.7, 2.0):
        expected = p**lam * np.eye(k) + (1 - p**lam) / k * np.ones((k, k))
        np.testing.assert_allclose(stochastic_matrix_power(rrr_matrix(p, k), lam), expected)


def test_matrix_power_that_is_not_stochastic_is_refused():
    swap = np.array([[0.2, 0.8], [0.8, 0.2]])  # eigenvalue -0.6
    stochastic_matrix_power(swap, 2)  # integer powers are fine
    with pytest.raises(ValueError, match="MC-SIMEX"):
        stochastic_matrix_power(swap, 0.5)


def test_unbiased_label_weights_undo_the_misclassification():
    # E[f*(W) | G = x] = sum_w Pi[x, w] f*(w) = f(x) for every f: Pi @ W = I
    for pi in (rrr_matrix(0.3, 3), GENERAL):
        weights = unbiased_label_weights(np.arange(3), pi)  # row w: (Pi^-1)[w, :]
        np.testing.assert_allclose(pi @ weights, np.eye(3), atol=1e-14)
        np.testing.assert_allclose(weights.sum(axis=1), 1, atol=1e-14)
    assert unbiased_label_weights(np.zeros((2, 5), dtype=int), GENERAL).shape == (2, 5, 3)


def test_misclassify_follows_the_matrix():
    rng = np.random.default_rng(5)
    labels = np.repeat(np.arange(3), 100_000)
    out = misclassify(labels, GENERAL, rng=rng)
    freq = np.stack([np.bincount(out[labels == g], minlength=3) / 100_000 for g in range(3)])
    # binomial sd <= 0.0016: 6 sd
    np.testing.assert_allclose(freq, GENERAL, atol=0.01)
    assert misclassify(labels[:10], GENERAL, rng=rng, size=4).shape == (4, 10)
    np.testing.assert_array_equal(misclassify(labels, np.eye(3), rng=rng), labels)


@pytest.mark.parametrize("shape, size", [((40,), None), ((40,), 6), ((3, 40), None),
                                         ((3, 40), 5)])
def test_misclassify_inverts_each_rows_cumulative_channel(shape, size):
    """Each label is the inverse CDF of its row of the channel at one uniform draw, drawn in
    the generator's order (copies first, then the labels' shape): the same labels as a
    per-draw ``searchsorted`` of the cumulative row (the last bin absorbing rounding)."""
    labels = np.random.default_rng(2).integers(0, 3, shape)
    out = misclassify(labels, GENERAL, rng=np.random.default_rng(9), size=size)
    u = np.random.default_rng(9).random(((size,) if size else ()) + shape)
    cum = np.cumsum(GENERAL, axis=1)
    expected = np.empty(u.shape, dtype=int)
    for index in np.ndindex(u.shape):
        row = cum[labels[index[1:] if size else index]]
        expected[index] = min(np.searchsorted(row, u[index], side="right"), 2)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "pi,match",
    [
        (np.array([[0.9, 0.2], [0.1, 0.9]]), "row-stochastic"),
        (np.array([[0.5, 0.5], [0.5, 0.5]]), "invertible"),
        (np.array([[1.2, -0.2], [0.0, 1.0]]), r"entries in \[0, 1\]"),
        (np.ones((2, 3)) / 3, "square"),
        (np.eye(4), "must be 3 x 3"),
    ],
)
def test_bad_matrices_are_refused(pi, match):
    with pytest.raises(ValueError, match=match):
        check_misclassification_matrix(pi, k=3 if pi.shape == (4, 4) else None)


def test_inputs_are_checked():
    t, e, g, w, rng = simulate(0, n=100)
    pi = rrr_matrix(0.5, 3)
    with pytest.raises(ValueError, match="labels must lie in 0..1"):
        mc_simex_cox(t, e, w, rrr_matrix(0.5, 2), rng=rng)
    with pytest.raises(TypeError, match="labels must be integers"):
        corrected_score_cox(t, e, w.astype(float), pi)
    with pytest.raises(ValueError, match="labels must have the shape of time"):
        corrected_score_cox(t, e, w[:-1], pi)
    with pytest.raises(TypeError, match="rng"):
        mc_simex_cox(t, e, w, pi, rng=np.random.RandomState(0))
    with pytest.raises(ValueError, match="lambdas"):
        mc_simex_cox(t, e, w, pi, rng=rng, lambdas=(0, 1, -1))
    with pytest.raises(ValueError, match="at least 3"):
        mc_simex_cox(t, e, w, pi, rng=rng, lambdas=(0, 1))
    with pytest.raises(ValueError, match="extrapolation"):
        mc_simex_cox(t, e, w, pi, rng=rng, extrapolation="cubic")
    with pytest.raises(ValueError, match="covariates"):
        corrected_score_cox(t, e, w, pi, covariates=np.ones((3, 1)))
    with pytest.raises(ValueError, match="rows sum|row-stochastic"):
        corrected_score_cox(t, e, w, pi * 0.9)


# --------------------------------------------------------------------------- MC-SIMEX


def test_simex_at_lambda_zero_is_the_naive_fit():
    t, e, _, w, rng = simulate(1, n=400)
    res = mc_simex_cox(t, e, w, rrr_matrix(0.5, 3), rng=rng, n_replicates=10)
    naive = CoxPH().fit(t, e, treatment_dummies(w, 3))
    np.testing.assert_allclose(res.path[0], naive.coef_, atol=1e-12)
    np.testing.assert_allclose(res.naive, naive.coef_, atol=1e-12)
    np.testing.assert_allclose(res.naive_se, naive.se_, rtol=1e-12)
    np.testing.assert_array_equal(res.lambdas, [0, 0.5, 1, 1.5, 2])
    assert res.terms == ["group1", "group2"] and res.ci.shape == (2, 2)
    assert list(res.n_converged) == [1, 10, 10, 10, 10]
    # more misclassification, more attenuation
    assert np.all(np.diff(res.path[:, 1]) < 0)


def test_simex_without_misclassification_returns_the_naive_fit():
    # Pi = I: every replicate is the data, nothing to extrapolate and no between-variance
    t, e, g, _, rng = simulate(2, n=300)
    res = mc_simex_cox(t, e, g, np.eye(3), rng=rng, n_replicates=5, ties="breslow")
    naive = CoxPH("breslow").fit(t, e, treatment_dummies(g, 3))
    np.testing.assert_allclose(res.estimate, naive.coef_, atol=1e-10)
    np.testing.assert_allclose(res.se, naive.se_, rtol=1e-8)


def test_simex_is_reproducible_and_takes_covariates_and_clusters():
    t, e, _, w, _ = simulate(3, n=300)
    age = np.random.default_rng(0).normal(size=(len(t), 1))
    kwargs = dict(covariates=age, cluster=np.arange(len(t)) // 2, n_replicates=8)
    runs = [
        mc_simex_cox(t, e, w, GENERAL, rng=np.random.default_rng(9), **kwargs) for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].estimate, runs[1].estimate)
    assert runs[0].terms == ["group1", "group2", "x0"]
    frame = runs[0].to_frame()
    assert list(frame.columns) == ["term", "estimate", "se", "lower", "upper", "naive", "naive_se"]
    loglin = mc_simex_cox(
        t, e, w, GENERAL, rng=np.random.default_rng(9), extrapolation="loglinear", **kwargs
    )
    assert loglin.estimate.shape == (3,)


def test_simulation_naive_is_attenuated_and_corrections_recover_the_log_hr():
    """Five independent data sets (n = 2000 each, RRR with p = 0.5: a label is kept
    with probability 2/3). Over 20 other seeds the per-data-set estimates of
    beta_2 = 1 were: naive 0.51 (sd 0.06), MC-SIMEX 0.89 (sd 0.11), corrected
    score 1.02 (sd 0.15); the averages over five are compared, with margins of
    more than 2.5 such standard deviations (sd / sqrt(5))."""
    naive, simex, corrected, naive_se = [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(5):
            t, e, _, w, rng = simulate(100 + seed)
            pi = rrr_matrix(0.5, 3)
            res = mc_simex_cox(t, e, w, pi, rng=rng, n_replicates=50)
            cs = corrected_score_cox(t, e, w, pi)
            assert cs.converged and np.all(res.n_converged[1:] == 50)
            naive.append(res.naive)
            naive_se.append(res.naive_se)
            simex.append(res.estimate)
            corrected.append(cs.estimate)
    naive, simex, corrected = (np.mean(x, axis=0) for x in (naive, simex, corrected))
    gap = TRUE_BETA - naive
    # attenuated beyond Monte Carlo error: the naive se of a mean of 5 is ~0.07/sqrt(5)
    assert np.all(gap > 6 * np.mean(naive_se, axis=0) / np.sqrt(5))
    # both corrections move towards the truth, and for the larger effect close most of the gap
    assert np.all(simex > naive + 0.5 * gap / 2)
    assert abs(simex[1] - TRUE_BETA[1]) < 0.5 * gap[1]
    assert np.all(np.abs(corrected - TRUE_BETA) < 0.5 * gap)


def test_simex_se_tracks_the_spread_over_data_sets():
    """400 data sets (n = 500, two groups, log HR 1, RRR p = 0.6) with few replicates
    (B = 5 on λ = 0, 1, 2: the extrapolant 3·β(0) − 3·β(1) + β(2) carries much Monte
    Carlo error). The sd of the MC-SIMEX estimates over data sets (fresh data, release
    and replicates each) and the mean SE agree within 20 % (seen: ratio 0.91; the sd of
    400 has ~3.5 % sampling error); without the Monte Carlo term of the replicate means
    the SE is too small by a quarter (seen: 0.74, asserted < 0.8)."""
    pi = rrr_matrix(0.6, 2)
    est, se, jackknife = [], [], []
    for seed in range(400):
        rng = np.random.default_rng(np.random.SeedSequence([7, seed]))
        g = rng.integers(0, 2, 500)
        t0 = rng.exponential(1 / (0.1 * np.exp(np.r_[0.0, 1.0][g])))
        c = rng.uniform(0, 15, 500)
        t, e = np.minimum(t0, c), (t0 <= c).astype(int)
        w = misclassify(g, pi, rng=rng)
        res = mc_simex_cox(t, e, w, pi, rng=rng, lambdas=(0, 1, 2), n_replicates=5)
        np.testing.assert_allclose(res.mc_variance, res.extrapolated("quadratic").mc_variance)
        est.append(res.estimate[0])
        se.append(res.se[0])
        jackknife.append(np.sqrt(max(res.se[0] ** 2 - res.mc_variance[0], 0.0)))
    sd = np.std(est, ddof=1)
    assert abs(np.nanmean(se) / sd - 1) < 0.2, np.nanmean(se) / sd
    assert np.nanmean(jackknife) / sd < 0.8
    assert np.isnan(se).mean() < 0.03  # extrapolated variance not positive: rare


def test_simex_mc_variance_is_the_weighted_replicate_variance():
    """The quadratic through λ = 0, 1, 2 at −1 is 3·β(0) − 3·β(1) + β(2): its Monte
    Carlo variance is 9·s²(1)/B + s²(2)/B; the loglinear one comes from the same
    replicates (``extrapolated``) as from a run with ``extrapolation="loglinear"``."""
    t, e, _, w, _ = simulate(6, n=400)
    pi = rrr_matrix(0.5, 3)
    res = mc_simex_cox(t, e, w, pi, rng=np.random.default_rng(1), lambdas=(0, 1, 2),
                       n_replicates=6)
    expected = (9 * res.between_path[1] + res.between_path[2]) / 6
    np.testing.assert_allclose(res.mc_variance, expected, rtol=1e-12)
    np.testing.assert_allclose(res.path.T @ [3, -3, 1], res.estimate, rtol=1e-10)
    loglin = mc_simex_cox(t, e, w, pi, rng=np.random.default_rng(1), lambdas=(0, 1, 2),
                          n_replicates=6, extrapolation="loglinear")
    again = res.extrapolated("loglinear")
    np.testing.assert_allclose(again.estimate, loglin.estimate, rtol=1e-12)
    np.testing.assert_allclose(again.se, loglin.se, rtol=1e-12)
    assert again.extrapolation == "loglinear" and np.all(again.mc_variance > 0)


def test_simex_draws_per_person_as_the_release_does():
    """Every person twice (same time, event and released label: two rows per person).
    Breslow's fit on the doubled rows is the fit on the single rows (each risk-set and
    event sum doubles), so with one simulated label per person, drawn from the same
    generator, every replicate and hence the path and its between-replicate variance
    equal the single cohort's. Drawn per row (the doubled cohort without ``persons``),
    the replicates are other draws and the between-replicate variance is about halved
    (a person's two rows no longer move together)."""
    t, e, _, w, _ = simulate(8, n=300)
    pi = rrr_matrix(0.5, 3)
    kwargs = dict(lambdas=(0, 1, 2), n_replicates=40, ties="breslow")
    single = mc_simex_cox(t, e, w, pi, rng=np.random.default_rng(4), **kwargs)
    rows = np.repeat(np.arange(len(t)), 2)
    ids = np.array([f"p{i}" for i in rows])  # ids: any comparable values
    doubled = mc_simex_cox(t[rows], e[rows], w[rows], pi, rng=np.random.default_rng(4),
                           persons=ids, **kwargs)
    np.testing.assert_allclose(doubled.path, single.path, rtol=0, atol=1e-10)
    np.testing.assert_allclose(doubled.between_path, single.between_path, rtol=1e-8)
    np.testing.assert_allclose(doubled.estimate, single.estimate, rtol=0, atol=1e-10)
    per_row = mc_simex_cox(t[rows], e[rows], w[rows], pi, rng=np.random.default_rng(4),
                           **kwargs)
    ratio = per_row.between_path[1:] / single.between_path[1:]
    assert np.all(ratio < 0.8), ratio  # about 1/2; per person it is exactly 1


def test_simex_persons_must_carry_one_released_label():
    t, e, _, w, rng = simulate(9, n=100)
    persons = np.arange(len(t)) // 2
    w = w.copy()
    w[1::2] = w[0::2]
    w[1] = (w[0] + 1) % 3  # person 0's rows released differently
    with pytest.raises(ValueError, match=r"rows \[1\] carry another released label"):
        mc_simex_cox(t, e, w, rrr_matrix(0.5, 3), rng=rng, persons=persons)
    with pytest.raises(ValueError, match="persons must have shape"):
        mc_simex_cox(t, e, w, rrr_matrix(0.5, 3), rng=rng, persons=persons[:-1])


def test_simex_draws_equal_the_fits_one_draw_at_a_time():
    """All released vectors in one batch = each in turn with one generator (the same
    simulated labels), also with covariates (the row-level kernel)."""
    t, e, g, _, rng = simulate(10, n=250)
    pi = rrr_matrix(0.6, 3)
    released = misclassify(g, pi, rng=rng, size=4)
    age = np.random.default_rng(1).normal(size=len(t))
    for cov in (None, age):
        kwargs = dict(lambdas=(0, 0.5, 1, 2), n_replicates=5, covariates=cov,
                      cluster=np.arange(len(t)) // 3)
        batch = mc_simex_cox_draws(t, e, released, pi, rng=np.random.default_rng(2), **kwargs)
        one_rng = np.random.default_rng(2)
        for d, res in enumerate(batch):
            one = mc_simex_cox(t, e, released[d], pi, rng=one_rng, **kwargs)
            np.testing.assert_allclose(res.path, one.path, rtol=0, atol=1e-12)
            np.testing.assert_allclose(res.se, one.se, rtol=1e-10)
            np.testing.assert_array_equal(res.n_converged, one.n_converged)
    assert len({tuple(r.path[1]) for r in batch}) == 4  # the draws differ
    with pytest.raises(ValueError, match="one-dimensional"):
        mc_simex_cox(t, e, released, pi, rng=rng)


# --------------------------------------------------------------------------- corrected score


def test_corrected_score_without_misclassification_is_the_breslow_fit():
    t, e, g, _, _ = simulate(4, n=300)
    cs = corrected_score_cox(t, e, g, np.eye(3))
    ref = CoxPH("breslow").fit(t, e, treatment_dummies(g, 3), cluster=np.arange(len(t)))
    np.testing.assert_allclose(cs.estimate, ref.coef_, atol=1e-10)
    np.testing.assert_allclose(cs.variance, ref.robust_variance_, rtol=1e-8)
    assert cs.terms == ["group1", "group2"]
    assert list(cs.to_frame().columns) == ["term", "estimate", "se", "lower", "upper"]


def test_corrected_score_sandwich_matches_the_spread_over_data_sets():
    """40 data sets of n = 1000: the sd of the estimates and the mean sandwich se
    agree within the sampling error of an sd from 40 draws (~11 %; margin 35 %).
    Events after t = 10 (a third of the follow-up) are left out with ``tau``: at
    n = 1000 the last risk sets are small enough for the corrected risk-set sum
    to turn negative in some data sets (see corrected_score_cox)."""
    estimates, ses = [], []
    for seed in range(40):
        t, e, _, w, _ = simulate(200 + seed, n=1000, p=0.6)
        cs = corrected_score_cox(t, e, w, rrr_matrix(0.6, 3), tau=10.0)
        assert cs.converged
        estimates.append(cs.estimate)
        ses.append(cs.se)
    ratio = np.std(estimates, axis=0, ddof=1) / np.mean(ses, axis=0)
    assert np.all(np.abs(ratio - 1) < 0.35), ratio
    bias = np.mean(estimates, axis=0) - TRUE_BETA
    assert np.all(np.abs(bias) < 4 * np.mean(ses, axis=0) / np.sqrt(40)), bias


def test_corrected_score_tau_truncates_the_events():
    t, e, g, w, _ = simulate(5, n=500)
    pi = rrr_matrix(0.6, 3)
    full = corrected_score_cox(t, e, w, pi)
    late = corrected_score_cox(t, e, w, pi, tau=t.max() + 1)
    np.testing.assert_allclose(full.estimate, late.estimate, atol=1e-12)
    early = corrected_score_cox(t, e, w, pi, tau=5.0)
    assert early.converged and not np.allclose(early.estimate, full.estimate)
    with pytest.raises(ValueError, match="tau"):
        corrected_score_cox(t, e, w, pi, tau=-1.0)


def test_corrected_score_draws_equal_the_fits_one_draw_at_a_time():
    """Several released vectors in one batch (shared pseudo-rows, per-vector weights) =
    one at a time, with and without a covariate."""
    t, e, g, _, rng = simulate(11, n=300)
    pi = rrr_matrix(0.6, 3)
    released = misclassify(g, pi, rng=rng, size=4)
    age = np.random.default_rng(2).normal(size=len(t))
    for cov in (None, age):
        batch = corrected_score_cox_draws(t, e, released, pi, covariates=cov, tau=10.0,
                                          cluster=np.arange(len(t)) // 2)
        for d, res in enumerate(batch):
            one = corrected_score_cox(t, e, released[d], pi, covariates=cov, tau=10.0,
                                      cluster=np.arange(len(t)) // 2)
            assert res.converged == one.converged and res.n_iter == one.n_iter
            np.testing.assert_allclose(res.estimate, one.estimate, rtol=0, atol=1e-12)
            np.testing.assert_allclose(res.variance, one.variance, rtol=1e-10)
            np.testing.assert_allclose(res.ci, one.ci, rtol=0, atol=1e-10)
    assert len({tuple(r.estimate) for r in batch}) == 4
