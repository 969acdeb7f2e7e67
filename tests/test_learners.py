"""Tests for dprepro.learners.logistic_regression: zero-noise oracles and noise distributions.

Statistical tests use significance level 1e-9, so a correct implementation
fails with probability ~1e-9 per test; each has a mis-specified counterpart
that the same test must reject.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from dprepro.learners.clipping import ssp_clipping_weights
from dprepro.learners.feature_selection import dp_select_features, select_columns
from dprepro.learners.linear_regression import SSPLinearRegression
from dprepro.learners.logistic_regression import DPLogisticRegression, PendingFits
from dprepro.learners.noise import (
    objective_perturbation_noise,
    objective_perturbation_noise_draws,
    psd_repair,
    ssp_laplace_noise,
    ssp_noise,
    ssp_noise_draws,
)

LEVEL = 1e-9


def _logistic_data(seed=0, n=300, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 2.0
    w = rng.normal(size=d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w + 0.5)))).astype(int)
    return X, y


# --------------------------------------------------------------------------- #
# objective perturbation
# --------------------------------------------------------------------------- #
def test_design_rows_are_scaled_clipped_and_in_unit_ball():
    X, _ = _logistic_data()
    scale = float(np.linalg.norm(X, axis=1).mean())
    A = DPLogisticRegression(np.inf, scale=scale).design(X)
    assert A.shape == (X.shape[0], X.shape[1] + 1)
    assert np.all(np.linalg.norm(A, axis=1) <= 1 + 1e-12)
    np.testing.assert_allclose(A[:, -1], 1 / math.sqrt(2))
    Z = X / scale
    small = np.linalg.norm(Z, axis=1) <= 1
    assert small.any() and (~small).any()
    np.testing.assert_allclose(A[small, :-1], Z[small] / math.sqrt(2))
    np.testing.assert_allclose(np.linalg.norm(A[~small, :-1], axis=1), 1 / math.sqrt(2))


def test_cms11_variant_at_inf_equals_sklearn():
    X, y = _logistic_data()
    scale = float(np.linalg.norm(X, axis=1).mean())
    l2 = 0.1
    m = DPLogisticRegression(np.inf, l2=l2, scale=scale, variant="cms11").fit(X, y)
    A = m.design(X)
    sk = LogisticRegression(C=1 / l2, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(A, y)
    np.testing.assert_allclose(m.weights_, sk.coef_.ravel(), atol=1e-4)
    assert np.all(m.noise_ == 0)


def test_paper_variant_at_inf_equals_sklearn_with_unpenalised_intercept():
    X, y = _logistic_data(seed=3)
    scale = float(np.linalg.norm(X, axis=1).mean())
    l2 = 0.1
    m = DPLogisticRegression(np.inf, l2=l2, scale=scale).fit(X, y)
    A = m.design(X)
    sk = LogisticRegression(C=1 / l2, tol=1e-12, max_iter=100_000).fit(A[:, :-1], y)
    np.testing.assert_allclose(m.weights_[:-1], sk.coef_.ravel(), atol=1e-4)
    np.testing.assert_allclose(m.intercept_, sk.intercept_, atol=1e-4)
    np.testing.assert_array_equal(m.predict(X), sk.predict(A[:, :-1]))
    np.testing.assert_allclose(m.predict_proba(X), sk.predict_proba(A[:, :-1]), atol=1e-5)


def test_labels_are_returned_in_their_own_type():
    X, y = _logistic_data(seed=4)
    labels = np.where(y == 1, "lung", "brain")
    m = DPLogisticRegression(np.inf).fit(X, labels)
    assert set(m.predict(X)) <= {"brain", "lung"}
    assert list(m.classes_) == ["brain", "lung"]
    assert m.score(X, labels) > 0.7


def test_noise_norm_is_gamma_d_plus_1_and_misscaled_gamma_is_rejected():
    rng = np.random.default_rng(11)
    dim, eps = 6, 0.7
    norms = np.array(
        [
            np.linalg.norm(objective_perturbation_noise(dim, epsilon=eps, rng=rng))
            for _ in range(4000)
        ]
    )
    assert stats.kstest(norms, stats.gamma(a=dim, scale=2 / eps).cdf).pvalue > LEVEL
    assert stats.kstest(norms, stats.gamma(a=dim, scale=1.2 * 2 / eps).cdf).pvalue < LEVEL
    # the off-by-one the authors' code once had (shape d instead of d + 1)
    assert stats.kstest(norms, stats.gamma(a=dim - 1, scale=2 / eps).cdf).pvalue < LEVEL


def test_noise_direction_is_uniform():
    rng = np.random.default_rng(12)
    dim, n = 5, 4000
    U = np.array([objective_perturbation_noise(dim, epsilon=1.0, rng=rng) for _ in range(n)])
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    # uniform on the sphere: E[u] = 0, Cov[u] = I/dim, so n*dim*|mean|^2 ~ chi2(dim)
    stat = n * dim * np.sum(U.mean(axis=0) ** 2)
    assert stats.chi2(dim).sf(stat) > LEVEL
    np.testing.assert_allclose(np.mean(U**2, axis=0), 1 / dim, atol=6 * math.sqrt(2 / n) / dim)
    # a direction biased towards the first axis is rejected by the same statistic
    V = U.copy()
    V[:, 0] = np.abs(V[:, 0])
    assert stats.chi2(dim).sf(n * dim * np.sum(V.mean(axis=0) ** 2)) < LEVEL


def test_fit_draws_noise_of_dimension_d_plus_1_at_epsilon():
    X, y = _logistic_data(seed=5, n=120, d=3)
    m = DPLogisticRegression(0.5, rng=np.random.default_rng(7)).fit(X, y)
    expected = objective_perturbation_noise(4, epsilon=0.5, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(m.noise_, expected)
    assert m.epsilon_noise_ == 0.5 and m.l2_effective_ == 0.1
    # the fitted weights satisfy the perturbed first-order condition
    A = m.design(X)
    s = np.where(y == 1, 1.0, -1.0)
    grad = -A.T @ (s / (1 + np.exp(s * (A @ m.weights_)))) + m.noise_
    grad[:-1] += 0.1 * m.weights_[:-1]
    np.testing.assert_allclose(grad, 0.0, atol=1e-6)


def _lbfgs_minimiser(model, X, y, b):
    """scipy's L-BFGS-B on the sum-form objective of the docstring (the oracle of the
    library's Newton method; what the library itself ran before)."""
    A = model.design(X)
    s = np.where(y == np.unique(y)[1], 1.0, -1.0)
    _, alpha = model.privacy_parameters()
    mask = np.ones(A.shape[1])
    if model.variant == "paper":
        mask[-1] = 0.0

    def objective(w):
        m = s * (A @ w)
        grad = -A.T @ (s * expit(-m)) + alpha * mask * w + b
        return np.sum(np.logaddexp(0.0, -m)) + 0.5 * alpha * np.sum(mask * w * w) + b @ w, grad

    return optimize.minimize(objective, np.zeros(A.shape[1]), jac=True, method="L-BFGS-B",
                             options={"gtol": 1e-12, "ftol": 0.0, "maxiter": 100_000}).x


