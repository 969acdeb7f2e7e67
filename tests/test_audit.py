"""Empirical privacy audits (dprepro.audit.suite): the bound, and each mechanism against its claim.

Every audit reports a Clopper–Pearson lower confidence bound on ε at overall level
1e-9, so a correct mechanism is flagged with probability below 1e-9 and these
tests do not flake. Each mechanism whose claim holds is checked twice: as the
library runs it (not flagged) and as a deliberately mis-scaled copy (flagged),
which shows that the audit has the power to catch that error.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dprepro.audit.bound import AUDIT_COLUMNS, AuditResult, _threshold_audit, epsilon_lower_bound
from dprepro.audit.learner_audits import (
    _op_fit_batch,
    _op_log_ratio,
    _op_neighbours,
    _op_sample,
    audit_objective_perturbation,
    audit_ssp,
)
from dprepro.audit.release_audits import (
    audit_indicator_mechanism,
    audit_laplace_indicators,
    audit_lnte,
    audit_rrr,
    lnte_audit_cohort,
)
from dprepro.audit.suite import (
    INDICATOR_ALPHAS,
    INDICATOR_CONTROL,
    control_run_alpha,
    run_all_audits,
)
from dprepro.learners.logistic_regression import DPLogisticRegression
from dprepro.learners.noise import objective_perturbation_noise
from dprepro.mechanisms.registry import MECHANISMS
from dprepro.mechanisms.rrr import rrr_keep_probability

LEVEL = 1e-9


def rng(*key):
    return np.random.default_rng(list(key))


# --------------------------------------------------------------------------- the bound


def test_epsilon_lower_bound_matches_hand_computation():
    k_d, k_dp, n, level = np.array([90, 500]), np.array([20, 400]), 1000, 1e-3
    a = level / (2 * 2 * 2)  # 2 events x 2 directions x (lower, upper)
    lower = stats.beta.ppf(a, k_d, n - k_d + 1)
    upper = stats.beta.ppf(1 - a, k_dp + 1, n - k_dp)
    lower_r = stats.beta.ppf(a, k_dp, n - k_dp + 1)
    upper_r = stats.beta.ppf(1 - a, k_d + 1, n - k_d)
    expected = max(np.max(np.log(lower / upper)), np.max(np.log(lower_r / upper_r)), 0.0)
    got = epsilon_lower_bound(k_d, k_dp, n, level=level)
    assert got == pytest.approx(expected, rel=1e-12)
    assert got > 0  # 90 vs 20 in 1000 is a real difference at this level

    # one direction, one event, different sample sizes
    a1 = level / 2
    one = np.log(
        stats.beta.ppf(a1, 300, 2000 - 300 + 1) / stats.beta.ppf(1 - a1, 100 + 1, 1500 - 100)
    )
    assert epsilon_lower_bound(
        [300], [100], (2000, 1500), level=level, both_directions=False
    ) == pytest.approx(one, rel=1e-12)


def test_epsilon_lower_bound_edge_cases():
    # no events on D: nothing to bound; all draws in the event on D': the reverse ratio
    assert epsilon_lower_bound([0], [0], 100, level=LEVEL) == 0.0
    assert epsilon_lower_bound([0], [100], 100, level=LEVEL, both_directions=False) == 0.0
    assert epsilon_lower_bound([0], [100], 100, level=LEVEL) > 0
    # an event impossible under D': the bound grows like log(n)
    small = epsilon_lower_bound([5000], [0], 10_000, level=LEVEL)
    large = epsilon_lower_bound([500_000], [0], 1_000_000, level=LEVEL)
    assert 0 < small < large
    assert large == pytest.approx(math.log(0.5 / (-math.log(LEVEL / 4) / 1e6)), abs=0.02)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (([1, 2], [1], 10), {}, ValueError, "same non-zero length"),
        (([11], [1], 10), {}, ValueError, r"\[0, draws=10\]"),
        (([-1], [1], 10), {}, ValueError, r"\[0, draws=10\]"),
        (([1.5], [1], 10), {}, ValueError, "integer counts"),
        (([1], [1], 10), {"level": 0.0}, ValueError, "level must be in"),
        (([1], [1], (10, 10, 10)), {}, ValueError, "pair"),
        (([1], [1], 0), {}, ValueError, "draws must be >= 1"),
    ],
)
def test_epsilon_lower_bound_bad_inputs(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        epsilon_lower_bound(*args, **kwargs)


def test_threshold_selection_is_valid_under_the_null():
    """Identical distributions: selecting the event on half the draws never yields a bound > 0.

    (Choosing the threshold and counting on the same draws would: the max over
    hundreds of candidate events overfits.)"""
    r = rng(11)
    for _ in range(20):
        bound, _ = _threshold_audit(r.normal(size=4000), r.normal(size=4000), level=1e-3)
        assert bound == 0.0


def test_audit_result_verdict_and_dict():
    res = AuditResult("m", "v", 1.0, 1.2, LEVEL, 10, "s", true_epsilon=2.0)
    assert res.verdict == "violation"
    assert res.to_dict()["verdict"] == "violation"
    assert AuditResult("m", "v", 1.0, 1.0, LEVEL, 10, "s").verdict == "consistent"


# --------------------------------------------------------------------------- Laplace indicators


@pytest.mark.parametrize("alpha", [0.3, 1.0])
def test_laplace_indicators_at_scale_one_over_alpha_is_not_flagged(alpha):
    res = audit_laplace_indicators(alpha=alpha, draws=400_000, rng=rng(1, int(10 * alpha)))
    assert res.verdict == "consistent"
    assert res.true_epsilon == pytest.approx(alpha)
    # the audit is tight: tails beyond the inputs attain e^alpha
    assert res.empirical_epsilon_lower_bound > 0.85 * alpha


@pytest.mark.parametrize("alpha", [0.3, 1.0])
def test_laplace_indicators_with_half_the_scale_is_flagged(alpha):
    res = audit_laplace_indicators(
        alpha=alpha, scale=0.5 / alpha, draws=400_000, rng=rng(2, int(10 * alpha))
    )
    assert res.verdict == "violation"
    assert alpha < res.empirical_epsilon_lower_bound <= 2 * alpha


# --------------------------------------------------------------------------- indicator registry


# the `toy` fixture (a registered toy mechanism) lives in conftest.py


def _indicator_rows(table, mechanism):
    return table[table.mechanism == mechanism.release_name]


def test_every_registered_indicator_mechanism_has_audit_rows(toy):
    table = run_all_audits(rng_seed=4, draws_scale=0.001)
    for mechanism in MECHANISMS.values():
        rows = _indicator_rows(table, mechanism)
        published = rows[rows.role == "published"]
        assert sorted(published.claimed_epsilon) == list(INDICATOR_ALPHAS), mechanism.name
        np.testing.assert_allclose(published.true_epsilon,
                                   [mechanism.true_epsilon(a) for a in published.claimed_epsilon])
        control = rows[rows.role == "control"]
        assert len(control) == 1, mechanism.name
        claimed, true_level = INDICATOR_CONTROL
        assert control.claimed_epsilon.iloc[0] == claimed
        # the control runs where the mechanism is truly twice the claim, whatever its
        # calibration (the toy is α/2-LDP: it runs at α = 1.2)
        assert control.true_epsilon.iloc[0] == pytest.approx(true_level, abs=1e-9)
    # the toy's rows come last: adding a mechanism leaves the other rows' streams alone
    assert (table.mechanism.iloc[-4:] == toy.release_name).all()
    others = [name for name in MECHANISMS if name != toy.name]
    without = run_all_audits(rng_seed=4, draws_scale=0.001, indicator_mechanisms=others)
    pd.testing.assert_frame_equal(table.iloc[:-4].reset_index(drop=True), without)
    # a run's own RRR rows come after the indicator rows, yet the new mechanism moves none
    # of their draws: their streams are keyed by their settings, not by position
    run = [[3, 0.5, "exact"]]
    with_toy = run_all_audits(rng_seed=4, draws_scale=0.001, rrr_settings=run)
    alone = run_all_audits(rng_seed=4, draws_scale=0.001, indicator_mechanisms=others,
                           rrr_settings=run)
    pd.testing.assert_frame_equal(with_toy.iloc[[-1]].reset_index(drop=True),
                                  alone.iloc[[-1]].reset_index(drop=True))
    assert with_toy.iloc[-1]["variant"] == "calibration=exact, k=3"


def test_the_control_level_inverts_each_mechanisms_true_epsilon(toy):
    laplace = MECHANISMS["laplace"]
    assert control_run_alpha(laplace, 0.3, 0.6) == 0.6  # exact mechanisms: unchanged
    assert control_run_alpha(toy, 0.3, 0.6) == pytest.approx(1.2, abs=1e-9)
    assert toy.true_epsilon(control_run_alpha(toy, 0.3, 0.6)) == pytest.approx(0.6, abs=1e-9)


def test_generic_indicator_audit_has_power_against_a_miscalibrated_toy(toy):
    # claims α = 0.3; run at 1.2 the toy is (0.6)-LDP: a violation of 0.3 the audit must see
    res = audit_indicator_mechanism(toy, alpha=0.3, run_alpha=1.2, draws=400_000, rng=rng(7))
    assert res.verdict == "violation" and res.true_epsilon == pytest.approx(0.6)
    assert 0.3 < res.empirical_epsilon_lower_bound <= 0.6
    ok = audit_indicator_mechanism(toy, alpha=0.3, draws=400_000, rng=rng(8))
    assert ok.verdict == "consistent" and ok.true_epsilon == pytest.approx(0.15)


def test_laplace_through_the_registry_draws_the_library_noise():
    # the audit runs the mechanism the simulation runs: same generator state, same numbers
    res = audit_indicator_mechanism("laplace", alpha=0.5, draws=1000, rng=rng(9))
    again = audit_laplace_indicators(alpha=0.5, draws=1000, rng=rng(9))
    assert res == again


# --------------------------------------------------------------------------- RRR


@pytest.mark.parametrize("epsilon", [1.0, 3.0])
@pytest.mark.parametrize("k", [4, 5])
def test_rrr_exact_calibration_is_not_flagged(epsilon, k):
    res = audit_rrr(epsilon=epsilon, k=k, calibration="exact", draws=500_000, rng=rng(3, k))
    assert res.verdict == "consistent"
    assert res.true_epsilon == pytest.approx(epsilon)
    assert res.empirical_epsilon_lower_bound > epsilon - 0.1


@pytest.mark.parametrize("epsilon", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("k", [4, 5])
def test_rrr_paper_calibration_is_flagged_at_epsilon_plus_log_k_minus_1(epsilon, k):
    res = audit_rrr(epsilon=epsilon, k=k, calibration="paper", draws=500_000, rng=rng(4, k))
    true = epsilon + math.log(k - 1)
    assert res.verdict == "violation"
    assert res.true_epsilon == pytest.approx(true)
    assert true - 0.1 < res.empirical_epsilon_lower_bound <= true


def test_rrr_with_p_computed_from_twice_epsilon_is_flagged():
    p = rrr_keep_probability(2.0, 5, calibration="exact")
    res = audit_rrr(epsilon=1.0, k=5, keep_probability=p, draws=500_000, rng=rng(5))
    assert res.verdict == "violation"
    assert res.true_epsilon == pytest.approx(2.0)
    assert 1.5 < res.empirical_epsilon_lower_bound <= 2.0


def test_rrr_bad_keep_probability():
    with pytest.raises(ValueError, match="keep_probability"):
        audit_rrr(epsilon=1.0, k=5, keep_probability=1.0, draws=10, rng=rng(0))


# --------------------------------------------------------------------------- LNTE


@pytest.mark.parametrize("epsilon", [1.0, 2.0])
def test_lnte_as_published_is_flagged_on_its_noisy_counts(epsilon):
    durations, events = lnte_audit_cohort()  # 6 time points
    res = audit_lnte(epsilon=epsilon, durations=durations, events=events, draws=200_000, rng=rng(6))
    assert res.verdict == "violation"
    # the release (its grid of observed times included) has no finite epsilon, as the study
    # states; on the fixed grid the audited pair's loss is (m + 1) epsilon, m = 6
    assert res.true_epsilon == math.inf
    assert "(m + 1) * epsilon = " + format(7 * epsilon, "g") in res.note
    # far above epsilon (composition over the time points), never above the pair's loss
    assert 3 * epsilon < res.empirical_epsilon_lower_bound <= 7 * epsilon


def test_lnte_as_published_is_flagged_on_its_survival_curve():
    durations, events = lnte_audit_cohort()
    res = audit_lnte(
        epsilon=1.0,
        durations=durations,
        events=events,
        draws=200_000,
        rng=rng(7),
        release="curve",
    )
    assert res.verdict == "violation"
    # on a fixed grid the curve is at most 2-epsilon-DP; its grid makes it not DP at all
    assert 1.0 < res.empirical_epsilon_lower_bound <= 2.0
    assert res.true_epsilon == math.inf


def test_lnte_flagged_on_a_small_cohort_with_several_time_points():
    durations = np.array([2.0, 2.0, 3.0, 3.0, 5.0, 5.0, 8.0, 8.0])
    events = np.array([1, 1, 1, 0, 1, 1, 0, 1])
    res = audit_lnte(epsilon=1.0, durations=durations, events=events, draws=100_000, rng=rng(8))
    assert res.verdict == "violation"
    assert "(m + 1) * epsilon = 5;" in res.note  # 4 time points
    assert 1.0 < res.empirical_epsilon_lower_bound <= 5.0


def test_lnte_needs_a_neighbour_that_keeps_the_time_grid():
    with pytest.raises(ValueError, match="time grid"):
        audit_lnte(epsilon=1.0, durations=[1.0, 2.0, 3.0], events=[1, 1, 1], draws=10, rng=rng(0))
    with pytest.raises(ValueError, match="release"):
        audit_lnte(epsilon=1.0, durations=[1.0], events=[1], draws=10, rng=rng(0), release="x")


# --------------------------------------------------------------------------- SSP


def test_ssp_laplace_share_is_not_flagged():
    res = audit_ssp(epsilon=1.0, component="xy", draws=50_000, rng=rng(9))
    assert res.claimed_epsilon == pytest.approx(0.5)
    assert res.verdict == "consistent"
    assert res.empirical_epsilon_lower_bound > 0.25


def test_ssp_with_half_the_noise_is_flagged():
    res = audit_ssp(epsilon=1.0, component="xy", noise_scale=0.5, draws=50_000, rng=rng(10))
    assert res.true_epsilon == pytest.approx(1.0)
    assert res.verdict == "violation"
    assert 0.5 < res.empirical_epsilon_lower_bound <= 1.0


def test_ssp_wishart_share_is_flagged_because_its_support_moves():
    """A finding, not a test artefact: Wishart(d+1) noise is PSD, so X^T X + W lies in
    X^T X + PSD; an output outside X'^T X' + PSD (probability 1 - exp(-eps1/2) under D)
    is impossible under D'. The noisy X^T X is not epsilon-DP for any epsilon."""
    res = audit_ssp(epsilon=1.0, component="xx", draws=50_000, rng=rng(11))
    assert res.true_epsilon == math.inf
    assert res.verdict == "violation"
    assert res.empirical_epsilon_lower_bound > 5.0


