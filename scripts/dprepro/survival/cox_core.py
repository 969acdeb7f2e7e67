r"""What the Cox kernels share: the risk-set layout, Newton–Raphson, the variances.

A kernel (:mod:`dprepro.survival.cox` for any design, :mod:`dprepro.survival.cox_levels`
for designs that code one factor) supplies one function, ``evaluate(idx, beta)``: the
partial log-likelihood, score, information and score residuals of designs ``idx`` at
``beta``. :func:`solve` runs Newton–Raphson with R's step-halving on it and derives the
model-based and Lin–Wei robust variances; :func:`fit_in_chunks` runs ``solve`` on
blocks of designs whose work arrays fit in the CPU's cache (a batch of thousands of
designs is bound by memory traffic, not arithmetic) and joins the results.

References
----------
.. [LW89] D. Y. Lin, L. J. Wei (1989). The robust inference for the Cox
   proportional hazards model. JASA 84, 1074–1078.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["CoxBatch", "Layout", "cumulative_at", "fit_in_chunks", "solve"]

#: relative eigenvalue below which the information matrix counts as singular
_SINGULAR = 1e-10
_MAX_HALVINGS = 30


@dataclass(frozen=True)
class Layout:
    """Sorted order and tie structure of (time, event), shared by every design.

    Rows are sorted by ascending time. Event rows (in sorted order) are grouped
    by their event time (``j``); ``rank`` is the position of an event row among
    the events tied with it, ``ties`` their number.
    """

    order: np.ndarray  # (n,) sorting permutation
    event: np.ndarray  # (n,) bool, sorted
    ev_rows: np.ndarray  # (D,) sorted positions of the event rows
    ev_risk_start: np.ndarray  # (D,) first sorted row at risk at the event's time
    ev_block_start: np.ndarray  # (J,) start of each event time among the D event rows
    ev_block: np.ndarray  # (D,) event time index j of each event row
    ev_frac: np.ndarray  # (D,) Efron's l / d_j (0 for Breslow)
    row_last_event: np.ndarray  # (n,) index j of the last event time <= the row's time, or -1
    row_block: np.ndarray  # (n,) j of the row's own event time (0 for censored rows)

    @classmethod
    def build(cls, t: np.ndarray, e: np.ndarray, ties: str) -> Layout:
        order = np.argsort(t, kind="stable")
        ts, es = t[order], e[order].astype(bool)
        n = len(ts)
        first = np.searchsorted(ts, ts, side="left")  # first row of each row's tie block
        ev_rows = np.flatnonzero(es)
        ev_times, ev_block_start, ev_counts = np.unique(
            ts[ev_rows], return_index=True, return_counts=True
        )
        ev_block = np.repeat(np.arange(len(ev_times)), ev_counts)
        rank = np.arange(len(ev_rows)) - ev_block_start[ev_block]
        if ties == "efron":
            frac = rank / ev_counts[ev_block]
        else:
            frac = np.zeros(len(ev_rows))
        row_last_event = np.searchsorted(ev_times, ts, side="right") - 1
        row_block = np.zeros(n, dtype=np.intp)
        row_block[ev_rows] = ev_block
        return cls(
            order,
            es,
            ev_rows,
            first[ev_rows],
            ev_block_start,
            ev_block,
            frac,
            row_last_event,
            row_block,
        )


def cumulative_at(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``cumsum(values, axis=1)[:, index]`` with 0 where ``index == -1``."""
    cs = np.cumsum(values, axis=1)
    zero = np.zeros_like(cs[:, :1])
    return np.concatenate([zero, cs], axis=1)[:, index + 1]


