r"""The Lasso fits of DP feature selection's votes: scikit-learn's coordinate descent or the
exact homotopy (LARS-Lasso).

Subsample-and-aggregate (:func:`dprepro.learners.feature_selection.dp_select_features`,
:mod:`dprepro.studies.repr_transfer.baselines`) fits one Lasso with an intercept per part,

.. math:: \hat\beta = \arg\min_{b_0, \beta}\ \frac{1}{2n}\lVert y - b_0 - X\beta\rVert_2^2
          + \alpha\lVert\beta\rVert_1,

on parts of :math:`n \approx \sqrt N` lines and :math:`p` candidate genes
(paper mode: :math:`n \approx 28`, :math:`p = 2{,}000`, :math:`\alpha \approx 1/N`), and
gives its ``n_select`` largest :math:`|\hat\beta_j|` a vote. At such a small α the
solution nearly interpolates (:math:`n - 1` non-zeros) and cyclic coordinate descent
converges slowly: scikit-learn's ``Lasso`` (the authors' solver) stops at its duality-gap
tolerance (``tol = 1e-4``, relative to :math:`\lVert y\rVert^2`) after a median of about
6,500 sweeps over the :math:`p` genes, some 0.5 CPU-s a fit, with coefficients still off
by a few hundredths and one to three of the ten votes different from the exact
solution's (benchmarks/bench_lasso_votes.py).

``lars`` follows the Lasso's piecewise-linear solution path from
:math:`\alpha_{max} = \max_j |x_j^\top y|/n` down to α (Efron, Hastie, Johnstone &
Tibshirani 2004, the Lasso modification; scikit-learn's ``lars_path``): one step per
variable entering or leaving the active set, each :math:`O(np)`, some 50-70 steps at
paper mode's parts. In general position (Tibshirani 2013) the path is unique and ends at
*the* Lasso solution, exact to rounding, in about 1/40 of coordinate descent's CPU. Its
optimality is checked (the KKT conditions :math:`|x_j^\top r|/n \le \alpha`, with
equality and the coefficient's sign on the support); a path that ends short of them
(near interpolation, rounding can leave a gene in or out of the active set) is finished
by coordinate descent from where it stopped, on a working set of genes.

References
----------
Efron B., Hastie T., Johnstone I., Tibshirani R. (2004). Least angle regression. Annals
of Statistics 32(2), 407-499.

Tibshirani R. J. (2013). The lasso problem and uniqueness. Electronic Journal of
Statistics 7, 1456-1490.

Friedman J., Hastie T., Tibshirani R. (2010). Regularization paths for generalized
linear models via coordinate descent. Journal of Statistical Software 33(1).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["FINISH_ROUNDS", "FINISH_SWEEPS", "KKT_TOLERANCE", "LASSO_SOLVERS",
           "check_lasso_solver", "kkt_violation", "lasso_coef"]

#: The solvers of ``repr_transfer.feature_selection.lasso_solver``.
LASSO_SOLVERS = ("coordinate_descent", "lars")
#: Largest KKT violation, relative to α, accepted from the homotopy before it is finished by
#: coordinate descent (the path's own rounding is some 1e-12).
KKT_TOLERANCE = 1e-7
#: Sweeps of each working-set round of coordinate descent that finishes a path ended short
#: of optimality (no early stop), and the most rounds.
FINISH_SWEEPS, FINISH_ROUNDS = 20_000, 20


def check_lasso_solver(solver: str) -> str:
    """``solver`` if it is one of :data:`LASSO_SOLVERS`, else a ValueError naming them."""
    if solver not in LASSO_SOLVERS:
        raise ValueError(f"lasso_solver must be one of {list(LASSO_SOLVERS)}, got {solver!r}")
    return solver


def kkt_violation(X, y, coef, alpha: float) -> float:
    r"""Largest violation of the Lasso's optimality conditions, relative to α.

    With the centred data :math:`X_c, y_c` (the intercept's optimum),
    :math:`r = y_c - X_c\beta` and :math:`c = X_c^\top r / n`, :math:`\beta` is
    optimal exactly when :math:`|c_j| \le \alpha` for every j and
    :math:`c_j = \alpha\,\mathrm{sign}(\beta_j)` where :math:`\beta_j \ne 0`. Returns
    :math:`\max_j` of :math:`(|c_j| - \alpha)_+` (zero coefficients) and
    :math:`|c_j - \alpha\,\mathrm{sign}(\beta_j)|` (non-zero ones), over α.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    coef = np.asarray(coef, dtype=float)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    c = Xc.T @ (yc - Xc @ coef) / X.shape[0]
    on = coef != 0
    off = np.maximum(np.abs(c[~on]) - alpha, 0.0)
    sup = np.abs(c[on] - alpha * np.sign(coef[on]))
    return float(max(off.max(initial=0.0), sup.max(initial=0.0)) / alpha)


def lasso_coef(X, y, alpha: float, *, solver: str = "coordinate_descent",
               max_iter: int = 10_000) -> np.ndarray:
    r"""Coefficients :math:`\hat\beta` of the Lasso with an intercept (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
    alpha : float
        scikit-learn's α (> 0).
    solver : {"coordinate_descent", "lars"}
        ``coordinate_descent``: scikit-learn's ``Lasso(alpha, max_iter=max_iter)`` at its
        default tolerance, as the authors ran it (the votes as before, to the bit);
        ``lars``: the exact homotopy, KKT-checked (module docstring).
    max_iter : int
        Coordinate descent's sweeps, or the homotopy's steps (a path ended short of
        optimality is finished on a working set, :func:`_finish`).

    Returns
    -------
    ndarray of shape (p,)
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Lasso, lars_path

    check_lasso_solver(solver)
    if solver == "coordinate_descent":
        return Lasso(alpha=alpha, fit_intercept=True, max_iter=max_iter).fit(X, y).coef_
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    # the intercept's optimum centres both
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # copy_X stays True: lars_path on its input in place ended elsewhere (measured)
        _, _, coef = lars_path(Xc, yc, method="lasso", alpha_min=alpha, max_iter=max_iter,
                               return_path=False)
    coef = np.asarray(coef, dtype=float)
    if kkt_violation(X, y, coef, alpha) <= KKT_TOLERANCE:
        return coef
    return _finish(Xc, yc, coef, alpha)


def _finish(Xc: np.ndarray, yc: np.ndarray, coef: np.ndarray, alpha: float) -> np.ndarray:
    r"""Finish a path that ended short of optimality: coordinate descent on a working set.

    The working set is the path's support plus every gene whose :math:`|x_j^\top r|/n`
    exceeds α; :data:`FINISH_SWEEPS` sweeps of coordinate descent on it (no early stop),
    then the KKT conditions are checked on every gene and violators join, up to
    :data:`FINISH_ROUNDS` rounds. Near interpolation the path's rounding can leave one
    gene in or out of the active set (one part in ~40 of low-rank synthetic parts of
    28 x 400); a few working-set rounds of a few dozen genes cost some 0.03 CPU-s.
    Returns the iterate with the smallest violation.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Lasso

    n = len(yc)
    best, best_kkt = coef, kkt_violation(Xc, yc, coef, alpha)
    for _ in range(FINISH_ROUNDS):
        c = Xc.T @ (yc - Xc @ coef) / n
        work = np.flatnonzero((coef != 0) | (np.abs(c) > alpha * (1 + KKT_TOLERANCE)))
        cd = Lasso(alpha=alpha, fit_intercept=False, max_iter=FINISH_SWEEPS, tol=0.0,
                   warm_start=True)
        cd.coef_ = coef[work].copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            cd.fit(Xc[:, work], yc)
        coef = np.zeros_like(coef)
        coef[work] = cd.coef_
        violation = kkt_violation(Xc, yc, coef, alpha)
        if violation < best_kkt:
            best, best_kkt = coef, violation
        if violation <= KKT_TOLERANCE:
            break
    return best
