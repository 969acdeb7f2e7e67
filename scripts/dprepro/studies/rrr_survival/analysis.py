r"""The ``rrr_survival`` study: analyses of each release (one job per release).

Per dataset (IPSS-R cohort, kidney) the study compares Kaplan–Meier curves,
pairwise log-rank tests and median survival on

* the original data (non-private reference),
* group labels privatised by revised randomized response (RRR), time and
  event released in the clear as in the paper,
* per-group survival curves released by LNTE as the paper's authors coded it,

at each ε, over many independent draws instead of the paper's single draw.

The privacy columns of every table come from
:mod:`dprepro.studies.rrr_survival.releases`; every table carries its privacy
parameters: ``mechanism``, the nominal ``epsilon`` stated by the paper, ``calibration``
of RRR, and
``true_epsilon``, the LDP level actually guaranteed (RRR with the paper's
calibration: ε + ln(k − 1); LNTE as published: ∞, because it releases the
observed times as the grid of the curve, see
:func:`dprepro.mechanisms.lnte.lnte_survival`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from dprepro.mechanisms.debiased_rrr import DebiasedRRR, bootstrap_medians, debiased_curves
from dprepro.mechanisms.grid_lnte import GridDiscretisation, GridLNTE, step_on_grid
from dprepro.mechanisms.lnte import LNTE, LNTE_CI_METHOD, lnte_median
from dprepro.mechanisms.rrr import RevisedRandomizedResponse
from dprepro.runtime.privacy_record import PrivacyRecord
from dprepro.runtime.seeds import seed_record, seed_sequence
from dprepro.studies.rrr_survival.releases import DEBIASED_RESAMPLES, ORIGINAL, release_mechanism
from dprepro.survival.cluster_logrank import pairwise_robust_logrank
from dprepro.survival.kaplan_meier import KaplanMeier, km_batch
from dprepro.survival.logrank import pairwise_logrank, pairwise_logrank_batch
from dprepro.survival.median import km_median, km_median_r

__all__ = [
    "quantile_inf",
    "censored_quantile",
    "person_units",
    "permuted_logrank",
    "release_labels",
    "run_release",
    "time_grid",
    "step_grid",
    "analyse_original",
    "analyse_rrr",
    "analyse_lnte",
    "analyse_rrr_debiased",
    "analyse_lnte_grid",
]


def time_grid(times, points: int) -> np.ndarray:
    """``points`` evenly spaced times from 0 to the largest follow-up time."""
    if points < 2:
        raise ValueError(f"points must be >= 2, got {points}")
    return np.linspace(0.0, float(np.max(times)), points)


def step_grid(times) -> np.ndarray:
    """0 and every distinct follow-up time: where the cohort's step curves can jump.

    KM, RRR and debiased-RRR curves (and the published LNTE's, whose grid is
    a group's observed times) jump only at observed times, so their values
    there are the exact step functions, with no resampling.
    """
    times = np.asarray(times, dtype=float)
    return np.unique(np.r_[0.0, times[np.isfinite(times)]])


def _check_cohort(cohort: pd.DataFrame, labels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    missing = {"group", "time", "event"} - set(cohort.columns)
    if missing:
        raise ValueError(f"cohort lacks columns {sorted(missing)}")
    unknown = sorted(set(cohort["group"]) - set(labels))
    if unknown:
        raise ValueError(f"cohort has groups {unknown} not among the labels {list(labels)}")
    # a label no patient has stays a label (the public domain of the release); the
    # comparisons still need two groups with patients
    present = [g for g in labels if (cohort["group"] == g).any()]
    if len(present) < 2:
        raise ValueError(f"pairwise comparisons need at least two groups with patients; "
                         f"only {present} of the labels {list(labels)} have any")
    if not (cohort["event"] == 1).any():
        raise ValueError("every observation is censored (no event): survival curves stay at 1 "
                         "and log-rank tests are undefined")
    return (cohort["time"].to_numpy(float), cohort["event"].to_numpy(int),
            cohort["group"].to_numpy(object))


def _curve_frame(survival: np.ndarray, labels, grid) -> pd.DataFrame:
    """Long frame draw, group, t, survival from an array (draws, groups, grid)."""
    draws, groups, points = survival.shape
    # categorical: Parquet stores the labels once (dictionary), and a reader decodes
    # integer codes instead of a million strings (io.read_table returns them as text)
    codes = np.tile(np.repeat(np.arange(groups), points), draws)
    return pd.DataFrame({
        "draw": np.repeat(np.arange(draws), groups * points),
        "group": pd.Categorical.from_codes(codes, categories=pd.Index(list(labels),
                                                                      dtype=object)),
        "t": np.tile(grid, draws * groups),
        "survival": survival.ravel(),
    })


#: ``ci_method`` of the medians a lifelines-rule KM fit gives (original, RRR draw 0).
KM_CI_METHOD = "lifelines: first time S <= 0.5; 95% log-log band's first crossings of 0.5"
#: Columns of a per-draw medians file whose curves can stop before 0.5 (debiased RRR,
#: grid LNTE): ``censored_at`` is the stop time of a median right-censored there
#: (``median`` NaN: only known to be >= it), NaN elsewhere.
MEDIAN_COLUMNS = ["draw", "group", "median", "ci_lower", "ci_upper", "median_r", "plateau",
                  "ci_method", "censored_at"]
#: ``ci_method`` of the medians over draws.
DRAWS_CI_METHOD = ("2.5%-97.5% quantiles over all draws (inf = not reached; a draw whose "
                   "median is censored at its stop time counts as >= it: a quantile that "
                   "depends on where above it lies is censored, `censored_at` its lower "
                   "bound; ci_lower counts such draws at their stop time, ci_upper as inf)")
#: Share of bootstrap resamples that must have a median (reached or not reached, not
#: censored) for a single-draw interval.
MIN_DEFINED_RESAMPLES = 0.95


def _lifelines_medians(times, events, groups, labels, *, empty: float = np.inf
                       ) -> pd.DataFrame:
    """Medians by lifelines' rule with its CI, plus R's rule and a plateau flag.

    Where the KM curve is exactly 0.5 over an interval the two rules differ:
    lifelines takes the start of the plateau, R (``quantile.survfit``) its
    midpoint; ``plateau`` flags those groups and ``median_r`` gives R's value.
    A group without rows gets ``empty``: NaN for the original data (a configured
    group no patient has: no median exists), ``inf`` for a released draw whose
    label no one received (as the vectorised medians of the other draws).
    """
    rows = []
    for label in labels:
        mask = groups == label
        if not mask.any():
            rows.append({"group": label, "median": empty, "ci_lower": np.nan,
                         "ci_upper": np.nan, "median_r": empty, "plateau": False})
            continue
        km = KaplanMeier().fit(times[mask], events[mask])
        med, med_r = km_median(km), km_median_r(km).median
        med_r = np.inf if np.isnan(med_r) else med_r
        rows.append({"group": label, "median": med.median, "ci_lower": med.ci_lower,
                     "ci_upper": med.ci_upper, "median_r": med_r,
                     "plateau": bool(np.isfinite(med.median) and med_r != med.median)})
    return pd.DataFrame(rows).assign(ci_method=KM_CI_METHOD)


def person_units(cohort: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each row's person (index in order of first appearance) and each person's first row.

    Uses the ``id`` column (one row per person without it). A person's rows
    must share one group: RRR privatises the person's label once and every
    row of the person carries that one released label.

    Raises
    ------
    ValueError
        An id has rows in different groups.
    """
    if "id" not in cohort.columns:
        n = len(cohort)
        return np.arange(n), np.arange(n)
    codes, uniques = pd.factorize(cohort["id"].astype(str), sort=False)
    first = np.full(len(uniques), -1)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    groups = cohort["group"].to_numpy(object)
    mixed = groups != groups[first[codes]]
    if mixed.any():
        bad = sorted(set(cohort["id"].astype(str)[mixed]))[:5]
        raise ValueError(f"ids {bad} have rows in different groups; a person's group must be "
                         "one value (RRR releases it once per person)")
    return codes, first


def release_labels(cohort: pd.DataFrame, mechanism: RevisedRandomizedResponse, *,
                   rng: np.random.Generator, draws: int) -> np.ndarray:
    """Released group of every row in every draw, one RRR draw per person.

    Returns an array ``(draws, rows)``; all rows of a person (:func:`person_units`)
    carry the same released label, so the guarantee holds per person. With
    one row per person this is exactly ``mechanism.privatize(groups)``.
    """
    codes, first = person_units(cohort)
    groups = cohort["group"].to_numpy(object)
    return mechanism.privatize(groups[first], rng=rng, draws=draws)[:, codes]


def _with_robust(logrank: pd.DataFrame, times, events, group_draws, clusters,
                 labels) -> pd.DataFrame:
    robust = pairwise_robust_logrank(times, events, group_draws, clusters, labels=labels)
    return logrank.merge(robust, on=["draw", "group_a", "group_b"], how="left", sort=False)


def permuted_logrank(cohort: pd.DataFrame, *, labels, draws: int,
                     rng: np.random.Generator) -> pd.DataFrame:
    """Pairwise log-rank tests with the persons' labels permuted: the ε = 0 reference.

    Each draw permutes the group labels among persons (all rows of a person
    keep one label; group sizes are kept), so the labels are independent of
    the outcome, as RRR's released labels become as ε → 0. The share of
    draws whose decisions equal the original data's is what "no conclusion
    changes" reaches without any information in the labels; a release's
    agreement means something only above it. Same columns as the original's
    ``logrank`` (plain and cluster-robust).
    """
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    times, events, groups = _check_cohort(cohort, labels)
    codes, first = person_units(cohort)
    persons = groups[first]
    permuted = np.stack([rng.permutation(persons) for _ in range(draws)])[:, codes]
    logrank = pairwise_logrank_batch(times, events, permuted, labels=labels).to_frame()
    return _with_robust(logrank, times, events, permuted, codes, labels)


def analyse_original(cohort: pd.DataFrame, *, labels, grid, permutations: int = 0,
                     rng: np.random.Generator | None = None) -> dict[str, pd.DataFrame]:
    """KM curves, medians (lifelines rule and CI) and pairwise log-rank of the original data.

    The log-rank rows carry both the plain test (R ``survdiff``; the paper's
    Table 1) and the cluster-robust score test per person
    (:mod:`dprepro.survival.cluster_logrank`). With ``permutations`` > 0 (and ``rng``)
    it adds ``logrank_permuted``, the permuted-label reference
    (:func:`permuted_logrank`).
    """
    times, events, groups = _check_cohort(cohort, labels)
    codes, _ = person_units(cohort)
    curves = km_batch(times, events, groups[None, :], labels=labels).on_grid(grid)
    logrank = pairwise_logrank(times, events, groups, labels=labels).assign(draw=0)
    frame = _curve_frame(curves, labels, grid)
    # numbers at risk and censorings at each step time: the figure's at-risk table and
    # censoring ticks (the original is a non-private reference)
    grid = np.asarray(grid, dtype=float)
    at_risk, censored = [], []
    for label in labels:
        own = np.sort(times[groups == label])
        cens = np.sort(times[(groups == label) & (events == 0)])
        at_risk.append(len(own) - np.searchsorted(own, grid, side="left"))
        censored.append(np.searchsorted(cens, grid, side="right")
                        - np.searchsorted(cens, grid, side="left"))
    frame["at_risk"] = np.concatenate(at_risk)
    frame["censored"] = np.concatenate(censored)
    out = {
        "medians": _lifelines_medians(times, events, groups, labels,
                                      empty=np.nan).assign(draw=0),
        "logrank": _with_robust(logrank, times, events, groups[None, :], codes, labels),
        "curves": frame,
    }
    if permutations > 0:
        if rng is None:
            raise TypeError("permutations need an explicit numpy Generator rng")
        out["logrank_permuted"] = permuted_logrank(cohort, labels=labels, draws=permutations,
                                                   rng=rng)
    return out


def _draw_medians(values, labels, *, ci_method: str) -> pd.DataFrame:
    """Median table of a batch of draws (``values``: draws × groups), without intervals."""
    values = np.asarray(values)
    draws = values.shape[0]
    return pd.DataFrame({
        "draw": np.repeat(np.arange(draws), len(labels)),
        "group": np.tile(np.asarray(labels, dtype=object), draws),
        "median": values.ravel(),
        "ci_lower": np.nan,
        "ci_upper": np.nan,
        "median_r": np.nan,
        "plateau": False,
        "ci_method": ci_method,
    })


def analyse_rrr(cohort: pd.DataFrame, *, labels, epsilon: float, calibration: str, draws: int,
                rng: np.random.Generator, grid) -> dict[str, pd.DataFrame]:
    """Privatise the labels ``draws`` times with RRR and analyse every release.

    Each person (``id``; each row without one) is privatised once per draw
    and all the person's rows carry that released label, so the guarantee is
    per person, not per row (kidney: two rows per patient would otherwise
    release each patient's disease twice, 2·ε). Draw 0 gets lifelines'
    medians with their 95 % CI (the paper's single draw); the other draws'
    medians come from the vectorised KM without CI.
    """
    times, events, groups = _check_cohort(cohort, labels)
    codes, _ = person_units(cohort)
    mechanism = RevisedRandomizedResponse(epsilon=epsilon, categories=labels,
                                          calibration=calibration)
    released = release_labels(cohort, mechanism, rng=rng, draws=draws)
    batch = km_batch(times, events, released, labels=labels)
    medians = _draw_medians(batch.median(), labels,
                            ci_method="none (vectorised KM of a further draw)")
    fits = _lifelines_medians(times, events, released[0], labels)
    columns = ["median", "ci_lower", "ci_upper", "median_r", "plateau", "ci_method"]
    medians.loc[medians["draw"] == 0, columns] = fits[columns].to_numpy()
    logrank = pairwise_logrank_batch(times, events, released, labels=labels).to_frame()
    logrank = _with_robust(logrank, times, events, released, codes, labels)
    return {"medians": medians, "logrank": logrank,
            "curves": _curve_frame(batch.on_grid(grid), labels, grid)}


def analyse_rrr_debiased(cohort: pd.DataFrame, *, labels, epsilon: float, calibration: str,
                         draws: int, rng: np.random.Generator, grid,
                         bootstrap_rng: np.random.Generator,
                         resamples: int = DEBIASED_RESAMPLES) -> dict[str, pd.DataFrame]:
    """Debiased group curves and medians from ``draws`` RRR releases.

    The labels are released exactly as :func:`analyse_rrr` does (same
    ``rng`` stream gives the same releases); the curves undo the public
    mixing (:mod:`dprepro.mechanisms.debiased_rrr`). Draw 0's median gets a 95 %
    percentile interval from ``resamples`` bootstrap resamples of persons
    (:func:`_bootstrap_interval`): none when its own median is censored or
    fewer than :data:`MIN_DEFINED_RESAMPLES` of the resamples have a median.
    """
    times, events, groups = _check_cohort(cohort, labels)
    codes, _ = person_units(cohort)
    mechanism = RevisedRandomizedResponse(epsilon=epsilon, categories=labels,
                                          calibration=calibration)
    released = mechanism.encode(release_labels(cohort, mechanism, rng=rng, draws=draws))
    curves = debiased_curves(times, events, released, p=mechanism.p, k=mechanism.k)
    boot = bootstrap_medians(times, events, released[0], codes, p=mechanism.p, k=mechanism.k,
                             rng=bootstrap_rng, resamples=resamples)
    medians = _draw_medians(curves.median(), labels, ci_method="none (a further draw)")
    medians["censored_at"] = curves.median_censored_at().ravel()
    first = np.flatnonzero(medians["draw"].to_numpy() == 0)
    boot_medians, boot_censored = boot
    for g, row in enumerate(first):
        lower, upper, method = _bootstrap_interval(
            medians.at[row, "median"], boot_medians[:, g], boot_censored[:, g])
        medians.loc[row, ["ci_lower", "ci_upper", "ci_method"]] = [lower, upper, method]
    return {"medians": medians[MEDIAN_COLUMNS],
            "curves": _curve_frame(curves.on_grid(grid), labels, grid)}


def _bootstrap_interval(point: float, medians, censored_at) -> tuple[float, float, str]:
    """Single-draw percentile interval from bootstrap medians, or none, and why.

    No interval when the point median is censored (NaN) or when fewer than
    :data:`MIN_DEFINED_RESAMPLES` of the resamples have a median (a
    percentile interval of the few left would be conditional on them);
    otherwise the 2.5 %/97.5 % quantiles with the censored resamples counted
    as ``>=`` their stop time (:func:`censored_quantile`: the lower end takes
    them at it, the upper as ``inf``).
    """
    medians = np.asarray(medians, dtype=float)
    total = medians.size
    defined = int(np.sum(~np.isnan(medians)))
    rule = "first time debiased S <= 0.5"
    if np.isnan(point):
        return np.nan, np.nan, (f"{rule}; median censored at the curve's stop: no interval "
                                f"({defined} of {total} bootstrap resamples have a median)")
    if defined < MIN_DEFINED_RESAMPLES * total:
        return np.nan, np.nan, (f"{rule}; no interval: only {defined} of {total} bootstrap "
                                "resamples of persons have a median (the others are "
                                f"censored; {MIN_DEFINED_RESAMPLES:.0%} needed)")
    lower = censored_quantile(medians, censored_at, 0.025)[0]
    upper = censored_quantile(medians, censored_at, 0.975)[1]
    return lower, upper, (f"{rule}; 2.5%-97.5% of {total} bootstrap resamples of persons "
                          f"(sampling + privatisation noise; {total - defined} censored, "
                          "counted as >= their stop time)")


def censored_quantile(values, censored_at, q: float) -> tuple[float, float]:
    """Bounds of the ``q``-quantile of medians some of which are right-censored.

    ``values`` holds the medians (``inf`` = not reached) and NaN where a
    median is censored: only known to be ``>= censored_at``. The quantile
    (:func:`quantile_inf`'s rule) lies between its value with the censored
    draws at their stop times (lower bound) and with them at ``inf`` (upper
    bound); where the two agree it is known exactly.
    """
    v = np.asarray(values, dtype=float)
    censored = np.isnan(v)
    at = np.asarray(censored_at, dtype=float)
    if censored.any() and np.isnan(at[censored]).any():
        raise ValueError("a censored median (NaN) needs its censoring time in censored_at")
    return (quantile_inf(np.where(censored, at, v), q),
            quantile_inf(np.where(censored, np.inf, v), q))


def analyse_lnte(cohort: pd.DataFrame, *, labels, epsilon: float, draws: int,
                 rng: np.random.Generator, grid) -> dict[str, pd.DataFrame]:
    """LNTE curves of every group, ``draws`` noise draws each, with first-crossing medians."""
    times, events, groups = _check_cohort(cohort, labels)
    mechanism = LNTE(epsilon=epsilon)
    curves = np.empty((draws, len(labels), len(grid)))
    medians = []
    for g, label in enumerate(labels):
        mask = groups == label
        if not mask.any():
            # LNTE as published releases a curve on the group's own observed times: a
            # label no one has gives no curve (grid LNTE releases noisy zero counts)
            curves[:, g, :] = np.nan
            medians.append(pd.DataFrame({"draw": np.arange(draws), "median": np.nan,
                                         "ci_lower": np.nan, "ci_upper": np.nan,
                                         "group": label}))
            continue
        result = mechanism.release(times[mask], events[mask], rng=rng, draws=draws)
        curves[:, g, :] = result.on_grid(grid)
        # like KM, a group's curve ends at its last follow-up time
        curves[:, g, np.asarray(grid) > times[mask].max()] = np.nan
        medians.append(lnte_median(result).assign(group=label))
    medians = pd.concat(medians, ignore_index=True).assign(
        median_r=np.nan, plateau=False, ci_method=LNTE_CI_METHOD)
    return {"medians": medians[["draw", "group", "median", "ci_lower", "ci_upper", "median_r",
                                "plateau", "ci_method"]],
            "curves": _curve_frame(curves, labels, grid)}


def analyse_lnte_grid(cohort: pd.DataFrame, *, labels, mechanism: GridLNTE, draws: int,
                      rng: np.random.Generator | None, grid) -> dict[str, pd.DataFrame]:
    """Grid-LNTE curves (:mod:`dprepro.mechanisms.grid_lnte`) of every group and their medians.

    The horizon is the mechanism's public one (``datasets.<name>.horizon``),
    else the largest follow-up time (then data-dependent: the record has
    ``true_epsilon = inf`` and ``release = False``). Curves are stored at 0
    and the bins' right ends only, their exact step times on the public
    grid: storing them at the cohort's follow-up times (``grid``, unused)
    would publish those times, which the ε-DP record covers only through the
    noisy bin counts. Read at any other time
    they are the right-continuous steps (:func:`sup_distances` reads them at
    the original's jump times, which are a reference). Medians: first bin
    end with S ≤ 0.5; ``inf`` ("not reached") if never, also when the curve
    stops first (fitted at-risk < 1: the released group has emptied, where a
    KM curve ends too); NaN, censored at the first bin end, when it is
    undefined from there (nobody released at risk); draw 0 gets no interval
    (the spread over draws is in the over-draws rows).
    :class:`~dprepro.mechanisms.grid_lnte.GridDiscretisation` gives the no-noise row.
    """
    times, events, groups = _check_cohort(cohort, labels)
    horizon = mechanism.horizon if mechanism.horizon is not None else float(np.max(times))
    edges = np.linspace(0.0, horizon, mechanism.bins + 1)[1:]
    grid = np.r_[0.0, edges]
    curves = np.empty((draws, len(labels), len(grid)))
    medians = []
    for g, label in enumerate(labels):
        mask = groups == label
        edges, survival = mechanism.release(times[mask], events[mask], horizon=horizon, rng=rng,
                                            draws=draws)
        curves[:, g, :] = step_on_grid(edges, survival, grid)
        below = survival <= 0.5
        reached = below.any(axis=1)
        median = np.where(reached, edges[np.argmax(below, axis=1)], np.inf)
        # the curve stops where the fitted at-risk falls below 1: the released group has
        # emptied, as a KM curve ends at its last follow-up, so a curve above 0.5 until
        # then has its median "not reached"; one undefined from the first bin end (nobody
        # released at risk) tells nothing: censored at that first bin end
        empty = ~reached & np.isnan(survival[:, 0])
        # the noise-free reference of a group no patient has: no median exists (a noisy
        # release of its zero counts is a release like any other)
        no_patients = rng is None and not mask.any()
        medians.append(pd.DataFrame({"draw": np.arange(draws), "group": label,
                                     "median": np.where(empty, np.nan, median),
                                     "censored_at": np.where(empty & ~no_patients, edges[0],
                                                             np.nan)}))
    medians = pd.concat(medians, ignore_index=True).assign(
        ci_lower=np.nan, ci_upper=np.nan, median_r=np.nan, plateau=False,
        ci_method="first bin end with S <= 0.5; no single-draw interval")
    medians = medians.sort_values(["draw"], kind="stable").reset_index(drop=True)
    return {"medians": medians[MEDIAN_COLUMNS], "curves": _curve_frame(curves, labels, grid)}


def run_release(cohort: pd.DataFrame, *, dataset: str, mechanism: str, epsilon: float | None,
                calibration: str, labels, draws: int = 1,
                seed: int | None = None,
                privacy_unit: str = "patient") -> tuple[dict, PrivacyRecord, dict | None]:
    """Analyse one release of a cohort: the original data or ``draws`` draws of a mechanism.

    The noise stream is ``<mechanism>/<dataset>/<calibration>/eps<ε:g>`` of
    ``seed`` (:func:`dprepro.runtime.seeds.seed_sequence`), so each release has its
    own stream whatever else the configuration holds.

    Returns
    -------
    results : dict of DataFrame
        ``medians``, ``curves`` and (original, RRR) ``logrank``.
    record : PrivacyRecord
        Stated by the mechanism object that ran.
    seeds : dict or None
        The seed record of the noise stream (None for the original).
    """
    # curves are stored at their exact step times
    grid = step_grid(cohort["time"])
    obj = release_mechanism(mechanism, epsilon=epsilon, labels=labels, calibration=calibration)
    if obj is None:
        # the permuted-label (ε = 0) reference: as many draws as a release, its own stream
        stream = f"permuted/{dataset}"
        rng = np.random.default_rng(seed_sequence(seed, "rrr_survival", stream, 0))
        return (analyse_original(cohort, labels=labels, grid=grid, permutations=draws, rng=rng),
                replace(ORIGINAL, privacy_unit=privacy_unit),
                seed_record(seed, "rrr_survival", stream, draws))
    if isinstance(obj, GridDiscretisation):
        results = analyse_lnte_grid(cohort, labels=labels, mechanism=obj, draws=1, rng=None,
                                    grid=grid)
        return results, obj.privacy_record(privacy_unit=privacy_unit), None
    # the debiased release post-processes the very RRR draws: it reads RRR's stream
    source = "rrr" if mechanism == "rrr_debiased" else mechanism
    stream = f"{source}/{dataset}/{calibration}/eps{float(epsilon):g}"
    rng = np.random.default_rng(seed_sequence(seed, "rrr_survival", stream, 0))
    seeds = seed_record(seed, "rrr_survival", stream, draws)
    if isinstance(obj, DebiasedRRR):
        boot_stream = f"rrr_debiased/{dataset}/{calibration}/eps{float(epsilon):g}/bootstrap"
        boot = np.random.default_rng(seed_sequence(seed, "rrr_survival", boot_stream, 0))
        results = analyse_rrr_debiased(cohort, labels=labels, epsilon=obj.epsilon,
                                       calibration=obj.calibration, draws=draws, rng=rng,
                                       grid=grid, bootstrap_rng=boot)
        seeds = {"release": seeds,
                 "bootstrap": seed_record(seed, "rrr_survival", boot_stream, 1)}
    elif isinstance(obj, GridLNTE):
        results = analyse_lnte_grid(cohort, labels=labels, mechanism=obj, draws=draws, rng=rng,
                                    grid=grid)
    elif isinstance(obj, RevisedRandomizedResponse):
        results = analyse_rrr(cohort, labels=labels, epsilon=obj.epsilon,
                              calibration=obj.calibration, draws=draws, rng=rng, grid=grid)
    else:
        results = analyse_lnte(cohort, labels=labels, epsilon=obj.epsilon, draws=draws, rng=rng,
                               grid=grid)
    return results, obj.privacy_record(privacy_unit=privacy_unit), seeds


def quantile_inf(values, q: float) -> float:
    """``numpy.quantile`` (linear rule) that keeps ``inf`` instead of returning NaN.

    numpy interpolates ``inf - inf`` to NaN when the quantile falls between
    two infinite values; here a quantile at or between infinite order
    statistics is ``inf``, and finite values interpolate as numpy does.
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0 or np.isnan(v).any():
        return float("nan")
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return float("inf")
    # a finite stand-in above every finite value: numpy's own rule among finite values,
    # and any result past the largest finite value is a quantile among the infinite ones
    top = float(finite.max())
    result = float(np.quantile(np.where(np.isinf(v), 2 * abs(top) + 1, v), q))
    return float("inf") if result > top else result

