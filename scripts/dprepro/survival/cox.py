r"""Cox proportional-hazards regression, many designs at once, in numpy.

:func:`fit_cox_batch` fits ``B`` Cox models that share the follow-up times and
event indicators but differ in their design matrices (e.g. ``B`` randomised-
response draws of a group label, or the replicates of a SIMEX step), by
Newton–Raphson on the partial log-likelihood with Efron's (default) or
Breslow's handling of ties. Everything is vectorised over the ``B`` designs and
the ``n`` rows: the rows are sorted by time once, risk-set sums are reverse
cumulative sums, tied-event sums come from ``numpy.add.reduceat``, and only the
Newton iterations are a Python loop; the designs go in blocks whose work arrays stay
in the CPU's cache (:mod:`dprepro.survival.cox_core`). Designs that code one factor
alone (treatment dummies, e.g. a released group label) are fitted from the per-level
risk-set sums at each event time instead (:mod:`dprepro.survival.cox_levels`: a
Newton step then costs O(event times x levels²), not O(n p²)); both give the same
fit to rounding. :class:`CoxPH` is the one-design estimator with a
lifelines/sklearn-like interface.

Agreement with the references (``tests/test_cox.py``, observed ~1e-13 when the
reference is run to full convergence; the tests assert 1e-8 / 1e-9): coefficients,
standard errors and log-likelihoods equal lifelines' ``CoxPHFitter`` (Efron) and
R's ``coxph`` (Efron and Breslow, with and without ``cluster``; a factor with and
without covariates). The robust variance uses R's score residuals (``coxscore2.c``)
and so equals R's ``coxph(..., cluster = id)`` also with tied event times; lifelines'
score residuals ignore ties, so lifelines' robust variance agrees only without ties.

References
----------
.. [Cox72] D. R. Cox (1972). Regression models and life-tables. JRSS B 34,
   187–220.
.. [Efr77] B. Efron (1977). The efficiency of Cox's likelihood function for
   censored data. JASA 72, 557–565.
.. [Bre74] N. Breslow (1974). Covariance analysis of censored survival data.
   Biometrics 30, 89–99.
.. [LW89] D. Y. Lin, L. J. Wei (1989). The robust inference for the Cox
   proportional hazards model. JASA 84, 1074–1078.
.. [TG00] T. M. Therneau, P. M. Grambsch (2000). Modeling Survival Data:
   Extending the Cox Model. Springer (score residuals with ties, §3.2, §7).
"""

from __future__ import annotations

import numpy as np

from dprepro.survival.cox_core import CoxBatch, Layout, cumulative_at, fit_in_chunks, solve
from dprepro.survival.cox_levels import factor_labels, fit_levels
from dprepro.survival.inputs import check_survival_data

__all__ = ["CoxBatch", "CoxPH", "fit_cox_batch", "treatment_dummies"]

_TIES = ("efron", "breslow")
#: elements of a block's (designs, rows, columns) work array: a few MB, in cache
_BLOCK = 1 << 17


# --------------------------------------------------------------------------- validation


def _check_time_event(time, event) -> tuple[np.ndarray, np.ndarray]:
    t, e = check_survival_data(time, event, names=("time", "event"))
    if not np.any(e == 1):
        raise ValueError("event has no events: the partial likelihood is empty")
    return t, e


def _check_design(X, n: int) -> np.ndarray:
    x = np.asarray(X)
    if not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.complexfloating):
        if x.dtype != bool:
            raise TypeError(f"X must be real numbers, got dtype {x.dtype}")
    if x.ndim != 3:
        raise ValueError(f"X must have shape (B, n, p), got shape {x.shape}")
    if x.shape[1] != n:
        raise ValueError(f"X must have n = {n} rows (the length of time), got {x.shape[1]}")
    if x.shape[0] == 0 or x.shape[2] == 0:
        raise ValueError(f"X must have at least one design and one column, got {x.shape}")
    x = x.astype(float)
    if not np.all(np.isfinite(x)):
        raise ValueError("X must be finite (no NaN or inf)")
    return x


def _check_cluster(cluster, n: int) -> np.ndarray:
    c = np.asarray(cluster)
    if c.shape != (n,):
        raise ValueError(f"cluster must have shape ({n},), got {c.shape}")
    try:
        _, codes = np.unique(c, return_inverse=True)
    except TypeError as exc:
        raise TypeError("cluster ids must be mutually comparable (all int or all str)") from exc
    return codes.reshape(-1)


def _check_options(ties, tol, max_iter) -> None:
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {_TIES}, got {ties!r}")
    if not (np.isscalar(tol) and np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int | np.integer) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")


# --------------------------------------------------------------------------- any design


