r"""Cox regression on a misclassified group label with a known misclassification matrix.

A categorical label :math:`G \in \{0, \dots, k-1\}` is released as :math:`W`
with :math:`P(W = j \mid G = i) = \Pi_{ij}`, independently of the survival
outcome given :math:`G` (non-differential), e.g. Revised Randomized Response,
:math:`\Pi = p I + \frac{1-p}{k} J` (:func:`rrr_matrix`). The naive Cox fit of
the outcome on the treatment-coded :math:`W` (reference level 0, plus error-free
covariates) is attenuated; two corrections with :math:`\Pi` known:

* :func:`mc_simex_cox`, MC-SIMEX [KML06]_: add misclassification
  :math:`\Pi^\lambda` on top of the released labels, follow the naive estimate
  along :math:`\lambda \ge 0` and extrapolate back to :math:`\lambda = -1`
  (no misclassification). Approximately unbiased to the extent the
  extrapolant fits; jackknife-type variance.
* :func:`corrected_score_cox`, the corrected score of Zucker & Spiegelman
  [ZS04]_ (after Nakamura [Nak92]_): every function of the true label in the
  partial-likelihood score is replaced by an unbiased surrogate computed from
  :math:`W` with :math:`\Pi^{-1}`; consistent, sandwich variance.

The key identity: for :math:`f` on the labels and
:math:`f^*(w) = \sum_g (\Pi^{-1})_{wg} f(g)`,
:math:`E[f^*(W) \mid G = x] = \sum_w \Pi_{xw} f^*(w) = (\Pi \Pi^{-1} f)(x) = f(x)`
(:func:`unbiased_label_weights` returns the rows :math:`(\Pi^{-1})_{w\cdot}`).

References
----------
.. [KML06] H. Küchenhoff, S. M. Mwalili, E. Lesaffre (2006). A general method
   for dealing with misclassification in regression: the misclassification
   SIMEX. Biometrics 62, 85–96.
.. [SC95] L. A. Stefanski, J. R. Cook (1995). Simulation-extrapolation: the
   measurement error jackknife. JASA 90, 1247–1256.
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

from dprepro.survival.cox import (
    _check_cluster,
    _check_options,
    _check_time_event,
    _fit,
    treatment_dummies,
)
from dprepro.survival.inputs import normal_quantile

__all__ = [
    "CorrectedScoreResult",
    "SimexResult",
    "check_misclassification_matrix",
    "corrected_score_cox",
    "mc_simex_cox",
    "misclassify",
    "rrr_matrix",
    "stochastic_matrix_power",
    "unbiased_label_weights",
]

_ROW_SUM_TOL = 1e-9
_MAX_COND = 1e12
_EXTRAPOLANTS = ("quadratic", "loglinear")


# --------------------------------------------------------------------------- the matrix


def rrr_matrix(p: float, k: int) -> np.ndarray:
    r"""Revised Randomized Response's misclassification matrix
    :math:`\Pi = p I + \frac{1-p}{k} J` (keep the label with probability
    :math:`p + (1-p)/k`, each other label with :math:`(1-p)/k`)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    if not (np.isscalar(p) and np.isfinite(p) and 0 < p <= 1):
        raise ValueError(f"p must be in (0, 1], got {p!r}")
    return p * np.eye(k) + (1 - p) / k * np.ones((k, k))


