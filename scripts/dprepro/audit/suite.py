r"""Empirical privacy audits of the mechanisms in dprepro.

In the style of DP auditing (Jagielski, Ullman & Oprea 2020; Nasr et al.
2021; Tramèr et al. 2022): pick two neighbouring inputs :math:`D, D'`, run
the mechanism many times on each, pick an output event :math:`E` and turn the
counts into a *lower confidence bound* on

.. math:: \varepsilon \;\ge\; \log\frac{P[M(D) \in E]}{P[M(D') \in E]},

which every :math:`\varepsilon`-DP mechanism satisfies for every event. A lower
bound above the claimed :math:`\varepsilon` is a proof (at the stated
confidence) that the claim is false; a bound below it proves nothing (the
audit may have picked weak neighbours or a weak event), so a "consistent"
verdict is evidence, not a certificate.

Validity
--------
Each probability gets a one-sided Clopper–Pearson bound, and the bounds are
combined by a union (Bonferroni) bound, so with probability at least
``1 - level`` every reported lower bound is a true lower bound on the
mechanism's :math:`\varepsilon`, whatever the event. Events that are chosen
by looking at the data (a threshold on a statistic) are chosen on the first
half of the draws and evaluated on the second half, so the evaluation tests a
single, fixed event. The default ``level = 1e-9`` makes a false "violation"
practically impossible, so the tests that use these audits do not flake.

Statistics
----------
When both neighbouring inputs are known, the most powerful events are the
level sets of the likelihood ratio :math:`p_D(o)/p_{D'}(o)` (Neyman–Pearson).
The audits use it wherever it has a closed form: the released value itself for
the Laplace indicator mechanism (monotone likelihood ratio), the reported
label for RRR, :math:`\sum_j (|x_j - c'_j| - |x_j - c_j|)` for Laplace noise
on a vector of counts :math:`c` vs :math:`c'`, the exact change-of-variables
density of the objective-perturbation minimiser, and the support of the
Wishart-perturbed :math:`X^\top X`; grid LNTE's first curve step (increasing in
the noisy count that differs), and the selected feature of DP feature selection
(two candidates, an event fixed in advance).

The bound lives in :mod:`dprepro.audit.bound`, the audits of the survival
mechanisms in :mod:`dprepro.audit.release_audits`, those of the DP learners in
:mod:`dprepro.audit.learner_audits` and that of DP feature selection in
:mod:`dprepro.audit.selection_audits`; this module plans and runs them all.

Every audit takes an explicit :class:`numpy.random.Generator` and draws all
of its randomness from it, through the library's own mechanism functions, so
what is audited is the code the workflow runs.

True ε
------
A row's ``true_epsilon`` is the one the study prints for the same release, from the
same function: the privacy record of the study's mechanism object (indicator
mechanisms, RRR, LNTE as published, grid LNTE) or the rule of
:mod:`dprepro.learners.accounting` that the ``repr_transfer`` records are decided by
(objective perturbation, SSP's statistics, feature selection). The audit computes no ε
of its own; what it knows beyond the study (e.g. the privacy loss of LNTE's audited pair
on a fixed grid) is in the note. A control is the study's mechanism run at another
parameter, and its true ε the same function's at that parameter (NaN for objective
perturbation with a rescaled Gamma, which the study never runs).

References
----------
M. Jagielski, J. Ullman, A. Oprea (2020). Auditing differentially private
machine learning: how private is private SGD? NeurIPS 2020.
M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini (2021). Adversary
instantiation: lower bounds for differentially private machine learning.
IEEE S&P 2021.
F. Tramèr, A. Terzis, T. Steinke, S. Song, M. Jagielski, N. Carlini (2022).
Debugging differential privacy: a case study for privacy auditing. arXiv 2202.12219.
C. J. Clopper, E. S. Pearson (1934). The use of confidence or fiducial limits
illustrated in the case of the binomial. Biometrika 26, 404–413.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from dprepro.audit.bound import (
    AUDIT_COLUMNS,
    DEFAULT_LEVEL,
    _check_positive,
)
from dprepro.audit.learner_audits import audit_objective_perturbation, audit_ssp
from dprepro.audit.release_audits import (
    audit_grid_lnte,
    audit_indicator_mechanism,
    audit_laplace_indicators,
    audit_lnte,
    audit_rrr,
    lnte_audit_cohort,
)
from dprepro.audit.selection_audits import audit_feature_selection
from dprepro.mechanisms.registry import MECHANISMS
from dprepro.mechanisms.rrr import rrr_keep_probability
from dprepro.runtime.privacy_record import budget_split

__all__ = ["audit_row_key", "audit_row_seeds", "control_run_alpha", "indicator_audit_plan",
           "rrr_run_audit_plan", "run_all_audits"]

# --------------------------------------------------------------------------- all audits


#: Claimed α of the audits of the indicator mechanisms (the paper's Figure 1),
#: and the control: claimed 0.3, run where the mechanism is truly 0.6-LDP (twice the claim).
INDICATOR_ALPHAS = (0.2, 0.3, 0.4)
INDICATOR_CONTROL = (0.3, 0.6)


def control_run_alpha(mechanism, claimed: float, true_level: float) -> float:
    """The α at which ``mechanism`` is truly ``true_level``-LDP (its ``true_epsilon`` inverted).

    A control row claims ``claimed`` but runs the mechanism at this α, so a working audit
    must flag it whatever the mechanism's calibration: for a mechanism that is exactly
    α-LDP this is ``true_level`` itself; for one whose true ε is, say, α/2 it is twice
    that. ``true_epsilon`` must increase with α (any sensible calibration does).
    """
    from scipy.optimize import brentq

    if float(mechanism.true_epsilon(true_level)) == true_level:
        return float(true_level)
    def gap(alpha):
        return float(mechanism.true_epsilon(alpha)) - true_level

    low, high = claimed / 1024, true_level
    while gap(high) < 0:
        high *= 2
        if high > 1e6:
            raise ValueError(f"mechanism {mechanism.name!r}: no α reaches true ε {true_level}")
    return float(brentq(gap, low, high, xtol=1e-12))


def indicator_audit_plan(mechanisms, draws: int):
    """Audits of registered indicator mechanisms other than Laplace, in registry order.

    Each gets a published row per :data:`INDICATOR_ALPHAS` and a control row that
    claims 0.3 but runs where the mechanism is truly 0.6-LDP
    (:data:`INDICATOR_CONTROL`, :func:`control_run_alpha`), which a working audit must
    flag. (Laplace's rows keep their historic place at the top of the table, with the
    same control.)
    """
    plan = []
    for name in mechanisms:
        if name == "laplace":
            continue
        for alpha in INDICATOR_ALPHAS:
            plan.append(("published", audit_indicator_mechanism,
                         {"mechanism": name, "alpha": alpha, "draws": draws}))
        claimed, true_level = INDICATOR_CONTROL
        run = control_run_alpha(MECHANISMS[name], claimed, true_level)
        plan.append(("control", audit_indicator_mechanism,
                     {"mechanism": name, "alpha": claimed, "run_alpha": run, "draws": draws}))
    return plan


def _rrr_setting(setting) -> tuple[int, float, str]:
    """``(k, ε, calibration)`` of one RRR release setting, checked."""
    try:
        k, epsilon, calibration = setting
    except (TypeError, ValueError):
        raise ValueError(f"an RRR setting is (k, epsilon, calibration), got {setting!r}") from None
    if isinstance(k, bool) or int(k) != k or int(k) < 2:
        raise ValueError(f"RRR setting {setting!r}: k must be an integer >= 2")
    if not np.isfinite(float(epsilon)) or float(epsilon) <= 0:
        raise ValueError(f"RRR setting {setting!r}: epsilon must be finite and > 0")
    if calibration not in ("paper", "exact"):
        raise ValueError(f"RRR setting {setting!r}: calibration must be 'paper' or 'exact'")
    return int(k), float(epsilon), str(calibration)


def rrr_run_audit_plan(settings, draws: int, planned=()) -> list:
    """Audits of the RRR releases a run makes that the shipped plan does not cover.

    ``settings`` are the run's ``(k, ε, calibration)`` (one per cohort's label count,
    configured ε and calibration: :func:`dprepro.studies.rrr_survival.plan.privacy_settings`),
    ``planned`` those already audited. Each new one gets a row, ``published`` at the
    paper's calibration and ``corrected`` at the exact one, in sorted order after every
    other row (so the other rows' streams stay as they were), and with it a privacy
    claim for every k and ε the run uses (a user's three-arm cohort, an ε the papers do
    not use).
    """
    done = {_rrr_setting(s) for s in planned}
    plan = []
    for k, epsilon, calibration in sorted({_rrr_setting(s) for s in settings} - done):
        role = "published" if calibration == "paper" else "corrected"
        plan.append((role, audit_rrr, {"epsilon": epsilon, "k": k, "calibration": calibration,
                                       "draws": draws}))
    return plan


def _audit_plan(draws_scale: float, indicator_mechanisms=None,
                learner_draws_scale: float | None = None, rrr_settings=()):
    """The audits of :func:`run_all_audits`: (role, function, kwargs) in table order, and
    how many of them are the rows every run has (:func:`audit_row_seeds`).

    ``indicator_mechanisms``: names of the registered indicator mechanisms to
    audit besides Laplace (default: every registered one); their rows come
    last, so adding a mechanism leaves the streams of the other rows as they
    were. ``learner_draws_scale`` scales the learners' audits (objective
    perturbation, SSP) instead of ``draws_scale`` when given.
    """

    def n(base: int, scale: float = draws_scale) -> int:
        return max(1000, int(round(base * scale)))

    learner_scale = draws_scale if learner_draws_scale is None else learner_draws_scale

    def n_learner(base: int) -> int:
        return n(base, learner_scale)

    plan = _fixed_plan(n, n_learner)
    fixed = len(plan)
    names = list(MECHANISMS) if indicator_mechanisms is None else list(indicator_mechanisms)
    plan += indicator_audit_plan(names, n(10**6))
    shipped = [(kw["k"], kw["epsilon"], kw["calibration"]) for _, fn, kw in plan
               if fn is audit_rrr and "keep_probability" not in kw]
    plan += rrr_run_audit_plan(rrr_settings, n(10**6), planned=shipped)
    return plan, fixed


def _fixed_plan(n, n_learner):
    """The rows every run audits, whatever its configuration, in table order (rows added
    later come after the earlier ones, so the earlier rows keep their positional streams)."""
    return _release_plan(n) + _learner_plan(n_learner) + _corrected_pipeline_plan(n, n_learner)


#: Spawn-key prefix of the configuration-dependent rows' streams (positional children of
#: ``SeedSequence(seed)`` have one-element keys, so these never coincide with them).
_KEYED_STREAM = 0x5EED


def audit_row_key(role: str, fn, kwargs: dict) -> str:
    """A stable name of one audit row: its role, audit and settings (draws aside), e.g.
    ``"published/audit_rrr/calibration=paper,epsilon=0.5,k=3"``."""
    settings = ",".join(f"{key}={kwargs[key]!r}" for key in sorted(kwargs) if key != "draws")
    return f"{role}/{fn.__name__}/{settings}"


def audit_row_seeds(plan, rng_seed: int, *, fixed: int) -> list:
    """One ``SeedSequence`` per row of ``plan``.

    The first ``fixed`` rows (those every run audits) take positional children of
    ``SeedSequence(rng_seed)``; each later row (an indicator mechanism, a run's own RRR
    setting) a stream keyed by :func:`audit_row_key`, so which other mechanisms or
    settings a run has never moves a row's draws.
    """
    if not 0 <= fixed <= len(plan):
        raise ValueError(f"fixed must be between 0 and {len(plan)}, got {fixed}")
    seeds = np.random.SeedSequence(rng_seed).spawn(fixed)
    for role, fn, kwargs in plan[fixed:]:
        digest = hashlib.sha256(audit_row_key(role, fn, kwargs).encode()).digest()
        key = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
        seeds.append(np.random.SeedSequence(rng_seed, spawn_key=(_KEYED_STREAM, *key)))
    return seeds


def _release_plan(n):
    """Audits of the survival studies' releases, with controls: Laplace failure indicators
    (the paper's α), RRR as published (k = 5 and 4) and exactly calibrated (k = 5), and LNTE
    as published (its counts and its curve) at each ε of the study."""
    draws = n(10**6)
    plan = [("published", audit_laplace_indicators, {"alpha": alpha, "draws": draws})
            for alpha in (0.2, 0.3, 0.4)]
    plan.append(("control", audit_laplace_indicators,
                 {"alpha": 0.3, "scale": 0.5 / 0.3, "draws": draws}))
    plan += [("published", audit_rrr,
              {"epsilon": eps, "k": k, "calibration": "paper", "draws": draws})
             for k in (5, 4) for eps in (1.0, 2.0, 3.0)]
    plan += [("corrected", audit_rrr,
              {"epsilon": eps, "k": 5, "calibration": "exact", "draws": draws})
             for eps in (1.0, 2.0, 3.0)]
    plan.append(("control", audit_rrr, {
        "epsilon": 1.0, "k": 5, "calibration": "exact",
        "keep_probability": rrr_keep_probability(2.0, 5, calibration="exact"),
        "draws": draws}))
    durations, events = lnte_audit_cohort()
    plan += [("published", audit_lnte,
              {"epsilon": eps, "durations": durations, "events": events, "release": release,
               "draws": n(4 * 10**5)})
             for release in ("counts", "curve") for eps in (1.0, 2.0, 3.0)]
    return plan


def _learner_plan(n_learner):
    """Audits of the published DP learners, with controls: objective perturbation as
    published and as in Chaudhuri et al. (2011), and SSP's noisy statistics."""
    # background of 10/epsilon rows per label: the paper variant then has a minimiser in
    # about 95 % of the draws
    draws = n_learner(10**5)
    plan = [(role, audit_objective_perturbation,
             {"epsilon": eps, "variant": variant, "n_background": round(10 / eps),
              "draws": draws})
            for variant, role in (("paper", "published"), ("cms11", "corrected"))
            for eps in (0.5, 1.0, 2.0)]
    plan.append(("control", audit_objective_perturbation,
                 {"epsilon": 1.0, "variant": "cms11", "gamma_scale": 0.4, "n_background": 10,
                  "draws": draws}))
    plan += [("published", audit_ssp, {"epsilon": 1.0, "component": component, "draws": draws})
             for component in ("xy", "xx")]
    plan.append(("control", audit_ssp,
                 {"epsilon": 1.0, "component": "xy", "noise_scale": 0.5, "draws": draws}))
    return plan


def _corrected_pipeline_plan(n, n_learner):
    """Audits of the mechanisms the corrected pipelines' finite ε rest on, with controls.

    Grid LNTE on a configured horizon (each ε of the study; control: noise of scale
    1/(2ε)), SSP's Laplace noise on XᵀX (d = 1, where the pair's loss is the claimed
    share; control: half the noise) and DP feature selection with hashed parts at the
    selection's share of ε = 1 (control: the authors' scale 2m/(kε), half the noise
    replacement needs).
    """
    plan = [("corrected", audit_grid_lnte, {"epsilon": eps, "draws": n(2 * 10**5)})
            for eps in (1.0, 2.0, 3.0)]
    plan.append(("control", audit_grid_lnte,
                 {"epsilon": 1.0, "run_epsilon": 2.0, "draws": n(2 * 10**5)}))
    xx = {"epsilon": 1.0, "component": "xx", "xx_noise": "laplace", "dim": 1,
          "draws": n_learner(10**5)}
    plan.append(("corrected", audit_ssp, xx))
    plan.append(("control", audit_ssp, {**xx, "noise_scale": 0.5}))
    selection = budget_split(1.0, feature_selection=True).selection
    plan.append(("corrected", audit_feature_selection,
                 {"epsilon": selection, "draws": n(10**6)}))
    plan.append(("control", audit_feature_selection,
                 {"epsilon": selection, "changed_parts": 1, "draws": n(10**6)}))
    return plan


def run_all_audits(
    *,
    rng_seed: int,
    draws_scale: float = 1.0,
    level: float = DEFAULT_LEVEL,
    indicator_mechanisms=None,
    learner_draws_scale: float | None = None,
    rrr_settings=(),
) -> pd.DataFrame:
    r"""Run every audit and return the table for the workflow.

    Rows: the published mechanisms as the workflow runs them (``role =
    "published"``), their correctly calibrated variants and the mechanisms of the
    corrected pipelines (``"corrected"``: grid LNTE, SSP's Laplace noise on XᵀX,
    DP feature selection with hashed parts), and deliberately mis-scaled copies
    (``"control"``) that a working audit must flag — they show that the audits have
    the power to detect a violation of that size.

    Each audit gets its own stream (:func:`audit_row_seeds`): the rows every run has
    positional children of ``SeedSequence(rng_seed)``, the rows that depend on the
    configuration (indicator mechanisms, a run's own RRR settings) streams keyed by their
    settings, so the table is deterministic given the seed and ``draws_scale`` and no row
    depends on which others are present.

    Parameters
    ----------
    rng_seed : int
    draws_scale : float, default 1
        Multiplies every audit's number of draws (at least 1,000 each).
        About 20-25 s on one core at 1.
    learner_draws_scale : float, optional
        Multiplies the draws of the learners' audits (objective perturbation,
        SSP) instead of ``draws_scale``: at 0.2 of its draws the objective
        perturbation of the paper is not caught (its lower bounds stay below
        the claimed ε), at 1 it is at every ε; ~8 s of the run at 1.
    level : float, default 1e-9
    indicator_mechanisms : list of str, optional
        Registered indicator mechanisms to audit (default: all of
        :data:`dprepro.mechanisms.registry.MECHANISMS`); Laplace is always audited.
    rrr_settings : iterable of (k, ε, calibration), optional
        The RRR releases the run makes: each one the shipped rows do not cover gets a
        row of its own, after all others (:func:`rrr_run_audit_plan`).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`AUDIT_COLUMNS`; ``draws`` is per neighbouring input;
        ``true_epsilon`` is the study's for the same release (module notes): ``inf``
        where no finite ε holds, NaN only for a control the study never runs.
    """
    if isinstance(rng_seed, bool) or not isinstance(rng_seed, int | np.integer) or rng_seed < 0:
        raise ValueError(f"rng_seed must be a non-negative integer, got {rng_seed!r}")
    draws_scale = _check_positive(draws_scale, "draws_scale")
    if learner_draws_scale is not None:
        learner_draws_scale = _check_positive(learner_draws_scale, "learner_draws_scale")
    plan, fixed = _audit_plan(draws_scale, indicator_mechanisms, learner_draws_scale,
                              rrr_settings)
    children = audit_row_seeds(plan, int(rng_seed), fixed=fixed)
    rows = []
    for (role, fn, kwargs), child in zip(plan, children, strict=True):
        result = fn(rng=np.random.default_rng(child), level=level, **kwargs)
        row = result.to_dict()
        row["role"] = role
        rows.append(row)
    return pd.DataFrame(rows)[AUDIT_COLUMNS]