def test_ssp_wishart_escape_probability_matches_the_chi_square_formula():
    from dprepro.learners.noise import ssp_noise

    r = rng(12)
    eps1, d, n = 0.5, 3, 20_000
    x = np.ones(d)  # |x_ij| <= B_x = 1
    hits = 0
    for _ in range(n):
        W, _ = ssp_noise(d, epsilon=1.0, clip_x=1.0, clip_y=1.0, rng=r)
        hits += np.linalg.eigvalsh(W - np.outer(x, x))[0] < 0
    p = 1 - math.exp(-eps1 / 2)
    assert stats.binomtest(int(hits), n, p).pvalue > LEVEL


# --------------------------------------------------------------------------- objective perturbation


@pytest.mark.parametrize("variant", ["paper", "cms11"])
def test_vectorised_minimiser_equals_dp_logistic_regression_fit(variant):
    X = np.vstack([np.zeros((40, 1)), [[1.0]]])
    y = np.r_[np.ones(20), np.zeros(20), 1]
    model = DPLogisticRegression(0.5, variant=variant, rng=rng(0))
    eps_noise, alpha = model.privacy_parameters()
    A, s = model.design(X), np.where(y == 1, 1.0, -1.0)
    mask = np.array([1.0, 0.0]) if variant == "paper" else np.ones(2)
    lib, B = [], []
    for i in range(40):
        fitted = DPLogisticRegression(0.5, variant=variant, rng=rng(13, i)).fit(X, y)
        lib.append(fitted.weights_)
        B.append(objective_perturbation_noise(2, epsilon=eps_noise, rng=rng(13, i)))
    lib, B = np.array(lib), np.array(B)
    exists = np.ones(len(B), dtype=bool)
    if variant == "paper":
        exists = (B[:, -1] > -A[s < 0, -1].sum()) & (B[:, -1] < A[s > 0, -1].sum())
        # without a minimiser the library's solver runs away
        assert np.all(np.linalg.norm(lib[~exists], axis=1) > 1e6)
    W, converged = _op_fit_batch(A, s, alpha, mask, B[exists])
    assert converged.all()
    np.testing.assert_allclose(W, lib[exists], atol=1e-5)


