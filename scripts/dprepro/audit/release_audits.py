r"""Audits of the survival mechanisms: the indicator mechanisms (Laplace and
registered others), Revised Randomized Response, LNTE as published and grid LNTE.

Every audit runs the study's own mechanism object and prints, as the row's true ε, the
one that object's privacy record states (the record the study's tables are built from).

Each returns an :class:`~dprepro.audit.bound.AuditResult`; the bound is
:func:`~dprepro.audit.bound.epsilon_lower_bound` (see :mod:`dprepro.audit.suite`).
"""

from __future__ import annotations

import math

import numpy as np

from dprepro.audit.bound import (
    DEFAULT_LEVEL,
    AuditResult,
    _check_draws,
    _check_level,
    _check_positive,
    _check_rng,
    _laplace_llr,
    _threshold_audit,
    epsilon_lower_bound,
)
from dprepro.mechanisms.grid_lnte import GridLNTE
from dprepro.mechanisms.lnte import LNTE
from dprepro.mechanisms.registry import IndicatorMechanism, get_mechanism
from dprepro.mechanisms.rrr import RevisedRandomizedResponse, rrr_keep_probability

# --------------------------------------------------------------------------- Laplace indicators


def audit_indicator_mechanism(
    mechanism, *, alpha, draws, rng, run_alpha=None, level: float = DEFAULT_LEVEL
) -> AuditResult:
    r"""Audit a registered mechanism on failure indicators (claimed α-LDP).

    Neighbours: one indicator, δ = 1 vs δ' = 0 (the whole local input); the
    mechanism is run through its registry entry
    (:class:`dprepro.mechanisms.registry.IndicatorMechanism`), exactly as the
    simulation runs it. Events are thresholds ``{Z >= τ}`` / ``{Z < τ}`` on
    the released value (chosen on half the draws): for the Laplace mechanism
    :math:`Z` has a monotone likelihood ratio, for randomized response the
    output has two values, so these events include the most powerful ones.

    Parameters
    ----------
    mechanism : str or IndicatorMechanism
        Registry name (``"laplace"``) or entry.
    alpha : float
        Claimed level.
    draws : int
        Runs per neighbouring input.
    rng : numpy.random.Generator
    run_alpha : float, optional
        Level the mechanism is actually run at (default ``alpha``); a larger
        value audits a mis-calibrated copy whose claim stays ``alpha``.
    level : float, default 1e-9
    """
    entry = mechanism if isinstance(mechanism, IndicatorMechanism) else get_mechanism(mechanism)
    alpha = _check_positive(alpha, "alpha")
    rng = _check_rng(rng)
    draws = _check_draws(draws)
    level = _check_level(level)
    run_alpha = alpha if run_alpha is None else _check_positive(run_alpha, "run_alpha")
    z1 = entry.privatize(np.ones(draws, dtype=np.int8), alpha=run_alpha, rng=rng)
    z0 = entry.privatize(np.zeros(draws, dtype=np.int8), alpha=run_alpha, rng=rng)
    bound, desc = _threshold_audit(z1, z0, level=level)
    return AuditResult(
        mechanism=entry.release_name,
        variant=entry.variant(alpha, run_alpha),
        claimed_epsilon=alpha,
        empirical_epsilon_lower_bound=bound,
        level=level,
        draws=draws,
        statistic=f"s = Z; {desc}",
        # the study's record of a release at the level run (dprepro.mechanisms.registry)
        true_epsilon=entry.privacy_record(run_alpha).true_epsilon,
        note=entry.audit_note,
    )


def audit_laplace_indicators(
    *, alpha, draws, rng, scale=None, level: float = DEFAULT_LEVEL
) -> AuditResult:
    r"""Audit :func:`dprepro.mechanisms.indicator_draws.laplace_indicators` (claimed α-LDP).

    :func:`audit_indicator_mechanism` of the registered ``"laplace"``
    mechanism; the true ε is :math:`1/\text{scale}`, attained by every tail
    beyond the inputs.

    Parameters
    ----------
    alpha : float
        Claimed level.
    draws : int
        Runs per neighbouring input.
    rng : numpy.random.Generator
    scale : float, optional
        Noise scale actually used (default ``1/alpha``, the library's). A
        different value audits a mis-scaled copy: the library is called with
        ``alpha = 1/scale`` while the claim stays ``alpha``.
    level : float, default 1e-9
    """
    alpha = _check_positive(alpha, "alpha")
    # the library is called at alpha = 1/scale (also when scale = 1/alpha): the
    # stream of draws of the first version of this audit, reproduced bit for bit
    scale = 1.0 / alpha if scale is None else _check_positive(scale, "scale")
    run_alpha = 1.0 / scale
    return audit_indicator_mechanism("laplace", alpha=alpha, draws=draws, rng=rng,
                                     run_alpha=run_alpha, level=level)


