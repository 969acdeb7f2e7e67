"""LNTE as published: Laplace noise on the Nelson–Aalen terms at the observed times, and its curves
and medians.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprepro.mechanisms.checks import check_draws, check_epsilon, check_generator
from dprepro.runtime.privacy_record import PrivacyRecord
from dprepro.survival.inputs import check_survival_data, normal_quantile

__all__ = [
    "LNTE",
    "LNTE_CI_METHOD",
    "LNTE_NOTE",
    "LNTEResult",
    "lnte_band",
    "lnte_median",
    "lnte_survival",
]


# --------------------------------------------------------------------------- LNTE

#: Why LNTE as published states an ε it does not deliver.
LNTE_NOTE = ("LNTE as published releases the observed times as the curve's grid and adds "
             "Laplace(1/ε) at every time point; no finite ε holds (stated ε per count)")


@dataclass(frozen=True)
class LNTE:
    r"""LNTE as the RRR paper's authors coded it, as a mechanism object.

    Runs :func:`lnte_survival` with its stated ``epsilon`` and states its
    privacy: no finite ε holds (the observed times are the curve's grid and
    every count gets its own Laplace(1/ε) draw), so ``true_epsilon`` is ∞.

    Parameters
    ----------
    epsilon : float
        Stated ε per count (keyword-only), finite and > 0.
    """

    epsilon: float

    def __init__(self, *, epsilon):
        object.__setattr__(self, "epsilon", check_epsilon(epsilon))

    def release(self, durations, events, *, rng, draws: int = 1) -> LNTEResult:
        """:func:`lnte_survival` of one group with this object's ε."""
        return lnte_survival(durations, events, epsilon=self.epsilon, rng=rng, draws=draws)

    def privacy_record(self, *, privacy_unit: str = "record") -> PrivacyRecord:
        """The privacy statement of a release: stated ε, true ε = ∞, and why."""
        return PrivacyRecord(mechanism="lnte", release=True, stated=self.epsilon,
                             true_epsilon=np.inf, privacy_unit=privacy_unit, note=LNTE_NOTE,
                             extra={"calibration": "as published"})



@dataclass(frozen=True)
class LNTEResult:
    r"""LNTE survival curves for many noise draws of one group.

    Attributes
    ----------
    epsilon : float
    timeline : ndarray, shape (m,)
        Distinct observed times of the group (events and censorings).
    true_at_risk, true_events : ndarray, shape (m,)
        :math:`r_j`, :math:`d_j`.
    noisy_at_risk, noisy_events : ndarray, shape (draws, m)
        :math:`\tilde r_j = r_j + L`, :math:`\tilde d_j = d_j + L'` (only
        :math:`\tilde r_0` and :math:`\tilde d` are used).
    at_risk : ndarray, shape (draws, m)
        The recursion :math:`r'_j = \tilde r_0 - \sum_{i<j} \tilde d_i`.
    survival : ndarray, shape (draws, m)
        :math:`S'_j`.
    greenwood : ndarray, shape (draws, m)
        The published interval sum :math:`V'_j` (see :func:`lnte_survival`):
        terms :math:`\tilde d_i / (r'_i (r'_i - \tilde d_i))` with
        :math:`r'_i > 0`, :math:`\tilde d_i > 0`, restarting where
        :math:`r'_i \le 0`.
    variance : ndarray, shape (draws, m)
        Greenwood-type plug-in :math:`S'^2_j V'_j` (a variance of :math:`S'`
        only if the noise were negligible; not used by the published band).
    """

    epsilon: float
    timeline: np.ndarray
    true_at_risk: np.ndarray
    true_events: np.ndarray
    noisy_at_risk: np.ndarray
    noisy_events: np.ndarray
    at_risk: np.ndarray
    survival: np.ndarray
    greenwood: np.ndarray
    variance: np.ndarray

    def on_grid(self, grid) -> np.ndarray:
        """Step curves at ``grid``, shape ``(draws, len(grid))`` (1 before the first time)."""
        grid = np.asarray(grid, dtype=float)
        idx = np.searchsorted(self.timeline, grid, side="right") - 1
        return np.where(idx >= 0, self.survival[:, np.maximum(idx, 0)], 1.0)


def _segmented_sums(terms: np.ndarray, reset: np.ndarray) -> np.ndarray:
    """Row-wise running sums that restart at 0 wherever ``reset`` is True (terms there: 0)."""
    t = np.where(reset, 0.0, terms)
    cum = np.cumsum(t, axis=-1)
    cols = np.arange(t.shape[-1])
    last = np.maximum.accumulate(np.where(reset, cols, 0), axis=-1)
    rows = np.arange(t.shape[0])[:, None]
    return cum - cum[rows, last]


