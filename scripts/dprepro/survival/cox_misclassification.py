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
* :func:`~dprepro.survival.corrected_score.corrected_score_cox`, the corrected score
  of Zucker & Spiegelman [ZS04]_ (after Nakamura [Nak92]_): every function of the
  true label in the partial-likelihood score is replaced by an unbiased surrogate
  computed from :math:`W` with :math:`\Pi^{-1}`; consistent, sandwich variance.

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

import numpy as np

from dprepro.survival.cox import (
    _check_cluster,
    _check_options,
    _check_time_event,
    _fit,
    _fit_labels,
    treatment_dummies,
)
from dprepro.survival.simex_extrapolation import (
    SimexResult,
    check_simex_options,
    simex_result,
)

__all__ = [
    "SimexResult",
    "check_misclassification_matrix",
    "mc_simex_cox",
    "mc_simex_cox_draws",
    "misclassify",
    "rrr_matrix",
    "stochastic_matrix_power",
    "unbiased_label_weights",
]

_ROW_SUM_TOL = 1e-9
_MAX_COND = 1e12


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
    return _channel(lab, m, rng, () if size is None else (size,))


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


def _check_inputs(time, event, labels, pi, covariates, cluster, *, batch: bool = False):
    """Checked inputs; ``batch``: ``labels`` (D, n), several label vectors of the rows."""
    t, e = _check_time_event(time, event)
    m = check_misclassification_matrix(pi)
    lab = _check_labels(labels, m.shape[0], allow_batch=batch)
    if batch and lab.ndim != 2:
        raise ValueError(f"labels must have shape (D, {len(t)}), got {lab.shape}")
    if lab.shape[-1:] != t.shape:
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


def mc_simex_cox(
    time,
    event,
    labels,
    pi,
    *,
    rng: np.random.Generator,
    persons=None,
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
    is used. Replicates that do not converge (e.g. a level without events) are left
    out of the means.

    The simulated misclassification is drawn per person (``persons``), as the
    release randomises: all rows of a person share their released label and get
    one simulated label, so a replicate carries the release's dependence between a
    person's rows (drawn per row, the between-replicate spread is too small where
    persons have several rows). With one row per person (the default) this is one
    draw per row.

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
    persons : array_like, shape (n,), optional
        Person of each row (default: each row its own); a person's rows must carry
        one released label.
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
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise ValueError(f"labels must be one-dimensional, got shape {lab.shape} "
                         "(several released label vectors: mc_simex_cox_draws)")
    return mc_simex_cox_draws(
        time, event, lab[None], pi, rng=rng, persons=persons, covariates=covariates,
        lambdas=lambdas, n_replicates=n_replicates, extrapolation=extrapolation, ties=ties,
        cluster=cluster, level=level, tol=tol, max_iter=max_iter)[0]


def mc_simex_cox_draws(
    time,
    event,
    labels,
    pi,
    *,
    rng: np.random.Generator,
    persons=None,
    covariates=None,
    lambdas=(0.0, 0.5, 1.0, 1.5, 2.0),
    n_replicates: int = 100,
    extrapolation: str = "quadratic",
    ties: str = "efron",
    cluster=None,
    level: float = 0.95,
    tol: float = 1e-10,
    max_iter: int = 50,
) -> list[SimexResult]:
    """:func:`mc_simex_cox` of each of several released label vectors ``labels``
    (D, n) of the same rows (e.g. the draws of a release), fitted together.

    Every replicate of every λ and released vector is one design of one batched
    fit (designs of a factor alone by per-level risk-set sums,
    :mod:`dprepro.survival.cox_levels`). The simulated labels are drawn from
    ``rng`` in the order of the released vectors, λ and replicates, so the result
    for vector ``d`` equals ``mc_simex_cox(..., labels[d], rng=...)`` called in turn
    with one generator. Returns one :class:`SimexResult` per vector.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    t, e, m, lab, cov, codes = _check_inputs(time, event, labels, pi, covariates, cluster,
                                             batch=True)
    lam = check_simex_options(lambdas, n_replicates, extrapolation, level)
    _check_options(ties, tol, max_iter)
    person, first = _person_codes(persons, lab)
    k, positive = m.shape[0], lam[lam > 0]
    powers = [stochastic_matrix_power(m, value) for value in positive]
    # per released vector: the vector itself, then n_replicates draws per λ > 0 (rng order)
    designs = np.empty((lab.shape[0], 1 + len(positive) * n_replicates, lab.shape[1]),
                       dtype=np.min_scalar_type(k))
    for d, released in enumerate(lab):
        designs[d, 0] = released
        for i, power in enumerate(powers):
            rows = slice(1 + i * n_replicates, 1 + (i + 1) * n_replicates)
            designs[d, rows] = _channel(released[first], power, rng, (n_replicates,))[:, person]
    fits = _fit_draws(t, e, designs, k, cov, ties, codes, tol, max_iter)
    terms = _term_names(k, cov)
    return [_simex_of_draw(fits, d, terms, lam, n_replicates, extrapolation, level)
            for d in range(lab.shape[0])]


def _person_codes(persons, lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's person (index in order of first appearance) and each person's first
    row; ValueError where a person's rows carry different released labels."""
    n = lab.shape[1]
    if persons is None:
        return np.arange(n), np.arange(n)
    ids = np.asarray(persons)
    if ids.shape != (n,):
        raise ValueError(f"persons must have shape ({n},) (one id per row), got {ids.shape}")
    try:
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    except TypeError as exc:
        raise TypeError("persons ids must be mutually comparable (all int or all str)") from exc
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    person = rank[inverse.reshape(-1)]
    first = first[order]
    mixed = np.flatnonzero(np.any(lab != lab[:, first][:, person], axis=0))
    if mixed.size:
        raise ValueError(f"rows {mixed[:5].tolist()} carry another released label than their "
                         "person's first row; a person's label is released once (persons)")
    return person, first