def _newton_step(info: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``info^-1 score`` and ``info^-1`` by eigendecomposition; ``ok`` False where
    the information is not finite or not (numerically) positive definite."""
    finite = np.all(np.isfinite(info), axis=(1, 2)) & np.all(np.isfinite(score), axis=1)
    safe = np.where(finite[:, None, None], info, np.eye(info.shape[1]))
    vals, vecs = np.linalg.eigh(safe)
    ok = finite & (vals[:, 0] > _SINGULAR * np.maximum(vals[:, -1], 0.0)) & (vals[:, -1] > 0)
    inv_vals = np.where(ok[:, None], 1.0 / np.where(vals > 0, vals, 1.0), np.nan)
    inv = np.einsum("bij,bj,bkj->bik", vecs, inv_vals, vecs)
    step = np.einsum("bij,bj->bi", inv, np.where(finite[:, None], score, 0.0))
    return step, inv, ok


@dataclass(frozen=True)
class CoxBatch:
    """Results of :func:`~dprepro.survival.cox.fit_cox_batch` for ``B`` designs of ``p``
    columns.

    Attributes
    ----------
    coef : ndarray, shape (B, p)
        Log hazard ratios; NaN where the information matrix is singular.
    variance : ndarray, shape (B, p, p)
        Model-based variance, the inverse information at ``coef``.
    robust_variance : ndarray, shape (B, p, p), or None
        Lin–Wei cluster-robust sandwich (``cluster`` given), else None.
    log_likelihood, log_likelihood_null : ndarray, shape (B,)
        Partial log-likelihood at ``coef`` and at 0.
    converged : ndarray of bool, shape (B,)
    n_iter : ndarray of int, shape (B,)
        Newton iterations used (step-halvings not counted).
    """

    coef: np.ndarray
    variance: np.ndarray
    robust_variance: np.ndarray | None
    log_likelihood: np.ndarray
    log_likelihood_null: np.ndarray
    converged: np.ndarray
    n_iter: np.ndarray

    @property
    def se(self) -> np.ndarray:
        """Standard errors (B, p): robust ones when available, else model-based."""
        v = self.variance if self.robust_variance is None else self.robust_variance
        return np.sqrt(np.diagonal(v, axis1=1, axis2=2))


#: ``evaluate(idx, beta)``: an object with ``loglik`` (b,), ``score`` (b, p), ``info``
#: (b, p, p) and ``score_residuals()`` (b, n, p, sorted rows) of designs ``idx`` at ``beta``
Evaluate = Callable[[np.ndarray, np.ndarray], object]


def _newton(evaluate: Evaluate, nb: int, p: int, tol: float, max_iter: int):
    beta = np.zeros((nb, p))
    terms = evaluate(np.arange(nb), beta)
    loglik, score, info = terms.loglik, terms.score, terms.info
    ll_null = loglik.copy()
    n_iter = np.zeros(nb, dtype=np.int64)
    converged = np.zeros(nb, dtype=bool)
    singular = np.zeros(nb, dtype=bool)
    active = np.ones(nb, dtype=bool)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        step, _, ok = _newton_step(info[idx], score[idx])
        singular[idx[~ok]] = True
        idx, step = idx[ok], step[ok]
        active[:] = False
        active[idx] = True
        if idx.size == 0:
            break
        n_iter[idx] += 1
        small = np.max(np.abs(step), axis=1) <= tol * (1 + np.max(np.abs(beta[idx]), axis=1))
        beta[idx] += step
        converged[idx[small]] = True
        active[idx[small]] = False
        idx, step = idx[~small], step[~small]
        # evaluate the moved designs, halving the steps that lower the log-likelihood
        for _ in range(_MAX_HALVINGS):
            if idx.size == 0:
                break
            new = evaluate(idx, beta[idx])
            worse = ~(new.loglik >= loglik[idx] - 1e-12 * np.abs(loglik[idx]))
            good = idx[~worse]
            loglik[good], score[good], info[good] = (
                new.loglik[~worse],
                new.score[~worse],
                new.info[~worse],
            )
            step = step[worse] / 2
            idx = idx[worse]
            beta[idx] -= step
        active[idx] = False  # still worse after all halvings: give up
    return beta, n_iter, converged, singular, ll_null


def _robust(resid: np.ndarray, variance: np.ndarray, codes: np.ndarray, lay: Layout):
    r"""Lin–Wei sandwich [LW89]_ :math:`\sum_c (\sum_{i \in c} D_i)(\sum_{i \in c} D_i)^\top`
    from the score residuals (sorted rows) and the model variance; ``codes``: cluster of
    each row in the original order."""
    dfbeta = np.einsum("bnp,bpq->bnq", resid, variance)
    by = np.argsort(codes[lay.order], kind="stable")
    starts = np.flatnonzero(np.diff(codes[lay.order][by], prepend=-1))
    sums = np.add.reduceat(dfbeta[:, by], starts, axis=1)
    return np.einsum("bci,bcj->bij", sums, sums)


def solve(evaluate: Evaluate, lay: Layout, nb: int, p: int, codes, tol: float,
          max_iter: int) -> CoxBatch:
    """Newton–Raphson for ``nb`` designs of ``p`` columns (:func:`_newton`), then the
    variances at the estimate: NaN coefficients and variances, and ``converged``
    False, where the information is singular; the robust variance with ``codes``."""
    with np.errstate(all="ignore"):
        beta, n_iter, converged, singular, ll_null = _newton(evaluate, nb, p, tol, max_iter)
        terms = evaluate(np.arange(nb), np.where(np.isfinite(beta), beta, 0.0))
        _, variance, ok = _newton_step(terms.info, terms.score)
        bad = singular | ~ok
        converged &= ~bad
        beta[bad] = np.nan
        variance[bad] = np.nan
        loglik = np.where(bad, np.nan, terms.loglik)
        robust = None
        if codes is not None:
            robust = _robust(terms.score_residuals(), variance, codes, lay)
    return CoxBatch(beta, variance, robust, loglik, ll_null, converged, n_iter)


def fit_in_chunks(nb: int, chunk: int, fit: Callable[[slice], CoxBatch]) -> CoxBatch:
    """``fit(slice)`` on consecutive blocks of at most ``chunk`` of the ``nb`` designs,
    joined into one :class:`CoxBatch` (a design's fit does not depend on its block beyond
    rounding)."""
    parts = [fit(slice(s, min(s + chunk, nb))) for s in range(0, nb, max(1, chunk))]
    if len(parts) == 1:
        return parts[0]

    def join(name):
        return np.concatenate([getattr(part, name) for part in parts])

    return CoxBatch(coef=join("coef"), variance=join("variance"),
                    robust_variance=None if parts[0].robust_variance is None
                    else join("robust_variance"),
                    log_likelihood=join("log_likelihood"),
                    log_likelihood_null=join("log_likelihood_null"),
                    converged=join("converged"), n_iter=join("n_iter"))
