"""The Lasso fits of DP feature selection (dprepro.learners.lasso): the exact homotopy against
scikit-learn's coordinate descent run to convergence (an outside oracle) and the optimality
conditions, and the votes against the authors' coordinate descent at its tolerance."""

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso

from dprepro.learners.feature_selection import dp_select_features
from dprepro.learners.lasso import kkt_violation, lasso_coef
from dprepro.studies.repr_transfer import baselines


def _part(seed, n, p, *, rank=4):
    """Expression-like rows: low-rank correlated genes plus noise, a response on the factors."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, rank))
    X = 3.0 + z @ rng.normal(size=(rank, p)) + rng.normal(size=(n, p))
    y = 1.0 + z @ rng.normal(size=rank) + 0.5 * rng.normal(size=n)
    return X, y


def _converged_cd(X, y, alpha):
    """scikit-learn's coordinate descent run to a duality gap of 1e-13 x ||y||^2."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # it must converge to count
        return Lasso(alpha=alpha, tol=1e-13, max_iter=2_000_000).fit(X, y).coef_


@pytest.mark.parametrize("n,p,alpha", [(14, 100, 1 / 200), (14, 100, 0.05), (40, 25, 0.01),
                                       (28, 300, 1 / 750), (9, 60, 0.3)])
def test_lars_is_the_lasso_solution_of_converged_coordinate_descent(n, p, alpha):
    X, y = _part(n * p, n, p)
    exact = lasso_coef(X, y, alpha, solver="lars")
    reference = _converged_cd(X, y, alpha)
    np.testing.assert_allclose(exact, reference, rtol=0, atol=1e-7 * np.abs(reference).max())
    np.testing.assert_array_equal(exact != 0, np.abs(reference) > 1e-9)
    assert kkt_violation(X, y, exact, alpha) < 1e-9
    # at most rank(centred X) = min(n - 1, p) non-zeros (Tibshirani 2013)
    assert np.count_nonzero(exact) <= min(n - 1, p)


def test_kkt_violation_detects_a_wrong_solution():
    X, y = _part(3, 20, 50)
    exact = lasso_coef(X, y, 0.02, solver="lars")
    assert kkt_violation(X, y, exact, 0.02) < 1e-9
    assert kkt_violation(X, y, exact * 0.9, 0.02) > 1e-3
    assert kkt_violation(X, y, exact, 0.03) > 1e-3  # optimal for another α only
    wrong = exact.copy()
    wrong[np.flatnonzero(exact == 0)[0]] = 1e-3
    assert kkt_violation(X, y, wrong, 0.02) > 1e-6


def test_a_path_that_stops_short_is_finished_by_coordinate_descent():
    X, y = _part(5, 14, 100)
    alpha = 1 / 200
    full = lasso_coef(X, y, alpha, solver="lars")
    # two homotopy steps leave it far from optimal; coordinate descent finishes from there
    short = lasso_coef(X, y, alpha, solver="lars", max_iter=2)
    assert kkt_violation(X, y, short, alpha) < 1e-4
    np.testing.assert_allclose(short, full, atol=1e-4 * np.abs(full).max())


def test_lars_is_optimal_where_the_raw_path_ends_short():
    """Near interpolation (28 lines, 400 correlated genes, alpha = 1/750, paper mode's part
    size) scikit-learn's lars_path can end with the wrong active set; lasso_coef detects it
    by the KKT conditions and finishes it, so every part's solution is optimal and equals
    converged coordinate descent there."""
    from sklearn.linear_model import lars_path

    alpha, short = 1 / 750, []
    for seed in range(1000, 1040):
        X, y = _part(seed, 28, 400)
        coef = lasso_coef(X, y, alpha, solver="lars")
        assert kkt_violation(X, y, coef, alpha) < 1e-9, seed
        _, _, raw = lars_path(X - X.mean(0), y - y.mean(), method="lasso", alpha_min=alpha,
                              return_path=False)
        if kkt_violation(X, y, raw, alpha) > 1e-3:
            short.append(seed)
            np.testing.assert_allclose(coef, _converged_cd(X, y, alpha), rtol=0, atol=1e-9)
    assert short  # the finishing step was exercised (seed 1000 when measured)


def test_alpha_above_alpha_max_gives_zero():
    X, y = _part(8, 12, 30)
    alpha_max = np.abs((X - X.mean(0)).T @ (y - y.mean())).max() / len(y)
    np.testing.assert_array_equal(lasso_coef(X, y, 1.01 * alpha_max, solver="lars"), 0.0)
    assert np.count_nonzero(lasso_coef(X, y, 0.9 * alpha_max, solver="lars")) >= 1


