"""The audit equals the study: the same true ε for the same release, and an audit row (with
a control that must fail) for every mechanism a printed finite ε rests on.

Statistical checks use Clopper–Pearson bounds at overall level 1e-9 (the audit's) or tests
at 1e-9, each with power against a wrong noise scale, so they do not flake.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dprepro.audit.learner_audits import audit_objective_perturbation, audit_ssp
from dprepro.audit.release_audits import audit_grid_lnte, grid_lnte_audit_cohort
from dprepro.audit.selection_audits import audit_feature_selection, selection_audit_data
from dprepro.audit.suite import run_all_audits
from dprepro.learners.accounting import (
    objective_perturbation_epsilon,
    selection_epsilon,
    ssp_epsilon,
)
from dprepro.learners.feature_selection import hashed_votes, noisy_top_features
from dprepro.learners.noise import ssp_laplace_noise, ssp_laplace_noise_draws
from dprepro.mechanisms.grid_lnte import GridLNTE, grid_counts
from dprepro.mechanisms.registry import row_record
from dprepro.studies.repr_transfer.privacy import table_records
from dprepro.studies.rrr_survival.analysis import run_release

LEVEL = 1e-9


def rng(*key):
    return np.random.default_rng([71, *key])


# --------------------------------------------------------------------------- audit == study


@pytest.fixture(scope="module")
def audit_table():
    return run_all_audits(rng_seed=3, draws_scale=0.001)


def _cohort(k: int) -> pd.DataFrame:
    """A small cohort with every one of ``k`` groups present."""
    r = np.random.default_rng(5)
    n = 40 * k
    return pd.DataFrame({"id": [f"p{i}" for i in range(n)],
                         "group": np.repeat([f"g{j}" for j in range(k)], 40),
                         "time": r.exponential(10.0, n).round(1) + 0.1,
                         "event": (r.random(n) < 0.7).astype(int)})


def _rrr_survival(mechanism: str, epsilon: float, calibration: str, k: int = 3) -> float:
    """The true ε the rrr_survival study records for a release it runs."""
    cohort = _cohort(k)
    _, record, _ = run_release(cohort, dataset="audit", mechanism=mechanism, epsilon=epsilon,
                               calibration=calibration, labels=sorted(set(cohort["group"])),
                               draws=1, seed=0)
    return record.true_epsilon


def _repr(kind: str, representation: str, epsilon: float, pipeline: str, variant: str = ""):
    """The privacy record the repr_transfer study writes on a row of its ``kind`` table."""
    table = pd.DataFrame({"representation": [representation], "epsilon": [epsilon],
                          "pipeline": [pipeline]})
    # the shipped configurations list their cancer-type cases (listed: a finite ε can hold)
    # (and the drugs: listed, or the synthetic generator's)
    return table_records(table, kind=kind, settings={"variant": variant, "l2": 0.1,
                                                     "cases": [["a", "b"]],
                                                     "drugs_from_data": False})[0]


def _study_epsilon(row) -> float:
    """The study's printed true ε for the release an audit row audits (None: a component)."""
    m, claimed = row.mechanism, float(row.claimed_epsilon)
    if m in ("laplace_indicators", "randomized_response"):
        return row_record({"mechanism": m, "alpha": claimed}).true_epsilon
    if m == "rrr":
        calibration, k = (part.split("=")[1] for part in row.variant.split(", "))
        return _rrr_survival("rrr", claimed, calibration, int(k))
    if m == "lnte":
        return _rrr_survival("lnte", claimed, "")
    if m == "lnte_grid":
        return _rrr_survival("lnte_grid", claimed, row.note.split(";")[0])
    if m == "objective_perturbation":
        # the paper's variant runs in the as-published pipeline, CMS11 in the corrected one
        pipeline = "as_published" if row.variant == "paper" else "corrected"
        return _repr("cancer_type", "pca", claimed, pipeline, row.variant).true_epsilon
    return None  # SSP's statistics and the selection: shares of a fit, checked below