def _channel(labels: np.ndarray, pi: np.ndarray, rng: np.random.Generator,
             copies: tuple) -> np.ndarray:
    """:func:`misclassify` on checked inputs: ``copies + labels.shape`` labels."""
    thresholds = np.cumsum(pi, axis=1)[labels]  # labels.shape + (k,): cumulative rows of pi
    u = rng.random(copies + labels.shape)
    # the new label counts the thresholds at or below u; the last one (1 up to rounding)
    # is left out, so every draw lands on a label. One comparison per level, not one
    # (copies, n, k) array: 2.7 times faster at MC-SIMEX's 80 copies, the same labels
    out = np.zeros(u.shape, dtype=np.intp)
    for level in range(pi.shape[1] - 1):
        out += u >= thresholds[..., level]
    return out


def _fit_draws(t, e, designs, k, cov, ties, codes, tol, max_iter):
    """Cox fits of the label vectors ``designs`` (D, R, n): one batch of the factor
    designs, or with covariates one batch per released vector (the dummies and
    covariates of all of them at once could be large)."""
    nd, nr, n = designs.shape
    if cov is None:
        fits = _fit_labels(t, e, designs.reshape(nd * nr, n), k, None, ties, codes, tol,
                           max_iter)
        parts = [fits]
    else:
        parts = [_fit(t, e, treatment_dummies(d, k, cov), None, ties, codes, tol, max_iter)
                 for d in designs]
    var = [part.variance if part.robust_variance is None else part.robust_variance
           for part in parts]
    p = parts[0].coef.shape[-1]
    return (np.concatenate([part.coef for part in parts]).reshape(nd, nr, p),
            np.concatenate([np.diagonal(v, axis1=1, axis2=2) for v in var]).reshape(nd, nr, p),
            np.concatenate([part.converged for part in parts]).reshape(nd, nr))


def _simex_of_draw(fits, d, terms, lam, n_replicates, extrapolation, level) -> SimexResult:
    """The MC-SIMEX result of released vector ``d`` from its fits (:func:`_fit_draws`)."""
    all_coef, all_var, converged = (x[d] for x in fits)
    n_lam = int(np.sum(lam > 0))
    naive, naive_var = all_coef[0], all_var[0]
    ok = converged[1:].reshape(n_lam, n_replicates)
    coef = np.where(ok[..., None], all_coef[1:].reshape(n_lam, n_replicates, -1), np.nan)
    v = np.where(ok[..., None], all_var[1:].reshape(coef.shape), np.nan)
    n_ok = ok.sum(axis=1)
    with np.errstate(all="ignore"):
        means = np.nansum(coef, axis=1) / n_ok[:, None]
        between = np.nansum((coef - means[:, None]) ** 2, axis=1) / (n_ok[:, None] - 1)
        tau2 = np.nansum(v, axis=1) / n_ok[:, None] - between
    path = np.concatenate([naive[None], means]) if lam[0] == 0 else means
    vpath = np.concatenate([naive_var[None], tau2]) if lam[0] == 0 else tau2
    bpath = np.concatenate([np.zeros_like(naive)[None], between]) if lam[0] == 0 else between
    n_conv = np.concatenate([[int(converged[0])], n_ok]) if lam[0] == 0 else n_ok
    return simex_result(terms, lam, path, vpath, bpath, n_conv, naive, np.sqrt(naive_var),
                        extrapolation, int(n_replicates), level)
