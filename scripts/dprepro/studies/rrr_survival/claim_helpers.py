"""What the ``rrr_survival`` claims share: the paper's numbers, shares of draws, release files.

The declarations of :mod:`dprepro.studies.rrr_survival.claims` and
:mod:`dprepro.studies.rrr_survival.cox_claims` read their evidence through these helpers:
the cohorts and numbers the paper prints (:data:`PAPER`), the share of draws in which a
single-draw statement is true with its Clopper–Pearson interval (:func:`share_interval`,
:func:`share_evidence`), where a statement comes from for a cohort (:func:`paper_or_beyond`)
the per-release tables the claims job reads, and the context the declarations compute
from (:class:`StudyContext`, one :class:`CohortContext` per cohort).
"""

from __future__ import annotations

import re
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import special

from dprepro.claims.registry import Evidence
from dprepro.claims.table import BEYOND, verdict
from dprepro.runtime.io import read_table
from dprepro.studies.rrr_survival.aggregate import (
    MAX_UNDEFINED_SHARE,
    SUPPORT_MIN_AT_RISK,
    sup_distances,
)
from dprepro.studies.rrr_survival.outputs import GROUP_COLUMNS, distances_by_release
from dprepro.studies.rrr_survival.releases import release_record

__all__ = ["KIDNEY_FOOTNOTE", "MAJORITY", "MEDIAN_TOLERANCE", "PAPER", "SHARE_CI", "SOURCE",
           "STUDY", "UNITS", "CohortContext", "StudyContext", "origin_text", "paper_or_beyond",
           "share_evidence", "share_interval", "tolerance_columns"]

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
    # analysed in Figure 2 only (the kidney curves are omitted there: footnote 2)
    "ipssr": {"tables": False, "figure": True},
}
#: Where the paper speaks of the kidney curves, which Figure 2 (IPSS-R) omits.
KIDNEY_FOOTNOTE = "§5, footnote 2 (the kidney curves 'show similar trends', omitted)"
#: Share of draws above which a single-draw statement "holds".
MAJORITY = ">= 0.5"
#: Mean relative median error within which a draw "preserves the medians" (ours).
MEDIAN_TOLERANCE = 0.25
#: The interval of a share of draws.
SHARE_CI = "Clopper-Pearson (exact binomial) over draws"
#: The independent units of every interval over draws: each draw is a fresh release.
UNITS = "draws (independent releases of the cohort)"


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


def share_evidence(flags, *, note: str = "", **kwargs) -> Evidence:
    """The share of draws whose flag is set, with its Clopper–Pearson interval.

    Parameters
    ----------
    flags : array-like of bool
        One flag per draw: whether the draw shows the statement.
    note : str
        What else the row's numbers need to be read (after the draw counts).
    **kwargs
        Further :class:`~dprepro.claims.registry.Evidence` fields.
    """
    flags = np.asarray(flags, dtype=bool)
    value, lo, hi = share_interval(int(flags.sum()), flags.size)
    return Evidence(value, lo, hi, note=f"Clopper-Pearson 95% over {flags.size} draws; "
                    f"draw 0 (the paper's single draw): {bool(flags[0])}; {note}", **kwargs)


def tolerance_columns(errors, tolerance: float, criterion: str) -> dict:
    """The verdicts of a share-of-draws claim at half and twice its error tolerance.

    Parameters
    ----------
    errors : array-like of float
        One error per draw; a draw shows the statement when its error is within tolerance.
    tolerance : float
        The tolerance of the row's own verdict.
    criterion : str
        The criterion of the share.

    Returns
    -------
    dict
        ``verdict_half_tolerance`` and ``verdict_double_tolerance``.
    """
    columns = {}
    for column, scale in (("verdict_half_tolerance", 0.5), ("verdict_double_tolerance", 2.0)):
        flags = np.asarray(errors) <= tolerance * scale
        _, lo, hi = share_interval(int(flags.sum()), flags.size)
        columns[column] = verdict(lo, hi, criterion)
    return columns