def test_every_audit_row_prints_the_studys_true_epsilon(audit_table):
    rows = audit_table[audit_table.role != "control"]
    checked = set()
    for row in rows.itertuples():
        study = _study_epsilon(row)
        if study is None:
            continue
        checked.add(row.mechanism)
        assert row.true_epsilon == study, (row.mechanism, row.variant, row.claimed_epsilon)
    assert checked == set(rows.mechanism) - {"ssp", "subsample_and_aggregate"}
    # LNTE as published: the study prints inf, and so does the audit (it printed (m+1)ε)
    lnte = rows[rows.mechanism == "lnte"]
    assert len(lnte) == 6 and np.isinf(lnte.true_epsilon).all()
    cms11 = rows[rows.variant == "cms11"]
    assert (cms11.true_epsilon == cms11.claimed_epsilon).all() and len(cms11) == 3


def test_the_audits_ssp_statistics_compose_to_the_studys_fit(audit_table):
    """Per pipeline, the audited statistics of the drug task's learner (at ε = 1: X'X and
    X'y each claim 1/2) compose to the true ε the study prints for that learner's fit."""
    ssp = audit_table[(audit_table.mechanism == "ssp") & (audit_table.role != "control")]
    by_variant = dict(zip(ssp.variant, ssp.true_epsilon, strict=True))
    assert set(by_variant) == {"X^T y + Laplace", "X^T X + Wishart(d+1)", "X^T X + Laplace"}
    published = by_variant["X^T X + Wishart(d+1)"] + by_variant["X^T y + Laplace"]
    corrected = by_variant["X^T X + Laplace"] + by_variant["X^T y + Laplace"]
    assert published == _repr("drug", "pca", 1.0, "as_published").true_epsilon == math.inf
    assert corrected == _repr("drug", "pca", 1.0, "corrected").true_epsilon == 1.0


def test_the_audits_selection_row_is_the_studys_selection_share(audit_table):
    row = audit_table[(audit_table.mechanism == "subsample_and_aggregate")
                      & (audit_table.role == "corrected")].iloc[0]
    record = _repr("drug", "dp_feature_selection", 1.0, "corrected")
    assert row.claimed_epsilon == record.extra["selection_epsilon"] == 0.5
    assert row.true_epsilon == row.claimed_epsilon
    assert record.true_epsilon == 1.0  # the selection's ε/2 and the learner's ε/2
    # the authors' selection (as published) voids the fit's ε, by the same rule
    assert _repr("drug", "dp_feature_selection", 1.0, "as_published").true_epsilon == math.inf
    assert selection_epsilon(0.5, public_parts=False) == math.inf


def test_learner_rules():
    assert objective_perturbation_epsilon(0.7, variant="cms11") == 0.7
    assert objective_perturbation_epsilon(0.7, variant="paper") == math.inf
    assert ssp_epsilon(2.0, xx_noise="laplace", public_centring=True, statistic="xx") == 1.0
    assert ssp_epsilon(2.0, xx_noise="laplace", public_centring=True, xx_share=0.25,
                       statistic="xy") == 1.5
    assert ssp_epsilon(2.0, xx_noise="wishart", public_centring=True, statistic="xy") == 1.0
    assert ssp_epsilon(2.0, xx_noise="wishart", public_centring=True) == math.inf
    assert ssp_epsilon(2.0, xx_noise="laplace", public_centring=False) == math.inf
    assert ssp_epsilon(2.0, xx_noise="laplace", public_centring=True) == 2.0
    assert selection_epsilon(0.5, public_parts=True) == 0.5
    assert selection_epsilon(0.5, public_parts=True, changed_parts=1) == 1.0
    with pytest.raises(ValueError, match="variant"):
        objective_perturbation_epsilon(1.0, variant="x")
    with pytest.raises(ValueError, match="statistic"):
        ssp_epsilon(1.0, xx_noise="laplace", public_centring=True, statistic="x")
    with pytest.raises(ValueError, match="finite"):
        ssp_epsilon(math.inf, xx_noise="laplace", public_centring=True)
    with pytest.raises(ValueError, match="changed_parts"):
        selection_epsilon(1.0, public_parts=True, changed_parts=0)


