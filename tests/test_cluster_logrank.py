"""Cluster-robust log-rank (robust score test) against R's coxph(..., cluster = id)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprepro.survival.cluster_logrank import pairwise_robust_logrank, robust_score_test
from dprepro.survival.logrank import pairwise_logrank

ROOT = Path(__file__).resolve().parents[1]
KIDNEY = pd.read_csv(ROOT / "resources" / "kidney" / "kidney.csv")
# committed output of tests/r/cluster_logrank_reference.R (R 4.2.2, survival 3.5-3)
REFERENCE = pd.read_csv(ROOT / "tests" / "data" / "r_cluster_logrank.csv")
LEVELS = ["AN", "GN", "Other", "PKD"]


def grouping(case):
    if case == "disease":
        return KIDNEY["disease"].to_numpy(object)
    return np.asarray(LEVELS, dtype=object)[KIDNEY["id"].to_numpy() % 4]


@pytest.mark.r_oracle
@pytest.mark.parametrize("case", ["disease", "by_id"])
def test_robust_score_test_equals_r_coxph_cluster(case):
    groups = grouping(case)
    got = pairwise_robust_logrank(KIDNEY["time"], KIDNEY["status"], groups, KIDNEY["id"],
                                  labels=LEVELS).set_index(["group_a", "group_b"])
    ref = REFERENCE[REFERENCE["case"] == case].set_index(["group_a", "group_b"])
    assert len(got) == len(ref) == 6
    for key, row in ref.iterrows():
        assert got.loc[key, "robust_statistic"] == pytest.approx(row["robust_statistic"],
                                                                 rel=1e-10)
    # the plain log-rank of the same pairs agrees with survdiff, and differs from the robust
    plain = pairwise_logrank(KIDNEY["time"], KIDNEY["status"], groups,
                             labels=LEVELS).set_index(["group_a", "group_b"])
    for key, row in ref.iterrows():
        assert plain.loc[key, "statistic"] == pytest.approx(row["logrank_statistic"], rel=1e-10)
    assert not np.allclose(plain["statistic"], got["robust_statistic"], rtol=1e-3)


def test_one_row_per_cluster_keeps_the_log_rank_numerator():
    """Duplicating every person doubles the row-level test but not the clustered one."""
    rng = np.random.default_rng(3)
    t = rng.exponential(size=60).round(1)
    e = rng.integers(0, 2, size=60)
    x = np.repeat([0.0, 1.0], 30)
    stat, p = robust_score_test(t, e, x, np.arange(60))
    assert np.isfinite(stat) and 0 < p <= 1
    # doubling every person (two identical rows each) leaves the robust test unchanged
    # when the rows are clustered, while the naive row-level test doubles
    # (same x-bar and hazards, so the same residuals: U doubles, V quadruples when clustered)
    doubled = np.r_[t, t], np.r_[e, e], np.r_[x, x]
    clustered, _ = robust_score_test(*doubled, np.r_[np.arange(60), np.arange(60)])
    naive, _ = robust_score_test(*doubled, np.arange(120))
    assert clustered == pytest.approx(stat, rel=1e-9)
    assert naive == pytest.approx(2 * stat, rel=1e-9)


def test_batch_over_draws_matches_single_calls():
    rng = np.random.default_rng(4)
    draws = rng.choice(np.asarray(LEVELS, dtype=object), size=(3, len(KIDNEY)))
    batch = pairwise_robust_logrank(KIDNEY["time"], KIDNEY["status"], draws, KIDNEY["id"],
                                    labels=LEVELS)
    row = batch[(batch["draw"] == 2) & (batch["group_a"] == "GN") & (batch["group_b"] == "PKD")]
    keep = np.isin(draws[2], ["GN", "PKD"])
    stat, p = robust_score_test(KIDNEY["time"][keep], KIDNEY["status"][keep],
                                (draws[2][keep] == "PKD").astype(float), KIDNEY["id"][keep])
    assert row["robust_statistic"].iloc[0] == pytest.approx(stat, rel=1e-12)
    assert row["robust_p_value"].iloc[0] == pytest.approx(p, rel=1e-12)


def test_rrr_releases_one_label_per_patient_and_per_patient_epsilon():
    """Both kidney rows of a patient carry one released label; per-patient ε is the true ε.

    The audit event is the joint release of **both** rows of a patient:
    P(rows 1 and 2 both released as a | true a) / P(both as a | true b) is
    e^ε for one draw per patient and e^{2ε} for independent draws per row, so
    the estimate must contain the mechanism's true ε and exclude 2·ε (both at
    significance 1e-9). The per-row variant is checked to be flagged.
    """
    from scipy import stats

    from dprepro.mechanisms.rrr import RevisedRandomizedResponse
    from dprepro.studies.rrr_survival.analysis import release_labels

    cohort = KIDNEY.rename(columns={"disease": "group", "status": "event"})
    mech = RevisedRandomizedResponse(epsilon=1.0, categories=LEVELS)
    draws = 20000
    released = release_labels(cohort, mech, rng=np.random.default_rng(11), draws=draws)
    rows = cohort.groupby("id").indices
    for idx in rows.values():
        assert len(idx) == 2
        assert (released[:, idx[0]] == released[:, idx[1]]).all()
    first = np.array([idx[0] for idx in rows.values()])
    second = np.array([idx[1] for idx in rows.values()])
    truth = cohort["group"].to_numpy(object)[first]
    z = stats.norm.isf(1e-9 / 2)
    a, b = "Other", "GN"

    def joint_log_ratio(labels):
        both = (labels[:, first] == a) & (labels[:, second] == a)
        hits_a, hits_b = both[:, truth == a], both[:, truth == b]
        p_a, p_b = hits_a.mean(), hits_b.mean()
        # delta method on log(p_a / p_b) (draws are independent across patients and draws)
        se_log = np.sqrt((1 - p_a) / (p_a * hits_a.size) + (1 - p_b) / (p_b * hits_b.size))
        return np.log(p_a / p_b), se_log

    log_ratio, se_log = joint_log_ratio(released)
    assert abs(log_ratio - mech.true_epsilon) < z * se_log, (log_ratio, mech.true_epsilon)
    assert abs(log_ratio - 2 * mech.true_epsilon) > z * se_log
    # the same audit flags independent draws per row (2ε per patient)
    per_row = mech.privatize(cohort["group"].to_numpy(object), rng=np.random.default_rng(12),
                             draws=draws)
    log_ratio, se_log = joint_log_ratio(per_row)
    assert abs(log_ratio - 2 * mech.true_epsilon) < z * se_log
    assert abs(log_ratio - mech.true_epsilon) > z * se_log