def _segmented_products(factors: np.ndarray, reset: np.ndarray) -> np.ndarray:
    """Row-wise running products that restart at 1 wherever ``reset`` is True.

    ``out[j] = prod(factors[i] for i in (last reset <= j, j])``; at a reset
    ``out[j] = 1``. The factors may be negative or zero (noisy counts), so the
    product is split into log-magnitude, sign parity and a zero count, each a
    plain cumulative sum, which keeps it a handful of array operations.
    """
    f = np.where(reset, 1.0, factors)
    zero = f == 0
    with np.errstate(divide="ignore"):
        logmag = np.where(zero, 0.0, np.log(np.abs(f)))
    cum_log = np.cumsum(logmag, axis=-1)
    cum_neg = np.cumsum(f < 0, axis=-1)
    cum_zero = np.cumsum(zero, axis=-1)
    cols = np.arange(f.shape[-1])
    last = np.maximum.accumulate(np.where(reset, cols, 0), axis=-1)
    rows = np.arange(f.shape[0])[:, None]
    mag = np.exp(cum_log - cum_log[rows, last])
    sign = np.where((cum_neg - cum_neg[rows, last]) % 2 == 1, -1.0, 1.0)
    return np.where(cum_zero - cum_zero[rows, last] > 0, 0.0, sign * mag)


def lnte_survival(durations, events, *, epsilon, rng, draws: int = 1) -> LNTEResult:
    r"""LNTE survival curve of one group, as the RRR paper's authors implemented it.

    Gondara & Wang's Laplacian Noise Time Event mechanism [GW20]_ as coded in
    the authors' notebook (``lnto_grouped`` in Kekkodf/DP-SurvAnalysis), per
    group over the group's distinct observed times :math:`t_0 < \dots < t_{m-1}`
    with :math:`r_j` at risk and :math:`d_j` events:

    .. math::

        \tilde r_j = r_j + L_j,\quad \tilde d_j = d_j + L'_j,\quad
        L, L' \overset{iid}{\sim} \mathrm{Laplace}(0, 1/\varepsilon),

        r'_0 = \tilde r_0,\qquad r'_j = r'_{j-1} - \tilde d_{j-1}
        \;\bigl(= \tilde r_0 - \textstyle\sum_{i<j} \tilde d_i\bigr),

        S'_0 = 1,\qquad S'_j = \begin{cases}
            S'_{j-1}\,(r'_j - \tilde d_j)/r'_j & r'_j > 0,\\
            1 & r'_j \le 0 \text{ (the array's initial value, not } S'_{j-1}).
        \end{cases}

    The authors' interval sum (``Var_prime`` in ``lnto_grouped``) is
    :math:`V'_j = V'_{j-1} + \tilde d_j / (r'_j (r'_j - \tilde d_j))` for
    terms with :math:`r'_j > 0` and :math:`\tilde d_j > 0` (a negative noisy
    event count adds nothing), :math:`V'_0 = 0`, and it restarts at 0 wherever
    :math:`r'_j \le 0` (the array's initial value, as :math:`S'` restarts at 1).
    It is a Greenwood sum, not a variance of :math:`S'` (no :math:`S'^2`
    factor); :func:`lnte_median` uses it as published, in the linear band
    :math:`S'_j \pm z \sqrt{V'_j}`.

    Flaws kept on purpose (this is the "as published" variant):

    * **The first time's events are skipped**: :math:`S'_0 = 1` and the
      product starts at :math:`j = 1`, so even without noise
      :math:`S'_j = \hat S_{KM}(t_j) / (1 - d_0/r_0)`.
    * **Censoring is ignored**: :math:`r'_j` only subtracts events, so without
      noise :math:`r'_j = r_0 - \sum_{i<j} d_i \ge r_j` and the curve is
      biased upwards whenever anyone is censored.
    * **Resets**: once :math:`r'_j \le 0` the curve jumps back to 1 instead of
      stopping; the noisy :math:`\tilde r_j, j \ge 1` are drawn but unused;
      :math:`S'` can leave [0, 1] (noisy factors can be negative or > 1).
    * **Privacy accounting**: each count gets Laplace(1/ε), i.e. is ε-DP for a
      sensitivity-1 count. One person is in :math:`r_0,\dots,r_j` and possibly
      one :math:`d_j`, so the whole noisy matrix :math:`(\tilde r, \tilde d)`
      has L1 sensitivity up to :math:`m + 1` and, by composition over the
      :math:`m` time points, is only :math:`(m+1)\varepsilon`-DP — not ε-DP.
      The curve actually uses :math:`(\tilde r_0, \tilde d)`, whose L1
      sensitivity is 2, so by post-processing the curve alone is
      :math:`2\varepsilon`-DP *for a fixed, public time grid*. Here (as in the
      notebook) the grid is the set of observed times itself and is released
      with the curve, which is not differentially private at any ε.

    Parameters
    ----------
    durations, events : array_like, shape (n,)
        One group's follow-up times and 0/1 event indicators.
    epsilon : float
        Laplace scale is ``1/epsilon``; ``numpy.inf`` means no noise (the
        deterministic skeleton of the estimator, for tests) and draws nothing
        from ``rng``.
    rng : numpy.random.Generator
    draws : int, default 1
        Independent noise draws (rows of the outputs).

    Returns
    -------
    LNTEResult
    """
    eps = check_epsilon(epsilon, allow_inf=True)
    rng = check_generator(rng)
    if draws is None:
        raise TypeError("draws must be an integer >= 1, got None")
    draws = check_draws(draws)
    t, e = check_survival_data(durations, events)
    times, inv = np.unique(t, return_inverse=True)
    m = times.size
    removed = np.bincount(inv, minlength=m)
    d = np.bincount(inv, weights=e, minlength=m)
    r = removed[::-1].cumsum()[::-1].astype(float)
    if np.isinf(eps):
        noise = np.zeros((2, draws, m))
    else:
        noise = rng.laplace(0.0, 1.0 / eps, size=(2, draws, m))
    r_noisy = r + noise[0]
    d_noisy = d + noise[1]
    # r'_j = r~_0 - sum_{i<j} d~_i: a shifted cumulative sum, no loop over times.
    shifted = np.concatenate([np.zeros((draws, 1)), np.cumsum(d_noisy[:, :-1], axis=1)], axis=1)
    r_prime = r_noisy[:, :1] - shifted
    valid = r_prime > 0
    valid[:, 0] = False  # S'_0 = 1: the first time's events never enter
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = (r_prime - d_noisy) / r_prime
        gw = d_noisy / (r_prime * (r_prime - d_noisy))
    surv = _segmented_products(factor, ~valid)
    # Var_prime as published: only terms with d~ > 0, restarting at 0 where r' <= 0
    greenwood = _segmented_sums(np.where(valid & (d_noisy > 0), gw, 0.0), ~valid)
    with np.errstate(invalid="ignore", over="ignore"):
        variance = surv**2 * greenwood
    return LNTEResult(
        epsilon=eps,
        timeline=times,
        true_at_risk=r,
        true_events=d,
        noisy_at_risk=r_noisy,
        noisy_events=d_noisy,
        at_risk=r_prime,
        survival=surv,
        greenwood=greenwood,
        variance=variance,
    )