def test_objective_perturbation_rows_state_the_studys_epsilon():
    cms11 = audit_objective_perturbation(epsilon=1.0, variant="cms11", n_background=10,
                                         draws=2_000, rng=rng(1))
    paper = audit_objective_perturbation(epsilon=1.0, variant="paper", n_background=10,
                                         draws=2_000, rng=rng(2))
    control = audit_objective_perturbation(epsilon=1.0, variant="cms11", gamma_scale=0.4,
                                           n_background=10, draws=2_000, rng=rng(3))
    assert (cms11.true_epsilon, paper.true_epsilon) == (1.0, math.inf)
    assert math.isnan(control.true_epsilon)


# --------------------------------------------------------------------------- grid LNTE


@pytest.mark.parametrize("epsilon", [1.0, 3.0])
def test_grid_lnte_on_a_configured_horizon_is_not_flagged(epsilon):
    res = audit_grid_lnte(epsilon=epsilon, draws=100_000, rng=rng(10, int(epsilon)))
    assert res.verdict == "consistent" and res.true_epsilon == epsilon
    assert res.empirical_epsilon_lower_bound > 0.8 * epsilon  # the statistic has power


def test_grid_lnte_with_half_the_noise_is_flagged():
    res = audit_grid_lnte(epsilon=1.0, run_epsilon=2.0, draws=100_000, rng=rng(11))
    assert res.verdict == "violation" and res.true_epsilon == 2.0
    assert 1.0 < res.empirical_epsilon_lower_bound <= 2.0


def test_grid_lnte_audit_neighbours_differ_in_one_cell_by_one():
    """D' and D (one event added in the first bin) on the public grid: one count apart."""
    t, e = grid_lnte_audit_cohort(horizon=2.0, bins=2)
    _, d_dp, c_dp = grid_counts(t, e, horizon=2.0, bins=2)
    _, d_d, c_d = grid_counts(np.r_[t, 0.5], np.r_[e, 1], horizon=2.0, bins=2)
    np.testing.assert_array_equal(d_d - d_dp, [1, 0, 0])
    np.testing.assert_array_equal(c_d, c_dp)
    assert GridLNTE(epsilon=1.0, bins=2, horizon=2.0).scale == 1.0


# --------------------------------------------------------------------------- SSP's Laplace X'X


def test_ssp_laplace_xx_share_is_not_flagged():
    res = audit_ssp(epsilon=1.0, component="xx", xx_noise="laplace", dim=1, draws=100_000,
                    rng=rng(20))
    assert res.claimed_epsilon == 0.5 and res.true_epsilon == 0.5
    assert res.verdict == "consistent"
    assert res.empirical_epsilon_lower_bound > 0.35  # at d = 1 the pair's loss is 0.5


def test_ssp_laplace_xx_with_half_the_noise_is_flagged():
    res = audit_ssp(epsilon=1.0, component="xx", xx_noise="laplace", dim=1, noise_scale=0.5,
                    draws=100_000, rng=rng(21))
    assert res.true_epsilon == 1.0 and res.verdict == "violation"
    assert 0.5 < res.empirical_epsilon_lower_bound <= 1.0


