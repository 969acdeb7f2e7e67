r"""Feature-selection baselines of ``repr_transfer``.

* :func:`dp_select_features` -- DP feature selection by subsample-and-aggregate
  (Kifer, Smith & Thakurta 2012), the paper's feature-selection baseline.
* :func:`hashed_votes` and :func:`noisy_top_features` -- the same with public parts
  (a keyed hash of each line's id, :func:`hashed_parts`) and the Laplace noise of the
  corrected pipeline; the study's ``FeatureSelection`` and the privacy audit run them.
* :func:`select_columns` -- the fixed-gene-set baseline.

Split out of :mod:`dprepro.learners.logistic_regression`, which re-exports both.

References
----------
Kifer D., Smith A., Thakurta A. (2012). Private convex empirical risk
minimization and high-dimensional regression. COLT, PMLR 23:25.1-25.40.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Sequence

import numpy as np

from dprepro.learners.checks import (
    check_epsilon,
    check_matrix,
    check_positive,
    check_rng,
    check_vector,
)

__all__ = ["dp_select_features", "hashed_parts", "hashed_votes", "noisy_top_features",
           "select_columns"]


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


def hashed_parts(lines, n_parts: int, key: bytes) -> np.ndarray:
    r"""Part of each line: :math:`\mathrm{BLAKE2b}_{key}(\mathrm{id}) \bmod k`.

    The part of a line depends on its id and the key only, never on which
    other lines are present (unlike the interleaved ``i mod k`` of the
    authors, where removing one line shifts every later line).
    """
    if isinstance(n_parts, bool) or not isinstance(n_parts, int | np.integer) or n_parts < 1:
        raise ValueError(f"n_parts must be a positive integer, got {n_parts!r}")
    if not isinstance(key, bytes) or not 1 <= len(key) <= 64:
        raise ValueError("key must be 1 to 64 bytes (part_key)")
    return np.array([int.from_bytes(hashlib.blake2b(str(line).encode("utf-8"), key=key,
                                                     digest_size=8).digest(), "big") % n_parts
                     for line in lines], dtype=np.int64)


def hashed_votes(X, y, lines, n_select: int, *, n_parts: int, key: bytes,
                 sparsity: float = 1.0, lasso_max_iter: int = 10_000,
                 lasso_solver: str = "coordinate_descent") -> tuple[np.ndarray, int]:
    r"""Vote counts of subsample-and-aggregate with public k, α and hashed parts.

    Lines with a missing response are dropped; line ``i`` goes to part
    :func:`hashed_parts` of its id. On every part with at least two lines a
    Lasso (scikit-learn ``alpha = sparsity / k**2``: the authors'
    ``sparsity / n`` at the n where their k = √n equals ours) is fitted and its
    ``n_select`` largest :math:`|\beta_j|` get one vote; a part with fewer
    lines casts none. A part's vote vector is the indicator of m features
    (or zero), so one part's change moves it by at most :math:`2m` in L1.
    Adding or removing one line (or one response) changes one part only:
    L1 sensitivity :math:`2m/k` of the vote fractions :math:`v/k`. Under
    replacement neighbours (same number of lines, one line's record and id
    replaced: the relation the corrected CMS11 and SSP bounds use) the old
    id's part loses a line and the new id's part gains one, so two parts
    change and the exact bound is

    .. math:: \Delta_1(v/k) = 4m/k

    (attained when both parts' top-m sets become disjoint from their old
    ones; equal to 2m/k only when both ids hash to the same part).
    :func:`noisy_top_features` with ``changed_parts=2`` calibrates its
    Laplace noise to it (Kifer et al. 2012; Dwork & Roth 2014, Thm 3.6).
    ``lasso_solver``: :func:`dprepro.learners.lasso.lasso_coef`.

    Returns
    -------
    (votes, k) : ndarray of shape (p,), int
    """
    from sklearn.exceptions import ConvergenceWarning

    from dprepro.learners.lasso import check_lasso_solver, lasso_coef

    check_lasso_solver(lasso_solver)

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    lines = np.asarray(lines, dtype=object)
    if len(lines) != X.shape[0] or len(y) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} and lines {len(lines)}")
    keep = ~np.isnan(y)
    X, y, lines = X[keep], y[keep], lines[keep]
    p = X.shape[1]
    if not 1 <= n_select <= p:
        raise ValueError(f"n_select must be in [1, {p}], got {n_select}")
    part = hashed_parts(lines, n_parts, key)
    votes = np.zeros(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for j in range(int(n_parts)):
            rows = part == j
            if rows.sum() < 2:
                continue
            coef = lasso_coef(X[rows], y[rows], sparsity / n_parts**2, solver=lasso_solver,
                              max_iter=lasso_max_iter)
            votes[np.argsort(-np.abs(coef), kind="stable")[:n_select]] += 1.0
    return votes, int(n_parts)


def noisy_top_features(votes, n_parts: int, n_select: int, *, epsilon: float,
                       rng: np.random.Generator | None, changed_parts: int = 1,
                       draws: int | None = None) -> np.ndarray:
    r"""The ``n_select`` largest of :math:`v_j/k + \mathrm{Laplace}(2cm/(k\epsilon))`.

    :math:`c` = ``changed_parts``, the number of parts one neighbour can
    change: ε-DP when the vote fractions have L1 sensitivity :math:`2cm/k`
    (report noisy max over a vector, Dwork & Roth 2014, Thm 3.6). ``c = 1``
    is the authors' scale (:func:`dprepro.learners.feature_selection.dp_select_features`,
    same draws); hashed parts under replacement neighbours need ``c = 2``
    (:func:`hashed_votes`, :func:`dprepro.learners.accounting.selection_changed_parts`).
    With ``epsilon = inf`` no noise is drawn: the non-private selection.

    ``draws``: that many independent selections at once, shape ``(draws, n_select)``
    (the privacy audit's); the noise is one ``(draws, p)`` draw, whose first row takes
    the generator's values of a single call.
    """
    if changed_parts not in (1, 2):
        raise ValueError(f"changed_parts must be 1 or 2, got {changed_parts!r}")
    votes = np.asarray(votes, dtype=float)
    frac = votes / n_parts
    if draws is not None:
        if isinstance(draws, bool) or not isinstance(draws, int | np.integer) or draws < 1:
            raise ValueError(f"draws must be a positive integer, got {draws!r}")
        frac = np.broadcast_to(frac, (int(draws), votes.size))
    if math.isfinite(epsilon):
        frac = frac + rng.laplace(0.0, 2.0 * changed_parts * n_select / (n_parts * epsilon),
                                  size=frac.shape)
    return np.argsort(-frac, axis=-1, kind="stable")[..., :n_select]