def _random_fits(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n, d = int(rng.integers(15, 150)), int(rng.integers(1, 12))
        X = rng.normal(size=(n, d)) * 2.0
        y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
        y[:2] = [0, 1]
        eps = float(rng.choice([0.5, 1.0, 4.0, np.inf]))
        yield X, y, eps, str(rng.choice(["paper", "cms11"])), int(rng.integers(2**31))


def test_newton_minimiser_equals_scipys_lbfgs_and_predicts_alike():
    checked = 0
    for X, y, eps, variant, seed in _random_fits(31, 120):
        model = DPLogisticRegression(eps, variant=variant,
                                     rng=np.random.default_rng(seed) if eps < np.inf else None)
        model.fit(X, y)
        if not model.converged_:
            continue
        w = _lbfgs_minimiser(model, X, y, model.noise_)
        np.testing.assert_allclose(model.weights_, w, rtol=1e-6, atol=1e-6)
        test = np.random.default_rng(seed).normal(size=(300, X.shape[1])) * 2.0
        np.testing.assert_array_equal(model.decision_function(test) > 0,
                                      model.design(test) @ w > 0)
        checked += 1
    assert checked >= 100


def test_fits_solved_together_equal_fits_one_by_one_and_draw_alike():
    fits = list(_random_fits(32, 40))
    shared = np.random.default_rng(5)  # one generator for several fits, as the search does
    one_by_one, pending = [], PendingFits()
    for k, (X, y, eps, variant, seed) in enumerate(fits):
        rng = shared if k % 3 == 0 else np.random.default_rng(seed)
        one_by_one.append(DPLogisticRegression(eps, variant=variant, rng=rng if eps < np.inf
                                               else None).fit(X, y))
    shared = np.random.default_rng(5)
    models = []
    for k, (X, y, eps, variant, seed) in enumerate(fits):
        rng = shared if k % 3 == 0 else np.random.default_rng(seed)
        models.append(pending.add(DPLogisticRegression(eps, variant=variant, rng=rng if eps <
                                                       np.inf else None), X, y))
    assert pending.solve() == models
    for alone, together in zip(one_by_one, models, strict=True):
        np.testing.assert_array_equal(together.noise_, alone.noise_)
        assert together.converged_ == alone.converged_
        # problems of one shape are stacked, never padded: the same arithmetic, to the bit
        np.testing.assert_array_equal(together.weights_, alone.weights_)
    X, y = _logistic_data(seed=6, n=50)
    model = DPLogisticRegression(np.inf)
    assert model.fit(X, y).converged_
    with pytest.raises(ValueError, match="queued already"):
        pending = PendingFits()
        pending.add(model, X, y)
        pending.add(model, X, y)


def test_fits_split_into_chunks_equal_fits_in_one_stack(monkeypatch):
    from dprepro.learners import logistic_regression

    X, y = _logistic_data(seed=8, n=90, d=5)
    def fitted():
        pending = PendingFits()
        for seed in range(9):
            pending.add(DPLogisticRegression(1.0, rng=np.random.default_rng(seed)), X, y)
        return [m.weights_ for m in pending.solve()]
    whole = fitted()
    monkeypatch.setattr(logistic_regression, "_BATCH_ENTRIES", 2 * 90 * 6)  # 2 fits a chunk
    np.testing.assert_array_equal(fitted(), whole)


def test_a_tiny_penalty_takes_many_newton_steps_and_still_reaches_the_minimiser():
    # alpha = 1e-6 leaves the objective nearly flat: 100 steps were not enough here
    X, y = _logistic_data(seed=9, n=200, d=5)
    for seed in range(6):
        model = DPLogisticRegression(1.0, l2=1e-6, rng=np.random.default_rng(seed)).fit(X, y)
        if not model.has_minimiser_:
            continue
        assert model.converged_
        w = _lbfgs_minimiser(model, X, y, model.noise_)
        np.testing.assert_allclose(model.weights_, w, rtol=1e-5)
    with pytest.warns(RuntimeWarning, match="short of their minimiser"):
        DPLogisticRegression(1.0, l2=1e-6, max_iter=3, rng=np.random.default_rng(0)).fit(X, y)


def test_paper_variant_without_a_minimiser_is_flagged_and_predicts_one_class():
    # J is unbounded below along the unpenalised bias when b_bias leaves
    # (-n_neg / sqrt 2, n_pos / sqrt 2): Newton's steps run away, as L-BFGS's did
    X, y = _logistic_data(seed=7, n=60, d=2)
    n_pos, n_neg = int(y.sum()), int((1 - y).sum())
    seen = {True: 0, False: 0}
    for seed in range(400):
        model = DPLogisticRegression(0.3, rng=np.random.default_rng(seed)).fit(X, y)
        b_bias = model.noise_[-1]
        bounded = -n_neg / math.sqrt(2) < b_bias < n_pos / math.sqrt(2)
        assert model.has_minimiser_ == bounded == model.converged_, (seed, b_bias)
        seen[bounded] += 1
        if not bounded:
            assert len(set(model.predict(X))) == 1
            assert model.predict(X[:1])[0] == (1 if b_bias < 0 else 0)
    assert seen[True] > 100 and seen[False] > 5


def test_cms11_privacy_parameters():
    c = 0.25
    # small penalty: eps' would be negative -> extra penalty and eps/2
    m = DPLogisticRegression(1.0, l2=0.1, variant="cms11", rng=np.random.default_rng(0))
    eps_noise, alpha = m.privacy_parameters()
    assert eps_noise == 0.5
    assert alpha == pytest.approx(c / math.expm1(0.25))
    # large penalty: eps' = eps - 2 log(1 + c/alpha), no extra penalty
    m = DPLogisticRegression(2.0, l2=10.0, variant="cms11", rng=np.random.default_rng(0))
    assert m.privacy_parameters() == pytest.approx((2.0 - 2 * math.log1p(c / 10.0), 10.0))
    m = DPLogisticRegression(1.0, l2=0.1, rng=np.random.default_rng(0))
    assert m.privacy_parameters() == (1.0, 0.1)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"epsilon": float("nan")}, ValueError, "epsilon"),
        ({"epsilon": "1"}, TypeError, "epsilon"),
        ({"epsilon": 1.0}, TypeError, "rng"),
        ({"epsilon": 1.0, "rng": 3}, TypeError, "rng"),
        ({"epsilon": np.inf, "l2": 0.0}, ValueError, "l2"),
        ({"epsilon": np.inf, "scale": -1.0}, ValueError, "scale"),
        ({"epsilon": np.inf, "variant": "x"}, ValueError, "variant"),
    ],
)
def test_logistic_validation(kwargs, exc, match):
    eps = kwargs.pop("epsilon")
    with pytest.raises(exc, match=match):
        DPLogisticRegression(eps, **kwargs)