def test_batched_ssp_laplace_noise_has_the_single_draws_law():
    kwargs = {"epsilon": 1.3, "clip_x": 0.8, "clip_y": 2.0, "xx_share": 0.3}
    E, L = ssp_laplace_noise_draws(3, 1, rng=np.random.default_rng(4), **kwargs)
    e, v = ssp_laplace_noise(3, rng=np.random.default_rng(4), **kwargs)
    np.testing.assert_array_equal(E[0], e)
    np.testing.assert_array_equal(L[0], v)
    dim, n = 3, 40_000
    E, L = ssp_laplace_noise_draws(dim, n, rng=np.random.default_rng(5), **kwargs)
    np.testing.assert_array_equal(E, np.transpose(E, (0, 2, 1)))
    xx_scale = dim**2 * 0.8**2 / (0.3 * 1.3)  # d^2 B_x^2 / eps1
    xy_scale = 2 * dim * 0.8 * 2.0 / (0.7 * 1.3)  # 2 d B_x B_y / eps2
    for j, k in [(0, 0), (0, 2), (1, 2)]:
        assert stats.kstest(E[:, j, k], stats.laplace(scale=xx_scale).cdf).pvalue > LEVEL
    assert stats.kstest(E[:, 0, 1], stats.laplace(scale=1.2 * xx_scale).cdf).pvalue < LEVEL
    assert stats.kstest(L[:, 1], stats.laplace(scale=xy_scale).cdf).pvalue > LEVEL
    assert stats.kstest(L[:, 1], stats.laplace(scale=1.2 * xy_scale).cdf).pvalue < LEVEL
    assert abs(np.corrcoef(E[:, 0, 1], E[:, 1, 2])[0, 1]) * math.sqrt(n) < 6.1


# --------------------------------------------------------------------------- feature selection


def test_hashed_feature_selection_is_not_flagged():
    res = audit_feature_selection(epsilon=0.5, draws=400_000, rng=rng(30))
    assert res.true_epsilon == 0.5 and res.verdict == "consistent"
    assert res.empirical_epsilon_lower_bound > 0.25


def test_hashed_feature_selection_at_the_authors_scale_is_flagged():
    """c = 1 (the authors' 2m/k) with hashed parts under replacement: half the noise."""
    res = audit_feature_selection(epsilon=0.5, changed_parts=1, draws=400_000, rng=rng(31))
    assert res.true_epsilon == 1.0 and res.verdict == "violation"
    assert 0.5 < res.empirical_epsilon_lower_bound <= 1.0


def test_selection_audit_neighbours_move_two_parts_and_the_law_is_laplaces():
    """The votes of D and D' (Lasso on the hashed parts), and the selection probability
    against the closed form of a difference of two Laplace variables."""
    k = 14
    data = selection_audit_data(k)
    votes_d, _ = hashed_votes(data["X_d"], data["y_d"], data["lines_d"], 1, n_parts=k,
                              key=data["key"])
    votes_dp, _ = hashed_votes(data["X_dp"], data["y_dp"], data["lines_dp"], 1, n_parts=k,
                               key=data["key"])
    assert list(votes_d) == [2, k - 2] and list(votes_dp) == [0, k]
    assert len(data["lines_d"]) == len(data["lines_dp"])  # replacement: same size
    assert data["lines_d"][:-1] == data["lines_dp"][:-1]
    assert data["lines_d"][-1] != data["lines_dp"][-1]
    eps, n = 0.5, 200_000
    picks = noisy_top_features(votes_d, k, 1, epsilon=eps, rng=rng(32), changed_parts=2,
                               draws=n)[:, 0]
    b = 2 * 2 * 1 / (k * eps)
    x = (votes_d[0] - votes_d[1]) / k / b  # P(feature 0) = P(L1 - L0 < x), x < 0
    p = math.exp(x) * (2 - x) / 4
    hits = int(np.count_nonzero(picks == 0))
    assert stats.binomtest(hits, n, p).pvalue > LEVEL
    wrong = math.exp(2 * x) * (2 - 2 * x) / 4  # half the noise
    assert stats.binomtest(hits, n, wrong).pvalue < LEVEL


def test_batched_noisy_top_features_are_successive_single_selections():
    votes = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    batch = noisy_top_features(votes, 6, 2, epsilon=0.8, rng=np.random.default_rng(9),
                               changed_parts=2, draws=50)
    r = np.random.default_rng(9)
    single = [noisy_top_features(votes, 6, 2, epsilon=0.8, rng=r, changed_parts=2)
              for _ in range(50)]
    np.testing.assert_array_equal(batch, np.array(single))
    with pytest.raises(ValueError, match="draws"):
        noisy_top_features(votes, 6, 2, epsilon=0.8, rng=r, draws=0)
