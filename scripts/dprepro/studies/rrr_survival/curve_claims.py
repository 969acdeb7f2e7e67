r"""The ``rrr_survival`` claims read off the released curves themselves, and across cohorts.

Statements of the paper that the per-release scores (distances to the original) cannot
decide, because they are about the groups' curves relative to each other, about LNTE's
recursion, or about one cohort against another:

``rrr.lnte_distinctions_less_pronounced.<dataset>.eps<ε>`` (§5, Figure 2, smallest ε)
    LNTE's share in "making the distinction between risk groups less pronounced"
    (``rrr.distinctions_less_pronounced`` tests RRR by its log-rank statistic; LNTE
    releases no labels, so the distinction is measured on the curves): share of draws
    whose LNTE group separation is below the original's.
``rrr.gradual_convergence.<dataset>.<mechanism>`` (§5, discussion of Figure 2)
    "a gradual convergence of the survival curves for different values of ε": share of
    draw indices whose group separation rises at every step of the configured ε (the
    curves converge towards each other as ε falls), per mechanism (RRR as published and
    LNTE); untestable with fewer than three ε ("gradual" needs two steps).
``rrr.lnte_needs_truncation.<dataset>.eps<ε>`` (§4, closing remarks)
    "when the population reaches zero, the LNTE method needs to be truncated": share of
    draws in which LNTE's noisy at-risk recursion reaches zero in some group (its curve,
    not truncated as published, restarts at 1 there).
``rrr.lnte_truncation_falls_with_epsilon.<dataset>`` (§4, closing remarks)
    "Otherwise, the researcher must rely on a higher privacy budget": the share of
    draws reaching zero at the smallest ε minus at the largest, Newcombe's interval, > 0.
``rrr.low_cardinality_impact.eps<ε>`` (§5, Table 2 and its discussion)
    "the Kidney dataset's low cardinality has an impact on both methods": for RRR and
    LNTE each, the mean sup-distance to the original on kidney minus on IPSS-R (the
    paper's other, larger cohort), Welch's normal interval over the draws; the row's
    value and interval are the smaller of the two (both must be above 0).

The **group separation** of a release draw is the mean over pairs of groups of
:math:`\sup_t |S_a(t) - S_b(t)|` on the pair's common support (times up to the earlier
of the two groups' last time with at least
:data:`~dprepro.studies.rrr_survival.aggregate.SUPPORT_MIN_AT_RISK` of the original at
risk), the curves clipped to [0, 1] (LNTE's may leave it) and read where defined.

None of these rows draws random numbers (Clopper–Pearson, Newcombe, normal intervals),
so they change no other row's bootstrap.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from dprepro.claims.registry import CLAIMS, Evidence
from dprepro.claims.table import BEYOND, newcombe_difference
from dprepro.studies.rrr_survival.aggregate import SUPPORT_MIN_AT_RISK, _step_at, _steps_of
from dprepro.studies.rrr_survival.claim_helpers import (
    KIDNEY_FOOTNOTE,
    MAJORITY,
    PAPER,
    SHARE_CI,
    SOURCE,
    STUDY,
    UNITS,
    mean_distance,
    paper_or_beyond,
)

__all__ = ["group_separation", "lnte_resets", "support_ends"]

_FIGURE2 = "§5, Figure 2 and its discussion"
_REMARKS = "§4 (closing remarks)"
_TABLE2_TEXT = "§5, Table 2 and its discussion"
#: The paper's sentences the rows test, quoted in their sources.
_SENTENCES = {
    "distinction": "'for lower values of the privacy budget, ε = 1, the mechanisms alter the "
                   "trend of the survival rates across time, making the distinction between "
                   "risk groups less pronounced'",
    "gradual": "'Upon applying the RRR and the LNTE mechanisms, we observe a gradual "
               "convergence of the survival curves for different values of ε'",
    "truncated": "'when the population reaches zero, the LNTE method needs to be truncated'",
    "budget": "'when the population reaches zero, the LNTE method needs to be truncated. "
              "Otherwise, the researcher must rely on a higher privacy budget'",
    "cardinality": "'the Kidney dataset's low cardinality has an impact on both methods "
                   "employed'",
}


def _where(base: str, sentence: str) -> str:
    return f"{base}: {_SENTENCES[sentence]}"


def _omitted(sentence: str) -> str:
    """A kidney row's source of a Figure 2 sentence: footnote 2, and the sentence."""
    return f"{KIDNEY_FOOTNOTE}, of {_SENTENCES[sentence]}"