def test_logistic_rejects_non_binary_labels():
    X, _ = _logistic_data(n=30)
    with pytest.raises(ValueError, match="two classes"):
        DPLogisticRegression(np.inf).fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError, match="dim"):
        objective_perturbation_noise(0, epsilon=1.0, rng=np.random.default_rng(0))


# --------------------------------------------------------------------------- #
# sufficient statistics perturbation
# --------------------------------------------------------------------------- #
def _regression_data(seed=0, n=80, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 2.0
    y = X @ rng.normal(size=d) + rng.normal(size=n) + 5.0
    return X, y


def test_ssp_at_inf_is_closed_form_ridge():
    X, y = _regression_data()
    m = SSPLinearRegression(np.inf, clip_x=np.inf, clip_y=np.inf, ridge=1.0).fit(X, y)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    expected = np.linalg.solve(Xc.T @ Xc + np.eye(3), Xc.T @ yc)
    np.testing.assert_array_equal(m.coef_, expected)
    np.testing.assert_allclose(m.predict(X), Xc @ expected + y.mean(), rtol=1e-12)
    # finite bounds at epsilon=inf: ridge on the clipped, centred data
    m = SSPLinearRegression(np.inf, clip_x=0.5, clip_y=1.0, ridge=2.0).fit(X, y)
    Xk, yk = np.clip(Xc, -0.5, 0.5), np.clip(yc, -1.0, 1.0)
    np.testing.assert_array_equal(m.coef_, np.linalg.solve(Xk.T @ Xk + 2 * np.eye(3), Xk.T @ yk))


def _ssp_noise_from_fits(eps, bx, by, n_fits, d=3, xx_share=0.5):
    X, y = _regression_data(n=20, d=d)
    base = SSPLinearRegression(np.inf, clip_x=bx, clip_y=by).fit(X, y)
    rng = np.random.default_rng(21)
    W, L = [], []
    for _ in range(n_fits):
        m = SSPLinearRegression(eps, clip_x=bx, clip_y=by, rng=rng, xx_share=xx_share).fit(X, y)
        W.append(m.xx_ - base.xx_)
        L.append(m.xy_ - base.xy_)
    return np.array(W), np.array(L)


def test_ssp_laplace_noise_scale():
    d, eps, bx, by = 3, 1.0, 0.5, 2.0
    _, L = _ssp_noise_from_fits(eps, bx, by, 1500, d=d)
    scale = 2 * d * bx * by / (eps / 2)  # = 4 d Bx By / eps, the authors' value
    sample = L.ravel()
    assert stats.kstest(sample, stats.laplace(scale=scale).cdf).pvalue > LEVEL
    assert stats.kstest(sample, stats.laplace(scale=1.5 * scale).cdf).pvalue < LEVEL
    assert stats.kstest(sample, stats.laplace(scale=scale / 2).cdf).pvalue < LEVEL


def test_ssp_wishart_noise_mean_and_trace():
    d, eps, bx, by = 3, 2.0, 0.5, 1.0
    W, _ = _ssp_noise_from_fits(eps, bx, by, 800, d=d)
    scale = d * bx**2 / (eps / 2)  # = 2 d Bx^2 / eps, df = d + 1
    # tr W / scale is a sum of (d+1)*d squared standard normals: chi2((d + 1) d)
    tr = np.trace(W, axis1=1, axis2=2) / scale
    assert stats.kstest(tr, stats.chi2((d + 1) * d).cdf).pvalue > LEVEL
    assert stats.kstest(tr / 1.2, stats.chi2((d + 1) * d).cdf).pvalue < LEVEL
    # E[W] = (d + 1) * scale * I ; entries have sd <= scale * sqrt(2 (d + 1))
    se = scale * math.sqrt(2 * (d + 1)) / math.sqrt(len(W))
    np.testing.assert_allclose(W.mean(axis=0), (d + 1) * scale * np.eye(d), atol=6.5 * se)
    assert np.all(np.linalg.eigvalsh(W) > 0)
    np.testing.assert_allclose(W, np.transpose(W, (0, 2, 1)))


def test_ssp_budget_split_moves_noise():
    rng = np.random.default_rng(0)
    W, L = ssp_noise(4, epsilon=1.0, clip_x=1.0, clip_y=1.0, rng=rng, xx_share=0.9)
    assert W.shape == (4, 4) and L.shape == (4,)
    # xx_share=0.9 leaves 0.1 * eps for X'y: Laplace scale 2 d / 0.1 = 80
    Ls = np.concatenate(
        [
            ssp_noise(4, epsilon=1.0, clip_x=1.0, clip_y=1.0, rng=rng, xx_share=0.9)[1]
            for _ in range(500)
        ]
    )
    assert stats.kstest(Ls, stats.laplace(scale=80.0).cdf).pvalue > LEVEL


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"epsilon": 1.0, "clip_x": 1.0, "clip_y": 1.0}, TypeError, "rng"),
        ({"epsilon": 1.0, "clip_x": np.inf, "clip_y": 1.0, "rng": 0}, ValueError, "clip_x"),
        ({"epsilon": 1.0, "clip_x": 1.0, "clip_y": 0.0}, ValueError, "clip_y"),
        ({"epsilon": np.inf, "clip_x": 1.0, "clip_y": 1.0, "ridge": -1.0}, ValueError, "ridge"),
        (
            {"epsilon": np.inf, "clip_x": 1.0, "clip_y": 1.0, "xx_share": 1.0},
            ValueError,
            "xx_share",
        ),
        ({"epsilon": -2.0, "clip_x": 1.0, "clip_y": 1.0}, ValueError, "epsilon"),
    ],
)
def test_ssp_validation(kwargs, exc, match):
    if kwargs.get("rng") == 0:
        kwargs["rng"] = np.random.default_rng(0)
    eps = kwargs.pop("epsilon")
    with pytest.raises(exc, match=match):
        SSPLinearRegression(eps, **kwargs)