def paper_or_beyond(dataset: str, where: str, omitted: str | None = None) -> str:
    """The source of a statement of the paper's ``where`` on ``dataset``.

    The paper's statements are cited for the cohorts it analysed: a table's for the
    cohort the table reports (kidney), Figure 2's for the cohort it shows (IPSS-R) and,
    for kidney, whose curves it omits, ``omitted`` (``where`` citing footnote 2, which
    says they "show similar trends"). Elsewhere the statement is applied beyond the
    paper: on a cohort the paper analysed whose table it does not print ("a cohort
    Table N does not report"), or on a cohort the paper never used ("a cohort the paper
    did not analyse").
    """
    paper = PAPER.get(dataset)
    if paper is None:
        return f"{BEYOND} (the statement of {where}, on a cohort the paper did not analyse)"
    table = re.search(r"Table \d", where)
    if table and not paper.get("tables"):
        return (f"{BEYOND} (the statement of {where}, on a cohort {table.group()} does not "
                "report)")
    if "Figure 2" in where and not paper.get("figure") and omitted is not None:
        where = omitted
    return f"{SOURCE}, {where}"


def origin_text(origin: str) -> str:
    """What a cohort's data are, as the notes say it."""
    return {"synthetic": "data: synthetic stand-in for the paper's cohort",
            "simulation": "data: simulated (no real patient)"}.get(origin, "data: real")


def release_text(key) -> str:
    """A release key as the notes name it: ``lnte_grid ε = 1 (grid=4,rows=1,horizon=0.5)``."""
    dataset, mechanism, epsilon, calibration = key
    text = mechanism + ("" if epsilon is None else f" ε = {epsilon:g}")
    return f"{dataset} {text}" + (f" ({calibration})" if calibration else "")


def _horizon(calibration: str) -> float | None:
    """The public horizon a release's ``calibration`` text states (``horizon=<H>``)."""
    found = re.search(r"(?:^|,)horizon=([^,]+)", calibration or "")
    return float(found.group(1)) if found else None


def release_key(r) -> tuple:
    """``(dataset, mechanism, epsilon, calibration)`` of a release record."""
    return r["dataset"], r["mechanism"], r["epsilon"], r.get("calibration", "")


def by_release(releases, paths) -> dict:
    """One table per release, keyed by :func:`release_key`."""
    return {release_key(r): read_table(p, text_columns=GROUP_COLUMNS)
            for r, p in zip(releases, paths, strict=True)}


def relative_median_error(released: pd.DataFrame, original: pd.DataFrame) -> np.ndarray:
    """Per draw: the mean relative error of the group medians (not reached = 1)."""
    target = original.set_index("group")["median"]
    merged = released.join(target.rename("target"), on="group")
    merged = merged[np.isfinite(merged["target"])]
    err = np.where(np.isfinite(merged["median"]),
                   np.abs(merged["median"] - merged["target"]) / merged["target"], 1.0)
    return pd.Series(err, index=merged.index).groupby(merged["draw"]).mean().to_numpy()


def mean_distance(scores: pd.DataFrame) -> pd.Series:
    """Per draw: mean over groups of the sup-distance on the common support."""
    return scores.groupby("draw")["distance"].mean()


def undefined_share(scores: pd.DataFrame) -> float:
    """Mean over draws and groups of the undefined share of the common support."""
    return float(scores["undefined_share"].mean())


def release_scores(inputs, releases) -> dict:
    """Per private release: :func:`~dprepro.studies.rrr_survival.aggregate.sup_distances` of
    its curves to the original's (per draw and group), read from the table the utility job
    wrote with them (``inputs["distances"]``), else computed from ``inputs["curves"]``."""
    # by name (Snakemake's input list tests ``in`` against its paths, not its names)
    if "distances" in dict(inputs.items()):
        return distances_by_release(inputs["distances"])
    curves = by_release(releases, inputs["curves"])
    return {k: sup_distances(c, curves[(k[0], "original", None, "")],
                             min_at_risk=SUPPORT_MIN_AT_RISK)
            for k, c in curves.items() if k[1] != "original"}