_SEPARATION = (f"group separation: mean over pairs of groups of the sup-distance between "
               f"their curves on the pair's common support (original at-risk >= "
               f"{SUPPORT_MIN_AT_RISK})")
#: The cohorts of the paper's Table 2 sentence: the small one, and the paper's other.
_SMALL, _LARGE = "kidney", "ipssr"


def support_ends(original: pd.DataFrame) -> pd.Series:
    """Per group: the last time the original curve is defined with enough at risk."""
    ok = original[(original["at_risk"] >= SUPPORT_MIN_AT_RISK)
                  & np.isfinite(original["survival"])]
    return ok.groupby("group", sort=False)["t"].max()


def group_separation(curves: pd.DataFrame, ends: pd.Series) -> pd.Series:
    r"""Per draw: the mean over group pairs of :math:`\sup_t |S_a(t) - S_b(t)|`.

    Each pair is read at the union of its two curves' step times up to the earlier of
    the two groups' ``ends`` (right-continuous steps, exact for step functions), where
    both are defined; a draw whose pair has no such time leaves that pair out.
    """
    steps = {}
    for group, part in curves.groupby("group", sort=False):
        if group in ends.index:
            draws = np.unique(part["draw"].to_numpy())
            times, values = _steps_of(part["draw"].to_numpy(), part["t"].to_numpy(float),
                                      part["survival"].to_numpy(float))
            steps[group] = (draws, times, np.clip(values, 0.0, 1.0))
    gaps = []
    for a, b in itertools.combinations(list(steps), 2):
        (da, ta, sa), (db, tb, sb) = steps[a], steps[b]
        common, ia, ib = np.intersect1d(da, db, return_indices=True)
        at = np.union1d(ta, tb)
        at = at[at <= min(float(ends[a]), float(ends[b]))]
        if not at.size or not common.size:
            continue
        gap = np.abs(_step_at(ta, sa[ia], at) - _step_at(tb, sb[ib], at))
        with np.errstate(invalid="ignore"):
            best = np.where(np.isfinite(gap), gap, -np.inf).max(axis=1)
        gaps.append(pd.Series(np.where(np.isfinite(best), best, np.nan), index=common))
    if not gaps:
        return pd.Series(dtype=float)
    return pd.concat(gaps, axis=1).mean(axis=1).sort_index()


def lnte_resets(curves: pd.DataFrame) -> pd.Series:
    """Per draw: whether LNTE's at-risk recursion reached zero in some group.

    As published LNTE is not truncated: where its running at-risk count :math:`r'_j`
    falls to zero or below, its curve restarts at exactly 1 (the array's initial value).
    A restart is a time whose value is exactly 1 after one that was not (before its
    first step a curve is 1 too, so a restart before it goes unseen: a lower count).
    """
    ordered = curves.sort_values(["draw", "group", "t"], kind="stable")
    s = ordered["survival"].to_numpy(float)
    same = ((ordered["draw"].to_numpy()[1:] == ordered["draw"].to_numpy()[:-1])
            & (ordered["group"].to_numpy()[1:] == ordered["group"].to_numpy()[:-1]))
    restart = same & (s[1:] == 1.0) & np.isfinite(s[:-1]) & (s[:-1] != 1.0)
    flags = pd.Series(np.r_[False, restart], index=ordered.index)
    return flags.groupby(ordered["draw"]).any().sort_index()


class _Curves:
    """What the curve claims of one run read (the claims job's :class:`StudyContext`)."""

    def __init__(self, claims):
        self.claims = claims
        self.curves = claims.group_curves
        self.ends = {d: support_ends(self.curves[(d, "original", None, "")])
                     for d in claims.datasets if (d, "original", None, "") in self.curves}

    def separation(self, key) -> pd.Series | None:
        if key not in self.curves or key[0] not in self.ends:
            return None
        return group_separation(self.curves[key], self.ends[key[0]])

    def key(self, dataset, mechanism, epsilon):
        calibration = self.claims.published if mechanism == "rrr" else ""
        return (dataset, mechanism, epsilon, calibration)

    def bindings(self, smallest=False) -> list[dict]:
        eps = self.claims.epsilons[:1] if smallest else self.claims.epsilons
        return [{"dataset": d, "epsilon": e} for d in self.ends for e in eps
                if (d, "lnte", e, "") in self.curves]


