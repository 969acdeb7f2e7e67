r"""The ``rrr_survival`` study: analyses of released data and the tables of the paper.

Per dataset (IPSS-R cohort, kidney) the study compares Kaplan–Meier curves,
pairwise log-rank tests and median survival on

* the original data (non-private reference),
* group labels privatised by revised randomized response (RRR), time and
  event released in the clear as in the paper,
* per-group survival curves released by LNTE as the paper's authors coded it,

at each ε, over many independent draws instead of the paper's single draw.

Every table carries its privacy parameters: ``mechanism``, the nominal
``epsilon`` stated by the paper, ``calibration`` of RRR, and
``true_epsilon``, the LDP level actually guaranteed (RRR with the paper's
calibration: ε + ln(k − 1); LNTE as published: ∞, because it releases the
observed times as the grid of the curve, see
:func:`dprepro.randomized_response.lnte_survival`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .km import KaplanMeier, km_batch, km_median, pairwise_logrank, pairwise_logrank_batch
from .randomized_response import (
    RevisedRandomizedResponse,
    lnte_median,
    lnte_survival,
    rrr_keep_probability,
    rrr_true_epsilon,
)

__all__ = [
    "privacy_columns",
    "time_grid",
    "analyse_original",
    "analyse_rrr",
    "analyse_lnte",
    "median_table",
    "logrank_table",
    "rejection_table",
    "utility_table",
    "band_table",
    "curve_table",
]

LNTE_NOTE = ("LNTE as published releases the observed times as the curve's grid and adds "
             "Laplace(1/ε) at every time point; no finite ε holds (stated ε per count)")


def privacy_columns(mechanism: str, epsilon: float | None, k: int, calibration: str) -> dict:
    """The privacy statement every table row carries."""
    if mechanism == "original":
        return {"mechanism": "original", "epsilon": np.nan, "calibration": "",
                "true_epsilon": np.nan, "privacy_note": "non-private reference"}
    if mechanism == "rrr":
        p = rrr_keep_probability(epsilon, k, calibration=calibration)
        true = rrr_true_epsilon(p, k)
        note = (f"RRR on the group label, keep probability p = {p:.4f}, k = {k}; "
                f"true LDP level ln(1 + kp/(1-p)) = {true:.3f}")
        return {"mechanism": "rrr", "epsilon": float(epsilon), "calibration": calibration,
                "true_epsilon": true, "privacy_note": note}
    if mechanism == "lnte":
        return {"mechanism": "lnte", "epsilon": float(epsilon), "calibration": "as published",
                "true_epsilon": np.inf, "privacy_note": LNTE_NOTE}
    raise ValueError(f"unknown mechanism {mechanism!r}; expected original, rrr or lnte")


def time_grid(times, points: int) -> np.ndarray:
    """``points`` evenly spaced times from 0 to the largest follow-up time."""
    if points < 2:
        raise ValueError(f"points must be >= 2, got {points}")
    return np.linspace(0.0, float(np.max(times)), points)


def _check_cohort(cohort: pd.DataFrame, labels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    missing = {"group", "time", "event"} - set(cohort.columns)
    if missing:
        raise ValueError(f"cohort lacks columns {sorted(missing)}")
    unknown = sorted(set(cohort["group"]) - set(labels))
    if unknown:
        raise ValueError(f"cohort has groups {unknown} not among the labels {list(labels)}")
    empty = [g for g in labels if not (cohort["group"] == g).any()]
    if empty:
        raise ValueError(f"groups {empty} have no observations; every group needs at least one")
    if len(labels) < 2:
        raise ValueError("pairwise comparisons need at least two groups")
    if not (cohort["event"] == 1).any():
        raise ValueError("every observation is censored (no event): survival curves stay at 1 "
                         "and log-rank tests are undefined")
    return (cohort["time"].to_numpy(float), cohort["event"].to_numpy(int),
            cohort["group"].to_numpy(object))


def _curve_frame(survival: np.ndarray, labels, grid) -> pd.DataFrame:
    """Long frame draw, group, t, survival from an array (draws, groups, grid)."""
    draws, groups, points = survival.shape
    return pd.DataFrame({
        "draw": np.repeat(np.arange(draws), groups * points),
        "group": np.tile(np.repeat(np.asarray(labels, dtype=object), points), draws),
        "t": np.tile(grid, draws * groups),
        "survival": survival.ravel(),
    })


def _lifelines_medians(times, events, groups, labels) -> pd.DataFrame:
    rows = []
    for label in labels:
        mask = groups == label
        if not mask.any():
            rows.append({"group": label, "median": np.inf, "ci_lower": np.nan,
                         "ci_upper": np.nan})
            continue
        med = km_median(KaplanMeier().fit(times[mask], events[mask]))
        rows.append({"group": label, "median": med.median, "ci_lower": med.ci_lower,
                     "ci_upper": med.ci_upper})
    return pd.DataFrame(rows)


def analyse_original(cohort: pd.DataFrame, *, labels, grid) -> dict[str, pd.DataFrame]:
    """KM curves, medians (lifelines rule and CI) and pairwise log-rank of the original data."""
    times, events, groups = _check_cohort(cohort, labels)
    curves = km_batch(times, events, groups[None, :], labels=labels).on_grid(grid)
    return {
        "medians": _lifelines_medians(times, events, groups, labels).assign(draw=0),
        "logrank": pairwise_logrank(times, events, groups, labels=labels).assign(draw=0),
        "curves": _curve_frame(curves, labels, grid),
    }


def analyse_rrr(cohort: pd.DataFrame, *, labels, epsilon: float, calibration: str, draws: int,
                rng: np.random.Generator, grid) -> dict[str, pd.DataFrame]:
    """Privatise the labels ``draws`` times with RRR and analyse every release.

    Draw 0 gets lifelines' medians with their 95 % CI (the paper's single
    draw); the other draws' medians come from the vectorised KM without CI.
    """
    times, events, groups = _check_cohort(cohort, labels)
    mechanism = RevisedRandomizedResponse(epsilon=epsilon, categories=labels,
                                          calibration=calibration)
    released = mechanism.privatize(groups, rng=rng, draws=draws)
    batch = km_batch(times, events, released, labels=labels)
    medians = pd.DataFrame({
        "draw": np.repeat(np.arange(draws), len(labels)),
        "group": np.tile(np.asarray(labels, dtype=object), draws),
        "median": batch.median().ravel(),
        "ci_lower": np.nan,
        "ci_upper": np.nan,
    })
    first = _lifelines_medians(times, events, released[0], labels)
    medians.loc[medians["draw"] == 0, ["median", "ci_lower", "ci_upper"]] = first[
        ["median", "ci_lower", "ci_upper"]].to_numpy()
    logrank = pairwise_logrank_batch(times, events, released, labels=labels).to_frame()
    return {"medians": medians, "logrank": logrank,
            "curves": _curve_frame(batch.on_grid(grid), labels, grid)}


def analyse_lnte(cohort: pd.DataFrame, *, labels, epsilon: float, draws: int,
                 rng: np.random.Generator, grid) -> dict[str, pd.DataFrame]:
    """LNTE curves of every group, ``draws`` noise draws each, with first-crossing medians."""
    times, events, groups = _check_cohort(cohort, labels)
    curves = np.empty((draws, len(labels), len(grid)))
    medians = []
    for g, label in enumerate(labels):
        mask = groups == label
        result = lnte_survival(times[mask], events[mask], epsilon=epsilon, rng=rng, draws=draws)
        curves[:, g, :] = result.on_grid(grid)
        medians.append(lnte_median(result).assign(group=label))
    medians = pd.concat(medians, ignore_index=True)
    return {"medians": medians[["draw", "group", "median", "ci_lower", "ci_upper"]],
            "curves": _curve_frame(curves, labels, grid)}


# ------------------------------------------------------------------ aggregated tables


def _order(frame: pd.DataFrame, keys) -> pd.DataFrame:
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def median_table(parts) -> pd.DataFrame:
    """Table 2 and its many-draw extension.

    ``parts`` yields ``(info, medians)`` with ``info`` holding dataset,
    data_origin, labels and the :func:`privacy_columns`; ``medians`` is the
    per-draw frame of an analysis.  Rows with ``statistic = "single_draw"``
    are draw 0 with lifelines' 95 % CI (LNTE: first crossing of its band), as
    the paper reports one draw; rows with ``statistic = "over_draws"`` give
    the median over all draws of the released median and its 2.5 %/97.5 %
    quantiles over draws.  ``not_reached`` is the share of draws whose curve
    never reaches 0.5 (median = inf).
    """
    rows = []
    for info, medians in parts:
        draws = int(medians["draw"].nunique())
        for label in info["labels"]:
            group = medians[medians["group"] == label]
            first = group[group["draw"] == 0].iloc[0]
            base = {"dataset": info["dataset"], "data_origin": info["data_origin"],
                    **info["privacy"], "group": label}
            rows.append({**base, "statistic": "single_draw", "median": first["median"],
                         "ci_lower": first["ci_lower"], "ci_upper": first["ci_upper"],
                         "ci_kind": "95% log-log CI, lifelines rule", "draws": 1,
                         "not_reached": float(np.isinf(first["median"]))})
            if draws > 1:
                values = group["median"].to_numpy(float)
                rows.append({**base, "statistic": "over_draws",
                             "median": float(np.quantile(values, 0.5)),
                             "ci_lower": float(np.quantile(values, 0.025)),
                             "ci_upper": float(np.quantile(values, 0.975)),
                             "ci_kind": "2.5%-97.5% quantiles over draws", "draws": draws,
                             "not_reached": float(np.mean(np.isinf(values)))})
    return pd.DataFrame(rows)


def logrank_table(parts) -> pd.DataFrame:
    """Table 1: pairwise log-rank (χ², p) of the original data and of RRR draw 0."""
    rows = []
    for info, logrank in parts:
        first = logrank[logrank["draw"] == 0]
        for row in first.itertuples():
            rows.append({"dataset": info["dataset"], "data_origin": info["data_origin"],
                         **info["privacy"], "group_a": row.group_a, "group_b": row.group_b,
                         "statistic": row.statistic, "p_value": row.p_value})
    return pd.DataFrame(rows)


def rejection_table(parts, *, significance: float) -> pd.DataFrame:
    """Share of RRR draws in which each pair's log-rank test rejects at ``significance``.

    ``original_rejects`` says whether the test on the original data rejects,
    so a rate can be read as power (original rejects) or false-positive rate.
    """
    if not 0 < significance < 1:
        raise ValueError(f"significance must lie in (0, 1), got {significance}")
    rows = []
    for info, logrank, original in parts:
        reference = original.set_index(["group_a", "group_b"])["p_value"]
        for (a, b), pair in logrank.groupby(["group_a", "group_b"], sort=False):
            rows.append({"dataset": info["dataset"], "data_origin": info["data_origin"],
                         **info["privacy"], "group_a": a, "group_b": b,
                         "rejection_rate": float(np.mean(pair["p_value"] < significance)),
                         "repetitions": int(pair["draw"].nunique()),
                         "significance": significance,
                         "original_p_value": float(reference.loc[(a, b)]),
                         "original_rejects": bool(reference.loc[(a, b)] < significance)})
    return pd.DataFrame(rows)


def _sup_distance(curves: pd.DataFrame, original: pd.DataFrame) -> pd.DataFrame:
    merged = curves.merge(original[["group", "t", "survival"]], on=["group", "t"],
                          suffixes=("", "_original"))
    merged["distance"] = (merged["survival"] - merged["survival_original"]).abs()
    # where a released curve or the original is undefined (past follow-up) it is skipped
    return merged.groupby(["draw", "group"], sort=False)["distance"].max().reset_index()


def utility_table(parts) -> pd.DataFrame:
    """Utility of each release: sup-distance of KM curves and median error, over draws.

    ``sup_distance_mean`` is the mean over draws of sup_t |Ŝ_released(t) − Ŝ_original(t)|
    on the grid; ``median_abs_error`` the median over draws of |median − original
    median| among draws where both are finite; ``not_reached`` the share of draws
    whose released curve never reaches 0.5.
    """
    rows = []
    for info, curves, medians, original_curves, original_medians in parts:
        distance = _sup_distance(curves, original_curves)
        reference = original_medians.set_index("group")["median"]
        for label in info["labels"]:
            d = distance.loc[distance["group"] == label, "distance"].to_numpy(float)
            m = medians.loc[medians["group"] == label, "median"].to_numpy(float)
            target = float(reference.loc[label])
            finite = np.isfinite(m) & np.isfinite(target)
            errors = np.abs(m[finite] - target)
            rows.append({"dataset": info["dataset"], "data_origin": info["data_origin"],
                         **info["privacy"], "group": label,
                         "sup_distance_mean": float(np.nanmean(d)) if d.size else np.nan,
                         "sup_distance_q90": float(np.nanquantile(d, 0.9)) if d.size else np.nan,
                         "median_abs_error": float(np.median(errors)) if errors.size else np.nan,
                         "not_reached": float(np.mean(np.isinf(m))) if m.size else np.nan,
                         "original_median": target, "draws": int(len(m))})
    return pd.DataFrame(rows)


def band_table(parts, *, level: float) -> pd.DataFrame:
    """Pointwise bands of the released KM curves over draws (quantiles (1±level)/2)."""
    lo, hi = (1 - level) / 2, (1 + level) / 2
    frames = []
    for info, curves in parts:
        grouped = curves.groupby(["group", "t"], sort=False)["survival"]
        band = pd.DataFrame({
            "lower": grouped.quantile(lo),
            "middle": grouped.quantile(0.5),
            "upper": grouped.quantile(hi),
            "defined": grouped.count() / curves["draw"].nunique(),
        }).reset_index()
        for key, value in {"dataset": info["dataset"], "data_origin": info["data_origin"],
                           **info["privacy"], "level": level}.items():
            band[key] = value
        frames.append(band)
    columns = ["dataset", "data_origin", "mechanism", "epsilon", "calibration", "true_epsilon",
               "privacy_note", "level", "group", "t", "lower", "middle", "upper", "defined"]
    return pd.concat(frames, ignore_index=True)[columns]


def curve_table(parts) -> pd.DataFrame:
    """Draw-0 curves of every release plus the original: the data of Figure 2."""
    frames = []
    for info, curves in parts:
        first = curves[curves["draw"] == 0].drop(columns="draw")
        for key, value in {"dataset": info["dataset"], "data_origin": info["data_origin"],
                           **info["privacy"]}.items():
            first = first.assign(**{key: value})
        frames.append(first)
    columns = ["dataset", "data_origin", "mechanism", "epsilon", "calibration", "true_epsilon",
               "privacy_note", "group", "t", "survival"]
    return pd.concat(frames, ignore_index=True)[columns]