@pytest.mark.parametrize(("epsilon", "n_background"), [(0.5, 20), (1.0, 10), (2.0, 5)])
def test_objective_perturbation_cms11_is_not_flagged(epsilon, n_background):
    res = audit_objective_perturbation(
        epsilon=epsilon,
        variant="cms11",
        n_background=n_background,
        draws=20_000,
        rng=rng(14, n_background),
    )
    assert res.verdict == "consistent"


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_objective_perturbation_log_density_ratio_of_cms11_stays_within_epsilon(epsilon):
    """CMS11 Theorem 9 bounds the log density ratio of the minimiser by epsilon at every w;
    the audit's statistic is that exact ratio, so every drawn value must respect it, and
    it must integrate to one: E_D'[exp(s)] = 1."""
    setup = _op_neighbours(
        epsilon=epsilon, variant="cms11", l2=0.1, gamma_scale=None, n_background=3
    )
    r = rng(18, int(10 * epsilon))
    s_d = _op_log_ratio(setup, _op_sample(setup, "d", 20_000, r)[0])
    s_dp = _op_log_ratio(setup, _op_sample(setup, "dprime", 20_000, r)[0])
    assert np.all(np.abs(np.concatenate([s_d, s_dp])) <= epsilon + 1e-9)
    assert np.max(np.abs(s_d)) > 0.1 * epsilon  # not trivially zero
    ratio = np.exp(s_dp)
    assert abs(ratio.mean() - 1) < 6 * ratio.std() / np.sqrt(ratio.size)


