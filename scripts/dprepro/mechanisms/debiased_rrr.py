r"""Debiased RRR: group survival curves from RRR-released labels, the mixing undone.

RRR releases each person's group :math:`X` as :math:`Y` with the public
transition matrix :math:`M_{ij} = P(Y = j \mid X = i) = p\,[i = j] + (1-p)/k`
(:func:`dprepro.mechanisms.rrr.transition_matrix`). At every time
:math:`t` the released labels' at-risk and event counts are, in
expectation, the true groups' counts mixed by :math:`M`:

.. math::

    E[N^Y(t) \mid X] = N^X(t)\,M, \qquad E[D^Y(t) \mid X] = D^X(t)\,M

(row vectors over groups), because every person's label is privatised
independently of time and event. Inverting the public matrix gives unbiased
count estimates :math:`\hat N(t) = N^Y(t) M^{-1}`, :math:`\hat D(t) = D^Y(t)
M^{-1}`, and from them the group Nelson–Aalen and Kaplan–Meier curves

.. math::

    \hat\Lambda_i(t) = \sum_{t_j \le t} \hat D_i(t_j) / \hat N_i(t_j), \qquad
    \hat S_i(t) = \prod_{t_j \le t} \bigl(1 - \hat D_i(t_j) / \hat N_i(t_j)\bigr),

a post-processing of the RRR release (no extra privacy cost). The counts are
unbiased; the curves are ratio estimators, consistent and nearly unbiased
when the groups are not tiny. A curve is defined while its estimated
at-risk count is positive, :math:`\hat N_i(t) > 0` (undefined for the rest
of follow-up once :math:`\hat N_i \le 0`: ``nan``). Where
:math:`0 < \hat N_i < 1` the ratio :math:`\hat D_i / \hat N_i` is unstable
(it can be far outside [0, 1]), so there the hazard increment is clamped to
[0, 1]; where :math:`\hat N_i \ge 1` it is left as estimated (clamping
there too would bias the curve: at a time with one event, the groups other
than the released one get :math:`\hat D < 0`, and dropping those negative
increments lowers every curve; the unbiasedness tests catch it). A threshold
:math:`\hat N \ge 1` would cut the curve where no label was flipped: a true
at-risk count of 1 inverts to slightly less than 1 whenever other groups hold
persons at risk (e.g. true counts (1, 3, 4, 1), k = 4, ε = 3 under the paper's
calibration, give :math:`\hat N_1 \approx 0.92`).

Median: the first time with :math:`\hat S_i \le 0.5`. A curve that stays
above 0.5 until it stops has a median right-censored at its stop time
:math:`t_{stop}` (the first time it is undefined), as a Kaplan–Meier median
is at the last follow-up: "not reached" (``inf``, KM's and lifelines'
convention) when the curve stops at or after the last time of a row released
in group :math:`i` (the released group's end of follow-up), otherwise the
median is only known to be :math:`\ge t_{stop}` (``nan``, with
:meth:`DebiasedCurves.median_censored_at` giving :math:`t_{stop}`). Intervals: a bootstrap
over persons of the released data (:func:`bootstrap_medians`) includes both the sampling and the
privatisation noise, because each person's released label is random.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dprepro.mechanisms.rrr import RevisedRandomizedResponse, transition_matrix
from dprepro.runtime.privacy_record import PrivacyRecord
from dprepro.survival.inputs import check_survival_data

__all__ = ["DebiasedCurves", "DebiasedRRR", "debiased_curves", "bootstrap_medians"]


class DebiasedCurves:
    """Debiased group curves for many draws: ``survival`` (draws, groups, times)."""

    def __init__(self, timeline, at_risk, events, survival, cumulative_hazard,
                 last_released=None):
        self.timeline = timeline
        # (draws, groups): last time of a row released in each group (-inf: none); None:
        # unknown, every stop above 0.5 is then censored
        self.last_released = last_released
        self.at_risk = at_risk
        self.events = events
        self.survival = survival
        self.cumulative_hazard = cumulative_hazard

    def on_grid(self, grid) -> np.ndarray:
        """Step curves at ``grid``: 1 before the first time, ``nan`` where undefined."""
        grid = np.asarray(grid, dtype=float)
        idx = np.searchsorted(self.timeline, grid, side="right") - 1
        out = self.survival[:, :, np.maximum(idx, 0)]
        return np.where(idx[None, None, :] < 0, 1.0, out)

    def _stop(self) -> tuple[np.ndarray, np.ndarray]:
        """Whether each curve stops, and the time it stops (first undefined time)."""
        undefined = np.isnan(self.survival)
        stops = undefined.any(axis=-1)
        return stops, self.timeline[np.argmax(undefined, axis=-1)]

    def median_censored_at(self) -> np.ndarray:
        """:math:`t_{stop}` of the medians right-censored there, ``nan`` elsewhere (draws, groups).

        A curve that stops above 0.5 before the last time of a row released in
        its group: its median is only known to be :math:`\\ge t_{stop}`.
        """
        reached = (self.survival <= 0.5).any(axis=-1)
        stops, at = self._stop()
        last = (np.full(stops.shape, np.inf) if self.last_released is None
                else self.last_released)
        censored = ~reached & stops & (at < last)
        return np.where(censored, at, np.nan)

    def median(self) -> np.ndarray:
        """First time with :math:`\\hat S \\le 0.5` (draws, groups).

        ``inf`` if never ("not reached": the curve stays above 0.5 to the end,
        or stops at or after its released group's last time); ``nan`` where
        the median is right-censored at an earlier stop
        (:meth:`median_censored_at`).
        """
        below = self.survival <= 0.5
        first = np.argmax(below, axis=-1)
        median = np.where(below.any(axis=-1), self.timeline[first], np.inf)
        return np.where(np.isnan(self.median_censored_at()), median, np.nan)


def debiased_curves(durations, events, released_codes, *, p: float, k: int) -> DebiasedCurves:
    """Debiased curves of the k groups from released label codes (see the module notes).

    Parameters
    ----------
    durations, events : array_like, shape (n,)
    released_codes : array_like of int, shape (draws, n)
        Released group codes ``0..k-1`` of every row in every draw.
    p : float
        RRR keep probability; with ``k`` it fixes the public matrix :math:`M`.
    k : int
        Number of groups.
    """
    t, e = check_survival_data(durations, events)
    codes = np.atleast_2d(np.asarray(released_codes))
    inverse = np.linalg.inv(transition_matrix(p, k))
    order = np.argsort(t, kind="stable")
    t, e, codes = t[order], e[order].astype(float), codes[:, order]
    timeline, first = np.unique(t, return_index=True)
    onehot = (codes[:, :, None] == np.arange(k)).astype(float)          # (draws, n, k)
    at_risk_rows = np.cumsum(onehot[:, ::-1, :], axis=1)[:, ::-1, :]    # Σ over t_i >= t
    n_y = at_risk_rows[:, first, :]                                       # (draws, m, k)
    d_y = np.add.reduceat(onehot * e[None, :, None], first, axis=1)
    # last time of a row released in each group: a curve that stops after it is "not
    # reached" there, as a KM curve ends at its group's last follow-up
    last_released = np.where(onehot > 0, t[None, :, None], -np.inf).max(axis=1)
    n_hat, d_hat, defined, hazard, survival = _inverted_curves(n_y, d_y, inverse)
    cumulative = np.where(defined, np.cumsum(hazard, axis=-1), np.nan)
    return DebiasedCurves(timeline, n_hat, d_hat, survival, cumulative, last_released)


def _inverted_curves(n_y, d_y, inverse):
    """Counts (draws, times, k) of the released labels -> ``(n_hat, d_hat, defined,
    hazard, survival)``, each (draws, k, times): the public matrix inverted, the curves."""
    n_hat = (n_y @ inverse).transpose(0, 2, 1)
    d_hat = (d_y @ inverse).transpose(0, 2, 1)
    # defined while the inverted at-risk count is positive; once it is not, the
    # group has (estimated) nobody left and the rest of its curve is undefined
    defined = np.minimum.accumulate(n_hat > 0.0, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = d_hat / n_hat
        # below one estimated person at risk the ratio is unstable: clamp it to a
        # probability; above, keep the (nearly unbiased) estimate as it is
        ratio = np.where(n_hat >= 1.0, ratio, np.clip(ratio, 0.0, 1.0))
        hazard = np.where(defined, ratio, 0.0)
    survival = np.where(defined, np.cumprod(1.0 - hazard, axis=-1), np.nan)
    return n_hat, d_hat, defined, hazard, survival


def bootstrap_medians(durations, events, released_codes, clusters, *, p: float, k: int,
                      rng: np.random.Generator, resamples: int = 200) -> np.ndarray:
    """Debiased medians of bootstrap resamples of persons and their censoring times.

    Resamples persons (``clusters``, with all their rows and their one
    released label) with replacement and recomputes the debiased medians
    (``inf`` = not reached; ``nan`` = right-censored at the stop time given
    in the second array, :meth:`DebiasedCurves.median_censored_at`); their
    quantiles give an interval that includes the sampling and the
    privatisation noise.

    A resample is its persons' multiplicities (the same generator calls as
    drawing each resample's persons in turn): the rows are weighted by them
    on the sorted data once, for all resamples together, instead of each
    resample's rows being gathered, sorted and inverted on their own (200
    small computations per release, most of its CPU). The counts are
    integers either way, so the curves agree at every time of a resample;
    a time that only persons outside the resample have adds no event, and
    a curve stops at the first time *of the resample* where it is undefined,
    as :func:`debiased_curves` of the resample's rows does.

    Returns
    -------
    medians, censored_at : ndarray, shape ``(resamples, k)``
    """
    t = np.asarray(durations, dtype=float)
    e = np.asarray(events)
    codes = np.asarray(released_codes)
    _, person = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    persons = int(person.max()) + 1
    picks = np.stack([rng.integers(0, persons, size=persons) for _ in range(resamples)])
    offsets = (np.arange(resamples) * persons)[:, None]
    multiplicity = np.bincount((picks + offsets).ravel(),
                               minlength=resamples * persons).reshape(resamples, persons)
    t, e = check_survival_data(t, e)
    order = np.argsort(t, kind="stable")
    t, e, codes, person = t[order], e[order].astype(float), codes[order], person[order]
    timeline, first = np.unique(t, return_index=True)
    onehot = (codes[:, None] == np.arange(k)).astype(float)             # (n, k)
    inverse = np.linalg.inv(transition_matrix(p, k))
    medians = np.empty((resamples, k))
    censored_at = np.empty((resamples, k))
    # resamples in blocks: a block's arrays are (block, rows, k) floats, ~32 MB
    block = max(1, int(4e6 // max(t.size * k, 1)))
    for lo in range(0, resamples, block):
        weight = multiplicity[lo:lo + block][:, person]                  # (b, n)
        rows = weight[:, :, None] * onehot[None, :, :]                   # (b, n, k)
        d_y = np.add.reduceat(rows * e[None, :, None], first, axis=1)    # (b, m, k)
        per_time = np.add.reduceat(rows, first, axis=1)
        n_y = np.cumsum(per_time[:, ::-1, :], axis=1)[:, ::-1, :]        # Σ over t_i >= t
        present = np.add.reduceat(weight, first, axis=1) > 0             # (b, m)
        last_released = np.where(rows > 0, t[None, :, None], -np.inf).max(axis=1)
        # a time with no person of the resample has no event: its factor is exactly 1
        _, _, defined, _, survival = _inverted_curves(n_y, d_y, inverse)
        below = survival <= 0.5
        reached = below.any(axis=-1)
        median = np.where(reached, timeline[np.argmax(below, axis=-1)], np.inf)
        # the stop: the first time of the resample where the curve is undefined
        undefined = ~defined & present[:, None, :]
        stops = undefined.any(axis=-1)
        at = timeline[np.argmax(undefined, axis=-1)]
        censored = ~reached & stops & (at < last_released)
        medians[lo:lo + block] = np.where(censored, np.nan, median)
        censored_at[lo:lo + block] = np.where(censored, at, np.nan)
    return medians, censored_at


class DebiasedRRR:
    """The debiased-RRR release as a mechanism object: RRR plus public post-processing.

    It privatises exactly as its :class:`RevisedRandomizedResponse` (same
    keep probability, same draws when given the same stream), so its privacy
    is RRR's: stated ε, true ε = RRR's; only its record's name and note differ.
    """

    def __init__(self, rrr: RevisedRandomizedResponse):
        self.rrr = rrr

    @property
    def epsilon(self) -> float:
        return self.rrr.epsilon

    @property
    def calibration(self) -> str:
        return self.rrr.calibration

    def privacy_record(self, *, privacy_unit: str = "record") -> PrivacyRecord:
        base = self.rrr.privacy_record(privacy_unit=privacy_unit)
        note = (f"{base.note}; curves debiased by inverting the public transition matrix on "
                "the released per-time counts (post-processing, no extra privacy cost)")
        return replace(base, mechanism="rrr_debiased", note=note)
