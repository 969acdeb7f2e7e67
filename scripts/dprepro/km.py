r"""Kaplan–Meier estimation, median survival and log-rank tests, vectorised.

Everything here reproduces what the two reference implementations report,
not just "a" Kaplan–Meier estimate:

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
from itertools import combinations

import numpy as np
import pandas as pd

__all__ = [
    "chi2_sf",
    "normal_quantile",
    "KaplanMeier",
    "KMBatch",
    "LogrankBatch",
    "MedianSurvival",
    "check_survival_data",
    "kaplan_meier",
    "km_batch",
    "km_median",
    "km_median_r",
    "pairwise_logrank",
    "pairwise_logrank_batch",
]


# scipy.special, not scipy.stats: the same numbers (stats calls these functions) at a
# fraction of the import time; imported where used, so the jobs that only read tables
# through this module (aggregation, figures) do not pay its ~0.3 s


def chi2_sf(statistic, df: int = 1):
    """Upper tail of χ²(``df``) at ``statistic``: ``scipy.stats.chi2.sf``'s values.

    ``scipy.stats.chi2.sf`` is ``scipy.special.chdtrc`` with 1 below the
    support (a rounding-negative statistic); NaN stays NaN.
    """
    from scipy import special

    x = np.asarray(statistic, dtype=float)
    out = special.chdtrc(df, np.where(x < 0, 0.0, x))
    return out[()] if out.ndim == 0 else out


def normal_quantile(q):
    """Standard normal quantile: ``scipy.stats.norm.ppf``'s values (``scipy.special.ndtri``)."""
    from scipy import special

    return special.ndtri(q)


# --------------------------------------------------------------------------- validation


def check_survival_data(durations, events) -> tuple[np.ndarray, np.ndarray]:
    """Validate right-censored survival data and return it as float times and int events.

    Parameters
    ----------
    durations : array_like, shape (n,)
        Follow-up times, finite and >= 0.
    events : array_like, shape (n,)
        1 = event, 0 = censored (booleans accepted).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``durations`` as float64 and ``events`` as int64.

    Raises
    ------
    ValueError, TypeError
        Wrong shape, empty input, non-finite or negative times, events not 0/1.
    """
    t = np.asarray(durations)
    e = np.asarray(events)
    if t.ndim != 1:
        raise ValueError(f"durations must be one-dimensional, got shape {t.shape}")
    if e.shape != t.shape:
        raise ValueError(
            f"events must have the same shape as durations, got {e.shape} and {t.shape}"
        )
    if t.size == 0:
        raise ValueError("durations is empty")
    if not np.issubdtype(t.dtype, np.number) or np.issubdtype(t.dtype, np.complexfloating):
        raise TypeError(f"durations must be real numbers, got dtype {t.dtype}")
    t = t.astype(float)
    if not np.all(np.isfinite(t)):
        raise ValueError("durations must be finite (no NaN or inf)")
    if np.any(t < 0):
        raise ValueError("durations must be >= 0")
    if e.dtype == bool:
        e = e.astype(np.int64)
    if not np.issubdtype(e.dtype, np.number):
        raise TypeError(f"events must be 0/1 numbers or booleans, got dtype {e.dtype}")
    if not np.all((e == 0) | (e == 1)):
        raise ValueError("events must contain only 0 (censored) and 1 (event)")
    return t, e.astype(np.int64)


def _check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float | np.integer | np.floating):
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return float(alpha)


