"""Batched Cox regression (dprepro.survival.cox) against lifelines and R's coxph."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lifelines import CoxPHFitter

from dprepro.survival.cox import CoxPH, _check_time_event, _fit, fit_cox_batch, treatment_dummies
from dprepro.survival.cox_levels import factor_labels

ROOT = Path(__file__).resolve().parents[1]
KIDNEY = pd.read_csv(ROOT / "resources" / "kidney" / "kidney.csv")
VETERAN = pd.read_csv(ROOT / "resources" / "r-survival" / "veteran.csv")
# committed output of tests/r/cox_reference.R (R 4.2.2, survival 3.5-3)
R_REFERENCE = pd.read_csv(
    ROOT / "tests" / "data" / "cox_reference_r.csv",
    keep_default_na=False,
    float_precision="round_trip",
)
R_CASES = {  # dataset -> (frame, group column, covariates)
    "kidney": (KIDNEY, "disease", ["age"]),
    "veteran": (VETERAN, "celltype", ["karno", "age"]),
    # the factor alone: the level-sum kernel (dprepro.survival.cox_levels)
    "kidney_factor": (KIDNEY, "disease", []),
    "veteran_factor": (VETERAN, "celltype", []),
}
# lifelines stops at |step| < 1e-7 by default; tight settings make it converge fully
TIGHT = {"precision": 1e-13, "r_precision": 1e-15, "max_steps": 200}


def design(frame, group, covariates):
    levels = sorted(frame[group].unique())
    codes = np.searchsorted(levels, frame[group].to_numpy())
    return treatment_dummies(codes, len(levels), frame[covariates].to_numpy(float))


def synthetic(seed, n=300, *, ties=True, k=3):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, k, n)
    age = rng.normal(60, 10, n)
    t = rng.exponential(1 / np.exp(0.4 * g + 0.03 * (age - 60))) * 10
    if ties:
        t = np.round(t)  # many tied times, some at 0
    e = (rng.uniform(size=n) < 0.7).astype(int)
    return t, e, treatment_dummies(g, k, age[:, None])


def lifelines_fit(t, e, X, cluster=None):
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    df["T"], df["E"] = t, e
    kwargs = {}
    if cluster is not None:
        df["id"] = cluster
        kwargs["cluster_col"] = "id"
    return CoxPHFitter().fit(df, "T", "E", fit_options=TIGHT, **kwargs)


def lifelines_cases():
    for seed in (0, 1, 2):
        yield f"synthetic{seed}", synthetic(seed)
    yield "synthetic-no-ties", synthetic(3, ties=False)
    for name, (frame, group, covs) in R_CASES.items():
        yield (
            name,
            (frame["time"].to_numpy(float), frame["status"].to_numpy(), design(frame, group, covs)),
        )


LIFELINES_CASES = dict(lifelines_cases())


@pytest.mark.parametrize("case", sorted(LIFELINES_CASES))
def test_efron_fit_equals_lifelines(case):
    t, e, X = LIFELINES_CASES[case]
    ref = lifelines_fit(t, e, X)
    got = CoxPH().fit(t, e, X)
    assert got.converged_
    np.testing.assert_allclose(got.coef_, ref.params_.to_numpy(), rtol=0, atol=1e-8)
    np.testing.assert_allclose(got.se_, ref.standard_errors_.to_numpy(), rtol=1e-6)
    assert got.log_likelihood_ == pytest.approx(ref.log_likelihood_, rel=1e-10)


@pytest.mark.parametrize("seed", [4, 5])
def test_cluster_robust_variance_equals_lifelines_without_ties(seed):
    # lifelines' score residuals ignore ties, so compare on continuous times
    t, e, X = synthetic(seed, ties=False)
    cluster = np.random.default_rng(seed).integers(0, 90, len(t))
    ref = lifelines_fit(t, e, X, cluster)
    got = CoxPH().fit(t, e, X, cluster=cluster)
    np.testing.assert_allclose(got.coef_, ref.params_.to_numpy(), rtol=0, atol=1e-8)
    np.testing.assert_allclose(got.se_, ref.standard_errors_.to_numpy(), rtol=1e-6)
    model_se = np.sqrt(np.diag(got.model_variance_))
    assert not np.allclose(got.se_, model_se, rtol=1e-3)


R_GROUPS = sorted(R_REFERENCE.groupby(["dataset", "ties", "cluster"]).groups)


@pytest.mark.r_oracle
@pytest.mark.parametrize("dataset,ties,cluster", R_GROUPS)
def test_fit_equals_r_coxph(dataset, ties, cluster):
    frame, group, covs = R_CASES[dataset]
    ref = R_REFERENCE[
        (R_REFERENCE.dataset == dataset)
        & (R_REFERENCE.ties == ties)
        & (R_REFERENCE.cluster == cluster)
    ]
    got = CoxPH(ties).fit(
        frame["time"],
        frame["status"],
        design(frame, group, covs),
        cluster=frame[cluster] if cluster else None,
    )
    assert got.converged_
    np.testing.assert_allclose(got.coef_, ref.coef.astype(float), rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        np.sqrt(np.diag(got.model_variance_)), ref.se.astype(float), rtol=1e-8
    )
    if cluster:  # R's robust se, with Efron-weighted score residuals over tied events
        np.testing.assert_allclose(got.se_, ref.robust_se.astype(float), rtol=1e-8)
    assert got.log_likelihood_ == pytest.approx(float(ref.loglik.iloc[0]), rel=1e-11)
    assert got.log_likelihood_null_ == pytest.approx(float(ref.loglik_null.iloc[0]), rel=1e-11)


@pytest.mark.r_oracle
def test_breslow_and_efron_differ_on_tied_data():
    ref = R_REFERENCE[(R_REFERENCE.dataset == "kidney") & (R_REFERENCE.cluster == "")]
    efron, breslow = (
        ref[ref.ties == m].coef.astype(float).to_numpy() for m in ("efron", "breslow")
    )
    assert np.max(np.abs(efron - breslow)) > 1e-3  # so the R test above tells them apart


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_batch_equals_one_fit_at_a_time(ties):
    rng = np.random.default_rng(11)
    t, e, X0 = synthetic(6, n=250)
    labels = rng.integers(0, 4, (7, len(t)))
    X = treatment_dummies(labels, 4, X0[:, -1:])
    cluster = np.arange(len(t)) // 3
    batch = fit_cox_batch(t, e, X, ties=ties, cluster=cluster)
    assert batch.coef.shape == (7, 4) and batch.robust_variance.shape == (7, 4, 4)
    for b in range(7):
        one = CoxPH(ties).fit(t, e, X[b], cluster=cluster)
        np.testing.assert_allclose(batch.coef[b], one.coef_, rtol=0, atol=1e-10)
        np.testing.assert_allclose(batch.variance[b], one.model_variance_, rtol=1e-9)
        np.testing.assert_allclose(batch.robust_variance[b], one.robust_variance_, rtol=1e-9)
        assert batch.log_likelihood[b] == pytest.approx(one.log_likelihood_, rel=1e-12)
        assert batch.n_iter[b] == one.n_iter_
    np.testing.assert_allclose(batch.se, np.sqrt(np.diagonal(batch.robust_variance, 0, 1, 2)))


def test_non_identifiable_designs_give_nan_without_warnings():
    rng = np.random.default_rng(2)
    n = 200
    t, e = rng.exponential(size=n), rng.integers(0, 2, n)
    labels = rng.integers(0, 3, (5, n))
    labels[1] = rng.integers(0, 2, n)  # level 2 empty: a zero column
    labels[2, (e == 1) & (labels[2] == 2)] = 0  # level 2 without events: beta -> -inf
    labels[3] = 0  # no dummy at all
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fit_cox_batch(t, e, treatment_dummies(labels, 3), cluster=np.arange(n))
    np.testing.assert_array_equal(res.converged, [True, False, False, False, True])
    assert np.all(np.isnan(res.coef[[1, 3]])) and np.all(np.isnan(res.variance[[1, 3]]))
    assert not np.all(np.isfinite(res.coef[2])) or res.coef[2, 1] < -5
    for b in (0, 4):  # the others are not disturbed
        one = CoxPH().fit(t, e, treatment_dummies(labels[b], 3))
        np.testing.assert_allclose(res.coef[b], one.coef_, atol=1e-12)


def test_estimates_do_not_depend_on_row_order_or_covariate_shift():
    t, e, X = synthetic(7)
    ref = CoxPH().fit(t, e, X)
    perm = np.random.default_rng(0).permutation(len(t))
    shifted = X[perm] + np.array([0.0, 0.0, 1000.0])
    got = CoxPH().fit(t[perm], e[perm], shifted)
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-10)
    np.testing.assert_allclose(got.se_, ref.se_, rtol=1e-8)
    assert got.log_likelihood_ == pytest.approx(ref.log_likelihood_, rel=1e-12)


def test_breslow_integer_weights_equal_replicated_rows():
    # the corrected score uses weighted Breslow fits (dprepro.survival.cox_misclassification)
    t, e, X = synthetic(8, n=120)
    w = np.random.default_rng(1).integers(1, 4, len(t))
    tt, ee = _check_time_event(t, e)
    weighted = _fit(tt, ee, X[None], w[None].astype(float), "breslow", np.arange(len(t)), 1e-10, 50)
    rows = np.repeat(np.arange(len(t)), w)
    replicated = CoxPH("breslow").fit(t[rows], e[rows], X[rows], cluster=rows)
    np.testing.assert_allclose(weighted.coef[0], replicated.coef_, atol=1e-10)
    np.testing.assert_allclose(weighted.variance[0], replicated.model_variance_, rtol=1e-9)
    np.testing.assert_allclose(weighted.robust_variance[0], replicated.robust_variance_, rtol=1e-9)


def _rows_kernel(t, e, labels, k, w=None, ties="efron", cluster=None):
    """The row-level kernel on the same model: dummies times 2 are not a factor coding
    (so ``_fit`` does not take the level sums), and their coefficients are half."""
    tt, ee = _check_time_event(t, e)
    codes = None if cluster is None else np.unique(cluster, return_inverse=True)[1]
    return _fit(tt, ee, 2 * treatment_dummies(labels, k), w, ties, codes, 1e-10, 50)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
@pytest.mark.parametrize("timing", ["tied", "heavily tied", "untied"])
def test_level_sums_equal_the_row_kernel(ties, timing):
    """Factor designs (level sums) against the general row-level kernel: estimates,
    variances (model and clustered), log-likelihoods and convergence, also
    for a level without rows (singular) and a level without events (no convergence)."""
    rng = np.random.default_rng({"tied": 1, "heavily tied": 2, "untied": 3}[timing])
    n, k = 400, 4
    labels = rng.integers(0, k, (6, n))
    t = rng.exponential(1 / np.exp(0.4 * labels[0])) * 30
    t = {"tied": np.round(t), "heavily tied": np.round(t / 10), "untied": t}[timing]
    e = (rng.uniform(size=n) < 0.7).astype(int)
    labels[4] = rng.integers(0, k - 1, n)  # level k-1 has no rows
    labels[5, (e == 1) & (labels[5] == 2)] = 0  # level 2 without events
    cluster = np.arange(n) // 3
    levels = fit_cox_batch(t, e, treatment_dummies(labels, k), ties=ties, cluster=cluster)
    rows = _rows_kernel(t, e, labels, k, ties=ties, cluster=cluster)
    np.testing.assert_array_equal(levels.converged, rows.converged)
    np.testing.assert_array_equal(levels.converged, [True] * 4 + [False, False])
    # the stopping rule |step| <= tol (1 + |beta|) is not scale-free: the halved
    # coefficients may stop one iteration apart
    assert np.all(np.abs(levels.n_iter[:4] - rows.n_iter[:4]) <= 1)
    ok = slice(0, 4)
    np.testing.assert_allclose(levels.coef[ok], 2 * rows.coef[ok], rtol=0, atol=1e-10)
    np.testing.assert_allclose(levels.variance[ok], 4 * rows.variance[ok], rtol=1e-9)
    np.testing.assert_allclose(levels.robust_variance[ok], 4 * rows.robust_variance[ok],
                               rtol=1e-8)
    np.testing.assert_allclose(levels.log_likelihood[ok], rows.log_likelihood[ok], rtol=1e-12)
    np.testing.assert_allclose(levels.log_likelihood_null, rows.log_likelihood_null,
                               rtol=1e-12)
    np.testing.assert_array_equal(np.isnan(levels.coef), np.isnan(rows.coef))
    assert np.all(np.isnan(levels.coef[4]))
    assert not np.all(np.isfinite(levels.coef[5])) or levels.coef[5, 1] < -5


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_level_sums_with_case_weights_equal_the_row_kernel(ties):
    """Weights (B, n), or one label vector shared by weighted designs; negative
    weights (the corrected score's, Breslow) included."""
    rng = np.random.default_rng(4)
    n, k = 300, 3
    t, e = np.round(rng.exponential(size=n) * 20), (rng.uniform(size=n) < 0.8).astype(int)
    labels = rng.integers(0, k, (3, n))
    low = -0.3 if ties == "breslow" else 0.2
    w = rng.uniform(low, 1.5, (3, n))
    tt, ee = _check_time_event(t, e)
    got = _fit(tt, ee, treatment_dummies(labels, k), w, ties, np.arange(n), 1e-10, 50)
    ref = _rows_kernel(t, e, labels, k, w=w, ties=ties, cluster=np.arange(n))
    assert got.converged.all() and ref.converged.all()
    np.testing.assert_allclose(got.coef, 2 * ref.coef, rtol=0, atol=1e-10)
    np.testing.assert_allclose(got.robust_variance, 4 * ref.robust_variance, rtol=1e-8)
    shared = _fit(tt, ee, treatment_dummies(labels[:1], k), w, ties, None, 1e-10, 50)
    one = _rows_kernel(t, e, np.repeat(labels[:1], 3, axis=0), k, w=w, ties=ties)
    np.testing.assert_allclose(shared.coef, 2 * one.coef, rtol=0, atol=1e-10)


def test_factor_labels_recognises_only_a_factor_coding():
    labels = np.array([[0, 1, 2, 1, 0]])
    np.testing.assert_array_equal(factor_labels(treatment_dummies(labels, 3)), labels)
    x = treatment_dummies(labels, 3)
    assert factor_labels(np.concatenate([x, np.ones((1, 5, 1))], axis=2)) is None  # 2 ones
    assert factor_labels(0.5 * x) is None
    assert factor_labels(2 * x) is None
    assert factor_labels(treatment_dummies(labels, 3, np.arange(5.0))) is None
    binary = np.array([[[0.0], [1.0], [1.0]]])  # one 0/1 covariate: a factor of 2 levels
    np.testing.assert_array_equal(factor_labels(binary), [[0, 1, 1]])


def test_batch_of_factor_designs_is_blocked_without_changing_a_fit(monkeypatch):
    """Blocks sized for the cache give each design the fit it has alone."""
    from dprepro.survival import cox_levels

    rng = np.random.default_rng(6)
    n = 200
    t, e = np.round(rng.exponential(size=n) * 30), rng.integers(0, 2, n)
    X = treatment_dummies(rng.integers(0, 3, (9, n)), 3)
    whole = fit_cox_batch(t, e, X, cluster=np.arange(n))
    monkeypatch.setattr(cox_levels, "_BLOCK", 1)  # one design per block
    blocked = fit_cox_batch(t, e, X, cluster=np.arange(n))
    np.testing.assert_allclose(blocked.coef, whole.coef, rtol=0, atol=1e-13)
    np.testing.assert_allclose(blocked.robust_variance, whole.robust_variance, rtol=1e-12)


def test_treatment_dummies():
    labels = np.array([[0, 1, 2, 1], [2, 2, 0, 0]])
    out = treatment_dummies(labels, 3, covariates=np.array([1.0, 2.0, 3.0, 4.0]))
    assert out.shape == (2, 4, 3)
    np.testing.assert_array_equal(out[0], [[0, 0, 1], [1, 0, 2], [0, 1, 3], [1, 0, 4]])
    np.testing.assert_array_equal(out[1, :, :2], [[0, 1], [0, 1], [0, 0], [0, 0]])
    assert treatment_dummies(labels[0], 3).shape == (4, 2)
    with pytest.raises(ValueError, match="labels"):
        treatment_dummies([0, 3], 3)
    with pytest.raises(TypeError, match="labels"):
        treatment_dummies([0.0, 1.0], 3)
    with pytest.raises(ValueError, match="k must"):
        treatment_dummies([0, 1], 1)
    with pytest.raises(ValueError, match="covariates"):
        treatment_dummies(labels, 3, covariates=np.ones((3, 1)))


GOOD_T, GOOD_E = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 0, 1, 1])
GOOD_X = np.array([[[0.0], [1.0], [0.0], [1.0]]])


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"time": [[1.0, 2.0, 3.0, 4.0]]}, ValueError, "time must be one-dimensional"),
        ({"time": [1.0, -2.0, 3.0, 4.0]}, ValueError, "time must be >= 0"),
        ({"time": [1.0, np.nan, 3.0, 4.0]}, ValueError, "time must be finite"),
        ({"time": ["a", "b", "c", "d"]}, TypeError, "time must be real"),
        ({"event": [1, 0, 2, 1]}, ValueError, "event must contain only"),
        ({"event": [1, 0, 1]}, ValueError, "event must have the shape"),
        ({"event": [0, 0, 0, 0]}, ValueError, "no events"),
        ({"X": GOOD_X[0]}, ValueError, r"X must have shape \(B, n, p\)"),
        ({"X": GOOD_X[:, :3]}, ValueError, "X must have n = 4 rows"),
        ({"X": np.where(GOOD_X > 0, np.inf, 0.0)}, ValueError, "X must be finite"),
        ({"ties": "exact"}, ValueError, "ties must be"),
        ({"cluster": [1, 2]}, ValueError, "cluster must have shape"),
        ({"tol": 0.0}, ValueError, "tol must"),
        ({"max_iter": 0}, ValueError, "max_iter must"),
    ],
)
def test_validation_names_the_argument(kwargs, error, match):
    args = {"time": GOOD_T, "event": GOOD_E, "X": GOOD_X} | kwargs
    time, event, X = args.pop("time"), args.pop("event"), args.pop("X")
    with pytest.raises(error, match=match):
        fit_cox_batch(time, event, X, **args)


def test_estimator_interface():
    t, e, X = synthetic(9, n=80)
    model = CoxPH(ties="breslow")
    assert model.fit(t, e, X[:, 0]) is model  # 1-D X: one column
    assert model.coef_.shape == model.se_.shape == (1,)
    assert model.robust_variance_ is None and model.variance_ is model.model_variance_
    assert isinstance(model.converged_, bool) and model.n_iter_ >= 1
    assert model.log_likelihood_ >= model.log_likelihood_null_
    with pytest.raises(ValueError, match="X must have shape"):
        model.fit(t, e, X[None])
