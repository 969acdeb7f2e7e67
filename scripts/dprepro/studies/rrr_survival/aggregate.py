"""rrr_survival's aggregated tables: every release of every cohort in one table each
(medians, log-rank, agreement with the original's decisions, utility, bands, curves).

The per-release analyses that produce the parts are in :mod:`dprepro.studies.rrr_survival.analysis`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dprepro.studies.rrr_survival.analysis import DRAWS_CI_METHOD, censored_quantile
from dprepro.studies.rrr_survival.releases import TABLE_PRIVACY_COLUMNS, scoped_columns

__all__ = [
    "SUPPORT_MIN_AT_RISK",
    "MAX_UNDEFINED_SHARE",
    "sup_distances",
    "median_table",
    "logrank_table",
    "rejection_table",
    "utility_table",
    "band_table",
    "curve_table",
]



def _order(frame: pd.DataFrame, keys) -> pd.DataFrame:
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def median_table(parts) -> pd.DataFrame:
    """Table 2 and its many-draw extension.

    ``parts`` yields ``(info, medians)`` with ``info`` holding dataset,
    data_origin, labels and the :func:`privacy_columns`; ``medians`` is the
    per-draw frame of an analysis.  Rows with ``statistic = "single_draw"``
    are draw 0, as the paper reports one draw, with the interval its method
    gives; rows with ``statistic = "over_draws"`` give the median over all
    draws of the released median and its 2.5 %/97.5 % quantiles
    (:func:`quantile_inf`: a median not reached is ``inf``, and so is a
    quantile that falls among them, never NaN).

    A curve that stops above 0.5 (debiased RRR, grid LNTE) has its median
    right-censored at its stop time: "not reached" (``inf``) when it stops
    at or after its released group's last time, otherwise only known to be
    ``>= censored_at`` (``median`` NaN, ``median_status`` "censored"). Over
    draws no draw is dropped: a censored draw counts as ``>=`` its stop time
    (:func:`censored_quantile`), so a quantile that depends on where above
    it lies is itself censored (``median`` NaN, ``censored_at`` its lower
    bound), ``ci_lower`` takes censored draws at their stop times and
    ``ci_upper`` as ``inf`` (a conservative interval). ``ci_method`` names
    the rule each row used; ``not_reached`` is the share of draws whose
    median is not reached; ``censored`` the share whose median is censored.
    ``plateau`` flags a KM curve exactly 0.5 over an interval, where
    lifelines' median (its start) and R's (``median_r``, its midpoint)
    differ.
    """
    rows = []
    for info, medians in parts:
        draws = int(medians["draw"].nunique())
        for label in info["labels"]:
            group = medians[medians["group"] == label]
            values = group["median"].to_numpy(float)
            censored_at = (group["censored_at"].to_numpy(float) if "censored_at" in group
                           else np.full(len(group), np.nan))
            censored = np.isnan(values)
            if len(values) and np.isnan(censored_at).all() and censored.all():
                # a configured group no patient has (in the data, or in this release): no
                # median exists; reported as such, never dropped
                rows += _empty_group_rows(info, label, draws)
                continue
            if np.isnan(censored_at[censored]).any():
                raise ValueError(f"{info['dataset']} {label}: a NaN median without its "
                                 "censoring time (column censored_at)")
            first_index = int(np.flatnonzero(group["draw"].to_numpy() == 0)[0])
            first = group.iloc[first_index]
            base = {"dataset": info["dataset"], "data_origin": info["data_origin"],
                    **scoped_columns(info["privacy"], 1), "group": label}
            rows.append({**base, "statistic": "single_draw", "median": first["median"],
                         "ci_lower": first["ci_lower"], "ci_upper": first["ci_upper"],
                         "ci_method": first["ci_method"], "draws": 1,
                         "median_status": _median_status(values[first_index],
                                                         censored_at[first_index]),
                         "censored_at": censored_at[first_index],
                         "not_reached": float(np.isinf(values[first_index])),
                         "censored": float(censored[first_index]),
                         "plateau": bool(first["plateau"]), "median_r": first["median_r"]})
            if draws > 1:
                low, high = censored_quantile(values, censored_at, 0.5)
                median, at = (low, np.nan) if low == high else (np.nan, low)
                upper_text = (f", <= {high:.4g}" if np.isnan(median) and np.isfinite(high)
                              else "")
                base = {**base, "epsilon_scope": scoped_columns(info["privacy"],
                                                                draws)["epsilon_scope"]}
                rows.append({**base, "statistic": "over_draws", "median": median,
                             "ci_lower": censored_quantile(values, censored_at, 0.025)[0],
                             "ci_upper": censored_quantile(values, censored_at, 0.975)[1],
                             "ci_method": DRAWS_CI_METHOD, "draws": draws,
                             "median_status": _median_status(median, at, over_draws=True)
                             + upper_text,
                             "censored_at": at,
                             "not_reached": float(np.mean(np.isinf(values))),
                             "censored": float(np.mean(censored)),
                             "plateau": False, "median_r": np.nan})
    return pd.DataFrame(rows)


#: median_status of a group without patients (a label of the public domain no one has)
NO_PATIENTS = "no patients in this group"


def _empty_group_rows(info, label, draws: int) -> list[dict]:
    base = {"dataset": info["dataset"], "data_origin": info["data_origin"],
            **scoped_columns(info["privacy"], 1), "group": label, "median": np.nan,
            "ci_lower": np.nan, "ci_upper": np.nan, "censored_at": np.nan, "not_reached": 0.0,
            "censored": 0.0, "plateau": False, "median_r": np.nan}
    rows = [{**base, "statistic": "single_draw", "ci_method": NO_PATIENTS, "draws": 1,
             "median_status": NO_PATIENTS}]
    if draws > 1:
        scope = scoped_columns(info["privacy"], draws)["epsilon_scope"]
        rows.append({**base, "epsilon_scope": scope, "statistic": "over_draws",
                     "ci_method": NO_PATIENTS, "draws": draws,
                     "median_status": f"over draws: {NO_PATIENTS}"})
    return rows


def _median_status(median: float, censored_at: float, *, over_draws: bool = False) -> str:
    """``reached``, ``not reached`` (inf) or ``censored >= t`` (NaN, censored at t)."""
    if np.isnan(median):
        status = f"censored >= {censored_at:.4g}"
    else:
        status = "not reached" if np.isinf(median) else "reached"
    return f"over draws: {status}" if over_draws else status


def logrank_table(parts) -> pd.DataFrame:
    """Table 1: pairwise log-rank (χ², p) of the original data and of RRR draw 0.

    ``statistic``/``p_value`` are the plain log-rank (the paper's Table 1);
    ``robust_statistic``/``robust_p_value`` the cluster-robust score test per
    person (:mod:`dprepro.survival.cluster_logrank`), the one to read when a person
    has several rows.
    """
    rows = []
    for info, logrank in parts:
        first = logrank[logrank["draw"] == 0]
        for row in first.itertuples():
            rows.append({"dataset": info["dataset"], "data_origin": info["data_origin"],
                         **scoped_columns(info["privacy"], 1), "group_a": row.group_a,
                         "group_b": row.group_b,
                         "statistic": row.statistic, "p_value": row.p_value,
                         "robust_statistic": getattr(row, "robust_statistic", np.nan),
                         "robust_p_value": getattr(row, "robust_p_value", np.nan)})
    return pd.DataFrame(rows)


def rejection_table(parts, *, significance: float) -> pd.DataFrame:
    """How often each pair's log-rank test on an RRR release decides as on the original data.

    ``rejection_rate`` is the share of draws whose test rejects at
    ``significance``; ``agreement_with_original`` the share whose decision
    (reject or not) equals the original data's (``original_rejects``), the
    quantity behind the paper's "no conclusion changes". It is neither a
    power nor a false-positive rate: the original decision is itself a
    random outcome, not the truth. ``robust_*`` repeat both with the
    cluster-robust test per person.
    """
    if not 0 < significance < 1:
        raise ValueError(f"significance must lie in (0, 1), got {significance}")
    rows = []
    for info, logrank, original in parts:
        reference = original.set_index(["group_a", "group_b"])
        for (a, b), pair in logrank.groupby(["group_a", "group_b"], sort=False):
            ref = reference.loc[(a, b)]
            rejects = pair["p_value"] < significance
            original_rejects = bool(ref["p_value"] < significance)
            row = {"dataset": info["dataset"], "data_origin": info["data_origin"],
                   **scoped_columns(info["privacy"], pair["draw"].nunique()),
                   "group_a": a, "group_b": b,
                   "rejection_rate": float(np.mean(rejects)),
                   "agreement_with_original": float(np.mean(rejects == original_rejects)),
                   "repetitions": int(pair["draw"].nunique()),
                   "significance": significance,
                   "original_p_value": float(ref["p_value"]),
                   "original_rejects": original_rejects}
            if "robust_p_value" in pair and "robust_p_value" in ref:
                robust = pair["robust_p_value"] < significance
                robust_original = bool(ref["robust_p_value"] < significance)
                row.update(robust_rejection_rate=float(np.mean(robust)),
                           robust_agreement_with_original=float(
                               np.mean(robust == robust_original)),
                           original_robust_rejects=robust_original)
            rows.append(row)
    return pd.DataFrame(rows)


def _steps(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Step times (shared by every draw) and values ``(draws, times)`` of one group's curves."""
    return _steps_of(frame["draw"].to_numpy(), frame["t"].to_numpy(float),
                     frame["survival"].to_numpy(float))


def _steps_of(draw, t, survival) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_steps` on arrays: rows in (draw, t) order (a stable sort, as pandas')."""
    step_draw, step_t = np.diff(draw), np.diff(t)
    if ((step_draw > 0) | ((step_draw == 0) & (step_t > 0))).all():
        # stored curves are already in (draw, t) order, every draw at the same times
        first = int(np.argmax(step_draw > 0)) + 1 if (step_draw > 0).any() else len(t)
        times = t[:first]
        if len(t) % first == 0 and (t.reshape(-1, first) == times).all():
            return times, survival.reshape(-1, first)
    order = np.lexsort((t, draw))
    times = np.unique(t)
    return times, survival[order].reshape(-1, len(times))


def _step_at(times, values, at) -> np.ndarray:
    """Right-continuous step functions (rows of ``values``) read at ``at`` (1 before start)."""
    idx = np.searchsorted(times, at, side="right") - 1
    return np.where(idx >= 0, values[:, np.maximum(idx, 0)], 1.0)


#: The common support of the utility score: times where the original group still has at
#: least this many persons' rows at risk (its KM curve there rests on five or more).
SUPPORT_MIN_AT_RISK = 5
#: A released curve undefined on more than this share of the common support scores the
#: worst sup-distance, 1.
MAX_UNDEFINED_SHARE = 0.5


def sup_distances(curves: pd.DataFrame, original: pd.DataFrame, *,
                  min_at_risk: int | None = SUPPORT_MIN_AT_RISK) -> pd.DataFrame:
    r"""Sup-distance of each draw's released curve to the original, per group, exactly.

    Both are right-continuous step functions, so
    :math:`\sup_t |\tilde S(t) - \hat S(t)|` over an interval is attained at
    a jump of one of them: both are read at the union of their step times
    (no resampling grid). The score is taken on a **common support**, the
    same for every mechanism: :math:`[0, \tau_g]` with :math:`\tau_g` the last
    time at which the original group has at least ``min_at_risk`` at risk
    (its ``at_risk`` column; ``None``: the original's whole follow-up). Past
    it the original curve rests on a handful of persons and a release that
    stops there (a KM curve of released labels ends at its released group's
    last time) is not scored on it. Columns:

    ``distance``
        the sup over the support where the released curve is defined, of the
        released curve clipped to [0, 1] (debiased RRR's curve can leave it:
        post-processing, medians unchanged); 1, the worst possible value (the
        range of S), when the released curve is
        undefined on more than half of the support (:data:`MAX_UNDEFINED_SHARE`):
        a release that says nothing about most of the support must not score
        well on the rest (a curve undefined from the first bin end scored 0
        before);
    ``undefined_share``
        share of the support (by length of time) where the released curve is
        undefined (debiased RRR: inverted at-risk ≤ 0; grid LNTE: estimated
        at-risk < 1; LNTE and KM past a group's last time), reported beside
        the distance;
    ``scored_worst``
        whether the distance is that worst value 1;
    ``support_end``
        :math:`\tau_g`.
    """
    rows = []
    # numpy per group, not a pandas groupby: this runs for every release of every cohort
    codes, labels = pd.factorize(curves["group"])
    draw_all = curves["draw"].to_numpy()
    t_all = curves["t"].to_numpy(float)
    s_all = curves["survival"].to_numpy(float)
    for code, label in enumerate(labels):
        mine = codes == code
        t_r, s_r = _steps_of(draw_all[mine], t_all[mine], s_all[mine])
        own = original[original["group"] == label]
        t_o, s_o = _steps_of(np.zeros(len(own), dtype=int), own["t"].to_numpy(float),
                             own["survival"].to_numpy(float))
        defined_o = np.isfinite(s_o[0])
        end = t_o[defined_o].max() if defined_o.any() else 0.0
        if min_at_risk is not None:
            if "at_risk" not in own:
                raise ValueError("the original curves need an 'at_risk' column to score on "
                                 f"the support with at least {min_at_risk} at risk")
            risk = own["at_risk"].to_numpy(float)[np.argsort(own["t"].to_numpy(float),
                                                             kind="stable")]
            enough = t_o[(risk >= min_at_risk) & defined_o]
            end = enough.max() if enough.size else -np.inf
        at = np.union1d(t_r, t_o)
        at = at[at <= end]
        draws = np.unique(draw_all[mine])
        if at.size == 0:
            rows.append(pd.DataFrame({"draw": draws, "group": label, "distance": np.nan,
                                      "undefined_share": np.nan, "scored_worst": False,
                                      "support_end": np.nan}))
            continue
        o = _step_at(t_o, s_o, at)[0]
        # a debiased curve can leave [0, 1] (inverted counts); scored as the survival
        # function a reader would take from it, clipped to its range: the worst
        # distance is then 1, the value a mostly undefined release scores
        r = np.clip(_step_at(t_r, s_r, at), 0.0, 1.0)
        width = np.diff(np.r_[at, end])
        o_def = np.isfinite(o)
        r_def = np.isfinite(r)
        both = r_def & o_def[None, :]
        gap = np.where(both, np.abs(r - o), -np.inf)
        distance = gap.max(axis=1)
        distance = np.where(np.isfinite(distance), distance, np.nan)
        missing = ~r_def & o_def[None, :]
        span = float(np.sum(width[o_def]))
        share = (missing * width).sum(axis=1) / span if span > 0 else missing.any(axis=1) * 1.0
        worst = share > MAX_UNDEFINED_SHARE
        rows.append(pd.DataFrame({"draw": draws, "group": label,
                                  "distance": np.where(worst, 1.0, distance),
                                  "undefined_share": share, "scored_worst": worst,
                                  "support_end": end}))
    return pd.concat(rows, ignore_index=True)


def utility_table(parts) -> pd.DataFrame:
    """Utility of each release: sup-distance of KM curves and median error, over draws.

    ``sup_distance_mean`` is the mean over draws of sup_t |S̃(t) − Ŝ_original(t)|
    on the common support (times where the original group has at least
    ``support_min_at_risk`` at risk, :data:`SUPPORT_MIN_AT_RISK`) where the
    released curve is defined, taken exactly at the union of the curves' jump
    times (:func:`sup_distances`); the claims and the utility figure use the
    same score. ``undefined_share_mean`` is the mean share of that support
    where the released curve is undefined, its own column (not folded into
    the distance, except that a draw undefined on more than half of it
    scores the worst distance 1, :func:`sup_distances`); ``scored_worst`` is
    the share of draws scored so. ``median_abs_error`` is the median over draws of
    |median − original median| among draws where both are finite;
    ``not_reached`` the share of draws whose released curve never reaches 0.5;
    ``censored`` the share whose curve stops above 0.5 before the group's last time
    (a median known only to exceed the stop time, left out of ``median_abs_error``).
    """
    rows = []
    for info, curves, medians, original_curves, original_medians, *precomputed in parts:
        # a sixth item: the release's sup_distances, computed once for this table and the
        # claims (it is what sup_distances gives for curves and original_curves)
        distance = precomputed[0] if precomputed else sup_distances(
            curves, original_curves, min_at_risk=SUPPORT_MIN_AT_RISK)
        reference = original_medians.set_index("group")["median"]
        for label in info["labels"]:
            own = distance["group"] == label
            d = distance.loc[own, "distance"].to_numpy(float)
            share = distance.loc[own, "undefined_share"].to_numpy(float)
            worst = distance.loc[own, "scored_worst"].to_numpy(bool)
            m = medians.loc[medians["group"] == label, "median"].to_numpy(float)
            target = float(reference.loc[label])
            finite = np.isfinite(m) & np.isfinite(target)
            errors = np.abs(m[finite] - target)
            scored = d.size and np.isfinite(d).any()
            rows.append({"dataset": info["dataset"], "data_origin": info["data_origin"],
                         **scoped_columns(info["privacy"], len(m)), "group": label,
                         "support_min_at_risk": SUPPORT_MIN_AT_RISK,
                         "support_end": float(distance.loc[own, "support_end"].iloc[0])
                         if own.any() else np.nan,
                         "sup_distance_mean": float(np.nanmean(d)) if scored else np.nan,
                         "sup_distance_q90": float(np.nanquantile(d, 0.9)) if scored else np.nan,
                         "undefined_share_mean": float(np.nanmean(share))
                         if share.size and np.isfinite(share).any() else np.nan,
                         "scored_worst": float(np.mean(worst)) if worst.size else np.nan,
                         "median_abs_error": float(np.median(errors)) if errors.size else np.nan,
                         "not_reached": float(np.mean(np.isinf(m))) if m.size else np.nan,
                         # a curve that stops above 0.5 before its group's last time: the
                         # median is only bounded below, so it is not in median_abs_error
                         "censored": float(np.mean(np.isnan(m))) if m.size else np.nan,
                         "original_median": target, "draws": int(len(m))})
    return pd.DataFrame(rows)


def band_table(parts, *, level: float) -> pd.DataFrame:
    """Pointwise bands of the released KM curves over draws (quantiles (1±level)/2)."""
    lo, hi = (1 - level) / 2, (1 + level) / 2
    frames = []
    for info, curves in parts:
        # (group, t) keys in order of first appearance, as groupby(sort=False) orders them
        group_codes, groups = pd.factorize(curves["group"])
        time_codes, times = pd.factorize(curves["t"])
        codes, keys = pd.factorize(group_codes.astype(np.int64) * len(times) + time_codes)
        lower, middle, upper, count = _group_quantiles(
            codes, curves["survival"].to_numpy(float), len(keys), (lo, 0.5, hi))
        band = pd.DataFrame({"group": groups[keys // len(times)],
                             "t": times[keys % len(times)],
                             "lower": lower, "middle": middle, "upper": upper,
                             "defined": count / curves["draw"].nunique()})
        privacy = scoped_columns(info["privacy"], curves["draw"].nunique())
        for key, value in {"dataset": info["dataset"], "data_origin": info["data_origin"],
                           **privacy, "level": level}.items():
            band[key] = value
        frames.append(band)
    columns = ["dataset", "data_origin", *TABLE_PRIVACY_COLUMNS, "level", "group", "t",
               "lower", "middle", "upper", "defined"]
    return pd.concat(frames, ignore_index=True)[columns]


def _group_quantiles(codes, values, groups: int, quantiles):
    r"""Quantiles of ``values`` within each group code, NaN left out, and the non-NaN counts.

    The rule of pandas' ``groupby(...).quantile`` (linear): with ``n`` values
    sorted, :math:`h = q (n - 1)`, the value at :math:`\lfloor h \rfloor`
    plus ``(next - value) * (h mod 1)``, NaN where ``n = 0``; written with
    numpy for all groups at once (the same operations, so the same numbers)
    because the bands take it over every time of every release.
    """
    values = np.asarray(values, dtype=float)
    codes = np.asarray(codes)
    valid = ~np.isnan(values)
    n = np.bincount(codes[valid], minlength=groups)
    rows = len(values) // max(groups, 1)
    if groups and rows * groups == len(values) and np.array_equal(
            codes, np.tile(np.arange(groups), rows)):
        # every draw lists every key in the same order: sort the (draws, keys) columns
        ordered = np.sort(values.reshape(rows, groups), axis=0).T.ravel()  # NaN last
        starts = np.arange(groups) * rows
    else:
        order = np.lexsort((values, ~valid, codes))  # by group, non-NaN first, ascending
        ordered = values[order]
        starts = np.r_[0, np.cumsum(np.bincount(codes, minlength=groups))[:-1]]
    out = []
    for q in quantiles:
        h = q * (n - 1).astype(float)
        idx = starts + np.maximum(h, 0).astype(np.int64)
        frac = np.mod(h, 1)
        last = len(ordered) - 1
        value = ordered[np.minimum(idx, last)]
        following = ordered[np.minimum(idx + 1, last)]
        result = np.where(frac == 0.0, value, value + (following - value) * frac)
        out.append(np.where(n > 0, result, np.nan))
    return (*out, n)


def curve_table(parts) -> pd.DataFrame:
    """Draw-0 curves of every release plus the original: the data of Figure 2.

    Curves are listed at their exact step times. ``at_risk`` and ``censored``
    (numbers at risk and censorings at each time) are given for the original
    only (the figure's at-risk table and censoring ticks); empty for releases.
    """
    frames = []
    for info, curves in parts:
        first = curves[curves["draw"] == 0].drop(columns="draw")
        for key, value in {"dataset": info["dataset"], "data_origin": info["data_origin"],
                           **scoped_columns(info["privacy"], 1)}.items():
            first = first.assign(**{key: value})
        frames.append(first)
    columns = ["dataset", "data_origin", *TABLE_PRIVACY_COLUMNS, "group", "t", "survival",
               "at_risk", "censored"]
    return pd.concat(frames, ignore_index=True)[columns]