class CohortContext:
    """What the claims of one cohort read: its original release and its references.

    Parameters
    ----------
    claims : StudyContext
        The claims job's inputs.
    name : str
        The cohort (dataset).
    """

    def __init__(self, claims: StudyContext, name: str):
        self.claims, self.name = claims, name
        info = claims.info[name]
        self.origin = info["data_origin"]
        # the cohort's person: whom every release of it protects
        self.unit = info.get("privacy_unit", "patient")
        self.medians = claims.medians[(name, "original", None, "")]
        self.logrank = claims.logrank[(name, "original", None, "")]
        self.labels = list(self.medians["group"])
        self.robust = name in claims.clustered
        self.p_col = "robust_p_value" if self.robust else "p_value"
        self.original_p = self.logrank.set_index(["group_a", "group_b"])[self.p_col]

    def agreement(self, logrank: pd.DataFrame) -> np.ndarray:
        """Per draw: whether every pair's log-rank decision equals the original's."""
        level = self.claims.significance
        ref = logrank.join(self.original_p.rename("p0"), on=["group_a", "group_b"])
        same = (ref[self.p_col] < level) == (ref["p0"] < level)
        return same.groupby(ref["draw"]).all().to_numpy()

    @cached_property
    def permuted(self) -> tuple[int, int, tuple[float, float, float]]:
        """Agreeing and all permutations of the permuted-label reference, and its share."""
        table = self.claims.permuted[self.name]
        agree, n = int(self.agreement(table).sum()), int(table["draw"].nunique())
        return agree, n, share_interval(agree, n)

    def rrr_errors(self, epsilon) -> np.ndarray:
        """RRR's mean relative median error per draw at ``epsilon`` (paper calibration)."""
        key = (self.name, "rrr", epsilon, self.claims.published)
        if key not in self.claims.errors:
            self.claims.errors[key] = relative_median_error(self.claims.medians[key],
                                                            self.medians)
        return self.claims.errors[key]

    def true_eps(self, mechanism, epsilon, calibration=None) -> float:
        """The true ε of a release of this cohort (``calibration`` None: the paper's)."""
        if calibration is None:
            calibration = self.claims.published
        return release_record(mechanism, epsilon=epsilon, labels=self.labels,
                              calibration=calibration).true_epsilon

    def degenerate(self, *keys) -> str:
        """Why a claim on these releases cannot be decided (``""``: it can).

        A claim computed on an empty or degenerate release must not get a verdict (a
        comparison with a release that says nothing is won by anything): a release with
        no scored curve on the common support (empty), or a grid release whose public
        horizon ends before half of a group's common support (a horizon, or times, in
        the wrong unit: the grid says nothing about the rest, and its last value stands
        for it). Each reason names the release and the configuration key to check.
        """
        if empty := self.empty(*keys):
            return empty
        for key in keys:
            scores, name = self.claims.scores[key], release_text(key)
            horizon = _horizon(key[3])
            ends = scores.groupby("group")["support_end"].max()
            short = ends[ends * (1 - MAX_UNDEFINED_SHARE) > horizon] if horizon else ends[:0]
            if len(short):
                group, end = short.index[0], float(short.iloc[0])
                return (f"the {name} release is degenerate: its grid ends at the horizon "
                        f"{horizon:g}, {horizon / end:.0%} of group {group}'s common support "
                        f"(to {end:.4g}), so it says nothing about the rest; check "
                        f"datasets.{self.name}.horizon against the data's time unit")
        return ""

    def empty(self, *keys) -> str:
        """Why a release of ``keys`` is empty (no scored curve on the common support), or
        ``""``; a claim then has no number at all (:meth:`undecided`)."""
        for key in keys:
            scores = self.claims.scores.get(key)
            if scores is None or not len(scores) or not np.isfinite(scores["distance"]).any():
                return (f"the {release_text(key)} release is empty: no released curve on the "
                        "common support, so there is nothing to compare")
        return ""

    def undecided(self, reason: str) -> Evidence:
        """Evidence without a number: the claim is untestable for ``reason``."""
        return self.evidence(np.nan, np.nan, np.nan, untestable=reason)

    def note(self, mechanism, epsilon, calibration=None, extra="") -> str:
        """The note every row of a release starts with: the data and the two ε."""
        shown = self.claims.published if calibration is None else calibration
        return (f"{origin_text(self.origin)}; {mechanism} calibration {shown or '-'}: "
                f"stated ε {epsilon:g}, true ε "
                f"{self.true_eps(mechanism, epsilon, calibration):.3f}{extra}")

    def evidence(self, value, lower, upper, **kwargs) -> Evidence:
        """Evidence of this cohort (its data origin and privacy unit)."""
        return Evidence(value, lower, upper, data_origin=self.origin,
                        privacy_unit=self.unit, **kwargs)

    def share(self, flags, where=None, omitted=None, **kwargs) -> Evidence:
        """A share of draws; ``where`` the paper's table or figure it applies (``omitted``:
        :func:`paper_or_beyond`'s source for a cohort whose curves Figure 2 omits)."""
        if where is not None:
            source = paper_or_beyond(self.name, where, omitted)
            kwargs["source"] = source
            if not source.startswith(SOURCE):
                kwargs["claim_origin"] = "beyond"
        return share_evidence(flags, data_origin=self.origin, privacy_unit=self.unit,
                              **kwargs)