def _encode(values: np.ndarray, labels: np.ndarray, name: str) -> np.ndarray:
    """Integer codes of ``values`` in ``labels`` (sorted internally); unknown -> error."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    pos = np.searchsorted(sorted_labels, values)
    pos = np.clip(pos, 0, len(labels) - 1)
    found = sorted_labels[pos] == values
    if not np.all(found):
        bad = np.unique(values[~found])[:5]
        raise ValueError(f"{name} contains values not in labels: {list(bad)}")
    return order[pos]


def _check_labels(labels, values: np.ndarray, name: str) -> np.ndarray:
    if labels is None:
        out = np.unique(values)
    else:
        out = np.asarray(labels)
        if out.ndim != 1:
            raise ValueError("labels must be one-dimensional")
        if len(np.unique(out)) != len(out):
            raise ValueError("labels must not repeat")
    if len(out) < 2:
        raise ValueError(f"{name} needs at least two distinct groups, got {list(out)}")
    return out


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
        self.alpha = _check_alpha(alpha)

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
        return _lifelines_qth(self.timeline_, self.survival_, 0.5)

    def predict(self, times) -> np.ndarray:
        """Right-continuous step function :math:`\\hat S` at ``times`` (1 before the first time)."""
        times = np.asarray(times, dtype=float)
        idx = np.searchsorted(self.timeline_, times, side="right") - 1
        return np.where(idx >= 0, self.survival_[np.maximum(idx, 0)], 1.0)


def kaplan_meier(durations, events, *, alpha: float = 0.05) -> KaplanMeier:
    """Fit a :class:`KaplanMeier` (shortcut for ``KaplanMeier(alpha=alpha).fit(...)``)."""
    return KaplanMeier(alpha=alpha).fit(durations, events)


# --------------------------------------------------------------------------- medians


@dataclass(frozen=True)
class MedianSurvival:
    """A median survival time with its confidence interval (``inf``/NaN when not reached)."""

    median: float
    ci_lower: float
    ci_upper: float


def _with_origin(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # lifelines' timeline starts at 0 with S = 1 (and band = 1) unless 0 is a data time.
    if times[0] > 0:
        return np.r_[0.0, times], np.r_[1.0, values]
    return times, values


def _lifelines_qth(times: np.ndarray, values: np.ndarray, q: float) -> float:
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


def km_median(km: KaplanMeier) -> MedianSurvival:
    r"""Median survival and its CI as lifelines reports them by default.

    The median is :math:`\min\{t : \hat S(t) \le 0.5\}` and the interval is the
    same rule applied to the lower and upper curves of the log-log band
    (``lifelines.utils.median_survival_times(kmf.confidence_interval_)``).
    ``inf`` where a curve never reaches 0.5 (e.g. the upper limit for small
    groups). This is the convention of Table 2 of the RRR paper.

    Parameters
    ----------
    km : KaplanMeier
        A fitted estimator.

    Returns
    -------
    MedianSurvival
    """
    if not hasattr(km, "survival_"):
        raise ValueError("km is not fitted; call KaplanMeier().fit(durations, events) first")
    return MedianSurvival(
        median=_lifelines_qth(km.timeline_, km.survival_, 0.5),
        ci_lower=_lifelines_qth(km.timeline_, km.ci_lower_, 0.5),
        ci_upper=_lifelines_qth(km.timeline_, km.ci_upper_, 0.5),
    )


def _r_findq(x: np.ndarray, y: np.ndarray, p: float, tol: float) -> float:
    """R ``survival:::findq`` for one probability (``x`` times, ``y`` = 1 - S, both with origin)."""
    if np.all(np.isnan(y)) or np.nanmax(y) < p:
        return float("nan")
    xmax = x[-1]
    # duplicated(y): keep the first time each level is reached (NA counts as a level).
    _, first = np.unique(np.where(np.isnan(y), np.inf, y), return_index=True)
    keep = np.sort(first)
    x, y = x[keep], y[keep]
    n = len(y)
    pos = np.arange(n)

    def constant_approx(shifted: np.ndarray) -> float:
        # approx(shifted, 1:n, p, method = "constant", f = 1): NA pairs dropped,
        # points sorted, p outside the range -> NA, otherwise the index of the
        # first point >= p.
        ok = ~np.isnan(shifted)
        xs, idx = shifted[ok], pos[ok]
        order = np.argsort(xs, kind="stable")
        xs, idx = xs[order], idx[order]
        if len(xs) == 0 or p < xs[0] or p > xs[-1]:
            return -1
        return int(idx[np.searchsorted(xs, p, side="left")])

    i1 = constant_approx(y + tol)
    i2 = constant_approx(y - tol)
    q = (x[i1] + x[i2]) / 2 if i1 >= 0 and i2 >= 0 else float("nan")
    if p == 0:
        q = x[0]
    if not np.isnan(y[-1]) and abs(p - y[-1]) < tol:
        q = (x[i1] + xmax) / 2 if i1 >= 0 else float("nan")
    return float(q)


def km_median_r(
    km: KaplanMeier, *, conf_type: str = "log", tol: float = float(np.sqrt(np.finfo(float).eps))
) -> MedianSurvival:
    r"""Median survival and CI by R's rule (``quantile.survfit``, survival 3.5).

    R looks for the time where :math:`1-\hat S` crosses 0.5 with a tolerance
    :math:`\tau = \sqrt{\epsilon_{mach}}`: if :math:`\hat S` equals 0.5 (within
    :math:`\tau`) from :math:`t_i` up to the next drop at :math:`t_{i+1}`, the
    median is :math:`(t_i + t_{i+1})/2` (or the midpoint to the last follow-up
    time if the curve stays at 0.5); otherwise it is the first time with
    :math:`\hat S < 0.5`. lifelines instead returns the first time with
    :math:`\hat S \le 0.5` in floating point, i.e. :math:`t_i` or — when
    rounding leaves :math:`\hat S` at 0.5000000000000001 — :math:`t_{i+1}`.
    Without such a plateau both agree. A median that is never reached is NaN
    here (R's ``NA``), ``inf`` in :func:`km_median`.

    Parameters
    ----------
    km : KaplanMeier
        A fitted estimator (its ``alpha`` sets the level).
    conf_type : {"log", "log-log"}
        R's ``survfit(conf.type=)``; ``"log"`` is R's default band
        :math:`\hat S e^{\pm z\hat\sigma}` capped at 1, ``"log-log"`` the band
        lifelines uses. R drops the band where it is undefined (NA).
    tol : float
        R's ``tolerance``.

    Returns
    -------
    MedianSurvival
    """
    if not hasattr(km, "survival_"):
        raise ValueError("km is not fitted; call KaplanMeier().fit(durations, events) first")
    z = normal_quantile(1 - km.alpha / 2)
    s = km.survival_
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(km.greenwood_)
        if conf_type == "log":
            lower = np.where(s > 0, np.exp(np.log(s) - z * se), np.nan)
            upper = np.where(s > 0, np.minimum(np.exp(np.log(s) + z * se), 1.0), np.nan)
        elif conf_type == "log-log":
            inside = (s > 0) & (s < 1)
            v = np.log(s)
            lower = np.where(inside, np.exp(-np.exp(np.log(-v) - z * se / v)), np.nan)
            upper = np.where(inside, np.exp(-np.exp(np.log(-v) + z * se / v)), np.nan)
        else:
            raise ValueError(f"conf_type must be 'log' or 'log-log', got {conf_type!r}")
    x = np.r_[0.0, km.timeline_]
    return MedianSurvival(
        median=_r_findq(x, np.r_[0.0, 1 - s], 0.5, tol),
        ci_lower=_r_findq(x, np.r_[0.0, 1 - lower], 0.5, tol),
        ci_upper=_r_findq(x, np.r_[0.0, 1 - upper], 0.5, tol),
    )


# --------------------------------------------------------------------------- log-rank


def _logrank_terms(n_a, n_b, d_a, d_b):
    r"""Observed, expected and variance of group a's events (sums over the last axis)."""
    n = n_a + n_b
    d = d_a + d_b
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.where(n > 0, d * n_a / n, 0.0)
        var = np.where(n > 1, n_a * n_b * d * (n - d) / (n * n * (n - 1)), 0.0)
    return d_a.sum(axis=-1), expected.sum(axis=-1), var.sum(axis=-1)


def _chi2(observed, expected, var):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (observed - expected) ** 2 / var


def pairwise_logrank(durations, events, groups, *, labels=None) -> pd.DataFrame:
    r"""Two-sample log-rank test for every pair of groups.

    For groups :math:`a, b` restricted to their union, at each distinct event
    time :math:`t_j` with :math:`n_j = n_{aj} + n_{bj}` at risk and
    :math:`d_j = d_{aj} + d_{bj}` events [Man66]_:

    .. math::

        O_a = \sum_j d_{aj}, \quad E_a = \sum_j \frac{d_j n_{aj}}{n_j}, \quad
        V = \sum_j \frac{n_{aj} n_{bj} d_j (n_j - d_j)}{n_j^2 (n_j - 1)}, \quad
        \chi^2 = \frac{(O_a - E_a)^2}{V} \sim \chi^2_1,

    which is R's ``survdiff(rho = 0)`` and lifelines' ``logrank_test``
    (hypergeometric variance, exact for ties). :math:`\chi^2` is NaN when
    :math:`V = 0` (e.g. a group without members).

    Parameters
    ----------
    durations, events : array_like, shape (n,)
        Follow-up times and 0/1 event indicators.
    groups : array_like, shape (n,)
        Group label of each observation.
    labels : sequence, optional
        Groups to compare and their order; pairs are
        ``itertools.combinations(labels, 2)``. Default: the sorted distinct
        groups, the order of lifelines' ``pairwise_logrank_test``.

    Returns
    -------
    pandas.DataFrame
        Columns ``group_a``, ``group_b``, ``statistic``, ``p_value``.
    """
    t, e = check_survival_data(durations, events)
    g = np.asarray(groups)
    if g.shape != t.shape:
        raise ValueError(f"groups must have shape {t.shape}, got {g.shape}")
    labels = _check_labels(labels, g, "groups")
    rows = []
    for a, b in combinations(labels, 2):
        in_a, in_b = g == a, g == b
        keep = in_a | in_b
        times, inv = np.unique(t[keep], return_inverse=True)
        size = len(times)
        a_k, e_k = in_a[keep].astype(float), e[keep].astype(float)
        removed_a = np.bincount(inv, weights=a_k, minlength=size)
        removed_b = np.bincount(inv, weights=1 - a_k, minlength=size)
        d_a = np.bincount(inv, weights=a_k * e_k, minlength=size)
        d_b = np.bincount(inv, weights=(1 - a_k) * e_k, minlength=size)
        n_a = removed_a[::-1].cumsum()[::-1]
        n_b = removed_b[::-1].cumsum()[::-1]
        stat = float(_chi2(*_logrank_terms(n_a, n_b, d_a, d_b)))
        rows.append((a, b, stat, float(chi2_sf(stat, 1))))
    return pd.DataFrame(rows, columns=["group_a", "group_b", "statistic", "p_value"])


class _SortedCounts:
    """Per-label at-risk and event counts at the distinct event times, for many label rows.

    Labels change between draws, times and events do not: sort once, then for
    label ``c`` the number at risk at event time :math:`t_j` is
    :math:`N_c - \\#\\{i : t_i < t_j, g_i = c\\}`, read off a cumulative sum at
    the first sorted position of :math:`t_j`; events at :math:`t_j` are a
    difference of cumulative sums over the block of ties at :math:`t_j`.
    """

    def __init__(self, durations, events, group_draws, labels):
        t, e = check_survival_data(durations, events)
        g = np.asarray(group_draws)
        if g.ndim == 1:
            g = g[None, :]
        if g.ndim != 2 or g.shape[1] != t.size:
            raise ValueError(
                f"group_draws must have shape (draws, {t.size}), "
                f"got {np.asarray(group_draws).shape}"
            )
        self.labels = _check_labels(labels, g.ravel(), "group_draws")
        order = np.argsort(t, kind="stable")
        t_s, e_s = t[order], e[order]
        codes = _encode(g[:, order].ravel(), self.labels, "group_draws").reshape(g.shape)
        times, first = np.unique(t_s, return_index=True)
        last = np.r_[first[1:], t_s.size]  # one past the block of ties
        has_event = np.add.reduceat(e_s, first) > 0
        self.event_times = times[has_event]
        start, stop = first[has_event], last[has_event]
        self.draws, self.n = g.shape
        k = len(self.labels)
        self.at_risk = np.empty((k, self.draws, start.size))
        self.events = np.empty((k, self.draws, start.size))
        self.last_time = np.empty((k, self.draws))
        zero = np.zeros((self.draws, 1), dtype=np.int64)
        for c in range(k):
            member = codes == c
            cm = np.concatenate([zero, np.cumsum(member, axis=1, dtype=np.int64)], axis=1)
            ce = np.concatenate(
                [zero, np.cumsum(member & (e_s == 1), axis=1, dtype=np.int64)], axis=1
            )
            self.at_risk[c] = cm[:, -1:] - cm[:, start]
            self.events[c] = ce[:, stop] - ce[:, start]
            # Largest time of the group in each draw: the last sorted member.
            pos = self.n - 1 - np.argmax(member[:, ::-1], axis=1)
            self.last_time[c] = np.where(member.any(axis=1), t_s[pos], -np.inf)


@dataclass(frozen=True)
class LogrankBatch:
    """Pairwise log-rank results for many label draws.

    Attributes
    ----------
    pairs : list of tuple
        ``(group_a, group_b)`` for each column.
    statistic, p_value : ndarray, shape (draws, pairs)
    """

    pairs: list
    statistic: np.ndarray
    p_value: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        """Long table: draw, group_a, group_b, statistic, p_value."""
        draws, npairs = self.statistic.shape
        a = [p[0] for p in self.pairs]
        b = [p[1] for p in self.pairs]
        return pd.DataFrame(
            {
                "draw": np.repeat(np.arange(draws), npairs),
                "group_a": np.tile(np.asarray(a, dtype=object), draws),
                "group_b": np.tile(np.asarray(b, dtype=object), draws),
                "statistic": self.statistic.ravel(),
                "p_value": self.p_value.ravel(),
            }
        )


def pairwise_logrank_batch(durations, events, group_draws, *, labels=None) -> LogrankBatch:
    r"""Pairwise log-rank statistics for many label vectors at once.

    Same statistic as :func:`pairwise_logrank` (see there for the formula),
    computed for every row of ``group_draws`` without a Python loop over draws
    or observations (only over the label pairs): the data are sorted by time
    once, per-label counts at the distinct event times come from cumulative
    sums (ties are whole blocks of the sorted order), and the log-rank sums
    run over the event-time axis of ``(draws, event times)`` arrays. Times
    with no event add exactly zero to :math:`O`, :math:`E` and :math:`V`, so
    they are skipped.

    Parameters
    ----------
    durations, events : array_like, shape (n,)
        Follow-up times and 0/1 event indicators (shared by all draws).
    group_draws : array_like, shape (draws, n) or (n,)
        Group label of each observation in each draw (e.g. randomised-response
        outputs).
    labels : sequence, optional
        Groups and their order (pairs are ``combinations(labels, 2)``);
        default the sorted distinct values. Every value of ``group_draws``
        must be one of them.

    Returns
    -------
    LogrankBatch
        ``statistic`` and ``p_value`` of shape ``(draws, pairs)``.
    """
    counts = _SortedCounts(durations, events, group_draws, labels)
    pairs = list(combinations(range(len(counts.labels)), 2))
    stat = np.empty((counts.draws, len(pairs)))
    for col, (a, b) in enumerate(pairs):
        stat[:, col] = _chi2(
            *_logrank_terms(
                counts.at_risk[a], counts.at_risk[b], counts.events[a], counts.events[b]
            )
        )
    return LogrankBatch(
        pairs=[(counts.labels[a], counts.labels[b]) for a, b in pairs],
        statistic=stat,
        p_value=chi2_sf(stat, 1),
    )


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
    counts = _SortedCounts(durations, events, group_draws, labels)
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