def test_objective_perturbation_with_a_smaller_gamma_scale_is_flagged():
    # nominal Gamma scale 2/eps' = 4 at epsilon = 1; a tenth of it
    res = audit_objective_perturbation(
        epsilon=1.0, variant="cms11", gamma_scale=0.4, n_background=10, draws=20_000, rng=rng(15)
    )
    assert res.verdict == "violation"


@pytest.mark.parametrize(("epsilon", "n_background"), [(0.5, 20), (1.0, 10)])
def test_objective_perturbation_paper_variant_is_flagged(epsilon, n_background):
    """The paper's variant leaves the bias unpenalised and skips CMS11's eps' correction;
    the Jacobian factor of its privacy loss is unbounded."""
    res = audit_objective_perturbation(
        epsilon=epsilon,
        variant="paper",
        n_background=n_background,
        draws=60_000,
        rng=rng(16, n_background),
    )
    assert res.verdict == "violation"


def test_objective_perturbation_projection_statistic_runs():
    res = audit_objective_perturbation(
        epsilon=1.0, variant="cms11", draws=2_000, rng=rng(17), statistic="projection"
    )
    assert "projection" in res.statistic and res.verdict == "consistent"


# --------------------------------------------------------------------------- the table


def test_run_all_audits_table_is_deterministic_and_flags_what_it_should():
    a = run_all_audits(rng_seed=5, draws_scale=0.02)
    b = run_all_audits(rng_seed=5, draws_scale=0.02)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == AUDIT_COLUMNS
    assert set(a.role) == {"published", "corrected", "control"}
    assert set(a.verdict) <= {"consistent", "violation"}
    assert (
        a.verdict
        == np.where(a.empirical_epsilon_lower_bound > a.claimed_epsilon, "violation", "consistent")
    ).all()
    known = a.true_epsilon.notna()
    assert (a.empirical_epsilon_lower_bound[known] <= a.true_epsilon[known]).all()
    # every release the studies run has the study's true epsilon (NaN only for the
    # rescaled-Gamma control of objective perturbation, which no study runs)
    assert list(a.loc[~known, "variant"]) == ["cms11, gamma_scale=0.4"]
    assert {"lnte_grid", "subsample_and_aggregate"} <= set(a.mechanism)
    # published mechanisms that cannot hold their claim, even with few draws
    rrr_paper = a[(a.mechanism == "rrr") & a.variant.str.startswith("calibration=paper")]
    assert (rrr_paper.verdict == "violation").all()
    assert (a[a.mechanism == "lnte"].verdict == "violation").all()
    assert (a[a.role == "corrected"].verdict == "consistent").all()
    c = run_all_audits(rng_seed=6, draws_scale=0.02)
    assert not c.empirical_epsilon_lower_bound.equals(a.empirical_epsilon_lower_bound)


