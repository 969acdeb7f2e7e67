r"""Feature-selection baselines of ``repr_transfer``.

* :func:`dp_select_features` -- DP feature selection by subsample-and-aggregate
  (Kifer, Smith & Thakurta 2012), the paper's feature-selection baseline.
* :func:`select_columns` -- the fixed-gene-set baseline.

Split out of :mod:`dprepro.learners.logistic_regression`, which re-exports both.

References
----------
Kifer D., Smith A., Thakurta A. (2012). Private convex empirical risk
minimization and high-dimensional regression. COLT, PMLR 23:25.1-25.40.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dprepro.learners.checks import (
    check_epsilon,
    check_matrix,
    check_positive,
    check_rng,
    check_vector,
)

__all__ = ["dp_select_features", "select_columns"]


def dp_select_features(
    X,
    y,
    n_select: int,
    *,
    epsilon: float,
    rng: np.random.Generator,
    sparsity: float = 1.0,
    n_parts: int | None = None,
    lasso_max_iter: int = 10_000,
    lasso_solver: str = "coordinate_descent",
) -> np.ndarray:
    r"""Select features with ε-DP by subsample-and-aggregate (Kifer et al. 2012).

    As in the authors' ``learn_and_test_kifer.select_features``: the rows are
    split into :math:`k = \lfloor\sqrt n\rfloor` disjoint interleaved parts
    (row :math:`i` goes to part :math:`i \bmod k`); on each part a Lasso
    (scikit-learn ``alpha = sparsity / n``, intercept fitted) is fitted and
    its ``n_select`` largest :math:`|\beta_j|` get a vote. With :math:`v_j`
    the fraction of parts voting for feature :math:`j`,

    .. math:: \tilde v_j = v_j + \mathrm{Laplace}\!\left(0, \frac{2\,m}{k\,\epsilon}\right),

    and the ``n_select`` largest :math:`\tilde v_j` are returned. Replacing
    one row changes one part, whose vote vector changes in at most
    :math:`2m` entries by :math:`1/k`: L1 sensitivity :math:`2m/k`
    (:math:`m` = ``n_select``). Ties in :math:`|\beta|` are broken by column
    order (stable sort) so that the result is deterministic.

    Parameters
    ----------
    X : array_like of shape (n, p)
    y : array_like of shape (n,)
        Rows with missing (NaN) responses are dropped first, as in the original.
    n_select : int
        Number of features m to select (1 <= m <= p).
    epsilon : float
        Budget spent on the selection (finite, > 0). The paper gives half of
        the total ε to the selection and half to the regression.
    rng : numpy.random.Generator
    sparsity : float, default 1.0
    n_parts : int, optional
        Number of parts k (default :math:`\lfloor\sqrt n\rfloor`).
    lasso_max_iter : int, default 10000
    lasso_solver : {"coordinate_descent", "lars"}, default "coordinate_descent"
        scikit-learn's coordinate descent (the authors') or the exact homotopy
        (:func:`dprepro.learners.lasso.lasso_coef`).

    Returns
    -------
    ndarray of int, shape (n_select,)
        Column indices, in order of decreasing noisy vote.
    """
    from dprepro.learners.lasso import check_lasso_solver, lasso_coef

    check_lasso_solver(lasso_solver)
    X = check_matrix(X)
    y = np.asarray(y, dtype=float)
    check_vector(y, X.shape[0])
    epsilon = check_epsilon(epsilon)
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite for DP feature selection")
    check_rng(rng, epsilon)
    keep = ~np.isnan(y)
    X, y = X[keep], y[keep]
    n, p = X.shape
    if isinstance(n_select, bool) or not isinstance(n_select, int | np.integer):
        raise TypeError(f"n_select must be an integer, got {n_select!r}")
    if not 1 <= n_select <= p:
        raise ValueError(f"n_select must be in [1, {p}], got {n_select}")
    check_positive("sparsity", sparsity)
    k = int(math.isqrt(n)) if n_parts is None else n_parts
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= n:
        raise ValueError(f"n_parts must be an integer in [1, {n}], got {n_parts!r}")

    votes = np.zeros(p)
    for i in range(k):
        coef = lasso_coef(X[i::k], y[i::k], sparsity / n, solver=lasso_solver,
                          max_iter=lasso_max_iter)
        top = np.argsort(-np.abs(coef), kind="stable")[:n_select]
        votes[top] += 1.0
    noisy = votes / k + rng.laplace(0.0, 2.0 * n_select / (k * epsilon), size=p)
    return np.argsort(-noisy, kind="stable")[:n_select]


def select_columns(X, names: Sequence[str]):
    r"""Fixed-gene-set baseline: the columns ``names`` of a DataFrame, in that order.

    Raises ``KeyError`` naming the genes that are missing.
    """
    missing = [g for g in names if g not in X.columns]
    if missing:
        raise KeyError(f"genes not in the expression matrix: {missing}")
    return X.loc[:, list(names)]