class _Terms:
    """Partial log-likelihood, score and information of B designs at ``beta``.

    ``X`` is sorted by time and centred; ``w`` are case weights (B, n) or None.
    With weights, the conventions are R's ``coxph``: risk ``w exp(eta)``; each
    of the d tied events adds its own weight to the linear term and, under
    Efron, the mean weight of the tied events to each of the d log terms.
    """

    def __init__(self, lay: Layout, X: np.ndarray, w: np.ndarray | None, beta: np.ndarray):
        self.lay, self.X, self.w = lay, X, w
        eta = np.einsum("bnp,bp->bn", X, beta)
        shift = eta.max(axis=1, keepdims=True)
        self.risk = np.exp(eta - shift)  # exp(eta) up to a per-design factor
        wr = self.risk if w is None else self.risk * w
        ev = lay.ev_rows
        s0 = wr[:, ::-1].cumsum(axis=1)[:, ::-1][:, lay.ev_risk_start]  # (B, D)
        s1 = (wr[:, :, None] * X)[:, ::-1].cumsum(axis=1)[:, ::-1][:, lay.ev_risk_start]
        s0d = np.add.reduceat(wr[:, ev], lay.ev_block_start, axis=1)[:, lay.ev_block]
        s1d = np.add.reduceat(wr[:, ev, None] * X[:, ev], lay.ev_block_start, axis=1)
        s1d = s1d[:, lay.ev_block]
        c = lay.ev_frac
        self.den = s0 - c * s0d  # (B, D)
        self.mean = (s1 - c[:, None] * s1d) / self.den[:, :, None]  # (B, D, p)
        if w is None:
            self.w_ev = np.ones((1, len(ev)))
            self.m_ev = self.w_ev
        else:
            self.w_ev = w[:, ev]
            if np.any(c):  # Efron: mean weight of the tied events
                tot = np.add.reduceat(self.w_ev, lay.ev_block_start, axis=1)
                cnt = np.diff(np.append(lay.ev_block_start, len(ev)))
                self.m_ev = (tot / cnt)[:, lay.ev_block]
            else:
                self.m_ev = self.w_ev
        self.loglik = np.sum(self.w_ev * (eta[:, ev] - shift), axis=1) - np.sum(
            self.m_ev * np.log(self.den), axis=1
        )
        self.score = np.einsum("bd,bdp->bp", self.w_ev * np.ones_like(self.den), X[:, ev])
        self.score -= np.einsum("bd,bdp->bp", self.m_ev * np.ones_like(self.den), self.mean)
        # information: sum_j sum_l m_l [(S2_j - c_l S2D_j) / den_l - mean_l mean_l^T]
        inv = self.m_ev / self.den
        nb = len(lay.ev_block_start)
        self.a_j = np.add.reduceat(inv, lay.ev_block_start, axis=1)  # (B, J)
        self.v_j = np.add.reduceat(inv * c, lay.ev_block_start, axis=1)
        q = cumulative_at(self.a_j, lay.row_last_event)
        if nb:
            q = q - lay.event * self.v_j[:, lay.row_block]
        xw = X * (wr * q)[:, :, None]
        self.info = np.einsum("bni,bnj->bij", xw, X)
        mm = self.mean * (self.m_ev * np.ones_like(self.den))[:, :, None]
        self.info -= np.einsum("bdi,bdj->bij", mm, self.mean)

    def score_residuals(self) -> np.ndarray:
        """Per-row score residuals (B, n, p) in sorted order, R's ``coxscore2`` recipe."""
        lay, X = self.lay, self.X
        c = lay.ev_frac
        inv = self.m_ev / self.den  # (B, D)
        b_j = np.add.reduceat(inv[:, :, None] * self.mean, lay.ev_block_start, axis=1)
        vb_j = np.add.reduceat((inv * c)[:, :, None] * self.mean, lay.ev_block_start, axis=1)
        cnt = np.diff(np.append(lay.ev_block_start, len(lay.ev_rows)))
        abar = np.add.reduceat(self.mean, lay.ev_block_start, axis=1) / cnt[:, None]
        ca = cumulative_at(self.a_j, lay.row_last_event)  # (B, n)
        cb = cumulative_at(b_j, lay.row_last_event)  # (B, n, p)
        ev, blk = lay.event, lay.row_block
        ca = ca - ev * self.v_j[:, blk]
        cb = cb - ev[:, None] * vb_j[:, blk]
        resid = ev[:, None] * (X - abar[:, blk])
        resid -= self.risk[:, :, None] * (X * ca[:, :, None] - cb)
        if self.w is not None:
            resid *= self.w[:, :, None]
        return resid


# --------------------------------------------------------------------------- batch fit


