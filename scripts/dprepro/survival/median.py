"""Median survival times and their confidence intervals from a Kaplan–Meier curve (lifelines' and
R's conventions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dprepro.survival.inputs import normal_quantile
from dprepro.survival.kaplan_meier import KaplanMeier, lifelines_qth

__all__ = ["MedianSurvival", "km_median", "km_median_r"]


# --------------------------------------------------------------------------- medians


@dataclass(frozen=True)
class MedianSurvival:
    """A median survival time with its confidence interval (``inf``/NaN when not reached)."""

    median: float
    ci_lower: float
    ci_upper: float


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
        median=lifelines_qth(km.timeline_, km.survival_, 0.5),
        ci_lower=lifelines_qth(km.timeline_, km.ci_lower_, 0.5),
        ci_upper=lifelines_qth(km.timeline_, km.ci_upper_, 0.5),
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

