r"""A correct LNTE baseline: Laplace noise on event and censoring counts on a public grid.

Gondara & Wang's idea [GW20]_ done so that the stated ε holds: the time axis
is cut into ``bins`` equal intervals of a public horizon :math:`[0, H]`, and
per group the counts of events :math:`d_b` and censorings :math:`c_b` in each
bin are released with Laplace noise. A person adds one row to exactly one
bin of one group's histogram (``rows_per_person`` rows when a person has
several), so under add/remove-one-person neighbours the whole set of
histograms has L1 sensitivity ``rows_per_person`` and

.. math::

    \tilde d_b = d_b + L_b,\quad \tilde c_b = c_b + L'_b,\quad
    L, L' \sim \mathrm{Laplace}(0, \Delta/\varepsilon)

is ε-DP for all groups and bins together (disjoint counts: no composition
over the grid is needed, and none is hidden). Everything after is
post-processing of the noisy cells, so it costs no privacy. The counts are
made consistent as cumulative processes, the constrained inference of Hay
et al. [HRMS10]_ used in DP survival estimation: the noisy number at risk at
the start of bin :math:`b`, :math:`\tilde r_b = \sum_{b' \ge b} (\tilde
d_{b'} + \tilde c_{b'})`, is replaced by its least-squares non-increasing fit
(isotonic regression, :func:`isotonic_fit`), cut at 0; the exits of bin
:math:`b` are :math:`\hat x_b = \hat r_b - \hat r_{b+1} \ge 0`; the
cumulative events :math:`\tilde D_b = \sum_{b' \le b} \tilde d_{b'}` get
their non-decreasing fit, cut at 0, whose increments, capped at
:math:`\hat x_b`, are the events :math:`\hat d_b` (the rest of the exits
are censorings :math:`\hat c_b`). Where the data have no exits (past a
group's last follow-up) the noise has mean 0 and the fitted at-risk
process no systematic drop, so those bins get few events and censorings,
none on average beyond the noise's own spread: clipping each noisy cell at 0 on its own
would instead add Laplace's positive half, on average Δ/(2ε) per cell, as
phantom events and censorings that both inflate the number at risk before
them and keep the curve dropping after the last patient. Without noise every
fit is the identity and the curve is the binned estimator below. Then

.. math::

    \hat S(t_b) = \prod_{b' \le b} \bigl(1 - \hat d_{b'} / \hat r_{b'}\bigr),

which is non-increasing and stays in [0, 1]; :meth:`GridLNTE.release` uses
the actuarial form of the hazard (censorings at risk half their bin [CE58]_) and
clips follow-up at the horizon.
The curve is a step function at the bins' right ends; it stops (``nan``)
where :math:`\hat r_b < 1`. The horizon :math:`H` must be public: the
study reads it from the cohort's configuration (``datasets.<name>.horizon``)
and, only where none is set, falls back on the largest follow-up time: the
released step times then publish that private time, so the release has no
finite ε (:meth:`GridLNTE.privacy_record`: ``true_epsilon = inf``,
``release = False``).

References
----------
.. [GW20] L. Gondara, K. Wang (2020). Differentially private survival
   function estimation. MLHC, PMLR 126.
.. [HRMS10] M. Hay, V. Rastogi, G. Miklau, D. Suciu (2010). Boosting the
   accuracy of differentially private histograms through consistency.
   PVLDB 3(1), 1021-1032.
.. [CE58] S. J. Cutler, F. Ederer (1958). Maximum utilization of the life
   table method in analyzing survival. J. Chronic Dis. 8, 699-712.
"""

from __future__ import annotations

import math

import numpy as np

from dprepro.runtime.privacy_record import PrivacyRecord
from dprepro.survival.inputs import check_survival_data

__all__ = ["GridDiscretisation", "GridLNTE", "actuarial_survival", "consistent_counts",
           "grid_calibration", "grid_counts", "isotonic_fit", "label_replacement_epsilon"]