def test_ssp_rejects_missing_responses():
    X, y = _regression_data()
    y[3] = np.nan
    with pytest.raises(ValueError, match="y"):
        SSPLinearRegression(np.inf, clip_x=1.0, clip_y=1.0).fit(X, y)


def test_ssp_clipping_weights_on_grid_and_reproducible():
    kw = dict(epsilon=1.0, grid=[0.2, 1.0, 2.0], n_datasets=2, n_noise=2)
    a = ssp_clipping_weights(60, 2, rng=np.random.default_rng(5), **kw)
    b = ssp_clipping_weights(60, 2, rng=np.random.default_rng(5), **kw)
    assert a == b
    assert a[0] in kw["grid"] and a[1] in kw["grid"]
    with pytest.raises(ValueError, match="epsilon"):
        ssp_clipping_weights(60, 2, epsilon=np.inf, rng=np.random.default_rng(0))


def _spearman_by_rankdata(P, y):
    """The rank-array formula: mid-ranks of every row, centred, correlated."""
    rp = stats.rankdata(P, axis=1)
    ry = stats.rankdata(y)
    rp = rp - rp.mean(axis=1, keepdims=True)
    ry = ry - ry.mean()
    num = rp @ ry
    den = np.sqrt(np.sum(rp**2, axis=1) * np.sum(ry**2))
    out = np.zeros(P.shape[0])
    out[den > 0] = num[den > 0] / den[den > 0]
    return out