def test_learner_draws_scale_scales_the_learners_audits_only():
    """Each row has its own stream, so with learner_draws_scale the learners' rows are those
    of a run at that scale and every other row that of a run at draws_scale."""
    learners = ["objective_perturbation", "ssp"]
    mixed = run_all_audits(rng_seed=5, draws_scale=0.001, learner_draws_scale=0.03)
    small = run_all_audits(rng_seed=5, draws_scale=0.001)
    large = run_all_audits(rng_seed=5, draws_scale=0.03)
    is_learner = mixed.mechanism.isin(learners)
    assert is_learner.sum() == 12 and (~is_learner).sum() > 10
    pd.testing.assert_frame_equal(mixed[is_learner], large[is_learner])
    pd.testing.assert_frame_equal(mixed[~is_learner], small[~is_learner])
    assert (mixed.draws[is_learner] == 3000).all()
    assert (mixed.draws[~is_learner] == 1000).all()
    # unset: the learners follow draws_scale
    pd.testing.assert_frame_equal(
        run_all_audits(rng_seed=5, draws_scale=0.001, learner_draws_scale=None), small)


def test_run_all_audits_bad_arguments():
    with pytest.raises(ValueError, match="rng_seed"):
        run_all_audits(rng_seed=-1)
    with pytest.raises(ValueError, match="draws_scale"):
        run_all_audits(rng_seed=0, draws_scale=0.0)
    with pytest.raises(ValueError, match="learner_draws_scale"):
        run_all_audits(rng_seed=0, learner_draws_scale=-1.0)


