r"""MC-SIMEX's extrapolation step: from the naive estimates along λ to λ = −1.

:func:`simex_result` turns the mean coefficients, the jackknife variance components
and the between-replicate variances of the replicates at each λ into a
:class:`SimexResult` (:func:`dprepro.survival.cox_misclassification.mc_simex_cox`
fits them): the quadratic or loglinear extrapolant at λ = −1 [KML06]_, the
jackknife variance [SC95]_ extrapolated quadratically plus the Monte Carlo variance
of the finite replicate means.

References
----------
.. [KML06] H. Küchenhoff, S. M. Mwalili, E. Lesaffre (2006). A general method
   for dealing with misclassification in regression: the misclassification
   SIMEX. Biometrics 62, 85–96.
.. [SC95] L. A. Stefanski, J. R. Cook (1995). Simulation-extrapolation: the
   measurement error jackknife. JASA 90, 1247–1256.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprepro.survival.inputs import normal_quantile

__all__ = ["EXTRAPOLANTS", "SimexResult", "check_simex_options", "estimate_frame",
           "simex_result"]

EXTRAPOLANTS = ("quadratic", "loglinear")


def estimate_frame(result, **extra) -> pd.DataFrame:
    """One row per term of a corrected fit: estimate, se, the interval, then ``extra``."""
    return pd.DataFrame({"term": result.terms, "estimate": result.estimate, "se": result.se,
                         "lower": result.ci[:, 0], "upper": result.ci[:, 1], **extra})


@dataclass(frozen=True)
class SimexResult:
    r"""MC-SIMEX estimate of the log hazard ratios.

    Attributes
    ----------
    terms : list of str
        ``group1 .. group{k-1}`` (vs level 0), then ``x0, x1, ..`` (covariates).
    estimate, se : ndarray, shape (p,)
        Extrapolated coefficients and jackknife standard errors (NaN where the
        extrapolated variance is not positive).
    ci : ndarray, shape (p, 2)
        Normal ``level`` interval ``estimate ± z se``.
    naive, naive_se : ndarray, shape (p,)
        The fit on the released labels (λ = 0).
    lambdas : ndarray, shape (L,)
    path : ndarray, shape (L, p)
        Mean coefficient over the converged replicates at each λ.
    variance_path : ndarray, shape (L, p)
        Jackknife variance component at each λ (mean model variance minus the
        between-replicate variance).
    n_converged : ndarray, shape (L,)
        Replicates that converged at each λ (the others are left out: a selection,
        since a replicate fails where its estimate would be extreme).
    extrapolation : str
    between_path : ndarray, shape (L, p)
        Between-replicate sample variance :math:`s^2_\lambda` of the coefficients at
        each λ (0 at λ = 0, the single naive fit).
    n_replicates : int
        Replicates drawn per λ > 0.
    mc_variance : ndarray, shape (p,)
        The Monte Carlo variance of the extrapolant from the finite replicate
        means, :math:`\sum_\lambda c_\lambda^2 s^2_\lambda / B_\lambda`, included in ``se``.
    level : float
        Confidence level of ``ci``.
    """

    terms: list
    estimate: np.ndarray
    se: np.ndarray
    ci: np.ndarray
    naive: np.ndarray
    naive_se: np.ndarray
    lambdas: np.ndarray
    path: np.ndarray
    variance_path: np.ndarray
    n_converged: np.ndarray
    extrapolation: str
    between_path: np.ndarray | None = None
    n_replicates: int = 0
    mc_variance: np.ndarray | None = None
    level: float = 0.95

    def extrapolated(self, how: str) -> SimexResult:
        """The same replicates extrapolated by ``how`` (``"quadratic"`` or ``"loglinear"``):
        a sensitivity check of the extrapolant at no further fitting cost."""
        return simex_result(self.terms, self.lambdas, self.path, self.variance_path,
                             self.between_path, self.n_converged, self.naive, self.naive_se,
                             how, self.n_replicates, self.level)

    def to_frame(self) -> pd.DataFrame:
        """One row per term: estimate, se, lower, upper, naive, naive_se."""
        return estimate_frame(self, naive=self.naive, naive_se=self.naive_se)


def _extrapolation_weights(lambdas: np.ndarray, degree: int) -> np.ndarray:
    r"""Weights :math:`c = x(-1)^\top (X^\top X)^{-1} X^\top` (shape (L,)) of the
    least-squares polynomial of ``degree`` in λ evaluated at λ = −1: the extrapolant
    is :math:`\sum_\lambda c_\lambda \theta(\lambda)`."""
    design = np.vander(lambdas, degree + 1, increasing=True)
    at = np.vander(np.array([-1.0]), degree + 1, increasing=True)[0]
    return at @ np.linalg.pinv(design)


def _mc_variance(lambdas, path, between, n_ok, how: str) -> np.ndarray:
    r"""Monte Carlo variance of the extrapolant from finite replicate means:
    :math:`\sum_\lambda g_\lambda^2 s^2_\lambda / B_\lambda` with :math:`g_\lambda` the
    derivative of the extrapolant with respect to the mean at λ (:math:`c_\lambda` for the
    quadratic; for the loglinear, by the delta method, :math:`\hat\theta(-1)\,c_\lambda /
    \theta(\lambda)` with the linear weights)."""
    if how == "quadratic":
        grad = _extrapolation_weights(lambdas, 2)[:, None] * np.ones_like(path)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            grad = (_extrapolate(lambdas, path, "loglinear")[None]
                    * _extrapolation_weights(lambdas, 1)[:, None] / path)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(between > 0, grad**2 * between / np.maximum(n_ok, 1)[:, None], 0.0)
    return terms.sum(axis=0)


def simex_result(terms, lam, path, vpath, between, n_conv, naive, naive_se, how,
                  n_replicates, level) -> SimexResult:
    """The MC-SIMEX estimate of one release: the path over λ extrapolated to λ = −1,
    with its variance (the jackknife-type correction of the between-replicate spread)
    and the naive fit beside it, as a :class:`SimexResult`."""
    estimate = _extrapolate(lam, path, how)
    mc_var = _mc_variance(lam, path, between, np.asarray(n_conv, float), how)
    var_hat = _extrapolate(lam, vpath, "quadratic") + mc_var
    with np.errstate(invalid="ignore"):
        se = np.where(var_hat > 0, np.sqrt(np.where(var_hat > 0, var_hat, 1.0)), np.nan)
    z = float(normal_quantile(0.5 + level / 2))
    return SimexResult(
        terms=terms,
        estimate=estimate,
        se=se,
        ci=np.stack([estimate - z * se, estimate + z * se], axis=1),
        naive=naive,
        naive_se=naive_se,
        lambdas=lam,
        path=path,
        variance_path=vpath,
        n_converged=n_conv,
        extrapolation=how,
        between_path=between,
        n_replicates=n_replicates,
        mc_variance=mc_var,
        level=level,
    )


def _extrapolate(lambdas: np.ndarray, values: np.ndarray, how: str) -> np.ndarray:
    """Least-squares extrapolant of ``values`` (L, p) in λ, evaluated at λ = -1."""
    if how == "quadratic":
        design = np.stack([np.ones_like(lambdas), lambdas, lambdas**2], axis=1)
        gamma, *_ = np.linalg.lstsq(design, values, rcond=None)
        return gamma[0] - gamma[1] + gamma[2]
    # loglinear: log|θ(λ)| = γ0 + γ1 λ per coefficient, its sign kept; NaN on a sign change
    sign = np.sign(values[0])
    same = np.all(np.sign(values) == sign, axis=0) & (sign != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(np.abs(values))
    design = np.stack([np.ones_like(lambdas), lambdas], axis=1)
    gamma, *_ = np.linalg.lstsq(design, np.where(same, logs, 0.0), rcond=None)
    return np.where(same, sign * np.exp(gamma[0] - gamma[1]), np.nan)


def check_simex_options(lambdas, n_replicates, extrapolation, level) -> np.ndarray:
    """The distinct λ (sorted) after checking the MC-SIMEX options; ValueError naming the
    option otherwise."""
    if extrapolation not in EXTRAPOLANTS:
        raise ValueError(f"extrapolation must be one of {EXTRAPOLANTS}, got {extrapolation!r}")
    lam = np.unique(np.asarray(lambdas, dtype=float))
    if lam.ndim != 1 or not np.all(np.isfinite(lam)) or np.any(lam < 0):
        raise ValueError("lambdas must be finite numbers >= 0")
    need = 3 if extrapolation == "quadratic" else 2
    if lam.size < need:
        raise ValueError(f"lambdas needs at least {need} distinct values for {extrapolation}")
    if (
        isinstance(n_replicates, bool)
        or not isinstance(n_replicates, int | np.integer)
        or n_replicates < 2
    ):
        raise ValueError(f"n_replicates must be an integer >= 2, got {n_replicates!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return lam