def _context(claims) -> _Curves | None:
    return _Curves(claims) if getattr(claims, "group_curves", None) else None


def _smallest_eps(claims) -> list[dict]:
    """Each cohort at the smallest ε, where its LNTE curves are read."""
    curves = _context(claims)
    return curves.bindings(smallest=True) if curves else []


def _every_eps(claims) -> list[dict]:
    """Each cohort and ε with LNTE curves."""
    curves = _context(claims)
    return curves.bindings() if curves else []


def _per_mechanism(claims) -> list[dict]:
    """Each cohort, for RRR (the paper's calibration) and LNTE."""
    curves = _context(claims)
    return [{"dataset": d, "mechanism": m} for d in (curves.ends if curves else ())
            for m in ("rrr", "lnte")]


def _per_cohort(claims) -> list[dict]:
    """Each cohort with LNTE curves at two ε or more."""
    curves = _context(claims)
    if not curves or len(claims.epsilons) < 2:
        return []
    return [{"dataset": d} for d in curves.ends
            if all((d, "lnte", e, "") in curves.curves for e in claims.epsilons)]


def _both_cohorts(claims) -> list[dict]:
    """Each ε, where both of the paper's cohorts ran."""
    if not {_SMALL, _LARGE} <= set(claims.datasets):
        return []
    return [{"epsilon": e} for e in claims.epsilons]


@CLAIMS.declare(
    "rrr.lnte_distinctions_less_pronounced.{dataset}.eps{epsilon:g}", study=STUDY,
    statement="At the smallest ε LNTE makes the distinction between risk groups less "
              "pronounced ({dataset}, ε = {epsilon:g})",
    origin="paper", source=f"{SOURCE}, {_where(_FIGURE2, 'distinction')}",
    statistic=f"share of draws whose LNTE {_SEPARATION} is below the original's",
    criterion=MAJORITY, units=UNITS, ci_method=SHARE_CI, over=_smallest_eps)
def lnte_distinctions_less_pronounced(claims, *, dataset, epsilon) -> Evidence | None:
    """LNTE's share in the paper's "the mechanisms alter the trend ..., making the
    distinction between risk groups less pronounced" (ε = 1): measured on the curves,
    since LNTE releases no labels to run a log-rank test on."""
    curves, cohort = _Curves(claims), claims.cohorts[dataset]
    original = curves.separation((dataset, "original", None, ""))
    lnte = curves.separation((dataset, "lnte", epsilon, ""))
    if original is None or lnte is None or not len(lnte) or not len(original):
        return None
    reference = float(original.iloc[0])
    return cohort.share(
        lnte.to_numpy() < reference, _where(_FIGURE2, "distinction"),
        omitted=_omitted("distinction"),
        untestable=cohort.degenerate((dataset, "lnte", epsilon, "")),
        note=cohort.note("lnte", epsilon, calibration="", extra=(
            f"; original group separation {reference:.3f}, LNTE median "
            f"{float(lnte.median()):.3f}; the paper reads it off Figure 2 (IPSS-R, ε = 1) "
            "for both mechanisms; rrr.distinctions_less_pronounced tests RRR")))


@CLAIMS.declare(
    "rrr.gradual_convergence.{dataset}.{mechanism}", study=STUDY,
    statement="The {mechanism} survival curves of the groups converge gradually as ε falls "
              "({dataset}, ε = {epsilons})",
    origin="paper", source=f"{SOURCE}, {_where(_FIGURE2, 'gradual')}",
    statistic=f"share of draw indices whose {_SEPARATION} rises at every step of the "
              "configured ε (the same draw index at each ε: independent releases)",
    criterion=MAJORITY, units=UNITS, ci_method=SHARE_CI, over=_per_mechanism)
