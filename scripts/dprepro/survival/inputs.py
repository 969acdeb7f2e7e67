"""Right-censored survival data checked once, and its at-risk counts on sorted times."""

from __future__ import annotations

import numpy as np

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


def check_survival_data(durations, events, *, names: tuple[str, str] = ("durations", "events")
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Validate right-censored survival data and return it as float times and int events.

    Parameters
    ----------
    durations : array_like, shape (n,)
        Follow-up times, finite and >= 0.
    events : array_like, shape (n,)
        1 = event, 0 = censored (booleans accepted).

    names : (str, str)
        What the messages call the two arguments (a caller's own names: ``time``, ``event``).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``durations`` as float64 and ``events`` as int64.

    Raises
    ------
    ValueError, TypeError
        Wrong shape, empty input, non-finite or negative times, events not 0/1.
    """
    tn, en = names
    t = np.asarray(durations)
    e = np.asarray(events)
    if t.ndim != 1:
        raise ValueError(f"{tn} must be one-dimensional, got shape {t.shape}")
    if e.shape != t.shape:
        raise ValueError(f"{en} must have the shape of {tn} (the same shape, {t.shape}), "
                         f"got {e.shape}")
    if t.size == 0:
        raise ValueError(f"{tn} is empty")
    if not np.issubdtype(t.dtype, np.number) or np.issubdtype(t.dtype, np.complexfloating):
        raise TypeError(f"{tn} must be real numbers, got dtype {t.dtype}")
    t = t.astype(float)
    if not np.all(np.isfinite(t)):
        raise ValueError(f"{tn} must be finite (no NaN or inf)")
    if np.any(t < 0):
        raise ValueError(f"{tn} must be >= 0")
    if e.dtype == bool:
        e = e.astype(np.int64)
    if not np.issubdtype(e.dtype, np.number):
        raise TypeError(f"{en} must be 0/1 numbers or booleans, got dtype {e.dtype}")
    if not np.all((e == 0) | (e == 1)):
        raise ValueError(f"{en} must contain only 0 (censored) and 1 (event)")
    return t, e.astype(np.int64)


def check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float | np.integer | np.floating):
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return float(alpha)


def encode_labels(values: np.ndarray, labels: np.ndarray, name: str) -> np.ndarray:
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


def check_labels(labels, values: np.ndarray, name: str) -> np.ndarray:
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


class SortedCounts:
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
        self.labels = check_labels(labels, g.ravel(), "group_draws")
        order = np.argsort(t, kind="stable")
        t_s, e_s = t[order], e[order]
        codes = encode_labels(g[:, order].ravel(), self.labels, "group_draws").reshape(g.shape)
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

