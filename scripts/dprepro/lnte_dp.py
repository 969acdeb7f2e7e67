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

which is non-increasing and stays in [0, 1] (the monotone post-processing).
The curve is a step function at the bins' right ends; it stops (``nan``)
where :math:`\tilde r_b < 1`. The horizon :math:`H` is taken as public (the
study uses the largest follow-up time, which RRR releases anyway).

References
----------
.. [GW20] L. Gondara, K. Wang (2020). Differentially private survival
   function estimation. MLHC, PMLR 126.
"""

from __future__ import annotations

import numpy as np

from .km import check_survival_data
from .privacy import PrivacyRecord

__all__ = ["GridLNTE"]


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

    def __init__(self, *, epsilon, bins: int = 20, rows_per_person: int = 1):
        if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.floating):
            raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}")
        if not np.isfinite(epsilon) or epsilon <= 0:
            raise ValueError(f"epsilon must be finite and > 0, got {epsilon}")
        if int(bins) != bins or bins < 2:
            raise ValueError(f"bins must be an integer >= 2, got {bins}")
        if int(rows_per_person) != rows_per_person or rows_per_person < 1:
            raise ValueError(f"rows_per_person must be an integer >= 1, got {rows_per_person}")
        self.epsilon = float(epsilon)
        self.bins = int(bins)
        self.rows_per_person = int(rows_per_person)

    @property
    def scale(self) -> float:
        return self.rows_per_person / self.epsilon

    def release(self, durations, events, *, horizon: float, rng: np.random.Generator,
                draws: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Noisy curve of one group: ``(edges, survival)`` with survival ``(draws, bins)``.

        ``edges`` are the bins' right ends (the curve's step times).
        """
        t, e = check_survival_data(durations, events)
        if not np.isfinite(horizon) or horizon <= 0:
            raise ValueError(f"horizon must be finite and > 0, got {horizon}")
        edges = np.linspace(0.0, float(horizon), self.bins + 1)[1:]
        which = np.minimum(np.searchsorted(edges, t, side="left"), self.bins - 1)
        d = np.bincount(which, weights=e, minlength=self.bins)
        c = np.bincount(which, weights=1 - e, minlength=self.bins)
        noise = rng.laplace(0.0, self.scale, size=(2, draws, self.bins))
        d_noisy = np.maximum(d + noise[0], 0.0)
        c_noisy = np.maximum(c + noise[1], 0.0)
        at_risk = np.cumsum((d_noisy + c_noisy)[:, ::-1], axis=1)[:, ::-1]
        defined = at_risk >= 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(defined, 1.0 - np.minimum(d_noisy, at_risk) / at_risk, 1.0)
        survival = np.cumprod(factor, axis=1)
        survival = np.where(np.minimum.accumulate(defined, axis=1), survival, np.nan)
        return edges, survival

    def privacy_record(self, *, privacy_unit: str = "record") -> PrivacyRecord:
        note = (f"LNTE on a public grid of {self.bins} bins: Laplace({self.scale:g}) on every "
                "event and censoring count (L1 sensitivity "
                f"{self.rows_per_person} per {privacy_unit or 'person'}), then monotone "
                "post-processing; ε-DP for all groups' curves together")
        return PrivacyRecord(mechanism="lnte_grid", release=True, stated=self.epsilon,
                             true_epsilon=self.epsilon, privacy_unit=privacy_unit, note=note,
                             extra={"calibration": self.calibration})

    @property
    def calibration(self) -> str:
        """``grid=<bins>,rows=<rows per person>``: the parameters a table row shows."""
        return f"grid={self.bins},rows={self.rows_per_person}"


def step_on_grid(edges: np.ndarray, survival: np.ndarray, grid) -> np.ndarray:
    """Step curves ``(draws, bins)`` read at ``grid``: 1 before the first bin end."""
    grid = np.asarray(grid, dtype=float)
    idx = np.searchsorted(edges, grid, side="right") - 1
    out = survival[:, np.maximum(idx, 0)]
    return np.where(idx[None, :] < 0, 1.0, out)
