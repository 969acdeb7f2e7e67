r"""Kaplan–Meier estimation, one label vector or many at once, vectorised.

Medians live in :mod:`dprepro.survival.median`, log-rank tests in
:mod:`dprepro.survival.logrank`; the three together reproduce the references:

* :class:`KaplanMeier` equals ``lifelines.KaplanMeierFitter`` (same floating
  point recipe, so medians agree even where :math:`\hat S` sits on 0.5) and
  R's ``survival::survfit`` (to ~1e-15);
* :func:`km_median` is lifelines' ``median_survival_times`` of the curve and of
  its default exponential-Greenwood ("log-log") confidence band;
  :func:`km_median_r` is R's ``quantile.survfit`` rule, which differs when the
  curve is exactly 0.5 on an interval;
* :func:`pairwise_logrank` equals ``lifelines.statistics.pairwise_logrank_test``
  and R's ``survdiff`` on each two-group subset;
* :func:`pairwise_logrank_batch` and :func:`km_batch` do the same for many
  label vectors at once (e.g. 100 draws of randomised-response labels), with
  numpy only: the observations are sorted by time once and every per-time count
  is a difference of cumulative sums.

References
----------
.. [KM58] E. L. Kaplan, P. Meier (1958). Nonparametric estimation from
   incomplete observations. JASA 53, 457–481.
.. [Gre26] M. Greenwood (1926). The natural duration of cancer. Reports on
   Public Health and Medical Subjects 33, HMSO, London.
.. [Kal02] J. D. Kalbfleisch, R. L. Prentice (2002). The Statistical Analysis of
   Failure Time Data, 2nd ed., Wiley (the log-log confidence interval).
.. [Man66] N. Mantel (1966). Evaluation of survival data and two new rank order
   statistics arising in its consideration. Cancer Chemotherapy Reports 50,
   163–170.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprepro.survival.inputs import SortedCounts, check_alpha, check_survival_data, normal_quantile

__all__ = ["KaplanMeier", "KMBatch", "kaplan_meier", "km_batch"]


# --------------------------------------------------------------------------- Kaplan–Meier


def _log_km_factors(at_risk: np.ndarray, events: np.ndarray) -> np.ndarray:
    """``log(n - d) - log(n)``, lifelines' exact recipe (0 where nobody is at risk)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.log(at_risk - events) - np.log(at_risk)
    # Nobody at risk contributes no factor; lifelines forward-fills the same way.
    return np.where(at_risk > 0, f, 0.0)


def _greenwood_terms(at_risk: np.ndarray, events: np.ndarray) -> np.ndarray:
    """``d / (n (n - d))``; ``inf`` where everyone at risk dies (S drops to 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g = events / (at_risk * (at_risk - events))
    return np.where(events > 0, g, 0.0)


def _loglog_bounds(surv: np.ndarray, greenwood_terms: np.ndarray, alpha: float):
    """Exponential Greenwood band exactly as lifelines' ``KaplanMeierFitter._bounds``."""
    z = normal_quantile(1 - alpha / 2)
    # lifelines replaces the infinite Greenwood term of an all-die time (S -> 0)
    # by 0, which collapses the band onto S = 0 there instead of leaving it undefined.
    gw = np.cumsum(np.where(np.isinf(greenwood_terms), 0.0, greenwood_terms))
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.log(surv)
        lower = np.exp(-np.exp(np.log(-v) - z * np.sqrt(gw) / v))
        upper = np.exp(-np.exp(np.log(-v) + z * np.sqrt(gw) / v))
    # 0/0 at S = 1 is NaN; lifelines fills the band with 1 there.
    return np.where(np.isnan(lower), 1.0, lower), np.where(np.isnan(upper), 1.0, upper)