def gradual_convergence(claims, *, dataset, mechanism) -> Evidence | None:
    """The paper: "Upon applying the RRR and the LNTE mechanisms, we observe a gradual
    convergence of the survival curves for different values of ε. Specifically, for
    lower values of the privacy budget, ε = 1, the mechanisms alter the trend ...,
    making the distinction between risk groups less pronounced". Under labels that do
    not depend on ε, each of the m! orders of a draw index's separations is equally
    likely (1/6 rise at every step for three ε)."""
    curves, cohort = _Curves(claims), claims.cohorts[dataset]
    keys = [curves.key(dataset, mechanism, e) for e in claims.epsilons]
    series = [curves.separation(k) for k in keys]
    if any(s is None or not len(s) for s in series) or len(series) < 2:
        return None
    table = pd.concat(series, axis=1, join="inner")
    rises = (np.diff(table.to_numpy(), axis=1) > 0).all(axis=1)
    untestable = cohort.degenerate(*keys) or (
        "" if len(keys) >= 3 else f"{len(keys)} configured ε: 'gradual' needs two steps "
                                  "(three ε) at least")
    shown = ", ".join(f"{e:g}" for e in claims.epsilons)
    medians = ", ".join(f"{float(s.median()):.3f}" for s in series)
    calibration = claims.published if mechanism == "rrr" else ""
    return cohort.share(
        rises, _where(_FIGURE2, "gradual"), omitted=_omitted("gradual"), untestable=untestable,
        fields={"epsilons": shown},
        note=cohort.note(mechanism, max(claims.epsilons), calibration=calibration, extra=(
            f"; median group separation at ε = {shown}: {medians}; the original's "
            f"{float(curves.separation((dataset, 'original', None, '')).iloc[0]):.3f}")))


@CLAIMS.declare(
    "rrr.lnte_needs_truncation.{dataset}.eps{epsilon:g}", study=STUDY,
    statement="LNTE's noisy population reaches zero, so that LNTE needs to be truncated "
              "({dataset}, ε = {epsilon:g})",
    origin="paper", source=f"{SOURCE}, {_where(_REMARKS, 'truncated')}",
    statistic="share of draws in which LNTE's at-risk recursion reaches zero in some group "
              "(its curve, not truncated as published, restarts at 1)",
    criterion=MAJORITY, units=UNITS, ci_method=SHARE_CI, over=_every_eps)
def lnte_needs_truncation(claims, *, dataset, epsilon) -> Evidence | None:
    """The paper (§4): "when the population reaches zero, the LNTE method needs to be
    truncated" — as published it is not, and its curve restarts at 1 (:func:`lnte_resets`)."""
    cohort, key = claims.cohorts[dataset], (dataset, "lnte", epsilon, "")
    resets = lnte_resets(claims.group_curves[key])
    return cohort.share(
        resets.to_numpy(), _where(_REMARKS, "truncated"), untestable=cohort.degenerate(key),
        note=cohort.note("lnte", epsilon, calibration="", extra=(
            "; a restart before a group's first step goes unseen (a lower count)")))


@CLAIMS.declare(
    "rrr.lnte_truncation_falls_with_epsilon.{dataset}", study=STUDY,
    statement="Without truncation LNTE must rely on a higher privacy budget: fewer draws "
              "reach zero at ε = {high:g} than at ε = {low:g} ({dataset})",
    origin="paper", source=f"{SOURCE}, {_where(_REMARKS, 'budget')}",
    statistic="share of draws whose LNTE at-risk recursion reaches zero at ε = {low:g} minus "
              "the same share at ε = {high:g}",
    criterion="> 0", units=UNITS,
    ci_method="Newcombe's hybrid score interval for a difference of two proportions (draws "
              "at each ε)", over=_per_cohort)
def lnte_truncation_falls_with_epsilon(claims, *, dataset) -> Evidence | None:
    """The paper (§4): "Otherwise, the researcher must rely on a higher privacy budget"."""
    cohort = claims.cohorts[dataset]
    low, high = min(claims.epsilons), max(claims.epsilons)
    keys = [(dataset, "lnte", e, "") for e in (low, high)]
    flags = [lnte_resets(claims.group_curves[k]).to_numpy() for k in keys]
    d, lo, hi = newcombe_difference(int(flags[0].sum()), flags[0].size,
                                    int(flags[1].sum()), flags[1].size)
    where = paper_or_beyond(dataset, _where(_REMARKS, "budget"))
    return cohort.evidence(
        d, lo, hi, fields={"low": low, "high": high}, untestable=cohort.degenerate(*keys),
        **({} if where.startswith(SOURCE) else {"source": where, "claim_origin": "beyond"}),
        note=cohort.note("lnte", low, calibration="", extra=(
            f"; reaches zero in {int(flags[0].sum())} of {flags[0].size} draws at "
            f"ε = {low:g}, {int(flags[1].sum())} of {flags[1].size} at ε = {high:g}")))