class GridLNTE:
    """The grid-based LNTE mechanism (see the module notes).

    Parameters
    ----------
    epsilon : float
        ε per person for all groups' histograms together (keyword-only, > 0).
    bins : int
        Number of equal bins of the public horizon (>= 2).
    rows_per_person : int
        Largest number of rows one person has (the L1 sensitivity).
    """

    def __init__(self, *, epsilon, bins: int = 20, rows_per_person: int = 1,
                 horizon: float | None = None, horizon_source: str = "design"):
        if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.floating):
            raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}")
        if not np.isfinite(epsilon) or epsilon <= 0:
            raise ValueError(f"epsilon must be finite and > 0, got {epsilon}")
        if int(bins) != bins or bins < 2:
            raise ValueError(f"bins must be an integer >= 2, got {bins}")
        if int(rows_per_person) != rows_per_person or rows_per_person < 1:
            raise ValueError(f"rows_per_person must be an integer >= 1, got {rows_per_person}")
        if horizon is not None and (not np.isfinite(horizon) or horizon <= 0):
            raise ValueError(f"horizon must be finite and > 0 (or None), got {horizon}")
        if horizon_source not in ("design", "data"):
            raise ValueError(f"horizon_source must be 'design' or 'data', got {horizon_source!r}")
        if horizon is None and horizon_source != "design":
            raise ValueError("horizon_source applies to a configured horizon only")
        self.epsilon = float(epsilon)
        self.horizon = None if horizon is None else float(horizon)
        self.horizon_source = horizon_source
        self.bins = int(bins)
        self.rows_per_person = int(rows_per_person)

    @property
    def scale(self) -> float:
        return self.rows_per_person / self.epsilon

    def release(self, durations, events, *, horizon: float, rng: np.random.Generator,
                draws: int = 1, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        r"""Noisy curve of one group: ``(edges, survival)`` with survival ``(draws, bins)``.

        ``edges`` are the bins' right ends (the curve's step times). Follow-up
        past the horizon is clipped there: such a person is counted in one
        extra cell, "alive at :math:`H`", released with the same noise, and
        is at risk in every bin (the cells stay disjoint, so the sensitivity
        is unchanged). The hazard of bin :math:`b` uses the actuarial
        (life-table) correction: censorings are at risk half the bin,

        .. math::

            \tilde q_b = \min(\tilde d_b, \tilde r'_b) / \tilde r'_b, \qquad
            \tilde r'_b = \tilde r_b - \tilde c_b / 2

        (Cutler & Ederer 1958). ``noise=False`` gives the same estimator on
        the exact counts: the discretisation error alone (not private).
        """
        edges, d, c = grid_counts(durations, events, horizon=horizon, bins=self.bins)
        if noise:
            draws_noise = rng.laplace(0.0, self.scale, size=(2, draws, self.bins + 1))
        else:
            draws_noise = np.zeros((2, draws, self.bins + 1))
        d_noisy = d + draws_noise[0]
        d_noisy[:, -1] = 0.0  # no event cell past the horizon (the draw is made, then unused)
        return edges, actuarial_survival(*consistent_counts(d_noisy, c + draws_noise[1]))

    def privacy_record(self, *, privacy_unit: str = "record") -> PrivacyRecord:
        """ε-DP with a public horizon; with none (``horizon=None``) no finite ε at all.

        Without a configured horizon the study ends the grid at the largest
        follow-up time (:func:`~dprepro.studies.rrr_survival.analysis.analyse_lnte_grid`):
        the released step times :math:`H b / B` then publish that time exactly,
        and a neighbour whose follow-up is pushed past it moves every step, so
        the outputs of two neighbouring cohorts are disjoint: ``true_epsilon``
        is ``inf`` and ``release`` false, in the table columns and the sidecar
        alike (never only in the note).
        """
        unit = privacy_unit or "person"
        if self.horizon is None or self.horizon_source == "data":
            where, fix = (
                ("the largest follow-up time, read off the private data, and the released step "
                 "times publish it", "set a public datasets.<name>.horizon")
                if self.horizon is None else
                (f"the configured horizon {self.horizon:g}, chosen after seeing this cohort's "
                 "follow-up (datasets.<name>.horizon_source: data), so the released step times "
                 "depend on the private data", "set a horizon from the study design"))
            note = (f"NOT DIFFERENTIALLY PRIVATE: the grid of {self.bins} bins ends at {where} "
                    f"(no finite ε; {fix}); Laplace({self.scale:g}) on every event and "
                    "censoring count otherwise as lnte_grid")
            return PrivacyRecord(mechanism="lnte_grid", release=False, stated=self.epsilon,
                                 true_epsilon=math.inf, privacy_unit=privacy_unit, note=note,
                                 extra={"calibration": self.calibration})
        note = (f"LNTE on a public grid of {self.bins} bins: Laplace({self.scale:g}) on every "
                "event and censoring count (L1 sensitivity "
                f"{self.rows_per_person} per {unit}), then monotone "
                "post-processing; ε-DP for all groups' curves together under add/remove-one-"
                f"{unit} neighbours (2ε under replacement); "
                f"{self.horizon_note()}")
        return PrivacyRecord(mechanism="lnte_grid", release=True, stated=self.epsilon,
                             true_epsilon=self.epsilon, privacy_unit=privacy_unit, note=note,
                             extra={"calibration": self.calibration})

    @property
    def calibration(self) -> str:
        """``grid=<bins>,rows=<rows>[,horizon=<H>]``: the parameters a table row shows.

        Without ``horizon`` the study takes the largest follow-up time (data-dependent).
        """
        text = f"grid={self.bins},rows={self.rows_per_person}"
        if self.horizon is None:
            return text
        text = f"{text},horizon={self.horizon:g}"
        return f"{text},horizon_source=data" if self.horizon_source == "data" else text

    def horizon_note(self) -> str:
        """Where the horizon comes from, as every row's note says it."""
        if self.horizon is None:
            return ("horizon = largest follow-up time (taken from the data, not private: set "
                    "datasets.<name>.horizon)")
        if self.horizon_source == "data":
            return (f"horizon {self.horizon:g} from the configuration, chosen after seeing "
                    "the data (horizon_source: data): not public; follow-up clipped there")
        return (f"horizon {self.horizon:g} from the configuration, fixed by the study design "
                "before the data were seen (horizon_source: design), so public; follow-up "
                "clipped there")


def isotonic_fit(values, *, increasing: bool = True) -> np.ndarray:
    r"""Least-squares monotone fit of each row of ``values`` (isotonic regression).

    For a non-decreasing fit the solution has the closed min-max form

    .. math::

        \hat y_i = \max_{j \le i} \min_{k \ge i} \bar y_{j..k}

    (Barlow et al. 1972, Thm. 1.4.4), the same numbers the pool-adjacent-
    violators algorithm reaches. It costs :math:`O(n^2)` per row, computed here
    for all rows at once: the grids have a few dozen bins. A row that is
    already monotone is returned unchanged.

    Parameters
    ----------
    values : array_like, shape (rows, n) or (n,)
        Finite values.
    increasing : bool
        Non-decreasing fit (default) or non-increasing.

    References
    ----------
    R. E. Barlow, D. J. Bartholomew, J. M. Bremner, H. D. Brunk (1972).
    Statistical Inference under Order Restrictions. Wiley.
    """
    y = np.asarray(values, dtype=float)
    if not np.isfinite(y).all():
        raise ValueError("isotonic_fit needs finite values")
    flat = y.ndim == 1
    y = np.atleast_2d(y)
    if not increasing:
        return -isotonic_fit(-y, increasing=True)[0 if flat else slice(None)]
    n = y.shape[1]
    sums = np.concatenate([np.zeros((y.shape[0], 1)), np.cumsum(y, axis=1)], axis=1)
    j, k = np.triu_indices(n)
    means = np.full((y.shape[0], n, n), np.inf)  # means[:, j, k] of y[j..k], j <= k
    means[:, j, k] = (sums[:, k + 1] - sums[:, j]) / (k - j + 1)
    # min over k >= i (suffix minimum along k), then max over j <= i
    suffix_min = np.minimum.accumulate(means[:, :, ::-1], axis=2)[:, :, ::-1]
    lower = np.where(np.tril(np.ones((n, n), dtype=bool)).T, suffix_min, -np.inf)
    fit = lower.max(axis=1)
    # a monotone row is its own fit: keep its exact values (no rounding of the means)
    monotone = (np.diff(y, axis=1) >= 0).all(axis=1)
    fit[monotone] = y[monotone]
    return fit[0] if flat else fit


def grid_counts(durations, events, *, horizon: float, bins: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact event and censoring counts of one group on ``bins`` equal bins of ``[0, horizon]``.

    Returns ``(edges, d, c)``: the bins' right ends, and counts of length
    ``bins + 1`` whose last cell holds those followed past the horizon (as
    censorings, "alive at H"; its event count is 0). A group without members (a
    label of the public domain no one has) has zero counts everywhere.
    """
    if not np.isfinite(horizon) or horizon <= 0:
        raise ValueError(f"horizon must be finite and > 0, got {horizon}")
    edges = np.linspace(0.0, float(horizon), bins + 1)[1:]
    if np.size(durations) == 0 and np.size(events) == 0:
        return edges, np.zeros(bins + 1), np.zeros(bins + 1)
    t, e = check_survival_data(durations, events)
    beyond = t > float(horizon)
    which = np.where(beyond, bins, np.searchsorted(edges, t, side="left"))
    d = np.bincount(which[~beyond], weights=e[~beyond], minlength=bins + 1)
    c = np.bincount(which, weights=np.where(beyond, 1.0, 1.0 - e), minlength=bins + 1)
    return edges, d, c


def actuarial_survival(at_risk, events, censored, *, min_at_risk: float = 1.0) -> np.ndarray:
    r"""Life-table curve :math:`\prod_b (1 - \hat d_b / (\hat r_b - \hat c_b/2))` per row.

    The hazard is capped at 1; the curve stops (``nan`` from there on) at
    the first bin whose fitted at-risk is below ``min_at_risk`` (1 in
    :meth:`GridLNTE.release`).
    """
    effective = at_risk - censored / 2.0
    defined = at_risk >= min_at_risk
    with np.errstate(divide="ignore", invalid="ignore"):
        hazard = np.where(defined & (effective > 0),
                          np.minimum(events, effective) / effective, 0.0)
    survival = np.cumprod(1.0 - hazard, axis=1)
    return np.where(np.minimum.accumulate(defined, axis=1), survival, np.nan)


def consistent_counts(events, censorings, *, cap_events: bool = True
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Monotone post-processing of noisy grid counts (see the module notes).

    Parameters
    ----------
    events, censorings : ndarray, shape (draws, bins + 1)
        Noisy counts per cell; the last cell holds those alive at the horizon
        (counted as censorings; its event count is ignored).
    cap_events : bool
        Cap each bin's fitted events at its fitted exits (what
        :class:`GridLNTE` does). ``False`` keeps the increments of the fitted
        cumulative events and cuts the censorings at 0 instead (an
        alternative measured in ``benchmarks/bench_grid_lnte_bins.py``).

    Returns
    -------
    at_risk, events, censored : ndarray, shape (draws, bins)
        :math:`\hat r_b` (non-increasing, >= 0), :math:`\hat d_b` and
        :math:`\hat c_b` (>= 0, summing to the exits :math:`\hat r_b -
        \hat r_{b+1}`).
    """
    d = np.array(events, dtype=float, ndmin=2)
    c = np.array(censorings, dtype=float, ndmin=2)
    d[:, -1] = 0.0
    at_risk = np.cumsum((d + c)[:, ::-1], axis=1)[:, ::-1]
    at_risk = np.maximum(isotonic_fit(at_risk, increasing=False), 0.0)
    exits = at_risk - np.concatenate([at_risk[:, 1:], np.zeros((len(at_risk), 1))], axis=1)
    cumulative = np.maximum(isotonic_fit(np.cumsum(d[:, :-1], axis=1)), 0.0)
    d_hat = np.diff(cumulative, axis=1, prepend=0.0)
    if not cap_events:
        return at_risk[:, :-1], d_hat, np.maximum(exits[:, :-1] - d_hat, 0.0)
    d_hat = np.minimum(d_hat, exits[:, :-1])
    return at_risk[:, :-1], d_hat, exits[:, :-1] - d_hat


class GridDiscretisation(GridLNTE):
    """``lnte_grid`` without noise: its binning (discretisation) error alone, not private.

    The same bins, horizon and actuarial estimator as :class:`GridLNTE` on
    the exact counts, so a table shows how much of grid LNTE's error is the
    grid and how much the noise. Its record is non-private.
    """

    def __init__(self, *, bins: int = 20, rows_per_person: int = 1,
                 horizon: float | None = None, horizon_source: str = "design"):
        super().__init__(epsilon=1.0, bins=bins, rows_per_person=rows_per_person,
                         horizon=horizon, horizon_source=horizon_source)

    def release(self, durations, events, *, horizon: float, rng: np.random.Generator,
                draws: int = 1, noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return super().release(durations, events, horizon=horizon, rng=rng, draws=draws,
                               noise=False)

    def privacy_record(self, *, privacy_unit: str = "record") -> PrivacyRecord:
        note = (f"not private: lnte_grid's estimator on the exact counts of {self.bins} bins "
                f"(discretisation error only); {self.horizon_note()}")
        return PrivacyRecord(mechanism="lnte_grid_no_noise", release=False,
                             privacy_unit=privacy_unit, note=note,
                             extra={"calibration": self.calibration})


def step_on_grid(edges: np.ndarray, survival: np.ndarray, grid) -> np.ndarray:
    """Step curves ``(draws, bins)`` read at ``grid``: 1 before the first bin end."""
    grid = np.asarray(grid, dtype=float)
    idx = np.searchsorted(edges, grid, side="right") - 1
    out = survival[:, np.maximum(idx, 0)]
    return np.where(idx[None, :] < 0, 1.0, out)


def label_replacement_epsilon(add_remove_epsilon: float) -> float:
    """Grid LNTE's ε when one person's group label is replaced, from its add/remove ε.

    The person's rows leave one group's histogram and enter another's in the same bins:
    twice the add/remove L1 sensitivity, so twice the ε (``inf`` stays ``inf``); the
    relation under which RRR's label-local ε holds.
    """
    return 2.0 * add_remove_epsilon


def grid_calibration(text: str) -> dict:
    """``bins``, ``rows_per_person`` and ``horizon`` of ``lnte_grid`` from its calibration text.

    The text (``"grid=20,rows=2,horizon=20"``; no ``horizon``: the largest
    follow-up time; ``horizon_source=data`` after it: a horizon chosen after seeing
    the data) is what the tables' ``calibration`` column shows, so a table row alone
    rebuilds the mechanism that made it.
    """
    parts = dict(item.split("=", 1) for item in str(text).split(",") if "=" in item)
    try:
        found = {"bins": int(parts["grid"]), "rows_per_person": int(parts["rows"]),
                 "horizon": float(parts["horizon"]) if "horizon" in parts else None}
        if parts.get("horizon_source", "design") != "design":
            found["horizon_source"] = parts["horizon_source"]
        return found
    except (KeyError, ValueError):
        raise ValueError(f"lnte_grid calibration {text!r} is not "
                         "'grid=<bins>,rows=<rows>[,horizon=<H>]'") from None
