r"""Cluster-robust two-sample log-rank: the robust score test of a Cox model.

When a person contributes several rows (``survival::kidney``: two infection
times per patient) the rows are correlated and the plain log-rank variance
is too small. The robust score test of Lin & Wei [LW89]_ replaces it by the
sandwich variance of the Cox score at :math:`\beta = 0`, summed per cluster,
which is what R reports as "Robust" for ``coxph(Surv(time, status) ~ x,
cluster = id, ties = "breslow")``.

For two groups :math:`a, b` restricted to their rows, covariate
:math:`x_i = 1` for group :math:`b`, distinct event times :math:`t_j` with
:math:`n_j` at risk, :math:`d_j` events and :math:`\bar x_j` the mean of
:math:`x` over the risk set (Breslow ties, so the numerator is exactly the
log-rank :math:`O_b - E_b`):

.. math::

    U = \sum_i \delta_i (x_i - \bar x(t_i)), \qquad
    L_i = \delta_i (x_i - \bar x(t_i))
          - \sum_{t_j \le t_i} \frac{d_j}{n_j} (x_i - \bar x_j),

    V_{\mathrm{robust}} = \sum_{c} \Bigl(\sum_{i \in c} L_i\Bigr)^2, \qquad
    \chi^2 = U^2 / V_{\mathrm{robust}} \sim \chi^2_1,

with :math:`L_i` the score residuals at :math:`\beta = 0` and :math:`c`
the clusters (persons). With one row per person the test is still valid
(a sandwich instead of the model variance) and close to the plain log-rank.

References
----------
.. [LW89] D. Y. Lin, L. J. Wei (1989). The robust inference for the Cox
   proportional hazards model. JASA 84, 1074–1078.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from dprepro.survival.inputs import check_survival_data, chi2_sf

__all__ = ["robust_score_test", "pairwise_robust_logrank"]


def robust_score_test(durations, events, x, clusters) -> tuple[float, float]:
    """Robust score test of ``x`` (0/1) at β = 0 with cluster sums (see the module notes).

    Parameters
    ----------
    durations, events : array_like, shape (n,)
    x : array_like of 0/1, shape (n,)
        Covariate (1 = second group).
    clusters : array_like, shape (n,)
        Cluster (person) of each row.

    Returns
    -------
    (statistic, p_value)
        χ² with one degree of freedom; NaN when the robust variance is 0.
    """
    t, e = check_survival_data(durations, events)
    x = np.asarray(x, dtype=float)
    codes = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)))[0]
    if x.shape != t.shape or codes.shape != t.shape:
        raise ValueError("x and clusters must have the shape of durations")
    order = np.argsort(t, kind="stable")
    t, e, x, codes = t[order], e[order].astype(float), x[order], codes[order]
    times, first = np.unique(t, return_index=True)
    n_j = t.size - first                                   # at risk at each distinct time
    s_j = np.concatenate([np.cumsum(x[::-1])[::-1], [0.0]])[first]   # Σ x over the risk set
    d_j = np.add.reduceat(e, first)
    xbar_j = s_j / n_j
    hazard = d_j / n_j
    cum_h = np.cumsum(hazard)
    cum_hx = np.cumsum(hazard * xbar_j)
    pos = np.searchsorted(times, t, side="right") - 1      # last distinct time <= t_i
    score_i = e * (x - xbar_j[pos])
    residual = score_i - (x * cum_h[pos] - cum_hx[pos])
    u = float(score_i.sum())
    v = float(np.sum(np.bincount(codes, weights=residual) ** 2))
    if v <= 0:
        return float("nan"), float("nan")
    stat = u * u / v
    return stat, float(chi2_sf(stat, 1))


def pairwise_robust_logrank(durations, events, group_draws, clusters, *,
                            labels) -> pd.DataFrame:
    """:func:`robust_score_test` for every pair of ``labels`` in every draw.

    Vectorised over draws: the data are sorted by time once; for a pair, the
    rows of the two groups in each draw are a 0/1 mask, and the risk-set
    sums, event counts and score residuals of the module notes are masked
    cumulative sums over the sorted rows (ties are whole blocks).

    Parameters
    ----------
    durations, events : array_like, shape (n,)
    group_draws : array_like, shape (draws, n) or (n,)
        Group of each row in each draw (released labels).
    clusters : array_like, shape (n,)
        Person of each row.
    labels : sequence
        Groups; pairs are ``combinations(labels, 2)`` (the log-rank tables' order).

    Returns
    -------
    pandas.DataFrame
        ``draw, group_a, group_b, robust_statistic, robust_p_value``.
    """
    t, e = check_survival_data(durations, events)
    draws = np.atleast_2d(np.asarray(group_draws, dtype=object))
    codes = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)))[0]
    if draws.shape[1] != t.size or codes.shape != t.shape:
        raise ValueError("group_draws and clusters must have one entry per row")
    order = np.argsort(t, kind="stable")
    t, e, codes, draws = t[order], e[order].astype(float), codes[order], draws[:, order]
    # integer labels once: comparing object arrays per pair is the slow part
    labels = list(labels)
    draws = pd.Categorical(draws.ravel(), categories=labels).codes.reshape(draws.shape)
    _, first, block = np.unique(t, return_index=True, return_inverse=True)
    n_draws, n_clusters = draws.shape[0], codes.max() + 1
    unique_clusters = n_clusters == t.size
    rows = []
    for ia, ib in combinations(range(len(labels)), 2):
        a, b = labels[ia], labels[ib]
        in_b = draws == ib
        mask = ((draws == ia) | in_b).astype(float)                # (draws, n)
        x = in_b.astype(float)
        n_j = np.cumsum(mask[:, ::-1], axis=1)[:, ::-1][:, first]  # at risk, (draws, m)
        s_j = np.cumsum(x[:, ::-1], axis=1)[:, ::-1][:, first]
        d_j = np.add.reduceat(mask * e, first, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            xbar = np.where(n_j > 0, s_j / n_j, 0.0)
            hazard = np.where(n_j > 0, d_j / n_j, 0.0)
        cum_h = np.cumsum(hazard, axis=1)[:, block]
        cum_hx = np.cumsum(hazard * xbar, axis=1)[:, block]
        score = mask * e * (x - xbar[:, block])
        residual = score - mask * (x * cum_h - cum_hx)
        u = score.sum(axis=1)
        if unique_clusters:
            v = np.sum(residual ** 2, axis=1)
        else:
            per_cluster = np.zeros((n_draws, n_clusters))
            np.add.at(per_cluster, (np.arange(n_draws)[:, None], codes[None, :]), residual)
            v = np.sum(per_cluster ** 2, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = np.where(v > 0, u * u / v, np.nan)
        p = chi2_sf(stat, 1)
        for draw in range(n_draws):
            rows.append((draw, a, b, float(stat[draw]), float(p[draw])))
    frame = pd.DataFrame(rows, columns=["draw", "group_a", "group_b", "robust_statistic",
                                        "robust_p_value"])
    return frame.sort_values("draw", kind="stable").reset_index(drop=True)