def _rows(claims, dataset) -> int | None:
    """The rows of a cohort's original data (at risk at its groups' first times)."""
    original = (getattr(claims, "group_curves", None) or {}).get((dataset, "original", None, ""))
    if original is None:
        return None
    return int(original.groupby("group")["at_risk"].max().sum())


def _welch(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """Difference of two independent means with its normal (Welch) 95 % interval."""
    from scipy.special import ndtri  # scipy.stats.norm.ppf's numbers, without scipy.stats

    d = float(a.mean() - b.mean())
    half = float(ndtri(0.975)) * float(np.sqrt(a.var(ddof=1) / a.size
                                                   + b.var(ddof=1) / b.size))
    return d, d - half, d + half


@CLAIMS.declare(
    "rrr.low_cardinality_impact.eps{epsilon:g}", study=STUDY,
    statement="The kidney cohort's low cardinality has an impact on both methods: RRR's and "
              "LNTE's curves are further from the original on kidney than on IPSS-R "
              "(ε = {epsilon:g})",
    origin="paper", source=f"{SOURCE}, {_where(_TABLE2_TEXT, 'cardinality')}",
    statistic="the smaller over RRR (the paper's calibration) and LNTE of: mean sup-distance "
              "to the original on kidney minus on IPSS-R (per draw the mean over groups)",
    criterion="> 0",
    units="draws of each cohort (independent releases)",
    ci_method="Welch's normal interval for each difference of means over draws; the row's "
              "ends are the smaller of the two (both differences must be above 0)",
    over=_both_cohorts)
def low_cardinality_impact(claims, *, epsilon) -> Evidence | None:
    """The paper (Table 2's discussion): "the Kidney dataset's low cardinality has an
    impact on both methods employed". Read as: both mechanisms' curves are further from
    the original on kidney than on the paper's other, larger cohort (here IPSS-R's
    stand-in, so the cohorts also differ in more than their size; the note says so)."""
    parts, text = [], []
    for mechanism in ("rrr", "lnte"):
        calibration = claims.published if mechanism == "rrr" else ""
        keys = [(d, mechanism, epsilon, calibration) for d in (_SMALL, _LARGE)]
        if any(k not in claims.scores for k in keys):
            return None
        small, large = (mean_distance(claims.scores[k]).to_numpy() for k in keys)
        parts.append(_welch(small, large))
        text.append(f"{mechanism} {parts[-1][0]:+.3f} [{parts[-1][1]:.3f}, "
                    f"{parts[-1][2]:.3f}]")
    value, lower, upper = (min(p[i] for p in parts) for i in range(3))
    problem = (claims.cohorts[_SMALL].degenerate(*[(_SMALL, m, epsilon, c) for m, c in (
        ("rrr", claims.published), ("lnte", ""))]) or claims.cohorts[_LARGE].degenerate(
        *[(_LARGE, m, epsilon, c) for m, c in (("rrr", claims.published), ("lnte", ""))]))
    origins = sorted({claims.cohorts[d].origin for d in (_SMALL, _LARGE)})
    size = ", ".join(f"{d} {n} rows" for d in (_SMALL, _LARGE)
                     if (n := _rows(claims, d)) is not None)
    return Evidence(
        value, lower, upper, untestable=problem, data_origin=",".join(origins),
        privacy_unit=claims.cohorts[_SMALL].unit,
        note=f"difference kidney − IPSS-R in mean sup-distance to the original: "
             f"{'; '.join(text)}" + (f"; {size}" if size else "")
             + "; IPSS-R is " + ("a synthetic stand-in" if "synthetic" in origins else "real")
             + ": the cohorts differ in more than their size (groups, follow-up)"
             + ("" if _SMALL in PAPER else f"; {BEYOND}"))