def check_misclassification_matrix(pi, k: int | None = None) -> np.ndarray:
    """Validate a misclassification matrix ``pi[i, j] = P(released j | true i)``.

    Square (``k`` x ``k`` when ``k`` is given), finite, entries in [0, 1], rows
    summing to 1 (to 1e-9) and invertible (condition number below 1e12).
    Returns it as float64; raises ValueError/TypeError naming ``pi``.
    """
    m = np.asarray(pi)
    if not np.issubdtype(m.dtype, np.number) or np.issubdtype(m.dtype, np.complexfloating):
        raise TypeError(f"pi must be a real matrix, got dtype {m.dtype}")
    m = m.astype(float)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
        raise ValueError(f"pi must be a square matrix of size >= 2, got shape {m.shape}")
    if k is not None and m.shape[0] != k:
        raise ValueError(f"pi must be {k} x {k} (the number of labels), got {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError("pi must be finite")
    if np.any(m < 0) or np.any(m > 1):
        raise ValueError("pi must have entries in [0, 1]")
    if np.any(np.abs(m.sum(axis=1) - 1) > _ROW_SUM_TOL):
        raise ValueError("pi must be row-stochastic: each row must sum to 1")
    if not np.linalg.cond(m) < _MAX_COND:
        raise ValueError("pi must be invertible (its condition number is too large)")
    return m


def stochastic_matrix_power(pi, lam: float) -> np.ndarray:
    r"""The misclassification matrix :math:`\Pi^\lambda` for real :math:`\lambda \ge 0`.

    Integer powers by repeated multiplication (so :math:`\Pi^0 = I` and
    :math:`\Pi^1 = \Pi` exactly); others through the eigendecomposition
    :math:`\Pi = V \operatorname{diag}(\mu) V^{-1}`,
    :math:`\Pi^\lambda = V \operatorname{diag}(\mu^\lambda) V^{-1}` [KML06]_.
    For RRR, :math:`\Pi^\lambda = p^\lambda I + \frac{1-p^\lambda}{k} J`.

    Raises
    ------
    ValueError
        If :math:`\Pi^\lambda` is not a real row-stochastic matrix (e.g.
        negative or complex eigenvalues), where MC-SIMEX is not defined.
    """
    m = check_misclassification_matrix(pi)
    if not (np.isscalar(lam) and np.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")
    if float(lam).is_integer():
        return np.linalg.matrix_power(m, int(lam))
    mu, vecs = np.linalg.eig(m)
    out = (vecs * mu.astype(complex) ** lam) @ np.linalg.inv(vecs)
    scale = 1e-8
    if np.max(np.abs(out.imag)) > scale:
        raise ValueError(
            f"pi**{lam} is not real: pi has eigenvalues {mu}; MC-SIMEX needs "
            "a matrix power that is again a misclassification matrix"
        )
    out = out.real
    if np.any(out < -scale) or np.any(np.abs(out.sum(axis=1) - 1) > scale):
        raise ValueError(
            f"pi**{lam} is not a stochastic matrix (negative entries); "
            "MC-SIMEX is not defined for this pi"
        )
    out = np.clip(out, 0.0, None)
    return out / out.sum(axis=1, keepdims=True)


def unbiased_label_weights(labels, pi) -> np.ndarray:
    r"""Rows of :math:`\Pi^{-1}` at the released labels, shape ``labels.shape + (k,)``.

    ``out[..., i, g] = (Pi^-1)[w_i, g]``: for any function :math:`f` of the
    label, :math:`f^*(w_i) = \sum_g` ``out[i, g]`` :math:`f(g)` has
    :math:`E[f^*(W) \mid G = x] = f(x)`. Each row sums to 1; entries may be
    negative.
    """
    m = check_misclassification_matrix(pi)
    lab = _check_labels(labels, m.shape[0], allow_batch=True)
    return np.linalg.inv(m)[lab]


def misclassify(labels, pi, *, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """Pass each label through the channel ``pi``: label ``w`` becomes ``j`` with
    probability ``pi[w, j]``, independently.

    ``labels`` (n,) integer; ``size``: number of independent copies (returns
    shape (size, n); default a single (n,) copy). ``rng`` is a numpy Generator.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    m = np.asarray(pi, dtype=float)
    lab = _check_labels(labels, m.shape[0], allow_batch=True)
    shape = lab.shape if size is None else (size,) + lab.shape
    cum = np.cumsum(m, axis=1)
    cum[:, -1] = np.inf  # rounding: always land on a label
    u = rng.random(shape)
    return (u[..., None] >= cum[lab]).sum(axis=-1)


# --------------------------------------------------------------------------- validation


def _check_labels(labels, k: int, *, allow_batch: bool = False) -> np.ndarray:
    lab = np.asarray(labels)
    if not np.issubdtype(lab.dtype, np.integer):
        raise TypeError(f"labels must be integers, got dtype {lab.dtype}")
    if lab.ndim != 1 and not (allow_batch and lab.ndim == 2):
        raise ValueError(f"labels must be one-dimensional, got shape {lab.shape}")
    if lab.size == 0:
        raise ValueError("labels is empty")
    if lab.min() < 0 or lab.max() >= k:
        raise ValueError(f"labels must lie in 0..{k - 1} (pi is {k} x {k})")
    return lab.astype(np.intp)


def _check_inputs(time, event, labels, pi, covariates, cluster):
    t, e = _check_time_event(time, event)
    m = check_misclassification_matrix(pi)
    lab = _check_labels(labels, m.shape[0])
    if lab.shape != t.shape:
        raise ValueError(f"labels must have the shape of time {t.shape}, got {lab.shape}")
    cov = None
    if covariates is not None:
        cov = np.asarray(covariates, dtype=float)
        if cov.ndim == 1:
            cov = cov[:, None]
        if cov.ndim != 2 or cov.shape[0] != len(t):
            raise ValueError(f"covariates must have shape ({len(t)}, q), got {cov.shape}")
        if not np.all(np.isfinite(cov)):
            raise ValueError("covariates must be finite")
    codes = None if cluster is None else _check_cluster(cluster, len(t))
    return t, e, m, lab, cov, codes


def _term_names(k: int, cov) -> list[str]:
    q = 0 if cov is None else cov.shape[1]
    return [f"group{g}" for g in range(1, k)] + [f"x{j}" for j in range(q)]


# --------------------------------------------------------------------------- MC-SIMEX


def _estimate_frame(result, **extra) -> pd.DataFrame:
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
        return _simex_result(self.terms, self.lambdas, self.path, self.variance_path,
                             self.between_path, self.n_converged, self.naive, self.naive_se,
                             how, self.n_replicates, self.level)

    def to_frame(self) -> pd.DataFrame:
        """One row per term: estimate, se, lower, upper, naive, naive_se."""
        return _estimate_frame(self, naive=self.naive, naive_se=self.naive_se)


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


def _simex_result(terms, lam, path, vpath, between, n_conv, naive, naive_se, how,
                  n_replicates, level) -> SimexResult:
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


def mc_simex_cox(
    time,
    event,
    labels,
    pi,
    *,
    rng: np.random.Generator,
    covariates=None,
    lambdas=(0.0, 0.5, 1.0, 1.5, 2.0),
    n_replicates: int = 100,
    extrapolation: str = "quadratic",
    ties: str = "efron",
    cluster=None,
    level: float = 0.95,
    tol: float = 1e-10,
    max_iter: int = 50,
) -> SimexResult:
    r"""MC-SIMEX for a Cox model on a misclassified group label [KML06]_.

    With :math:`\hat\beta(\lambda)` the mean over ``n_replicates`` naive Cox fits
    (treatment coding, level 0 as reference, plus ``covariates``) on labels
    :math:`W^*` drawn from the released :math:`W` through :math:`\Pi^\lambda`
    (so that :math:`W^*` has misclassification matrix :math:`\Pi^{1+\lambda}`
    relative to the truth), fit :math:`\hat\beta(\lambda) \approx \gamma_0 +
    \gamma_1 \lambda + \gamma_2 \lambda^2` (``"quadratic"``, the default of
    R's ``simex::mcsimex``) or :math:`\log|\hat\beta(\lambda)| \approx \gamma_0 +
    \gamma_1 \lambda` (``"loglinear"``, sign kept; NaN for a coefficient that
    changes sign) by least squares over ``lambdas`` and evaluate it at
    :math:`\lambda = -1`, i.e. :math:`\Pi^0 = I`. At λ = 0 the single naive fit
    is used. All replicates of all λ are fitted in one :func:`~dprepro.survival.cox.fit_cox_batch`
    call; replicates that do not converge (e.g. a level without events) are
    left out of the means.

    Variance: the SIMEX jackknife variance of Stefanski & Cook [SC95]_, which
    [KML06]_ carry over to MC-SIMEX (R's ``jackknife.estimation = "quad"``):
    at each λ, :math:`\tau^2(\lambda) = \overline{\widehat{\operatorname{var}}}_b(\lambda)
    - s^2_b(\lambda)`, the mean of the replicates' variance estimates (model-based,
    or cluster-robust with ``cluster``) minus the between-replicate sample
    variance of their coefficients, is extrapolated quadratically to λ = −1.
    To it is added the Monte Carlo variance of the extrapolant from the finite
    number :math:`B` of replicates (the extrapolant is a linear combination
    :math:`\sum_\lambda c_\lambda \hat\beta(\lambda)` of the replicate means,
    :math:`c = x(-1)^\top (X^\top X)^{-1} X^\top` for the quadratic), namely
    :math:`\sum_\lambda c_\lambda^2 s^2_b(\lambda) / B_\lambda` (0 at λ = 0; the loglinear
    extrapolant by the delta method); without it the standard error is too small
    at small :math:`B`. It treats :math:`\Pi` as known and is NaN where the
    extrapolated variance is not positive; a bootstrap over patients is the
    alternative when in doubt. :meth:`SimexResult.extrapolated` gives the other
    extrapolant from the same replicates (a sensitivity check: the quadratic
    undercorrects at strong misclassification).

    Parameters
    ----------
    time, event : array_like, shape (n,)
        Follow-up times (finite, >= 0) and 0/1 event indicators.
    labels : array_like of int, shape (n,)
        Released labels in ``0 .. k-1``.
    pi : array_like, shape (k, k)
        Misclassification matrix, ``pi[i, j] = P(released j | true i)``.
    rng : numpy.random.Generator
        Source of the simulated misclassification.
    covariates : array_like, shape (n, q), optional
        Error-free numeric covariates.
    lambdas : sequence of float
        λ grid (>= 0, at least 3 distinct values for ``"quadratic"``, 2 for
        ``"loglinear"``).
    n_replicates : int
        Simulated label vectors per λ > 0.
    extrapolation : {"quadratic", "loglinear"}
    ties : {"efron", "breslow"}
    cluster : array_like, shape (n,), optional
        Cluster ids: robust variances in the jackknife and the naive fit.
    level : float
        Confidence level of ``ci``.
    tol, max_iter
        Newton–Raphson settings of the Cox fits.

    Returns
    -------
    SimexResult
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    t, e, m, lab, cov, codes = _check_inputs(time, event, labels, pi, covariates, cluster)
    _check_options(ties, tol, max_iter)
    if extrapolation not in _EXTRAPOLANTS:
        raise ValueError(f"extrapolation must be one of {_EXTRAPOLANTS}, got {extrapolation!r}")
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
    k = m.shape[0]
    positive = lam[lam > 0]
    draws = [lab[None]]
    for value in positive:
        draws.append(
            misclassify(lab, stochastic_matrix_power(m, value), rng=rng, size=n_replicates)
        )
    X = treatment_dummies(np.concatenate(draws), k, cov)
    fits = _fit(t, e, X, None, ties, codes, tol, max_iter)
    var = fits.variance if fits.robust_variance is None else fits.robust_variance
    var = np.diagonal(var, axis1=1, axis2=2)
    naive, naive_var = fits.coef[0], var[0]
    ok = fits.converged[1:].reshape(len(positive), n_replicates)
    coef = np.where(ok[..., None], fits.coef[1:].reshape(len(positive), n_replicates, -1), np.nan)
    v = np.where(ok[..., None], var[1:].reshape(coef.shape), np.nan)
    n_ok = ok.sum(axis=1)
    with np.errstate(all="ignore"):
        means = np.nansum(coef, axis=1) / n_ok[:, None]
        between = np.nansum((coef - means[:, None]) ** 2, axis=1) / (n_ok[:, None] - 1)
        tau2 = np.nansum(v, axis=1) / n_ok[:, None] - between
    path = np.concatenate([naive[None], means]) if lam[0] == 0 else means
    vpath = np.concatenate([naive_var[None], tau2]) if lam[0] == 0 else tau2
    bpath = np.concatenate([np.zeros_like(naive)[None], between]) if lam[0] == 0 else between
    n_conv = np.concatenate([[int(fits.converged[0])], n_ok]) if lam[0] == 0 else n_ok
    return _simex_result(_term_names(k, cov), lam, path, vpath, bpath, n_conv, naive,
                         np.sqrt(naive_var), extrapolation, int(n_replicates), level)


# --------------------------------------------------------------------------- corrected score


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
        return _estimate_frame(self)


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
        As in :func:`mc_simex_cox`.
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
    t, e, m, lab, cov, codes = _check_inputs(time, event, labels, pi, covariates, cluster)
    _check_options("breslow", tol, max_iter)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if tau is not None:
        if not (np.isscalar(tau) and np.isfinite(tau)):
            raise ValueError(f"tau must be a finite number, got {tau!r}")
        e = np.where(t <= tau, e, 0)
        if not e.any():
            raise ValueError("no event at or before tau")
    n, k = len(t), m.shape[0]
    weights = unbiased_label_weights(lab, m).reshape(1, n * k)  # row i, label g at i*k+g
    design = treatment_dummies(
        np.tile(np.arange(k), n), k, None if cov is None else np.repeat(cov, k, axis=0)
    )
    subjects = np.arange(n) if codes is None else codes
    fit = _fit(
        np.repeat(t, k),
        np.repeat(e, k),
        design[None],
        weights,
        "breslow",
        np.repeat(subjects, k),
        tol,
        max_iter,
    )
    estimate = fit.coef[0]
    variance = fit.robust_variance[0]
    if not fit.converged[0]:
        estimate = np.full_like(estimate, np.nan)
        variance = np.full_like(variance, np.nan)
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.diagonal(variance))
    z = float(normal_quantile(0.5 + level / 2))
    return CorrectedScoreResult(
        terms=_term_names(k, cov),
        estimate=estimate,
        se=se,
        ci=np.stack([estimate - z * se, estimate + z * se], axis=1),
        variance=variance,
        converged=bool(fit.converged[0]),
        n_iter=int(fit.n_iter[0]),
    )
