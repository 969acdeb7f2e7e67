"""Pairwise two-sample log-rank tests, one data set or many label draws at once."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from dprepro.survival.inputs import SortedCounts, check_labels, check_survival_data, chi2_sf

__all__ = ["LogrankBatch", "pairwise_logrank", "pairwise_logrank_batch"]


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
    labels = check_labels(labels, g, "groups")
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
    counts = SortedCounts(durations, events, group_draws, labels)
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