def test_audits_require_a_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        audit_laplace_indicators(alpha=1.0, draws=10, rng=np.random.RandomState(0))


def test_every_rrr_release_of_the_run_gets_an_audit_row_and_a_privacy_claim():
    """Issue 40: a three-arm cohort (k = 3) or an ε outside the shipped 1, 2, 3 had no
    rrr.privacy row. Each (k, ε, calibration) the run uses gets one; the shipped rows
    and their streams stay as they were (the new rows come last)."""
    import math

    from dprepro.audit.claims import privacy_claims

    base = run_all_audits(rng_seed=4, draws_scale=0.001)
    settings = [[5, 1.0, "paper"], [3, 1.0, "paper"], [4, 0.5, "exact"], [3, 1.0, "paper"]]
    table = run_all_audits(rng_seed=4, draws_scale=0.001, rrr_settings=settings)
    pd.testing.assert_frame_equal(table.iloc[:len(base)], base)
    new = table.iloc[len(base):]
    # each row's draws are its own: the k = 4 row alone has the same bound as beside k = 3
    four_alone = run_all_audits(rng_seed=4, draws_scale=0.001, rrr_settings=[[4, 0.5, "exact"]])
    pd.testing.assert_frame_equal(four_alone.iloc[[-1]].reset_index(drop=True),
                                  new.iloc[[-1]].reset_index(drop=True))
    # (5, 1, paper) is shipped, (3, 1, paper) given twice: two rows, in sorted order
    assert list(new.variant) == ["calibration=paper, k=3", "calibration=exact, k=4"]
    assert list(new.role) == ["published", "corrected"]
    assert list(new.claimed_epsilon) == [1.0, 0.5]
    np.testing.assert_allclose(new.true_epsilon, [1 + math.log(2), 0.5])
    claims = privacy_claims(table).set_index("claim_id")
    three = claims.loc["rrr.privacy.rrr.calibration_paper_k_3.eps1"]
    assert three["verdict"] == "fails" and three["ci_upper"] == pytest.approx(1 + math.log(2))
    assert three["claim_origin"] == "paper"
    four = claims.loc["rrr.privacy.rrr.calibration_exact_k_4.eps0.5"]
    assert four["verdict"] == "holds" and four["claim_origin"] == "beyond"
    # the interval's lower end is the audit's bound at 1 - 1e-9: the row says so (it said
    # 0.95); the pipeline's, the largest of its learners' bounds, at 1 - (their number) 1e-9
    pipeline = claims.index.str.startswith("repr.privacy.pipeline")
    assert (claims.loc[~pipeline, "level"] == 1 - 1e-9).all()
    learners = table[(table.role == "published")
                     & table.mechanism.isin(["objective_perturbation", "ssp"])]
    smallest = learners[learners.claimed_epsilon == learners.claimed_epsilon.min()]
    assert claims.loc[pipeline, "level"].tolist() == [1 - len(smallest) * 1e-9]
    with pytest.raises(ValueError, match="calibration"):
        run_all_audits(rng_seed=4, draws_scale=0.001, rrr_settings=[[3, 1.0, "fair"]])
    with pytest.raises(ValueError, match="k must be"):
        run_all_audits(rng_seed=4, draws_scale=0.001, rrr_settings=[[1, 1.0, "paper"]])


