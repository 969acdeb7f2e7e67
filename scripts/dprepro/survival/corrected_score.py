r"""The Zucker–Spiegelman corrected score for a misclassified group label.

Part of :mod:`dprepro.survival.cox_misclassification` (the matrix, its inverse's rows
:func:`~dprepro.survival.cox_misclassification.unbiased_label_weights`, MC-SIMEX): the
corrected score [ZS04]_ after Nakamura [Nak92]_ replaces every function of the true label
in the partial-likelihood score by an unbiased surrogate computed from the released label
with :math:`\Pi^{-1}`; consistent, sandwich variance [LW89]_.
:func:`corrected_score_cox_draws` fits several released label vectors of the same rows
(the draws of a release) in one batch.

References
----------
.. [ZS04] D. M. Zucker, D. Spiegelman (2004). Inference for the proportional
   hazards model with misclassified discrete-valued covariates. Biometrics 60,
   324–334.
.. [Nak92] T. Nakamura (1992). Proportional hazards model with covariates
   subject to measurement error. Biometrics 48, 829–838.
.. [LW89] D. Y. Lin, L. J. Wei (1989). The robust inference for the Cox
   proportional hazards model. JASA 84, 1074–1078.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprepro.survival.cox import _check_options, _fit, _fit_labels, treatment_dummies
from dprepro.survival.cox_misclassification import (
    _check_inputs,
    _term_names,
    unbiased_label_weights,
)
from dprepro.survival.inputs import normal_quantile
from dprepro.survival.simex_extrapolation import estimate_frame

__all__ = ["CorrectedScoreResult", "corrected_score_cox", "corrected_score_cox_draws"]


@dataclass(frozen=True)
class CorrectedScoreResult:
    """Corrected-score estimate of the log hazard ratios.

    Attributes
    ----------
    terms : list of str
    estimate, se : ndarray, shape (p,)
    ci : ndarray, shape (p, 2)
    variance : ndarray, shape (p, p)
        Sandwich :math:`A^{-1} B A^{-1}`.
    converged : bool
    n_iter : int
    """

    terms: list
    estimate: np.ndarray
    se: np.ndarray
    ci: np.ndarray
    variance: np.ndarray
    converged: bool
    n_iter: int

    def to_frame(self) -> pd.DataFrame:
        """One row per term: estimate, se, lower, upper."""
        return estimate_frame(self)


def corrected_score_cox(
    time,
    event,
    labels,
    pi,
    *,
    covariates=None,
    cluster=None,
    tau: float | None = None,
    level: float = 0.95,
    tol: float = 1e-10,
    max_iter: int = 50,
) -> CorrectedScoreResult:
    r"""Zucker–Spiegelman corrected score for a misclassified group label [ZS04]_.

    With :math:`z(g, c_i)` the design row of label :math:`g` (dummies, then the
    error-free covariates :math:`c_i`) and :math:`\omega_{ig} = (\Pi^{-1})_{w_i g}`
    (:func:`unbiased_label_weights`), the functions of the unknown true label in
    the Breslow partial-likelihood score are replaced by their unbiased
    surrogates,

    .. math::

        \psi_i(\beta) = \sum_g \omega_{ig} e^{\beta^\top z(g, c_i)}, \quad
        \phi_i(\beta) = \sum_g \omega_{ig}\, z(g, c_i)\, e^{\beta^\top z(g, c_i)}, \quad
        x^*_i = \sum_g \omega_{ig}\, z(g, c_i),

    and :math:`\hat\beta` solves
    :math:`U^*(\beta) = \sum_i \delta_i \big[x^*_i - \sum_{j \in R_i} \phi_j /
    \sum_{j \in R_i} \psi_j\big] = 0`, the score of Nakamura's corrected
    log partial likelihood :math:`\sum_i \delta_i [\beta^\top x^*_i - \log
    \sum_{j \in R_i} \psi_j]` [Nak92]_. Given the true labels
    :math:`E[x^*_i] = x_i` and :math:`E[\psi_j] = e^{\beta^\top x_j}`
    (non-differential misclassification), so the risk-set sums estimate
    the error-free ones and :math:`\hat\beta` is consistent. Computed exactly
    as a weighted Breslow Cox fit on ``k`` pseudo-rows per patient (one per
    label, weight :math:`\omega_{ig}`, which may be negative).

    Variance: the sandwich :math:`A^{-1} B A^{-1}` with :math:`A = -\partial U^*/\partial\beta`
    and :math:`B` the sum of outer products of the patients' (or ``cluster``'s)
    corrected Lin–Wei score residuals [LW89]_; :math:`\Pi` is treated as known.

    The corrected risk-set sum :math:`\sum_{R_i} \psi_j` can be <= 0 in small
    late risk sets under strong misclassification (:math:`\psi_j < 0` for
    low-risk labels when :math:`\Pi^{-1}` has large negative entries); the fit
    then does not converge (NaN). ``tau`` restricts the score to event times
    <= ``tau`` (later events count as censored), which keeps the estimator
    consistent under proportional hazards and avoids the smallest risk sets.
    Ties: Breslow's (Efron's correction is not defined for pseudo-rows).

    Parameters
    ----------
    time, event, labels, pi, covariates
        As in :func:`~dprepro.survival.cox_misclassification.mc_simex_cox`.
    cluster : array_like, shape (n,), optional
        Cluster ids for the sandwich (default: each patient its own).
    tau : float, optional
        Last event time used.
    level, tol, max_iter
        Confidence level; Newton–Raphson settings.

    Returns
    -------
    CorrectedScoreResult
    """
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise ValueError(f"labels must be one-dimensional, got shape {lab.shape} "
                         "(several released label vectors: corrected_score_cox_draws)")
    return corrected_score_cox_draws(time, event, lab[None], pi, covariates=covariates,
                                     cluster=cluster, tau=tau, level=level, tol=tol,
                                     max_iter=max_iter)[0]


def corrected_score_cox_draws(
    time,
    event,
    labels,
    pi,
    *,
    covariates=None,
    cluster=None,
    tau: float | None = None,
    level: float = 0.95,
    tol: float = 1e-10,
    max_iter: int = 50,
) -> list[CorrectedScoreResult]:
    """:func:`corrected_score_cox` of each of several released label vectors ``labels``
    (D, n) of the same rows, fitted together: the ``k`` pseudo-rows per patient are the
    same for every vector, only their weights differ. Returns one result per vector."""
    t, e, m, lab, cov, codes = _check_inputs(time, event, labels, pi, covariates, cluster,
                                             batch=True)
    _check_options("breslow", tol, max_iter)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if tau is not None:
        if not (np.isscalar(tau) and np.isfinite(tau)):
            raise ValueError(f"tau must be a finite number, got {tau!r}")
        e = np.where(t <= tau, e, 0)
        if not e.any():
            raise ValueError("no event at or before tau")
    (nd, n), k = lab.shape, m.shape[0]
    weights = unbiased_label_weights(lab, m).reshape(nd, n * k)  # row i, label g at i*k+g
    pseudo = np.tile(np.arange(k), n)
    subjects = np.repeat(np.arange(n) if codes is None else codes, k)
    times, events = np.repeat(t, k), np.repeat(e, k)
    if cov is None:
        fits = [_fit_labels(times, events, pseudo[None], k, weights, "breslow", subjects, tol,
                            max_iter)]
    else:  # the row-level kernel: one weighted design at a time
        design = treatment_dummies(pseudo, k, np.repeat(cov, k, axis=0))[None]
        fits = [_fit(times, events, design, w[None], "breslow", subjects, tol, max_iter)
                for w in weights]
    coef, variance, converged, n_iter = (
        np.concatenate([getattr(fit, name) for fit in fits])
        for name in ("coef", "robust_variance", "converged", "n_iter"))
    coef[~converged] = np.nan
    variance[~converged] = np.nan
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.diagonal(variance, axis1=1, axis2=2))
    z = float(normal_quantile(0.5 + level / 2))
    terms = _term_names(k, cov)
    return [CorrectedScoreResult(terms=terms, estimate=coef[d], se=se[d],
                                 ci=np.stack([coef[d] - z * se[d], coef[d] + z * se[d]], axis=1),
                                 variance=variance[d], converged=bool(converged[d]),
                                 n_iter=int(n_iter[d]))
            for d in range(nd)]