class KaplanMeier:
    r"""Kaplan–Meier product-limit estimator with Greenwood variance.

    .. math::

        \hat S(t) = \prod_{t_j \le t} \Bigl(1 - \frac{d_j}{n_j}\Bigr), \qquad
        \widehat{\operatorname{Var}}\,\hat S(t) = \hat S(t)^2
            \sum_{t_j \le t} \frac{d_j}{n_j (n_j - d_j)},

    where :math:`t_j` are the distinct observed times, :math:`n_j` the number
    at risk (time :math:`\ge t_j`) and :math:`d_j` the events at :math:`t_j`
    [KM58]_, [Gre26]_. The product is evaluated as
    :math:`\exp\sum_j[\log(n_j-d_j)-\log n_j]`, the recipe of lifelines, so that
    values at exactly 0.5 round the same way (this decides medians).

    The confidence band is the exponential Greenwood ("log-log") band of
    lifelines (and of R's ``conf.type = "log-log"``) [Kal02]_:

    .. math::

        \hat S(t)^{\exp(\pm z_{1-\alpha/2}\, \hat\sigma(t) / \log \hat S(t))},
        \qquad \hat\sigma^2(t) = \sum_{t_j \le t} \frac{d_j}{n_j(n_j-d_j)}.

    Times are compared exactly; R's ``survfit(timefix = TRUE)`` would also
    merge times that differ only by floating-point noise (~1e-8 relative).

    The trailing-underscore attributes below are set by :meth:`fit`.

    Attributes
    ----------
    timeline_ : ndarray
        Distinct observed times (events and censorings), ascending — R's
        ``survfit(...)$time``. lifelines additionally reports time 0.
    at_risk_, events_, censored_ : ndarray of int
        :math:`n_j`, :math:`d_j` and the censorings at each time.
    survival_ : ndarray
        :math:`\hat S(t_j)`.
    greenwood_ : ndarray
        :math:`\hat\sigma^2(t_j)`, the variance of :math:`\log\hat S`; R's
        ``std.err`` is its square root. ``inf`` once :math:`\hat S = 0` (as R).
    variance_ : ndarray
        Greenwood variance of :math:`\hat S` (0 where :math:`\hat S = 0`).
    ci_lower_, ci_upper_ : ndarray
        Log-log band at level :math:`1-\alpha` (equal to lifelines'
        ``confidence_interval_`` without its time-0 row).
    median_ : float
        lifelines' median (first time with :math:`\hat S \le 0.5`; ``inf``
        if never).

    Parameters
    ----------
    alpha : float, default 0.05
        One minus the confidence level of the band.

    Examples
    --------
    >>> km = KaplanMeier().fit([1, 2, 2, 4], [1, 1, 0, 1])
    >>> km.survival_.round(3).tolist()
    [0.75, 0.5, 0.0]
    """

    def __init__(self, *, alpha: float = 0.05):
        self.alpha = check_alpha(alpha)

    def fit(self, durations, events) -> KaplanMeier:
        """Estimate the curve from right-censored data.

        Parameters
        ----------
        durations : array_like of float, shape (n,)
            Follow-up times, ``>= 0``.
        events : array_like of {0, 1} or bool, shape (n,)
            1 (True) for an observed event, 0 for a censoring.

        Returns
        -------
        self : KaplanMeier
        """
        t, e = check_survival_data(durations, events)
        times, inv = np.unique(t, return_inverse=True)
        removed = np.bincount(inv, minlength=len(times))
        died = np.bincount(inv, weights=e, minlength=len(times)).astype(np.int64)
        at_risk = removed[::-1].cumsum()[::-1]
        self.timeline_ = times
        self.at_risk_ = at_risk
        self.events_ = died
        self.censored_ = removed - died
        n = at_risk.astype(float)
        d = died.astype(float)
        self.survival_ = np.exp(np.cumsum(_log_km_factors(n, d)))
        terms = _greenwood_terms(n, d)
        self.greenwood_ = np.cumsum(terms)
        with np.errstate(invalid="ignore"):
            var = self.survival_**2 * self.greenwood_
        self.variance_ = np.where(self.survival_ == 0, 0.0, var)
        self.ci_lower_, self.ci_upper_ = _loglog_bounds(self.survival_, terms, self.alpha)
        return self

    @property
    def median_(self) -> float:
        return lifelines_qth(self.timeline_, self.survival_, 0.5)

    def predict(self, times) -> np.ndarray:
        """Right-continuous step function :math:`\\hat S` at ``times`` (1 before the first time)."""
        times = np.asarray(times, dtype=float)
        idx = np.searchsorted(self.timeline_, times, side="right") - 1
        return np.where(idx >= 0, self.survival_[np.maximum(idx, 0)], 1.0)


def kaplan_meier(durations, events, *, alpha: float = 0.05) -> KaplanMeier:
    """Fit a :class:`KaplanMeier` (shortcut for ``KaplanMeier(alpha=alpha).fit(...)``)."""
    return KaplanMeier(alpha=alpha).fit(durations, events)