# --------------------------------------------------------------------------- RRR


def audit_rrr(
    *,
    epsilon,
    k,
    calibration: str = "paper",
    draws,
    rng,
    keep_probability=None,
    level: float = DEFAULT_LEVEL,
) -> AuditResult:
    r"""Audit revised randomized response (claimed ε-LDP for the label).

    Neighbours: true label :math:`a` vs :math:`b \ne a`; event: the output
    equals :math:`a`, fixed in advance (no selection), for which

    .. math:: \frac{P(Y = a \mid a)}{P(Y = a \mid b)} = \frac{p + (1-p)/k}{(1-p)/k}
              = e^{\varepsilon_\text{true}},

    the largest ratio of the mechanism. Runs
    :meth:`RevisedRandomizedResponse.privatize_codes`.

    Parameters
    ----------
    epsilon : float
        Claimed ε.
    k : int
        Number of labels.
    calibration : {"paper", "exact"}
        How ``p`` is computed from ε (:func:`rrr_keep_probability`).
    draws : int
        Runs per neighbouring input.
    rng : numpy.random.Generator
    keep_probability : float, optional
        Use this ``p`` instead (a mis-calibrated copy; ``calibration`` is then
        ignored). Implemented with the library's sampler at the ε whose exact
        calibration gives ``p``.
    level : float, default 1e-9
    """
    rng = _check_rng(rng)
    draws = _check_draws(draws, 1)
    level = _check_level(level)
    if keep_probability is None:
        p = rrr_keep_probability(epsilon, k, calibration=calibration)
        mech = RevisedRandomizedResponse(
            epsilon=epsilon, categories=range(k), calibration=calibration
        )
        variant = f"calibration={calibration}, k={k}"
    else:
        p = float(keep_probability)
        if not 0.0 < p < 1.0:
            raise ValueError(f"keep_probability must be in (0, 1), got {keep_probability!r}")
        # exact calibration p = (e^x - 1)/(e^x + k - 1)  <=>  e^x = (1 + p (k - 1)) / (1 - p)
        eps_exact = math.log((1.0 + p * (k - 1)) / (1.0 - p))
        mech = RevisedRandomizedResponse(
            epsilon=eps_exact, categories=range(k), calibration="exact"
        )
        variant = f"keep_probability={p:.6g}, k={k}"
    claimed = float(epsilon)
    y_a = mech.privatize_codes(np.array([0]), rng=rng, draws=draws)[:, 0]
    y_b = mech.privatize_codes(np.array([1]), rng=rng, draws=draws)[:, 0]
    k_a, k_b = int(np.count_nonzero(y_a == 0)), int(np.count_nonzero(y_b == 0))
    bound = epsilon_lower_bound([k_a], [k_b], draws, level=level, both_directions=False)
    # the study's record of a release by this mechanism object
    true = mech.privacy_record().true_epsilon
    note = f"k = {k}, p = {mech.p:.6g}; neighbours: label 0 vs label 1"
    if keep_probability is None and calibration == "paper":
        note += f"; true epsilon = epsilon + ln(k - 1) = {claimed + math.log(k - 1):.4f}"
    return AuditResult(
        mechanism="rrr",
        variant=variant,
        claimed_epsilon=claimed,
        empirical_epsilon_lower_bound=bound,
        level=level,
        draws=draws,
        statistic="event: output == true label of D (fixed in advance)",
        true_epsilon=true,
        note=note,
    )


# --------------------------------------------------------------------------- LNTE


