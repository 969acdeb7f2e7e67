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
post-processing: negative counts are set to 0, the number at risk at the
start of bin :math:`b` is :math:`\tilde r_b = \sum_{b' \ge b} (\tilde d_{b'} +
\tilde c_{b'})`, and

.. math::

    \tilde S(t_b) = \prod_{b' \le b} \bigl(1 - \min(\tilde d_{b'}, \tilde r_{b'}) /
    \tilde r_{b'}\bigr),

which is non-increasing and stays in [0, 1] (the monotone post-processing);
:meth:`GridLNTE.release` uses the actuarial form of the hazard (censorings
at risk half their bin) and clips follow-up at the horizon.
The curve is a step function at the bins' right ends; it stops (``nan``)
where :math:`\tilde r_b < 1`. The horizon :math:`H` must be public: the
study reads it from the cohort's configuration (``datasets.<name>.horizon``)
and, only where none is set, falls back on the largest follow-up time, which
is then data-dependent and says so in the table's note.

References
----------
.. [GW20] L. Gondara, K. Wang (2020). Differentially private survival
   function estimation. MLHC, PMLR 126.
.. [CE58] S. J. Cutler, F. Ederer (1958). Maximum utilization of the life
   table method in analyzing survival. J. Chronic Dis. 8, 699-712.
"""

from __future__ import annotations

import numpy as np

from .km import check_survival_data
from .privacy import PrivacyRecord

__all__ = ["GridDiscretisation", "GridLNTE"]


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
                 horizon: float | None = None):
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
        self.epsilon = float(epsilon)
        self.horizon = None if horizon is None else float(horizon)
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
        t, e = check_survival_data(durations, events)
        if not np.isfinite(horizon) or horizon <= 0:
            raise ValueError(f"horizon must be finite and > 0, got {horizon}")
        edges = np.linspace(0.0, float(horizon), self.bins + 1)[1:]
        beyond = t > float(horizon)
        which = np.where(beyond, self.bins, np.searchsorted(edges, t, side="left"))
        d = np.bincount(which[~beyond], weights=e[~beyond], minlength=self.bins + 1)
        c = np.bincount(which, weights=np.where(beyond, 1.0, 1.0 - e), minlength=self.bins + 1)
        if noise:
            draws_noise = rng.laplace(0.0, self.scale, size=(2, draws, self.bins + 1))
        else:
            draws_noise = np.zeros((2, draws, self.bins + 1))
        d_noisy = np.maximum(d + draws_noise[0], 0.0)
        d_noisy[:, -1] = 0.0  # no event cell past the horizon (the draw is made, then unused)
        c_noisy = np.maximum(c + draws_noise[1], 0.0)
        at_risk = np.cumsum((d_noisy + c_noisy)[:, ::-1], axis=1)[:, ::-1][:, :-1]
        d_noisy, c_noisy = d_noisy[:, :-1], c_noisy[:, :-1]
        effective = at_risk - c_noisy / 2.0
        defined = at_risk >= 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            hazard = np.where(defined & (effective > 0),
                              np.minimum(d_noisy, effective) / effective, 0.0)
        survival = np.cumprod(1.0 - hazard, axis=1)
        survival = np.where(np.minimum.accumulate(defined, axis=1), survival, np.nan)
        return edges, survival

    def privacy_record(self, *, privacy_unit: str = "record") -> PrivacyRecord:
        note = (f"LNTE on a public grid of {self.bins} bins: Laplace({self.scale:g}) on every "
                "event and censoring count (L1 sensitivity "
                f"{self.rows_per_person} per {privacy_unit or 'person'}), then monotone "
                "post-processing; ε-DP for all groups' curves together under add/remove-one-"
                f"{privacy_unit or 'person'} neighbours (2ε under replacement); "
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
        return text if self.horizon is None else f"{text},horizon={self.horizon:g}"

    def horizon_note(self) -> str:
        if self.horizon is None:
            return ("horizon = largest follow-up time (taken from the data, not private: set "
                    "datasets.<name>.horizon)")
        return f"public horizon {self.horizon:g} from the configuration; follow-up clipped there"


class GridDiscretisation(GridLNTE):
    """``lnte_grid`` without noise: its binning (discretisation) error alone, not private.

    The same bins, horizon and actuarial estimator as :class:`GridLNTE` on
    the exact counts, so a table shows how much of grid LNTE's error is the
    grid and how much the noise. Its record is non-private.
    """

    def __init__(self, *, bins: int = 20, rows_per_person: int = 1,
                 horizon: float | None = None):
        super().__init__(epsilon=1.0, bins=bins, rows_per_person=rows_per_person,
                         horizon=horizon)

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