def test_coordinate_descent_is_scikit_learns_lasso_to_the_bit():
    X, y = _part(2, 14, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 500 sweeps stop short
        sklearn = Lasso(alpha=0.01, fit_intercept=True, max_iter=500).fit(X, y).coef_
        np.testing.assert_array_equal(lasso_coef(X, y, 0.01, max_iter=500), sklearn)


def test_an_unknown_solver_is_an_error_naming_the_key():
    X, y = _part(1, 10, 20)
    with pytest.raises(ValueError, match="lasso_solver must be one of"):
        lasso_coef(X, y, 0.1, solver="lasso_lars")
    with pytest.raises(ValueError, match="lasso_solver"):
        baselines.subsample_votes(X, y, 3, lasso_solver="cd")
    with pytest.raises(ValueError, match="lasso_solver"):
        dp_select_features(X, y, 3, epsilon=1.0, rng=np.random.default_rng(0),
                           lasso_solver="exact")


def _top(coef, m):
    return set(np.argsort(-np.abs(coef), kind="stable")[:m].tolist())


def test_coordinate_descents_votes_differ_from_the_exact_ones_only_within_its_tolerance():
    """Coordinate descent at scikit-learn's tolerance stops short at these sizes, so some of
    its top-m votes differ from the exact Lasso's: every such swap must be between genes whose
    exact |beta| are closer than twice coordinate descent's own coefficient error (a swap the
    tolerance explains), and tightening the tolerance must remove the swaps."""
    m, swaps, fits = 10, 0, 0
    for seed in range(6):
        X, y = _part(100 + seed, 14, 250)
        alpha = 1 / 200  # the full run's parts: ~14 lines, 250 candidates, alpha = 1/N
        exact = lasso_coef(X, y, alpha, solver="lars")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            descent = lasso_coef(X, y, alpha, max_iter=10_000)
        error = np.abs(descent - exact).max()
        gained, lost = _top(descent, m) - _top(exact, m), _top(exact, m) - _top(descent, m)
        for a in lost:
            for b in gained:
                assert abs(abs(exact[a]) - abs(exact[b])) <= 2 * error, (seed, a, b, error)
        swaps += len(gained)
        fits += 1
        assert _top(_converged_cd(X, y, alpha), m) == _top(exact, m)
    assert fits == 6
    # the votes as coordinate descent gives them are not all exact (why lars is the default)
    assert swaps >= 1


def test_vote_schemes_with_lars_equal_converged_coordinate_descent(monkeypatch):
    """subsample_votes and hashed_votes run the homotopy per part; with every part solved by
    converged coordinate descent instead they give the same votes."""
    from dprepro.learners import lasso as lasso_module

    rng = np.random.default_rng(4)
    X, y = _part(21, 196, 120)
    y[rng.choice(196, 20, replace=False)] = np.nan  # missing responses are dropped first
    lines = np.array([f"line{i}" for i in range(196)], dtype=object)
    key = baselines.part_key(3)
    got_sub = baselines.subsample_votes(X, y, 5, lasso_solver="lars")
    got_hash = baselines.hashed_votes(X, y, lines, 5, n_parts=13, key=key, lasso_solver="lars")
    real = lasso_module.lasso_coef
    monkeypatch.setattr(lasso_module, "lasso_coef",
                        lambda X, y, alpha, **kw: _converged_cd(X, y, alpha)
                        if kw.get("solver") == "lars" else real(X, y, alpha, **kw))
    want_sub = baselines.subsample_votes(X, y, 5, lasso_solver="lars")
    want_hash = baselines.hashed_votes(X, y, lines, 5, n_parts=13, key=key, lasso_solver="lars")
    np.testing.assert_array_equal(got_sub[0], want_sub[0])
    assert got_sub[1] == want_sub[1] == math.isqrt(176)
    np.testing.assert_array_equal(got_hash[0], want_hash[0])
    assert got_sub[0].sum() == 5 * math.isqrt(176)


def test_feature_selection_passes_its_solver_to_the_votes():
    X, y = _part(31, 120, 60)
    lines = np.array([f"l{i}" for i in range(120)], dtype=object)
    for hashed in (False, True):
        fs = baselines.FeatureSelection(n_select=4, public=X, lasso_solver="lars",
                                        hashed=hashed, part_key=baselines.part_key(1))
        votes, k = fs.votes(X, y, lines)
        want = (baselines.hashed_votes(X, y, lines, 4, n_parts=k, key=fs.part_key,
                                       lasso_solver="lars") if hashed
                else baselines.subsample_votes(X, y, 4, lasso_solver="lars"))
        np.testing.assert_array_equal(votes, want[0])
    feats = baselines.method_features(
        "dp_feature_selection", seeds=1, samples=np.arange(10),
        representations={}, baselines={"feature_selection": {
            "n_genes": 3, "candidate_genes": 0, "sparsity": 1.0, "lasso_max_iter": 100,
            "lasso_solver": "lars"}},
        public_expression=_frame(X[:50]), private_expression=_frame(X[:10]))
    assert feats.selection.lasso_solver == "lars"


def _frame(X):
    import pandas as pd

    return pd.DataFrame(X, columns=[f"G{j}" for j in range(X.shape[1])])