def test_the_runs_rrr_settings_follow_its_cohorts_epsilons_and_calibrations():
    """One [k, ε, calibration] per label count, configured ε and calibration: k from each
    cohort's configured groups (ipssr 5, kidney 4, the small test cohort's three arms),
    with the Cox analysis' extra cohorts."""
    from pathlib import Path

    import yaml

    from dprepro.config.schema import fill_defaults, load_schema
    from dprepro.studies.rrr_survival.plan import privacy_settings

    root = Path(__file__).parents[1]
    config = yaml.safe_load((root / "config" / "config.yaml").read_text())
    small = yaml.safe_load((root / "tests" / "data" / "small_config.yaml").read_text())
    config["datasets"]["toy"] = small["datasets"]["toy"]
    config["rrr_survival"].update(datasets=["ipssr", "kidney", "toy"], epsilons=[3, 1, 0.7])
    fill_defaults(config, load_schema(root / "workflow" / "schemas" / "config.schema.yaml"))
    ks = {3, 4, 5} | {len(config["datasets"][d].get("groups") or [])
                      for d in config["rrr_survival"]["cox"]["extra_datasets"]}
    assert privacy_settings(config) == [[k, e, c] for k in sorted(ks) for e in (0.7, 1.0, 3.0)
                                        for c in ("paper", "exact")]