def lnte_audit_cohort(
    n_times: int = 6, events_per_time: int = 2, n_censored_last: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """A small cohort for auditing LNTE: ``n_times`` distinct times 1..m, each with
    ``events_per_time`` (>= 2) events, plus ``n_censored_last`` censorings at the last time.

    Ties at every time let one patient move between times without changing the
    released time grid; the censorings make the risk set large, so that the
    survival curve reveals the noisy event counts almost exactly.
    """
    if n_times < 3 or events_per_time < 2 or n_censored_last < 0:
        raise ValueError("need n_times >= 3, events_per_time >= 2, n_censored_last >= 0")
    times = np.arange(1, n_times + 1, dtype=float)
    durations = np.concatenate(
        [np.repeat(times, events_per_time), np.full(n_censored_last, times[-1])]
    )
    events = np.concatenate(
        [np.ones(n_times * events_per_time, int), np.zeros(n_censored_last, int)]
    )
    return durations, events


def _lnte_neighbour(durations, events, *, first: int):
    """Move one event patient from the earliest tied time with index >= ``first`` to the last time.

    Returns ``(durations', events', source_time, target_time)``; the grid of distinct
    times is unchanged.
    """
    t = np.asarray(durations, dtype=float)
    e = np.asarray(events).astype(int)
    times, counts = np.unique(t, return_counts=True)
    if times.size < first + 2:
        raise ValueError(f"the audit needs at least {first + 2} distinct times, got {times.size}")
    for j in range(first, times.size - 1):
        idx = np.flatnonzero((t == times[j]) & (e == 1))
        if counts[j] >= 2 and idx.size:
            t2 = t.copy()
            t2[idx[0]] = times[-1]
            return t2, e, float(times[j]), float(times[-1])
    raise ValueError(
        f"no time (index >= {first}, before the last) has >= 2 patients and an event: every "
        "neighbour changes the released time grid, which is then not private at any epsilon"
    )


def audit_lnte(
    *,
    epsilon,
    durations,
    events,
    draws,
    rng,
    release: str = "counts",
    level: float = DEFAULT_LEVEL,
) -> AuditResult:
    r"""Audit LNTE as published (:func:`dprepro.mechanisms.lnte.lnte_survival`), claimed ε-DP.

    Neighbours (bounded, same size): one patient with an event moves from an
    early time to the last time; both times are tied in the data, so the time
    grid (released with the curve) is the same for :math:`D` and :math:`D'`.

    ``release="counts"``
        The noisy counts :math:`(\tilde r_j, \tilde d_j)_{j<m}` that
        ``lnte_survival`` returns (the per-time-point releases). The patient
        moves from :math:`t_0`, so :math:`r_1..r_{m-1}` change by 1 and
        :math:`d_0, d_{m-1}` by 1: an L1 distance of :math:`m + 1`. Each count
        carries Laplace(1/ε), so the privacy loss of this pair is exactly
        :math:`(m+1)\varepsilon` (the composed bound, and the worst case for a
        fixed grid). Statistic: the log likelihood ratio
        :math:`\varepsilon\sum_j(|x_j - c'_j| - |x_j - c_j|)`.
    ``release="curve"``
        The survival curve :math:`S'` only. It is a function of
        :math:`(\tilde r_0 - \tilde d_0, \tilde d_1, \dots)`, whose L1
        sensitivity is 2, so its ε is at most :math:`2\varepsilon` (fixed grid).
        The patient moves from :math:`t_j, j \ge 1`, so two event counts change.
        Statistic: the noisy event counts recovered from the curve,
        :math:`\hat d_j = u_0 (S'_{j-1} - S'_j)` with
        :math:`u_0 = r_0 - d_0` (exact up to the small noise in
        :math:`\tilde r_0 - \tilde d_0` when the risk set is large), fed to the
        Laplace log likelihood ratio.

    Parameters
    ----------
    epsilon : float
        Claimed ε (the Laplace scale is 1/ε).
    durations, events : array_like
        One group's data :math:`D` (needs ties; see :func:`lnte_audit_cohort`).
    draws : int
        Runs per neighbouring input.
    rng : numpy.random.Generator
    release : {"counts", "curve"}
    level : float, default 1e-9
    """
    eps = _check_positive(epsilon, "epsilon")
    rng = _check_rng(rng)
    draws = _check_draws(draws)
    level = _check_level(level)
    if release not in ("counts", "curve"):
        raise ValueError(f"release must be 'counts' or 'curve', got {release!r}")
    t, e = np.asarray(durations, dtype=float), np.asarray(events)
    t2, e2, src, dst = _lnte_neighbour(t, e, first=0 if release == "counts" else 1)
    # the study's mechanism object: it runs the release and states its true epsilon
    mechanism = LNTE(epsilon=eps)
    res_d = mechanism.release(t, e, rng=rng, draws=draws)
    res_dp = mechanism.release(t2, e2, rng=rng, draws=draws)
    if not np.array_equal(res_d.timeline, res_dp.timeline):  # pragma: no cover - by construction
        raise RuntimeError("neighbour construction changed the time grid")
    m = res_d.timeline.size
    if release == "counts":
        c = np.concatenate([res_d.true_at_risk, res_d.true_events])
        c_prime = np.concatenate([res_dp.true_at_risk, res_dp.true_events])
        l1 = float(np.abs(c - c_prime).sum())

        def released(res):
            return np.concatenate([res.noisy_at_risk, res.noisy_events], axis=1)

        s_d = eps * _laplace_llr(released(res_d), c, c_prime)
        s_dp = eps * _laplace_llr(released(res_dp), c, c_prime)
        stat = "Laplace log likelihood ratio of the noisy counts (r~, d~)"
        note = (
            f"m = {m} time points; neighbours: one event moved from t = {src:g} to t = {dst:g} "
            f"(L1 distance {l1:g} of the counts); on this fixed grid the pair's privacy loss "
            f"is (m + 1) * epsilon = {(m + 1) * eps:g}; the grid of observed times is itself "
            "released, so no finite epsilon holds (true_epsilon, as the study states)"
        )
    else:
        u0 = res_d.true_at_risk[0] - res_d.true_events[0]

        def recovered(res):
            s = np.concatenate([np.ones((res.survival.shape[0], 1)), res.survival], axis=1)
            return u0 * (s[:, 1:-1] - s[:, 2:])  # d^_j for j = 1..m-1

        c, c_prime = res_d.true_events[1:], res_dp.true_events[1:]
        s_d = eps * _laplace_llr(recovered(res_d), c, c_prime)
        s_dp = eps * _laplace_llr(recovered(res_dp), c, c_prime)
        stat = (
            "Laplace log likelihood ratio of d^_j = u0 (S'_{j-1} - S'_j) recovered from the curve"
        )
        note = (
            f"m = {m} time points, u0 = r_0 - d_0 = {u0:g}; neighbours: one event moved from "
            f"t = {src:g} to t = {dst:g}; the curve is a function of (r~_0 - d~_0, d~_1..), "
            f"L1 sensitivity 2, so its epsilon is <= 2 * epsilon = {2 * eps:g} for a fixed, "
            "public time grid; the grid of observed times is itself released, so no finite "
            "epsilon holds (true_epsilon, as the study states)"
        )
    bound, desc = _threshold_audit(s_d, s_dp, level=level)
    return AuditResult(
        mechanism="lnte",
        variant=f"as published, release={release}",
        claimed_epsilon=eps,
        empirical_epsilon_lower_bound=bound,
        level=level,
        draws=draws,
        statistic=f"s = {stat}; {desc}",
        true_epsilon=mechanism.privacy_record().true_epsilon,
        note=note,
    )


# --------------------------------------------------------------------------- grid LNTE


def grid_lnte_audit_cohort(*, horizon: float, bins: int, n_censored: int = 50,
                           n_events: int = 100, n_beyond: int = 1000
                           ) -> tuple[np.ndarray, np.ndarray]:
    """The background cohort :math:`D'` of :func:`audit_grid_lnte` (one group).

    ``n_censored`` censorings in the first of ``bins`` equal bins of ``[0, horizon]``,
    ``n_events`` events in the second, ``n_beyond`` followed past the horizon. The many
    exits after the first bin keep the fitted cumulative events and the fitted numbers
    at risk from pooling the first bin with later ones, and the large risk set makes the
    curve's first step reveal the first bin's noisy event count almost exactly.
    """
    width = float(horizon) / bins
    durations = np.concatenate([np.full(n_censored, 0.5 * width), np.full(n_events, 1.5 * width),
                                np.full(n_beyond, 2.0 * horizon)])
    events = np.concatenate([np.zeros(n_censored, int), np.ones(n_events, int),
                             np.zeros(n_beyond, int)])
    return durations, events


def audit_grid_lnte(*, epsilon, draws, rng, run_epsilon=None, bins: int = 2,
                    horizon: float = 2.0, level: float = DEFAULT_LEVEL) -> AuditResult:
    r"""Audit grid LNTE (:class:`dprepro.mechanisms.grid_lnte.GridLNTE`) on a configured horizon.

    The study's mechanism object runs the release (its curve) and states the true ε
    (:meth:`GridLNTE.privacy_record`: ε under add/remove-one-person neighbours when the
    horizon is public). Neighbours, add/remove one person: :math:`D'` is
    :func:`grid_lnte_audit_cohort`, :math:`D` adds one event in the first bin, so the
    released grid (``bins`` equal bins of the configured ``horizon``) is the same and
    only the first bin's event count differs, by 1, under Laplace noise of scale
    ``rows_per_person / ε``. Statistic: :math:`1 - \hat S(t_1)`, the curve's first drop,
    which is increasing in that noisy count (the hazard :math:`\hat d_1 / (\hat r_1 -
    \hat c_1/2)` on a risk set of ~1,150), so thresholds on it are close to the
    likelihood-ratio events of the Laplace count, whose largest ratio is
    :math:`e^\varepsilon`.

    Parameters
    ----------
    epsilon : float
        Claimed ε.
    draws : int
        Runs per neighbouring input.
    rng : numpy.random.Generator
    run_epsilon : float, optional
        The ε the mechanism is built with (default ``epsilon``); a larger value is a
        mis-scaled copy (noise scale ``1/run_epsilon``) whose claim stays ``epsilon``.
    bins : int, default 2
        The study's grids have more bins; every cell gets the same noise, and two keep
        the isotonic fits of 10⁵ draws cheap.
    horizon : float, default 2
        The configured (public) horizon.
    level : float, default 1e-9
    """
    eps = _check_positive(epsilon, "epsilon")
    run = eps if run_epsilon is None else _check_positive(run_epsilon, "run_epsilon")
    rng = _check_rng(rng)
    draws = _check_draws(draws)
    level = _check_level(level)
    mechanism = GridLNTE(epsilon=run, bins=bins, horizon=_check_positive(horizon, "horizon"))
    t_dp, e_dp = grid_lnte_audit_cohort(horizon=mechanism.horizon, bins=mechanism.bins)
    t_d, e_d = np.r_[t_dp, 0.5 * mechanism.horizon / mechanism.bins], np.r_[e_dp, 1]
    edges_d, s_d = mechanism.release(t_d, e_d, horizon=mechanism.horizon, rng=rng, draws=draws)
    edges_dp, s_dp = mechanism.release(t_dp, e_dp, horizon=mechanism.horizon, rng=rng,
                                       draws=draws)
    if not np.array_equal(edges_d, edges_dp):  # pragma: no cover - a public grid
        raise RuntimeError("the neighbours' grids differ: the horizon is not public")
    bound, desc = _threshold_audit(1.0 - s_d[:, 0], 1.0 - s_dp[:, 0], level=level)
    variant = f"public horizon {mechanism.horizon:g}, {mechanism.bins} bins"
    if run != eps:
        variant += f", run at epsilon {run:g}"
    return AuditResult(
        mechanism="lnte_grid",
        variant=variant,
        claimed_epsilon=eps,
        empirical_epsilon_lower_bound=bound,
        level=level,
        draws=draws,
        statistic=f"s = 1 - S(t_1), the curve's first drop; {desc}",
        # the study's record of a release by this mechanism object
        true_epsilon=mechanism.privacy_record().true_epsilon,
        note=(f"{mechanism.calibration}; Laplace scale {mechanism.scale:g}; neighbours "
              f"(add/remove one person): D' = {t_dp.size} patients, D adds one event in the "
              "first bin; the grid is the configured horizon's, the same for both"),
    )