class StudyContext:
    """What every claim of the study reads.

    The arguments are those of :func:`~dprepro.studies.rrr_survival.claims.rrr_claims`.
    """

    def __init__(self, inputs, *, releases, logrank_releases, significance, rng, clustered,
                 curve_releases=()):
        self.releases, self.significance = releases, significance
        # the curves the curve claims read (the originals, RRR at the paper's calibration,
        # LNTE), where the claims job was given them
        self.group_curves = (by_release(curve_releases, inputs["group_curves"])
                             if "group_curves" in dict(inputs.items()) else {})
        self.clustered = set(clustered)
        self.medians = by_release(releases, inputs["medians"])
        self.scores = release_scores(inputs, releases)
        self.logrank = by_release(logrank_releases, inputs["logrank"])
        originals = [r for r in releases if r["mechanism"] == "original"]
        self.permuted = {r["dataset"]: read_table(path, text_columns=GROUP_COLUMNS)
                         for r, path in zip(originals, inputs["permuted"], strict=True)}
        self.info = {r["dataset"]: r for r in originals}
        calibrations = list(dict.fromkeys(r["calibration"] for r in releases
                                          if r["mechanism"] == "rrr"))
        self.published = calibrations[0] if calibrations else ""
        self.other_calibrations = calibrations[1:]
        # the published calibration's rows draw from rng; the others from a child stream
        # (spawning leaves rng's own draws unchanged), so adding them changes no other row
        self.rng, self.extra_rng = rng, rng.spawn(1)[0]
        self.datasets = list(dict.fromkeys(r["dataset"] for r in releases))
        self.epsilons = sorted({r["epsilon"] for r in releases if r["epsilon"] is not None})
        self.errors: dict = {}
        self.cohorts = {d: CohortContext(self, d) for d in self.datasets}

    @property
    def axes(self) -> dict:
        """The study's axes: cohorts, ε and the calibrations after the paper's."""
        return {"dataset": self.datasets, "epsilon": self.epsilons,
                "calibration": self.other_calibrations}

    def grid_calibration(self, dataset) -> str:
        """The calibration of the cohort's grid LNTE release (equal true ε)."""
        for r in self.releases:
            if r["dataset"] == dataset and r["mechanism"] == "lnte_grid":
                return r["calibration"]
        return ""