@dataclass(frozen=True)
class KMBatch:
    r"""Kaplan–Meier curves of every group in every draw.

    Attributes
    ----------
    labels : ndarray
        Group order of axis 1.
    event_times : ndarray, shape (m,)
        Distinct event times of the pooled data (a curve only moves there).
    survival : ndarray, shape (draws, groups, m)
        :math:`\hat S` of each group right after each event time.
    greenwood : ndarray, shape (draws, groups, m)
        Greenwood sum (variance of :math:`\log\hat S`).
    last_time : ndarray, shape (draws, groups)
        Largest follow-up time of the group in the draw (``-inf`` if empty).
    """

    labels: np.ndarray
    event_times: np.ndarray
    survival: np.ndarray
    greenwood: np.ndarray
    last_time: np.ndarray

    def on_grid(self, grid, *, extend: bool = False) -> np.ndarray:
        """Step curves at ``grid`` times, shape ``(draws, groups, len(grid))``.

        Before the first event time the value is 1. Past a group's last
        follow-up time the curve is undefined (NaN, as R's survfit stops
        there) unless ``extend=True`` carries the last value on.
        """
        grid = np.asarray(grid, dtype=float)
        idx = np.searchsorted(self.event_times, grid, side="right") - 1
        out = np.where(idx >= 0, self.survival[..., np.maximum(idx, 0)], 1.0)
        if not extend:
            out = np.where(grid > self.last_time[..., None], np.nan, out)
        return out

    def median(self) -> np.ndarray:
        """lifelines' median of every curve, shape ``(draws, groups)`` (``inf`` if not reached).

        :math:`\\hat S` is monotone, so lifelines' binary search equals the
        first event time with :math:`\\hat S \\le 0.5`.
        """
        below = self.survival <= 0.5
        first = np.argmax(below, axis=-1)
        return np.where(below.any(axis=-1), self.event_times[first], np.inf)


def km_batch(durations, events, group_draws, *, labels=None) -> KMBatch:
    r"""Kaplan–Meier curves per group for many label draws, fully vectorised.

    For draw :math:`r` and group :math:`c`,
    :math:`\hat S_{rc}(t) = \exp\sum_{t_j\le t}[\log(n_{rcj}-d_{rcj})-\log n_{rcj}]`
    over the pooled event times (factors with :math:`n_{rcj}=0` are 1) — the
    recipe of :class:`KaplanMeier`, so each curve equals ``KaplanMeier`` fitted
    to that group in that draw at its event times. Use :meth:`KMBatch.on_grid`
    for a common time grid (bands over draws) and :meth:`KMBatch.median` for
    medians.

    Parameters
    ----------
    durations, events : array_like, shape (n,)
    group_draws : array_like, shape (draws, n) or (n,)
    labels : sequence, optional
        Group order; default the sorted distinct values.

    Returns
    -------
    KMBatch
    """
    counts = SortedCounts(durations, events, group_draws, labels)
    n, d = counts.at_risk, counts.events
    surv = np.exp(np.cumsum(_log_km_factors(n, d), axis=-1))
    greenwood = np.cumsum(np.where(n > 0, _greenwood_terms(n, d), 0.0), axis=-1)
    return KMBatch(
        labels=counts.labels,
        event_times=counts.event_times,
        survival=np.moveaxis(surv, 0, 1),
        greenwood=np.moveaxis(greenwood, 0, 1),
        last_time=counts.last_time.T,
    )


def lifelines_qth(times: np.ndarray, values: np.ndarray, q: float) -> float:
    """``lifelines.utils.qth_survival_time`` on a curve given at ``times``.

    lifelines returns ``inf`` when the last value is above ``q`` and otherwise
    ``times[searchsorted(-values, -q)]``: a binary search, which on a monotone
    curve is the first time with value ``<= q``. The band of a KM curve need not
    be monotone; the same binary search is kept so that results stay identical.
    """
    times, values = _with_origin(times, values)
    if values[-1] > q:
        return float("inf")
    return float(times[np.searchsorted(-values, -q, side="left")])


def _with_origin(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # lifelines' timeline starts at 0 with S = 1 (and band = 1) unless 0 is a data time.
    if times[0] > 0:
        return np.r_[0.0, times], np.r_[1.0, values]
    return times, values

