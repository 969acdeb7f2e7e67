r"""The ``rrr_survival`` claims table: the paper's statements, tested over draws.

Every claim is computed per dataset and ε from the per-draw release files
(draw 0 is the paper's single draw; the other draws show how often it would
come out that way). A claim about what one draw shows ("RRR preserves the
medians", "no conclusion changes") is scored by the **share of draws** in
which it is true, with a two-sided Clopper–Pearson interval for that share
(:func:`share_interval`), and holds when most draws show it (criterion
``>= 0.5``: a single draw such as the paper's is more likely than not to
show it). Claims about an average use a paired bootstrap. Rows:

``rrr.original_median`` / ``rrr.original_logrank`` (Table 2 / Table 1)
    The non-private kidney medians and pairwise log-rank p-values against
    the numbers the paper prints (``paper_value``). A median is reproduced
    when the printed value is one of our curve's medians: where the KM curve
    is exactly 0.5 on an interval every time in it is a median (lifelines and
    R then report different ends or its midpoint), so the statistic is the
    distance from the printed value to that set.
``rrr.medians_preserved`` (Table 2)
    Share of draws whose mean relative error of the group medians,
    :math:`\frac1k\sum_g |m_g^{RRR} - m_g| / m_g` (not reached = 1), is at most 0.25.
``rrr.no_conclusion_change`` (Table 1)
    Share of draws in which every pair's log-rank decision equals the
    original data's; cohorts with several rows per person use the
    cluster-robust test. Labels independent of the outcome (ε = 0) also
    agree often, above all when the original rejects nothing, so the claim
    holds only if the share's interval lies above the **permuted-label
    reference** (the share for labels permuted among persons, as many draws,
    :func:`~dprepro.studies.rrr_survival.analysis.permuted_logrank`) and above one half.
    When the reference share is at least one half, the interval is Newcombe's on
    the difference of the two shares (the reference is itself estimated), against 0.
``rrr.medians_more_accurate_than_lnte`` (Table 2's discussion)
    Share of draws whose mean relative median error is smaller under RRR than
    under LNTE (the paper: "the RRR method returns median times more accurately").
``rrr.distinctions_less_pronounced`` (Figure 2's discussion, smallest ε)
    Share of draws whose mean pairwise log-rank statistic is below the original's
    (the paper: at ε = 1 "making the distinction between risk groups less
    pronounced").
``rrr.lnte_levels_off`` (Figure 2)
    Share of draws in which at least one LNTE median is not reached
    although the original KM median is.
``rrr.more_accurate_than_lnte`` / ``..._true_eps`` (Conclusions)
    Share of draws whose RRR curves (mean sup-distance over groups) are
    closer to the original than LNTE's: at equal stated ε (RRR as
    published vs LNTE as published) and at equal true ε (RRR with the
    exact calibration vs grid LNTE, both exactly ε-DP).
``rrr.approaches_original`` (Figure 2)
    Share of draw pairs in which RRR at the largest ε is closer to the
    original than at the smallest.
``rrr.debiased_beats_rrr`` (beyond the paper)
    Ratio of the mean sup-distance, debiased over plain RRR, with a paired
    bootstrap interval, at the paper's calibration;
    ``rrr.debiased_beats_rrr_<calibration>`` the same at every other
    configured calibration (``exact``: equal true ε).

Every distance is the score of ``utility.csv`` and the utility figure: the
sup-distance on the common support (times where the original group has at
least :data:`~dprepro.studies.rrr_survival.aggregate.SUPPORT_MIN_AT_RISK` at risk) where the
released curve is defined, 1 for a draw defined on less than half of it
(:func:`~dprepro.studies.rrr_survival.aggregate.sup_distances`); the share of that support
where it is undefined is stated in the note.

Table 1/2 are cited only for the cohorts the paper analysed; the same
statements on other cohorts are marked "beyond the paper".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from dprepro.claims.table import (
    bootstrap_interval,
    claim_row,
    claims_frame,
    newcombe_difference,
    verdict,
)
from dprepro.runtime.io import read_table
from dprepro.studies.rrr_survival.aggregate import SUPPORT_MIN_AT_RISK, sup_distances
from dprepro.studies.rrr_survival.cox import LABEL_ONLY, POWER, Z95, main_term
from dprepro.studies.rrr_survival.outputs import GROUP_COLUMNS, distances_by_release
from dprepro.studies.rrr_survival.releases import release_record

__all__ = ["PAPER", "rrr_claims", "share_interval"]

STUDY = "rrr_survival"
SOURCE = "De Faveri et al. (SEBD 2024)"
#: Cohorts the paper analysed, with the numbers it prints (kidney: non-private
#: medians in months of Table 2; every pairwise log-rank p of Table 1 above 0.05).
PAPER = {
    "kidney": {"tables": True,
               "medians": {"AN": 1.77, "GN": 1.00, "PKD": 2.60, "Other": 4.70},
               "logrank_p_above": 0.05,
               # Table 1's comparison: "applying the RRR mechanism with ε = 3 shows
               # comparable findings with the originals"
               "table1_epsilon": 3.0},
    "ipssr": {"tables": False},
}
#: Share of draws above which a single-draw statement "holds".
MAJORITY = ">= 0.5"


def share_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, float, float]:
    """Share ``successes/trials`` and its two-sided Clopper–Pearson interval.

    Clopper & Pearson (1934): the bounds are Beta quantiles,
    :math:`B^{-1}(a/2; x, n - x + 1)` and :math:`B^{-1}(1 - a/2; x + 1, n - x)`
    (0 at x = 0, 1 at x = n), exact for a binomial count.
    """
    x, n = int(successes), int(trials)
    if n < 1 or not 0 <= x <= n:
        raise ValueError(f"need 0 <= successes <= trials and trials >= 1, got {x}/{n}")
    a = 1 - level
    lower = 0.0 if x == 0 else float(special.betaincinv(x, n - x + 1, a / 2))
    upper = 1.0 if x == n else float(special.betaincinv(x + 1, n - x, 1 - a / 2))
    return x / n, lower, upper


def _share_row(flags, **kwargs) -> dict:
    flags = np.asarray(flags, dtype=bool)
    value, lo, hi = share_interval(int(flags.sum()), flags.size)
    note = kwargs.pop("note", "")
    criterion = kwargs.pop("criterion", MAJORITY)
    return claim_row(study=STUDY, reproduced_value=value, ci_lower=lo, ci_upper=hi,
                     ci_method="Clopper-Pearson (exact binomial) over draws",
                     criterion=criterion, note=f"Clopper-Pearson 95% over {flags.size} draws; "
                     f"draw 0 (the paper's single draw): {bool(flags[0])}; {note}", **kwargs)


def _with_tolerance_verdicts(row: dict, errors, tolerance: float) -> dict:
    """The verdicts of a share-of-draws row at half and twice its error tolerance."""
    for column, scale in (("verdict_half_tolerance", 0.5), ("verdict_double_tolerance", 2.0)):
        flags = np.asarray(errors) <= tolerance * scale
        _, lo, hi = share_interval(int(flags.sum()), flags.size)
        row[column] = verdict(lo, hi, row["criterion"])
    return row


def _key(r) -> tuple:
    return r["dataset"], r["mechanism"], r["epsilon"], r.get("calibration", "")


def _by_release(releases, paths) -> dict:
    return {_key(r): read_table(p, text_columns=GROUP_COLUMNS)
            for r, p in zip(releases, paths, strict=True)}


def _relative_median_error(released: pd.DataFrame, original: pd.DataFrame) -> np.ndarray:
    target = original.set_index("group")["median"]
    merged = released.join(target.rename("target"), on="group")
    merged = merged[np.isfinite(merged["target"])]
    err = np.where(np.isfinite(merged["median"]),
                   np.abs(merged["median"] - merged["target"]) / merged["target"], 1.0)
    return pd.Series(err, index=merged.index).groupby(merged["draw"]).mean().to_numpy()


def _mean_distance(scores: pd.DataFrame) -> pd.Series:
    """Per draw: mean over groups of the sup-distance on the common support."""
    return scores.groupby("draw")["distance"].mean()


def _undefined(scores: pd.DataFrame) -> float:
    """Mean over draws and groups of the undefined share of the common support."""
    return float(scores["undefined_share"].mean())


def _scores(inputs, releases) -> dict:
    """Per private release: :func:`~dprepro.studies.rrr_survival.aggregate.sup_distances` of its
    curves to
    the original's (per draw and group), read from the table the utility job wrote with
    them (``inputs["distances"]``), else computed from ``inputs["curves"]``."""
    # by name (Snakemake's input list tests ``in`` against its paths, not its names)
    if "distances" in dict(inputs.items()):
        return distances_by_release(inputs["distances"])
    curves = _by_release(releases, inputs["curves"])
    return {k: sup_distances(c, curves[(k[0], "original", None, "")],
                             min_at_risk=SUPPORT_MIN_AT_RISK)
            for k, c in curves.items() if k[1] != "original"}


def _source(dataset: str, where: str) -> str:
    if PAPER.get(dataset, {}).get("tables") or (where.startswith("Figure")
                                                and dataset in PAPER):
        return f"{SOURCE}, {where}"
    return f"beyond the paper ({where}'s statement on a cohort the paper did not analyse)"


def _origin_text(origin: str) -> str:
    return {"synthetic": "data: synthetic stand-in for the paper's cohort",
            "simulation": "data: simulated (no real patient)"}.get(origin, "data: real")


def _original_rows(d, medians, logrank, origin, unit) -> list[dict]:
    paper = PAPER.get(d, {})
    rows = []
    for label, value in paper.get("medians", {}).items():
        row = medians.set_index("group").loc[label]
        median = float(row["median"])
        # R's median is the plateau's midpoint, lifelines' one of its ends (which one depends
        # on whether the product rounds to 0.5 or just below): the plateau is both ends
        other = 2 * float(row["median_r"]) - median if bool(row["plateau"]) else median
        start, end = min(median, other), max(median, other)
        plateau = (f"KM exactly 0.5 on [{start:.4g}, {end:.4g}]: every time in it is a median "
                   f"(lifelines here gives {median:.4g}, R the midpoint "
                   f"{float(row['median_r']):.4g})"
                   if end > start else f"no plateau: the median is {median:.4g}")
        # the printed median is reproduced when it is one of our curve's medians (to the
        # printed 2 decimals): on a plateau at 0.5 every time is one, so the statement is
        # about a set, and its distance to the printed value is the statistic
        distance = max(start - value, value - end, 0.0)
        ends = min(abs(value - start), abs(value - end))
        rows.append(claim_row(
            study=STUDY, privacy_unit=unit, claim_id=f"rrr.original_median.{d}.{label}",
            claim=f"Non-private median of {label} ({d}) as printed in Table 2",
            source=f"{SOURCE}, Table 2",
            statistic="distance from the printed median to the nearest median of our KM "
                      "curve (the times where it is exactly 0.5, else the lifelines "
                      "median), months",
            paper_value=value, reproduced_value=distance, ci_lower=distance,
            ci_upper=distance, ci_method="none: non-private, the value is exact",
            criterion="<= 0.01",
            note=f"{_origin_text(origin)}; non-private (no ε); {plateau}"
                 + (f"; the printed value is {ends:.2g} from the plateau's nearer end"
                    if end > start else "")
                 + "; printed to two decimals, 0.01 allows for that rounding; "
                   "reproduced_value is the distance, paper_value the printed median"))
    if "logrank_p_above" in paper:
        level = paper["logrank_p_above"]
        p = float(logrank["p_value"].min())
        rows.append(claim_row(
            study=STUDY, privacy_unit=unit, claim_id=f"rrr.original_logrank.{d}",
            claim=f"No pair of groups differs at {level:g} on the original data ({d}), as in "
            "Table 1", source=f"{SOURCE}, Table 1",
            statistic="smallest plain pairwise log-rank p-value", paper_value=f"> {level:g}",
            reproduced_value=p, ci_lower=p, ci_upper=p,
            ci_method="none: a p-value of the original data", criterion=f"> {level:g}",
            note=f"{_origin_text(origin)}; non-private; smallest cluster-robust p: "
                 f"{float(logrank['robust_p_value'].min()):.3g}"))
    return rows


def rrr_claims(inputs, *, releases, logrank_releases, significance: float,
               rng: np.random.Generator, clustered=()) -> pd.DataFrame:
    """The claims table of the study from the release files (see the module notes).

    ``inputs`` holds ``medians`` (one per release of ``releases``), ``distances``
    (the sup-distance table written with the utility table) or instead ``curves`` (one
    per release; the distances are then computed here), ``logrank`` (one per release
    of ``logrank_releases``) and ``permuted`` (the permuted-label log-rank reference
    of each original release, in the order of ``releases``), optionally ``cox`` and
    ``cox_draws`` (``cox.csv``, ``cox_draws.parquet``: :func:`cox_claims`); ``clustered`` names the
    cohorts with several rows per person, whose conclusions use the
    cluster-robust log-rank test.
    """
    return _claims(inputs, releases=releases, logrank_releases=logrank_releases,
                   significance=significance, rng=rng, clustered=clustered)


def _claims(inputs, *, releases, logrank_releases, significance, rng, clustered):
    medians = _by_release(releases, inputs["medians"])
    scores = _scores(inputs, releases)
    logrank = _by_release(logrank_releases, inputs["logrank"])
    originals = [r for r in releases if r["mechanism"] == "original"]
    permuted = {r["dataset"]: read_table(path, text_columns=GROUP_COLUMNS)
                for r, path in zip(originals, inputs["permuted"], strict=True)}
    calibrations = list(dict.fromkeys(r["calibration"] for r in releases
                                      if r["mechanism"] == "rrr"))
    published = calibrations[0] if calibrations else ""
    # a child stream (spawning leaves rng's own draws unchanged) for the claims of the
    # other calibrations
    extra_rng = rng.spawn(1)[0]
    rows = []
    datasets = list(dict.fromkeys(r["dataset"] for r in releases))
    epsilons = sorted({r["epsilon"] for r in releases if r["epsilon"] is not None})
    info = {r["dataset"]: r for r in releases if r["mechanism"] == "original"}
    for d in datasets:
        first = len(rows)
        origin = info[d]["data_origin"]
        original_m = medians[(d, "original", None, "")]
        original_lr = logrank[(d, "original", None, "")]
        labels = list(original_m["group"])
        # the cohort's person: whom every release of it protects
        unit = info[d].get("privacy_unit", "patient")
        rows += _original_rows(d, original_m, original_lr, origin, unit)

        def share(flags, unit=unit, **kwargs):
            return _share_row(flags, privacy_unit=unit, **kwargs)
        robust = d in clustered
        p_col = "robust_p_value" if robust else "p_value"
        original_p = original_lr.set_index(["group_a", "group_b"])[p_col]

        def agreement(lr, original_p=original_p, p_col=p_col):
            ref = lr.join(original_p.rename("p0"), on=["group_a", "group_b"])
            same = (ref[p_col] < significance) == (ref["p0"] < significance)
            return same.groupby(ref["draw"]).all().to_numpy()

        n_agree = int(agreement(permuted[d]).sum())
        n_permuted = int(permuted[d]["draw"].nunique())
        null_share, null_lo, null_hi = share_interval(n_agree, n_permuted)
        rejects = int((original_p < significance).sum())

        def true_eps(mechanism, e, calibration=published, labels=labels):
            return release_record(mechanism, epsilon=e, labels=labels,
                                  calibration=calibration).true_epsilon

        def note(mechanism, e, calibration=published, extra="", origin=origin):
            return (f"{_origin_text(origin)}; {mechanism} calibration {calibration or '-'}: "
                    f"stated ε {e:g}, true ε {true_eps(mechanism, e, calibration):.3f}{extra}")

        distance = {}
        for e in epsilons:
            tag = f"{d}.eps{e:g}"
            rrr = (d, "rrr", e, published)
            if rrr in medians:
                errors = _relative_median_error(medians[rrr], original_m)
                rows.append(_with_tolerance_verdicts(share(
                    errors <= 0.25, claim_id=f"rrr.medians_preserved.{tag}",
                    claim=f"RRR preserves the group medians ({d}, ε = {e:g})",
                    source=_source(d, "Table 2"),
                    statistic="share of draws whose mean relative error of the group medians "
                    "(not reached = 1) is <= 0.25", note=note("rrr", e, extra=(
                        f"; median error over draws {np.median(errors):.3f}; 0.25 and the "
                        "majority rule are chosen here"))), errors, 0.25))
            if rrr in logrank:
                unchanged = agreement(logrank[rrr])
                test = "cluster-robust (per person)" if robust else "plain"
                untestable = ("; the original rejects no pair, so agreement means 'RRR rejects "
                              "nothing either', which labels independent of the outcome also "
                              "give" if rejects == 0 else
                              f"; the original rejects {rejects} pair(s)")
                statistic = (f"share of draws in which every pair's {test} log-rank decision "
                             f"at {significance:g} equals the original's")
                reference = (f"permuted-label (ε = 0) reference share {null_share:.3f} "
                             f"[{null_lo:.3f}, {null_hi:.3f}] over {n_permuted} permutations")
                common = dict(claim_id=f"rrr.no_conclusion_change.{tag}",
                              claim=f"No pairwise log-rank conclusion changes under RRR ({d}, "
                                    f"ε = {e:g})", source=_source(d, "Table 1"))
                stated_at = PAPER.get(d, {}).get("table1_epsilon")
                if stated_at is not None and e != stated_at:
                    # the paper states it at one ε only; at the others the statement is ours
                    common.update(claim_origin="beyond", source=(
                        f"beyond the paper (Table 1 states it at ε = {stated_at:g} only)"))
                if null_share >= 0.5:
                    # the reference is itself estimated: the interval is on the difference
                    diff, lo, hi = newcombe_difference(int(unchanged.sum()), unchanged.size,
                                                       n_agree, n_permuted)
                    rows.append(claim_row(
                        study=STUDY, privacy_unit=unit, **common,
                        statistic=f"{statistic}, minus the same share for permuted labels",
                        reproduced_value=diff, ci_lower=lo, ci_upper=hi,
                        ci_method="Newcombe's hybrid score interval for a difference of two "
                                  "proportions (draws vs permutations)", criterion="> 0",
                        note=note("rrr", e, extra=(
                            f"; RRR share {unchanged.mean():.3f} over {unchanged.size} draws, "
                            f"{reference}: holds only if the difference's interval lies above "
                            f"0{untestable}"))))
                else:
                    rows.append(share(
                        unchanged, **common, statistic=statistic, criterion="> 0.5",
                        note=note("rrr", e, extra=(
                            f"; {reference}, below one half: holds only if the interval lies "
                            f"above 0.5{untestable}"))))
            if rrr in medians and (d, "lnte", e, "") in medians:
                ours = errors  # RRR's, as medians_preserved reads them
                theirs = _relative_median_error(medians[(d, "lnte", e, "")], original_m)
                n = min(ours.size, theirs.size)
                rows.append(share(
                    ours[:n] < theirs[:n], claim_id=f"rrr.medians_more_accurate_than_lnte.{tag}",
                    claim=f"RRR returns the group medians more accurately than LNTE ({d}, "
                    f"ε = {e:g})", source=_source(d, "Table 2 and its discussion"),
                    statistic="share of draws whose mean relative error of the group medians "
                    "(not reached = 1) is smaller under RRR than under LNTE (same draw index)",
                    note=note("rrr", e, extra=(
                        f"; median error over draws: RRR {np.median(ours):.3f}, LNTE "
                        f"{np.median(theirs):.3f}; LNTE as published (no finite true ε)"))))
            if rrr in logrank and e == min(epsilons):
                chi2 = logrank[rrr].groupby("draw")["statistic"].mean().to_numpy()
                reference = float(original_lr["statistic"].mean())
                rows.append(share(
                    chi2 < reference, claim_id=f"rrr.distinctions_less_pronounced.{tag}",
                    claim=f"At the smallest ε the group distinctions become less pronounced "
                    f"({d}, ε = {e:g})", source=_source(d, "Figure 2 and its discussion"),
                    statistic="share of draws whose mean pairwise log-rank statistic is below "
                    "the original's",
                    note=note("rrr", e, extra=(
                        f"; original mean pairwise log-rank χ² {reference:.3f}, RRR median "
                        f"{np.median(chi2):.3f}; the paper reads it off Figure 2 (IPSS-R, "
                        "ε = 1)"))))
            if (d, "lnte", e, "") in medians:
                lnte = medians[(d, "lnte", e, "")]
                reached = set(original_m.loc[np.isfinite(original_m["median"]), "group"])
                part = lnte[lnte["group"].isin(reached)]
                levels = np.isinf(part["median"]).groupby(part["draw"]).any().to_numpy()
                rows.append(share(
                    levels, claim_id=f"rrr.lnte_levels_off.{tag}",
                    claim=f"LNTE curves level off above 0.5 (median not reached) ({d}, "
                    f"ε = {e:g})", source=_source(d, "Table 2 and its discussion"),
                    statistic="share of draws with an LNTE median not reached in a group whose "
                    "original median is reached", note=note("lnte", e, calibration="")))
            if rrr in scores:
                distance[e] = _mean_distance(scores[rrr])
            comparisons = (
                ("more_accurate_than_lnte", rrr, (d, "lnte", e, ""),
                 "at equal stated ε (RRR and LNTE as published)"),
                ("more_accurate_than_lnte_true_eps", (d, "rrr", e, "exact"),
                 (d, "lnte_grid", e, _grid_calibration(releases, d)),
                 "at equal true ε (RRR exact calibration vs grid LNTE, both ε-DP)"),
            )
            for name, ours, theirs, how in comparisons:
                if ours not in scores or theirs not in scores:
                    continue
                # at equal true ε (the exact calibration, grid LNTE) the mechanisms are ours
                ours_only = {"claim_origin": "beyond"} if name.endswith("_true_eps") else {}
                a = _mean_distance(scores[ours])
                b = _mean_distance(scores[theirs])
                common = a.index.intersection(b.index)
                rows.append(share(
                    a.loc[common].to_numpy() < b.loc[common].to_numpy(),
                    claim_id=f"rrr.{name}.{tag}", **ours_only,
                    claim=f"RRR is more accurate than LNTE {how} ({d}, ε = {e:g})",
                    source=_source(d, "Figure 2 and Conclusions"),
                    statistic="share of draws whose RRR curves are closer to the original "
                    "(mean over groups of the sup-distance on the common support, original "
                    f"at-risk >= {SUPPORT_MIN_AT_RISK}, where defined; a draw defined on less "
                    "than half of it scores 1)",
                    note=note("rrr", e, calibration=ours[3],
                              extra=f"; against {theirs[1]} (true ε "
                              f"{true_eps(theirs[1], e, theirs[3]):.3f}); mean undefined share "
                              f"of the support: RRR {_undefined(scores[ours]):.2f}, "
                              f"{theirs[1]} {_undefined(scores[theirs]):.2f}")))
            for calibration in calibrations:
                debiased = (d, "rrr_debiased", e, calibration)
                plain_key = (d, "rrr", e, calibration)
                if debiased not in scores or plain_key not in scores:
                    continue
                plain = _mean_distance(scores[plain_key])
                better = _mean_distance(scores[debiased])
                common = plain.index.intersection(better.index)
                # the published calibration's rows draw from rng as before; the others from
                # their own child stream, so adding them changes no other row
                with np.errstate(divide="ignore", invalid="ignore"):
                    value, lo, hi = bootstrap_interval(
                        lambda a, b: np.mean(a, axis=-1) / np.mean(b, axis=-1),
                        [better.loc[common].to_numpy(), plain.loc[common].to_numpy()],
                        rng=rng if calibration == published else extra_rng, batched=True)
                suffix = "" if calibration == published else f"_{calibration}"
                at = "" if calibration == published else f", {calibration} calibration"
                rows.append(claim_row(
                    study=STUDY, privacy_unit=unit,
                    claim_id=f"rrr.debiased_beats_rrr{suffix}.{tag}",
                    claim=f"Debiased RRR curves are closer to the original than RRR's ({d}, "
                    f"ε = {e:g}{at})", source="beyond the paper",
                    statistic="mean sup-distance ratio, debiased / plain RRR (on the common "
                    f"support, original at-risk >= {SUPPORT_MIN_AT_RISK}, where defined; a "
                    "draw defined on less than half of it scores 1)",
                    reproduced_value=value, ci_lower=lo, ci_upper=hi,
                    ci_method="paired percentile bootstrap over draws", criterion="< 1",
                    note=note("rrr_debiased", e, calibration=calibration, extra=(
                        "; paired percentile bootstrap over draws; mean undefined share of the "
                        f"support: debiased {_undefined(scores[debiased]):.2f}, "
                        f"plain {_undefined(scores[plain_key]):.2f}"))))
        if len(distance) >= 2:
            low, high = min(distance), max(distance)
            common = distance[low].index.intersection(distance[high].index)
            rows.append(share(
                distance[high].loc[common].to_numpy() < distance[low].loc[common].to_numpy(),
                claim_id=f"rrr.approaches_original.{d}",
                claim=f"RRR curves approach the original as ε grows ({d}, ε = {low:g} → "
                f"{high:g})", source=_source(d, "Figure 2"),
                statistic=f"share of draw pairs closer to the original at ε = {high:g} than at "
                f"ε = {low:g} (mean sup-distance over groups)",
                note=note("rrr", high, extra=f"; at ε = {low:g} true ε "
                          f"{true_eps('rrr', low):.3f}")))
        for row in rows[first:]:
            row["data_origin"] = origin
    if "cox" in dict(inputs.items()):
        cox = read_table(inputs["cox"])
        origins = cox.groupby("dataset")["data_origin"].first().to_dict()
        for row in cox_claims(cox, read_table(inputs["cox_draws"]), calibration=published):
            dataset = next((name for name in origins if f".{name}." in row["claim_id"]
                            or row["claim_id"].endswith(f".{name}")), None)
            row["data_origin"] = origins.get(dataset, "")
            rows.append(row)
    return claims_frame(rows)


def _grid_calibration(releases, dataset) -> str:
    for r in releases:
        if r["dataset"] == dataset and r["mechanism"] == "lnte_grid":
            return r["calibration"]
    return ""


#: Source of the Cox claims: the paper names Cox regression as future work.
COX_SOURCE = f"{SOURCE}, Conclusions (future work)"
#: Convergence share of the corrected score below which its rows' verdicts are not firm
#: (non-convergence is not at random: fits fail where the estimate would be extreme).
COX_MIN_CONVERGED = 0.8
#: Tolerance of the corrected score's absolute bias, in log-HR units (ours).
COX_BIAS_TOLERANCE = 0.1
_COX_CONDITIONAL = ("bias and coverage are conditional on a fit: non-convergence is not at "
                    "random (fits fail where the estimate would be extreme), so a low share "
                    "selects the draws")
_COX_COVERAGE_UNTESTABLE = (
    "coverage of the cohort's own original fit is not a test of nominal coverage: the draws "
    "vary only the privacy noise while the SE also covers the cohort's sampling variance, "
    "so the coverage should be far above 0.95 and a criterion of >= 0.9 cannot detect a "
    "too-small SE (a replicated-cohort simulation is needed; docs/rrr_survival.md gives an "
    "outside one)")
_COX_TRUTH_UNTESTABLE = (
    "one simulated cohort: draws vary only the privacy noise, so {what} against the true log "
    "HR is conditional on this cohort's sampling error (original SE {se:.3f}, wider than the "
    "tolerance); only a replicated-cohort simulation (fresh cohort and release per "
    "replicate) can test it")


def cox_claims(table: pd.DataFrame, draws: pd.DataFrame, *, calibration: str) -> list[dict]:
    r"""The Cox claims of every cohort, ε and calibration (docs/rrr_survival.md).

    ``calibration`` (the study's first) gives the ids ``rrr.<claim>.<dataset>.eps<ε>``;
    every other calibration in ``table`` (e.g. ``exact``, where the true ε is the stated
    one) adds the same rows with ``.<calibration>`` appended. Claim texts say
    "stated ε (true ε …)": at the paper's calibration the true ε is ε + ln(k − 1).

    ``rrr.cox_naive_attenuated``: per draw the attenuation factor
    :math:`\sum_j s_j \hat\beta^{naive}_j / \sum_j |\hat\beta^{orig}_j|` over the group
    terms (:math:`s_j` the original's sign; 1 = none, 0 = all), its mean with a normal
    Monte Carlo interval, < 1. ``rrr.cox_corrected_unbiased``: the absolute bias (log-HR
    units) of the corrected score's main contrast
    (:func:`~dprepro.studies.rrr_survival.cox.main_term`) against ``original_tau`` on
    real cohorts, within ±:data:`COX_BIAS_TOLERANCE` (ours: half and double verdicts);
    on simulation cohorts against the true log HR, untestable (one cohort's sampling
    error is wider than the tolerance). ``rrr.cox_corrected_coverage``: share of draws
    whose 95 % interval covers that reference (Clopper–Pearson), kept as a number but
    untestable (:data:`_COX_COVERAGE_UNTESTABLE`). ``rrr.cox_patients_needed``: persons
    needed (:func:`~dprepro.studies.rrr_survival.cox.patients_needed`), largest over the
    original's significant group terms; untestable (a projection conditional on the
    observed effect; no row when no term is significant). Every note gives the
    convergence share; bias and coverage are conditional on a fit, and a corrected-score
    share below :data:`COX_MIN_CONVERGED` makes its verdicts not firm (``reliable=False``).
    """
    rows = []
    group = draws["term"].str.contains(" vs ", regex=False)
    calibrations = list(dict.fromkeys(
        [calibration] + [c for c in table.loc[table["mechanism"] == "rrr", "calibration"]
                         if c != calibration]))
    for d in dict.fromkeys(table["dataset"]):
        mine = table[table["dataset"] == d]
        origin, unit = mine["data_origin"].iloc[0], mine["privacy_unit"].iloc[0]
        simulated = bool(np.isfinite(mine["true_log_hr"]).any())
        term = main_term(table, d)[0]
        original = mine[mine["estimator"] == "original"].set_index("term")
        against = "the true log HR" if simulated else (
            "the original fit (true labels, events after τ censored, as the corrected score)")
        signs = original.loc[original.index.str.contains(" vs ", regex=False), "log_hr"].dropna()
        for cal in calibrations:
            for e in sorted(mine.loc[(mine["mechanism"] == "rrr")
                                     & (mine["calibration"] == cal), "epsilon"].unique()):
                rel = mine[(mine["epsilon"] == e) & (mine["calibration"] == cal)]
                if not len(rel):
                    continue
                true_eps = float(rel["true_epsilon"].iloc[0])
                tag = f"{d}.eps{e:g}" + ("" if cal == calibration else f".{cal}")
                at = f"({d}, stated ε {e:g} (true ε {true_eps:.3f}), {cal} calibration)"
                rows.extend(_cox_claim_rows(
                    draws, rel, d=d, e=e, cal=cal, tag=tag, at=at, term=term, unit=unit,
                    origin=origin, simulated=simulated, against=against, signs=signs,
                    group=group, note=(
                        f"beyond the paper (its future work); {_origin_text(origin)}; RRR "
                        f"{cal} calibration: stated ε {e:g}, true ε {true_eps:.3f}; the Cox "
                        f"fit is post-processing of the RRR release (same guarantee: "
                        f"{LABEL_ONLY})")))
    return rows


def _cox_claim_rows(draws, rel, *, d, e, cal, tag, at, term, unit, origin, simulated,
                    against, signs, group, note) -> list[dict]:
    """The Cox claims of one cohort, ε and calibration (:func:`cox_claims`)."""
    rows = []
    mine = (draws["dataset"] == d) & (draws["epsilon"] == e) & (draws["calibration"] == cal)

    def row(name, claim, statistic, value, lo, hi, method, criterion, extra, **kw):
        return claim_row(study=STUDY, privacy_unit=unit, claim_id=f"rrr.{name}.{tag}",
                         claim=claim, source=COX_SOURCE, claim_origin="beyond",
                         data_origin=origin, statistic=statistic, reproduced_value=value,
                         ci_lower=lo, ci_upper=hi, ci_method=method, criterion=criterion,
                         note=note + extra, **kw)
    naive_all = draws[mine & group & (draws["estimator"] == "naive")]
    naive = naive_all[naive_all["converged"]]
    if len(naive) > 1 and len(signs):
        wide = naive.pivot(index="draw", columns="term", values="log_hr")[signs.index]
        factor = ((wide * np.sign(signs)).sum(axis=1, min_count=len(signs))
                  / signs.abs().sum()).dropna()
        m, h = factor.mean(), Z95 * factor.std(ddof=1) / np.sqrt(len(factor))
        share = naive_all.groupby("draw")["converged"].all().mean()
        rows.append(row(
            "cox_naive_attenuated", f"The naive Cox fit on RRR labels is attenuated towards 0 "
            f"{at}", "attenuation factor: the naive group log HRs signed as the original's, "
            "summed, over the sum of |original log HR| (1 = none, 0 = all), mean over draws",
            m, m - h, m + h, "normal Monte Carlo interval over draws", "< 1",
            f"; {len(factor)} draws with a fit (convergence share {share:.2f}; conditional "
            "on a fit); original log HRs " + ", ".join(f"{k} {v:.3f}" for k, v in signs.items())))
    cs = draws[mine & (draws["term"] == term) & (draws["estimator"] == "corrected_score")]
    if not len(cs):
        return rows
    ok = cs[cs["converged"]]
    share = len(ok) / len(cs)
    fit = rel[(rel["estimator"] == "corrected_score") & (rel["term"] == term)]
    ref = float(fit["true_log_hr" if simulated else "original_log_hr"].iloc[0])
    orig_se = float(fit["original_se"].iloc[0])
    firm = share >= COX_MIN_CONVERGED
    converged = (f"; {len(ok)} of {len(cs)} draws converged (convergence share {share:.2f}"
                 + ("" if firm else f", below {COX_MIN_CONVERGED:g}: verdict not firm")
                 + f"); {_COX_CONDITIONAL}")
    if len(ok) > 1:
        spread = np.sqrt(ok["log_hr"].var(ddof=1) / len(ok)
                         + (orig_se ** 2 if simulated else 0.0))
        value = ok["log_hr"].mean() - ref
        h = Z95 * spread
        rows.append(row(
            "cox_corrected_unbiased", f"The corrected-score Cox fit of {term} is unbiased, "
            f"given a fit {at}", f"bias (log-HR units) of the mean corrected log HR over "
            f"converged draws against {against} ({ref:.3f})", value, value - h, value + h,
            "normal Monte Carlo interval over converged draws" + (
                ", widened by the original fit's SE (the cohort's sampling error)"
                if simulated else ""), None,
            converged + f"; ±{COX_BIAS_TOLERANCE:g} in log HR is our tolerance",
            tolerance=COX_BIAS_TOLERANCE, criterion_at=lambda t: f"within [{-t:g}, {t:g}]",
            reliable=firm, untestable=_COX_TRUTH_UNTESTABLE.format(
                what="the bias", se=orig_se) if simulated else ""))
    hits = (cs["ci_lower"] <= ref) & (ref <= cs["ci_upper"])
    value, lo, hi = share_interval(int(hits.sum()), len(cs))
    rows.append(row(
        "cox_corrected_coverage", f"The corrected-score 95% intervals of {term} cover at "
        f"about the nominal rate {at}", f"share of draws whose interval covers {against} "
        f"({ref:.3f}; a draw without a fit covers nothing)", value, lo, hi,
        "Clopper-Pearson (exact binomial) over draws", None,
        converged + "; 0.05 below the nominal 0.95 would be our tolerance",
        tolerance=0.05, criterion_at=lambda t: f">= {0.95 - t:g}", reliable=firm,
        untestable=_COX_TRUTH_UNTESTABLE.format(what="the coverage", se=orig_se)
        if simulated else _COX_COVERAGE_UNTESTABLE))
    need = rel[(rel["estimator"] == "corrected_score")
               & rel["term"].str.contains(" vs ", regex=False)]
    need = need[np.isfinite(need["patients_needed"])]
    if len(need):
        worst = need.loc[need["patients_needed"].idxmax()]
        se = draws[mine & group & draws["converged"] & (draws["estimator"] == "corrected_score")
                   & (draws["term"] == worst["term"])]["se"]
        h = Z95 * se.std(ddof=1) / np.sqrt(len(se)) if len(se) > 1 else np.inf
        scale = worst["patients_needed"] / worst["se_mean"] ** 2
        persons = int(worst["persons"])
        rows.append(row(
            "cox_patients_needed", f"The cohort has enough persons for the corrected Cox fit "
            f"to keep the original's conclusions (sign and 5% significance), if the observed "
            f"effect were the true one {at}", f"persons needed for {POWER:.0%} power with the "
            f"SE scaled as 1/sqrt(n), taking the observed |log HR| of original_tau as true, "
            f"largest over the original's significant group terms ({worst['term']})",
            worst["patients_needed"], scale * max(worst["se_mean"] - h, 0.0) ** 2,
            scale * (worst["se_mean"] + h) ** 2,
            "normal Monte Carlo interval of the mean SE over draws, squared (the Monte Carlo "
            "error only: not the effect's uncertainty)", f"<= {persons}",
            f"; the cohort has {persons} persons; a projection conditional on the observed "
            "effect: the interval carries only the Monte Carlo error of the mean SE, treats "
            "|log HR| as true and uses original_tau's (fewer events); corrected-score "
            f"convergence share {share:.2f}",
            untestable="a projection conditional on the observed effect"))
    return rows