@pytest.mark.filterwarnings("ignore:An input array is constant")
@pytest.mark.parametrize("n", [3, 17, 800])
def test_spearman_rows_bitwise_equal_to_rank_formula_and_to_scipy(n):
    from dprepro.learners.clipping import _spearman_rows

    rng = np.random.default_rng(n)
    P = rng.standard_normal((50, n))
    P[:4] = np.round(P[:4])  # rows with ties take the rankdata path
    P[4] = 2.0  # a constant row has rho 0
    for y in (rng.standard_normal(n), np.round(rng.standard_normal(n)), np.ones(n)):
        got = _spearman_rows(P, y)
        # bit for bit: the score sums, hence the chosen weights, cannot move
        assert np.array_equal(got, _spearman_by_rankdata(P, y))
        for row, rho in zip(P, got, strict=True):
            ref = stats.spearmanr(row, y).statistic
            assert rho == pytest.approx(0.0 if np.isnan(ref) else ref, abs=1e-12)


@pytest.mark.parametrize("xx_noise", ["wishart", "laplace"])
def test_clipping_scores_equal_one_fit_at_a_time(xx_noise):
    """The batched grid search against a direct loop: one clipped SSP fit and
    one scipy Spearman rho per (data set, noise draw, w_x, w_y)."""
    from dprepro.learners.clipping import _ssp_clipping_scores

    n, d, grid, n_datasets, n_noise, eps = 40, 3, np.array([0.3, 0.9, 1.5]), 2, 3, 0.7
    kw = dict(epsilon=eps, grid=grid, n_datasets=n_datasets, n_noise=n_noise,
              xx_share=0.5, ridge=1.0, xx_noise=xx_noise)
    got = _ssp_clipping_scores(n, d, rng=np.random.default_rng(11), **kw)

    rng = np.random.default_rng(11)
    noise = ssp_noise if xx_noise == "wishart" else ssp_laplace_noise
    ref = np.zeros((grid.size, grid.size))
    for _ in range(n_datasets):
        x = rng.standard_normal((n, d))
        x -= x.mean(axis=0)
        y = x @ rng.standard_normal(d) + rng.standard_normal(n)
        y -= y.mean()
        sx, sy = np.std(x, ddof=1), np.std(y, ddof=1)
        for _ in range(n_noise):
            W, L = noise(d, epsilon=eps, clip_x=1.0, clip_y=1.0, rng=rng, xx_share=0.5)
            for a, wx in enumerate(grid):
                for b, wy in enumerate(grid):
                    bx, by = wx * sx, wy * sy
                    xc, yc = np.clip(x, -bx, bx), np.clip(y, -by, by)
                    A = xc.T @ xc + W * bx**2
                    if xx_noise == "laplace":
                        A = psd_repair(A)
                    w = np.linalg.solve(A + np.eye(d), xc.T @ yc + L * bx * by)
                    ref[a, b] += stats.spearmanr(x @ w, y).statistic
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)
    assert np.argmax(got) == np.argmax(ref)
    assert np.ptp(ref) > 0.1  # the grid points are distinguishable, not a vacuous match
    best = np.unravel_index(np.argmax(ref), ref.shape)
    assert ssp_clipping_weights(n, d, rng=np.random.default_rng(11), **kw) == (
        grid[best[0]], grid[best[1]])