def fit_cox_batch(
    time, event, X, *, ties: str = "efron", cluster=None, tol: float = 1e-10, max_iter: int = 50
) -> CoxBatch:
    r"""Fit ``B`` Cox proportional-hazards models sharing ``time`` and ``event``.

    Maximises, for each design ``X[b]``, Cox's partial log-likelihood [Cox72]_
    with Efron's approximation for tied event times [Efr77]_: with
    :math:`D_j` the :math:`d_j` events at the :math:`j`-th distinct event time
    :math:`t_j`, :math:`R_j = \{i : t_i \ge t_j\}` its risk set and
    :math:`r_i = \exp(\beta^\top x_i)`,

    .. math::

        \ell(\beta) = \sum_j \Big[ \sum_{i \in D_j} \beta^\top x_i
          - \sum_{l=0}^{d_j - 1} \log\Big( \sum_{i \in R_j} r_i
          - \frac{l}{d_j} \sum_{i \in D_j} r_i \Big) \Big];

    Breslow's approximation [Bre74]_ drops the :math:`l/d_j` term. Newton–Raphson
    from :math:`\beta = 0`, halving a step that lowers :math:`\ell` (as R's
    ``coxph``), until the largest step component is below
    ``tol * (1 + max|beta|)``. The columns are centred first (which changes
    neither :math:`\hat\beta` nor :math:`\ell`).

    With ``cluster``, the Lin–Wei robust variance [LW89]_
    :math:`\hat V = \sum_c (\sum_{i \in c} D_i)(\sum_{i \in c} D_i)^\top`
    with :math:`D_i = U_i\, I(\hat\beta)^{-1}` the dfbeta residuals of
    R's score residuals :math:`U_i` (Efron-weighted over tied events, [TG00]_):
    R's ``coxph(..., cluster = id)``. For the plain robust ("sandwich")
    variance pass ``cluster=numpy.arange(n)``.

    A design whose information matrix is singular (e.g. a dummy column that is
    all zeros in one replicate) gets NaN coefficients and variances and
    ``converged = False``; a design that has not converged after ``max_iter``
    iterations (e.g. a level without events, where :math:`\hat\beta \to -\infty`)
    keeps its last iterate with ``converged = False``. Neither raises or warns.

    Parameters
    ----------
    time : array_like, shape (n,)
        Follow-up times, finite and >= 0.
    event : array_like, shape (n,)
        1 = event, 0 = censored (booleans accepted); at least one event.
    X : array_like, shape (B, n, p)
        ``B`` design matrices (see :func:`treatment_dummies`).
    ties : {"efron", "breslow"}
    cluster : array_like, shape (n,), optional
        Cluster (e.g. patient) id of each row, for the robust variance.
    tol : float
        Convergence tolerance on the Newton step.
    max_iter : int
        Most Newton iterations.

    Returns
    -------
    CoxBatch

    Raises
    ------
    ValueError, TypeError
        Inputs of the wrong shape or type, non-finite or negative times,
        events not 0/1 or no event at all, unknown ``ties``.
    """
    t, e = _check_time_event(time, event)
    x = _check_design(X, len(t))
    codes = None if cluster is None else _check_cluster(cluster, len(t))
    _check_options(ties, tol, max_iter)
    return _fit(t, e, x, None, ties, codes, tol, max_iter)