#: How LNTE medians and their intervals are computed (the ``ci_method`` of its rows).
LNTE_CI_METHOD = ("as published: first time S' <= 0.5; interval = first times the linear "
                  "band S' -/+ z*sqrt(V') reaches 0.5")


def lnte_band(result: LNTEResult, *, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    r"""The authors' pointwise band :math:`S'_j \mp z_{1-\alpha/2} \sqrt{V'_j}`.

    Linear (not log-log), from the published interval sum :math:`V'`
    (:func:`lnte_survival`), unclipped: it can leave [0, 1]. The notebook
    estimates :math:`z` from 10 000 random normals; the exact quantile is
    used here. Shapes ``(draws, m)``.
    """
    z = normal_quantile(1 - alpha / 2)
    # the noisy interval sum can be negative: the published band is then undefined (NaN,
    # as in the authors' code), an expected case rather than a numerical accident
    with np.errstate(invalid="ignore"):
        half = z * np.sqrt(result.greenwood)
    return result.survival - half, result.survival + half


def lnte_median(result: LNTEResult, *, alpha: float = 0.05) -> pd.DataFrame:
    r"""Median of each LNTE draw and its interval, as the authors computed them.

    The median is the first :math:`t_j` with :math:`S'_j \le 0.5`; the
    interval's ends are the first times the lower and the upper curve of
    :func:`lnte_band` are :math:`\le 0.5` (the lower band gets there first).
    A time that is never reached is ``inf`` ("not reached"; the notebook
    writes NaN). First crossing because LNTE curves need not be monotone.

    Returns
    -------
    pandas.DataFrame
        One row per draw: ``draw``, ``median``, ``ci_lower``, ``ci_upper``.
    """
    lower, upper = lnte_band(result, alpha=alpha)

    def first_crossing(curve: np.ndarray) -> np.ndarray:
        below = curve <= 0.5
        return np.where(below.any(axis=1), result.timeline[np.argmax(below, axis=1)], np.inf)

    return pd.DataFrame(
        {
            "draw": np.arange(result.survival.shape[0]),
            "median": first_crossing(result.survival),
            "ci_lower": first_crossing(lower),
            "ci_upper": first_crossing(upper),
        }
    )