@pytest.mark.parametrize("xx_noise", ["wishart", "laplace"])
def test_clipping_scores_do_not_depend_on_the_batching(xx_noise):
    """One noise draw per batch (the generator's calls interleaved with the fits, as the
    unbatched search ran) and every draw in one batch give the same scores bit for bit."""
    from dprepro.learners.clipping import _ssp_clipping_scores

    kw = dict(epsilon=0.7, grid=np.array([0.2, 0.6, 1.0, 1.4]), n_datasets=3, n_noise=5,
              xx_share=0.5, ridge=1.0, xx_noise=xx_noise)
    one = _ssp_clipping_scores(50, 4, rng=np.random.default_rng(3), batch_rows=1, **kw)
    two = _ssp_clipping_scores(50, 4, rng=np.random.default_rng(3), batch_rows=2 * 16 * 50,
                               **kw)
    every = _ssp_clipping_scores(50, 4, rng=np.random.default_rng(3), batch_rows=10**9, **kw)
    assert np.array_equal(one, two) and np.array_equal(one, every)
    assert np.ptp(one) > 0.1  # not a vacuous match of constant scores


# --------------------------------------------------------------------------- #
# feature selection baselines
# --------------------------------------------------------------------------- #
def test_dp_select_features_finds_relevant_features_at_large_epsilon():
    rng = np.random.default_rng(8)
    n, p = 400, 40
    X = rng.normal(size=(n, p))
    relevant = [3, 17, 29]
    y = X[:, relevant] @ np.array([3.0, -2.5, 2.0]) + 0.5 * rng.normal(size=n)
    y[:5] = np.nan  # missing responses are dropped
    sel = dp_select_features(X, y, 3, epsilon=1e6, rng=np.random.default_rng(1))
    assert sorted(sel.tolist()) == relevant
    again = dp_select_features(X, y, 3, epsilon=1e6, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(sel, again)
    # at a tiny budget the votes are swamped by noise: selections vary with the seed
    picks = {
        tuple(dp_select_features(X, y, 3, epsilon=1e-3, rng=np.random.default_rng(s)))
        for s in range(4)
    }
    assert len(picks) > 1


def test_dp_select_features_validation():
    X = np.zeros((20, 5))
    y = np.zeros(20)
    with pytest.raises(ValueError, match="n_select"):
        dp_select_features(X, y, 6, epsilon=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="epsilon"):
        dp_select_features(X, y, 2, epsilon=np.inf, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        dp_select_features(X, y, 2, epsilon=1.0, rng=None)


def test_select_columns():
    df = pd.DataFrame(np.arange(6.0).reshape(2, 3), columns=["A", "B", "C"])
    assert list(select_columns(df, ["C", "A"]).columns) == ["C", "A"]
    with pytest.raises(KeyError, match="Z"):
        select_columns(df, ["A", "Z"])


# --------------------------------------------------------------------------- #
# SSP with Laplace noise on the upper triangle of X'X (the corrected pipeline)
# --------------------------------------------------------------------------- #
def test_upper_triangle_laplace_noise_has_the_sensitivity_scale():
    d, eps, bx, by = 3, 1.0, 0.5, 2.0
    rng = np.random.default_rng(5)
    draws = [ssp_laplace_noise(d, epsilon=eps, clip_x=bx, clip_y=by, rng=rng)
             for _ in range(1500)]
    E = np.stack([e for e, _ in draws])
    L = np.stack([v for _, v in draws])
    np.testing.assert_array_equal(E, np.transpose(E, (0, 2, 1)))
    # upper triangle incl. diagonal: L1 sensitivity d^2 Bx^2 over eps/2
    upper = E[:, *np.triu_indices(d)].ravel()
    scale = d * d * bx**2 / (eps / 2)
    assert stats.kstest(upper, stats.laplace(scale=scale).cdf).pvalue > LEVEL
    # the diagonal-only bound d(d+1)/2 Bx^2 would be too small a scale: rejected
    assert stats.kstest(upper, stats.laplace(scale=d * (d + 1) / 2 * bx**2 / (eps / 2)).cdf
                        ).pvalue < LEVEL
    assert stats.kstest(L.ravel(), stats.laplace(scale=2 * d * bx * by / (eps / 2)).cdf
                        ).pvalue > LEVEL


def test_xx_sensitivity_bound_is_never_exceeded():
    d, bx = 4, 0.7
    rng = np.random.default_rng(1)
    bound = d * d * bx**2
    upper = np.triu_indices(d)
    worst = 0.0
    for _ in range(3000):
        # rows at the corners of the box and inside it, and the all-zero row
        x = rng.choice([-bx, bx], size=d)
        x2 = rng.choice([-bx, 0.0, bx], size=d) * rng.uniform(0.5, 1.0, size=d)
        worst = max(worst, np.abs((np.outer(x, x) - np.outer(x2, x2))[upper]).sum())
    assert worst <= bound
    # a row replaced by zeros moves every upper-triangle entry: d(d+1)/2 Bx^2 <= bound
    x = np.full(d, bx)
    assert np.abs(np.outer(x, x)[upper]).sum() == pytest.approx(d * (d + 1) / 2 * bx**2)


def test_psd_repair_projects_onto_the_psd_cone():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(5, 5))
    A = A + A.T
    R = psd_repair(A)
    assert np.linalg.eigvalsh(R).min() >= -1e-12
    np.testing.assert_allclose(R, R.T)
    B = A @ A.T
    np.testing.assert_allclose(psd_repair(B), B, atol=1e-9)


def test_laplace_ssp_with_public_centres_fits_and_validates():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + 0.1 * rng.normal(size=200)
    model = SSPLinearRegression(50.0, clip_x=3.0, clip_y=4.0, xx_noise="laplace",
                                x_center=np.zeros(3), y_center=0.0,
                                rng=np.random.default_rng(4)).fit(X, y)
    assert model.public_centring and np.all(np.linalg.eigvalsh(model.xx_) >= -1e-9)
    assert np.corrcoef(model.predict(X), y)[0, 1] > 0.9
    np.testing.assert_array_equal(model.x_mean_, np.zeros(3))
    with pytest.raises(ValueError, match="xx_noise"):
        SSPLinearRegression(1.0, clip_x=1.0, clip_y=1.0, xx_noise="gauss",
                            rng=np.random.default_rng(0))
    weights = ssp_clipping_weights(30, 2, epsilon=1.0, rng=np.random.default_rng(0),
                                   n_datasets=2, n_noise=2, xx_noise="laplace")
    assert all(0 < w <= 2.0 for w in weights)


def test_single_noise_draws_read_the_generator_in_their_documented_order():
    """The learners' draws (their tables' bits depend on it): objective perturbation takes
    the norm's Gamma, then dim normals; SSP the (d + 1) x d Wishart normals, then d Laplace."""
    dim, eps = 4, 0.8
    rng = np.random.default_rng(31)
    norm, direction = rng.gamma(shape=dim, scale=2 / eps), rng.standard_normal(dim)
    expected = norm * direction / math.sqrt(direction.dot(direction))
    np.testing.assert_array_equal(
        objective_perturbation_noise(dim, epsilon=eps, rng=np.random.default_rng(31)), expected)
    kwargs = {"epsilon": 1.3, "clip_x": 0.8, "clip_y": 2.0, "xx_share": 0.3}
    rng = np.random.default_rng(32)
    g = rng.standard_normal((dim + 1, dim)) * math.sqrt(dim * 0.8**2 / (0.3 * 1.3))
    laplace = rng.laplace(0.0, 2 * dim * 0.8 * 2.0 / (0.7 * 1.3), size=dim)
    W, L = ssp_noise(dim, rng=np.random.default_rng(32), **kwargs)
    np.testing.assert_array_equal(W, g.T @ g)
    np.testing.assert_allclose(L, laplace, rtol=1e-15)


@pytest.mark.parametrize("dim", [1, 2, 5, 21])
def test_one_batched_draw_takes_the_single_draws_values(dim):
    """draws=1 reads the generator as one library draw does (the batch's order differs)."""
    batch = objective_perturbation_noise_draws(dim, 1, epsilon=0.7,
                                               rng=np.random.default_rng(dim))
    single = objective_perturbation_noise(dim, epsilon=0.7, rng=np.random.default_rng(dim))
    np.testing.assert_allclose(batch[0], single, rtol=1e-13, atol=0)
    kwargs = {"epsilon": 1.3, "clip_x": 0.8, "clip_y": 2.0, "xx_share": 0.3}
    W, L = ssp_noise_draws(dim, 1, rng=np.random.default_rng(dim), **kwargs)
    w, v = ssp_noise(dim, rng=np.random.default_rng(dim), **kwargs)
    np.testing.assert_allclose(W[0], w, rtol=1e-13, atol=1e-13 * np.abs(w).max())
    np.testing.assert_array_equal(L[0], v)


def test_batched_objective_perturbation_noise_has_the_single_draws_law():
    """Norms Gamma(d, 2/ε), directions uniform and independent of them; mis-scaled rejected."""
    dim, eps, n = 5, 0.7, 80_000
    B = objective_perturbation_noise_draws(dim, n, epsilon=eps, rng=np.random.default_rng(21))
    norms = np.linalg.norm(B, axis=1)
    assert stats.kstest(norms, stats.gamma(a=dim, scale=2 / eps).cdf).pvalue > LEVEL
    assert stats.kstest(norms, stats.gamma(a=dim, scale=1.1 * 2 / eps).cdf).pvalue < LEVEL
    assert stats.kstest(norms, stats.gamma(a=dim - 1, scale=2 / eps).cdf).pvalue < LEVEL
    U = B / norms[:, None]
    # a coordinate of a uniform unit vector: (u + 1) / 2 ~ Beta((d - 1) / 2, (d - 1) / 2)
    half = (dim - 1) / 2
    for k in range(dim):
        assert stats.kstest((U[:, k] + 1) / 2, stats.beta(half, half).cdf).pvalue > LEVEL
    assert stats.kstest((np.abs(U[:, 0]) + 1) / 2, stats.beta(half, half).cdf).pvalue < LEVEL
    # the direction does not depend on the norm: the first coordinate's law is the same
    # above and below the median norm
    big = norms > np.median(norms)
    assert stats.ks_2samp(U[big, 0], U[~big, 0]).pvalue > LEVEL
    # rows are independent draws: successive norms are uncorrelated
    r = np.corrcoef(norms[:-1], norms[1:])[0, 1]
    assert abs(r) * math.sqrt(n) < 6.1  # |N(0, 1)| beyond 6.1 has probability ~1e-9


def test_batched_ssp_noise_has_the_single_draws_law():
    """Wishart_d(d + 1, d B_x²/ε₁ I) and Laplace(2 d B_x B_y / ε₂) entries; mis-scaled rejected."""
    dim, eps, bx, by, share, n = 3, 1.3, 0.8, 2.0, 0.3, 40_000
    W, L = ssp_noise_draws(dim, n, epsilon=eps, clip_x=bx, clip_y=by, xx_share=share,
                           rng=np.random.default_rng(22))
    scale = dim * bx**2 / (share * eps)
    laplace_scale = 2 * dim * bx * by / ((1 - share) * eps)
    # a diagonal entry over the scale is a sum of d + 1 squared standard normals
    for k in range(dim):
        assert stats.kstest(W[:, k, k] / scale, stats.chi2(dim + 1).cdf).pvalue > LEVEL
    assert stats.kstest(W[:, 0, 0] / (1.1 * scale), stats.chi2(dim + 1).cdf).pvalue < LEVEL
    # an off-diagonal entry: mean 0, variance (d + 1) scale²
    se = scale * math.sqrt(dim + 1) / math.sqrt(n)
    assert abs(W[:, 0, 1].mean()) < 6.1 * se
    assert W[:, 0, 1].std() == pytest.approx(scale * math.sqrt(dim + 1), rel=0.03)
    np.testing.assert_array_equal(W, np.transpose(W, (0, 2, 1)))
    for k in range(dim):
        assert stats.kstest(L[:, k], stats.laplace(scale=laplace_scale).cdf).pvalue > LEVEL
    assert stats.kstest(L[:, 0], stats.laplace(scale=1.2 * laplace_scale).cdf).pvalue < LEVEL


@pytest.mark.parametrize("draws", [0, -1, 2.5, True])
def test_noise_draws_reject_a_bad_count(draws):
    with pytest.raises(ValueError, match="draws must be a positive integer"):
        objective_perturbation_noise_draws(2, draws, epsilon=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="draws must be a positive integer"):
        ssp_noise_draws(2, draws, epsilon=1.0, clip_x=1.0, clip_y=1.0,
                        rng=np.random.default_rng(0))