def _fit(t, e, x, w, ties, codes, tol, max_iter) -> CoxBatch:
    """:func:`fit_cox_batch` on checked inputs; ``w``: case weights (B, n) or None
    (negative weights, as in the corrected score, need ``ties="breslow"``). Designs that
    code one factor go to the level-sum kernel (:mod:`dprepro.survival.cox_levels`), the
    others to the row-level one, in blocks whose work arrays stay in cache."""
    labels = factor_labels(x)
    if labels is not None:
        return _fit_labels(t, e, labels, x.shape[2] + 1, w, ties, codes, tol, max_iter)
    lay = Layout.build(t, e, ties)
    nb, n, p = x.shape
    ws_all = None if w is None else np.broadcast_to(w, x.shape[:2])

    def fit(part: slice) -> CoxBatch:
        xs = x[part][:, lay.order]
        xs = xs - xs.mean(axis=1, keepdims=True)
        ws = None if ws_all is None else ws_all[part][:, lay.order]
        size = xs.shape[0]

        def evaluate(idx, beta):
            full = idx.size == size
            return _Terms(lay, xs if full else xs[idx], None if ws is None else ws[idx], beta)

        return solve(evaluate, lay, size, p, codes, tol, max_iter)

    return fit_in_chunks(nb, max(1, _BLOCK // (n * p)), fit)

def _fit_labels(t, e, labels, k, w, ties, codes, tol, max_iter) -> CoxBatch:
    """:func:`_fit` of the treatment-coded designs of ``labels`` (B, n) in ``0 .. k-1``
    (level 0 the reference), without forming them."""
    return fit_levels(Layout.build(t, e, ties), labels, k, w, codes, tol, max_iter)


# --------------------------------------------------------------------------- designs


def treatment_dummies(labels, k: int, covariates=None) -> np.ndarray:
    """Treatment-coded dummies of integer group labels, reference level 0.

    Parameters
    ----------
    labels : array_like of int, shape (n,) or (B, n)
        Group labels in ``0 .. k-1``.
    k : int
        Number of groups (>= 2).
    covariates : array_like, shape (n, q), optional
        Numeric covariates appended after the dummies (the same for every row
        of a batch).

    Returns
    -------
    ndarray, shape (n, k-1+q) or (B, n, k-1+q)
        Column ``g-1`` is 1 where the label is ``g`` (``g = 1 .. k-1``).
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    lab = np.asarray(labels)
    if lab.ndim not in (1, 2) or lab.size == 0:
        raise ValueError(f"labels must have shape (n,) or (B, n), got {lab.shape}")
    if not np.issubdtype(lab.dtype, np.integer):
        raise TypeError(f"labels must be integers, got dtype {lab.dtype}")
    if lab.min() < 0 or lab.max() >= k:
        raise ValueError(f"labels must lie in 0..{k - 1}")
    out = (lab[..., None] == np.arange(1, k)).astype(float)
    if covariates is None:
        return out
    cov = np.asarray(covariates, dtype=float)
    if cov.ndim == 1:
        cov = cov[:, None]
    if cov.ndim != 2 or cov.shape[0] != lab.shape[-1]:
        raise ValueError(f"covariates must have shape ({lab.shape[-1]}, q), got {cov.shape}")
    if not np.all(np.isfinite(cov)):
        raise ValueError("covariates must be finite")
    cov = np.broadcast_to(cov, lab.shape[:-1] + cov.shape)
    return np.concatenate([out, cov], axis=-1)


# --------------------------------------------------------------------------- estimator


class CoxPH:
    r"""Cox proportional-hazards model, lifelines/sklearn style.

    Fits :math:`h(t \mid x) = h_0(t) \exp(\beta^\top x)` by maximising the
    partial log-likelihood (Efron's ties by default; formula in
    :func:`fit_cox_batch`) [Cox72]_ [Efr77]_. No intercept: the baseline
    hazard absorbs it.

    Parameters
    ----------
    ties : {"efron", "breslow"}
    tol : float
    max_iter : int

    Attributes
    ----------
    coef_ : ndarray, shape (p,)
        Log hazard ratios (NaN if the design is not identifiable).
    se_ : ndarray, shape (p,)
        Standard errors: cluster-robust [LW89]_ when ``cluster`` was given
        (as lifelines' ``cluster_col`` and R's ``cluster =``), else model-based.
    variance_ : ndarray, shape (p, p)
        The variance behind ``se_``.
    model_variance_ : ndarray, shape (p, p)
        Inverse observed information.
    robust_variance_ : ndarray or None
    log_likelihood_, log_likelihood_null_ : float
    converged_ : bool
    n_iter_ : int

    Examples
    --------
    >>> model = CoxPH().fit([5, 3, 9, 2, 7], [1, 1, 0, 1, 1], [[0.], [1.], [0.], [1.], [0.]])
    >>> model.coef_.shape
    (1,)
    """

    def __init__(self, ties: str = "efron", *, tol: float = 1e-10, max_iter: int = 50):
        self.ties = ties
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, time, event, X, cluster=None) -> CoxPH:
        """Fit to ``time`` (n,), ``event`` (n,) and design ``X`` (n, p) or (n,).

        ``cluster`` (n,): cluster ids for the robust variance. Returns self.
        """
        x = np.asarray(X)
        if x.ndim == 1:
            x = x[:, None]
        if x.ndim != 2:
            raise ValueError(f"X must have shape (n, p) or (n,), got {x.shape}")
        res = fit_cox_batch(
            time,
            event,
            x[None],
            ties=self.ties,
            cluster=cluster,
            tol=self.tol,
            max_iter=self.max_iter,
        )
        self.coef_ = res.coef[0]
        self.model_variance_ = res.variance[0]
        self.robust_variance_ = None if res.robust_variance is None else res.robust_variance[0]
        self.variance_ = (
            self.model_variance_ if self.robust_variance_ is None else self.robust_variance_
        )
        self.se_ = np.sqrt(np.diagonal(self.variance_))
        self.log_likelihood_ = float(res.log_likelihood[0])
        self.log_likelihood_null_ = float(res.log_likelihood_null[0])
        self.converged_ = bool(res.converged[0])
        self.n_iter_ = int(res.n_iter[0])
        return self
