r"""The Cox claims of ``rrr_survival``: Cox regression on RRR labels (the paper's future work).

The paper names Cox regression on the released labels as future work, so every Cox claim
is ours (``beyond``). Each is declared once here and expands over every cohort, ε and
calibration of ``cox.csv``: the id ``rrr.<claim>.<dataset>.eps<ε>`` at the study's first
calibration (the paper's), with ``.<calibration>`` appended at every other (e.g.
``exact``, where the true ε is the stated one). Claim texts say "stated ε (true ε …)": at
the paper's calibration the true ε is ε + ln(k − 1).

``rrr.cox_naive_attenuated``
    per draw the attenuation factor
    :math:`\sum_j s_j \hat\beta^{naive}_j / \sum_j |\hat\beta^{orig}_j|` over the group
    terms (:math:`s_j` the original's sign; 1 = none, 0 = all), its mean with a normal
    Monte Carlo interval, < 1.
``rrr.cox_corrected_unbiased``
    the absolute bias (log-HR units) of the corrected score's main contrast
    (:func:`~dprepro.studies.rrr_survival.cox.main_term`) against ``original_tau`` on
    real cohorts, within ±:data:`COX_BIAS_TOLERANCE` (ours: half and double verdicts);
    on simulation cohorts against the true log HR, untestable (one cohort's sampling
    error is wider than the tolerance).
``rrr.cox_corrected_coverage``
    share of draws whose 95 % interval covers that reference (Clopper–Pearson), kept as
    a number but untestable (:data:`_COX_COVERAGE_UNTESTABLE`).
``rrr.cox_patients_needed``
    persons needed (:func:`~dprepro.studies.rrr_survival.cox.patients_needed`), largest
    over the original's significant group terms, against the cohort's persons: decided
    under the statement's own assumption (the observed effect is the true one; the
    interval is the Monte Carlo error of the mean SE); no row when no term is significant.

Every note gives the convergence share; bias and coverage are conditional on a fit, and a
corrected-score share below :data:`COX_MIN_CONVERGED` makes its verdicts not firm
(``reliable=False``).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

from dprepro.claims.registry import CLAIMS, Evidence
from dprepro.claims.table import BEYOND, Tolerance
from dprepro.studies.rrr_survival.claim_helpers import (
    SOURCE,
    STUDY,
    origin_text,
    share_interval,
)
from dprepro.studies.rrr_survival.cox import LABEL_ONLY, POWER, Z95, main_term

__all__ = ["COX_BIAS_TOLERANCE", "COX_COVERAGE_TOLERANCE", "COX_MIN_CONVERGED",
           "COX_SOURCE", "cox_claims"]

#: Source of the Cox claims: the paper names Cox regression as future work.
COX_SOURCE = f"{SOURCE}, Conclusions (future work)"
#: Convergence share of the corrected score below which its rows' verdicts are not firm
#: (non-convergence is not at random: fits fail where the estimate would be extreme).
COX_MIN_CONVERGED = 0.8
#: Tolerance of the corrected score's absolute bias, in log-HR units (ours).
COX_BIAS_TOLERANCE = 0.1
#: How far below the nominal 0.95 the coverage may be (ours).
COX_COVERAGE_TOLERANCE = 0.05
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
_AT = ("({dataset}, stated ε {epsilon:g} (true ε {true_epsilon:.3f}), {calibration} "
       "calibration)")


class _CoxCohort:
    """What every Cox claim of one cohort reads: its original fit and the reference."""

    def __init__(self, table: pd.DataFrame, name: str):
        self.name = name
        self.rows = table[table["dataset"] == name]
        self.origin = self.rows["data_origin"].iloc[0]
        self.unit = self.rows["privacy_unit"].iloc[0]
        self.simulated = bool(np.isfinite(self.rows["true_log_hr"]).any())
        self.term = main_term(table, name)[0]
        original = self.rows[self.rows["estimator"] == "original"].set_index("term")
        self.against = "the true log HR" if self.simulated else (
            "the original fit (true labels, events after τ censored, as the corrected score)")
        self.signs = original.loc[original.index.str.contains(" vs ", regex=False),
                                  "log_hr"].dropna()


class _CoxRelease:
    """One cohort, ε and calibration: its draws and their corrected-score summary."""

    def __init__(self, cox: _Cox, cohort: _CoxCohort, epsilon, calibration, rel):
        self.cox, self.cohort, self.rel = cox, cohort, rel
        draws = cox.draws
        self.mine = ((draws["dataset"] == cohort.name) & (draws["epsilon"] == epsilon)
                     & (draws["calibration"] == calibration))
        self.true_epsilon = float(rel["true_epsilon"].iloc[0])
        self.note = (f"beyond the paper (its future work); {origin_text(cohort.origin)}; RRR "
                     f"{calibration} calibration: stated ε {epsilon:g}, true ε "
                     f"{self.true_epsilon:.3f}; the Cox fit is post-processing of the RRR "
                     f"release (same guarantee: {LABEL_ONLY})")

    def evidence(self, value, lower, upper, extra, **kwargs) -> Evidence:
        """Evidence of this release: the note, the cohort's data origin and unit."""
        return Evidence(value, lower, upper, note=self.note + extra,
                        data_origin=self.cohort.origin, privacy_unit=self.cohort.unit,
                        **kwargs)

    @cached_property
    def corrected(self):
        """The corrected score's draws of the main term, or ``None`` when there are none."""
        draws, term = self.cox.draws, self.cohort.term
        cs = draws[self.mine & (draws["term"] == term)
                   & (draws["estimator"] == "corrected_score")]
        if not len(cs):
            return None
        ok = cs[cs["converged"]]
        share = len(ok) / len(cs)
        fit = self.rel[(self.rel["estimator"] == "corrected_score")
                       & (self.rel["term"] == term)]
        firm = share >= COX_MIN_CONVERGED
        reason = "" if firm else (
            f"{len(ok)} of {len(cs)} draws' corrected-score fits converged ({share:.1%}), "
            f"below {COX_MIN_CONVERGED:.0%}: the interval is conditional on a fit, and fits "
            "fail where the estimate would be extreme (not at random)")
        return dict(
            cs=cs, ok=ok, share=share, firm=firm, reason=reason,
            ref=float(fit["true_log_hr" if self.cohort.simulated else "original_log_hr"]
                      .iloc[0]),
            orig_se=float(fit["original_se"].iloc[0]),
            converged=(f"; {len(ok)} of {len(cs)} draws converged (convergence share "
                       f"{share:.2f}"
                       + ("" if firm else f", below {COX_MIN_CONVERGED:g}: verdict not firm")
                       + f"); {_COX_CONDITIONAL}"))


class _Cox:
    """What the Cox claims read: ``cox.csv``, the per-draw fits and the calibrations."""

    def __init__(self, table: pd.DataFrame, draws: pd.DataFrame, calibration: str):
        self.table, self.draws, self.published = table, draws, calibration
        self.group = draws["term"].str.contains(" vs ", regex=False)
        self.calibrations = list(dict.fromkeys(
            [calibration] + [c for c in table.loc[table["mechanism"] == "rrr", "calibration"]
                             if c != calibration]))

    @cached_property
    def releases(self) -> list[dict]:
        """One binding per cohort, calibration and ε of an RRR release."""
        bindings = []
        for name in dict.fromkeys(self.table["dataset"]):
            cohort = _CoxCohort(self.table, name)
            mine = cohort.rows
            for cal in self.calibrations:
                for e in sorted(mine.loc[(mine["mechanism"] == "rrr")
                                         & (mine["calibration"] == cal), "epsilon"].unique()):
                    rel = mine[(mine["epsilon"] == e) & (mine["calibration"] == cal)]
                    if not len(rel):
                        continue
                    release = _CoxRelease(self, cohort, e, cal, rel)
                    bindings.append({"dataset": name, "epsilon": e, "calibration": cal,
                                     "true_epsilon": release.true_epsilon,
                                     "term": cohort.term, "release": release})
        return bindings

    def at(self, published: bool) -> list[dict]:
        """The bindings at the paper's calibration (``published``) or at the others."""
        return [b for b in self.releases if (b["calibration"] == self.published) == published]


def _cox_claim(name: str, *, statement: str, **texts):
    """Declare a Cox claim at the paper's calibration and, with the calibration appended
    to its id, at every other: one entry, two id patterns."""
    def register(compute):
        for suffix, published in (("", True), (".{calibration}", False)):
            CLAIMS.declare(
                f"rrr.{name}.{{dataset}}.eps{{epsilon:g}}{suffix}", study=STUDY,
                statement=f"{statement} {_AT}", origin="beyond",
                source=f"{BEYOND} ({COX_SOURCE})",
                over=lambda cox, published=published: cox.at(published), **texts)(compute)
        return compute
    return register


@_cox_claim(
    "cox_naive_attenuated",
    statement="The naive Cox fit on RRR labels is attenuated towards 0",
    statistic="attenuation factor: the naive group log HRs signed as the original's, summed, "
              "over the sum of |original log HR| (1 = none, 0 = all), mean over draws",
    criterion="< 1", units="draws with a converged naive fit (independent releases)",
    ci_method="normal Monte Carlo interval over draws")
def cox_naive_attenuated(cox, *, release, **_) -> Evidence | None:
    """The naive fit's group log HRs shrink towards 0 (misclassified labels)."""
    draws, signs = cox.draws, release.cohort.signs
    naive_all = draws[release.mine & cox.group & (draws["estimator"] == "naive")]
    naive = naive_all[naive_all["converged"]]
    if len(naive) <= 1 or not len(signs):
        return None
    wide = naive.pivot(index="draw", columns="term", values="log_hr")[signs.index]
    factor = ((wide * np.sign(signs)).sum(axis=1, min_count=len(signs))
              / signs.abs().sum()).dropna()
    m, h = factor.mean(), Z95 * factor.std(ddof=1) / np.sqrt(len(factor))
    share = naive_all.groupby("draw")["converged"].all().mean()
    return release.evidence(
        m, m - h, m + h,
        f"; {len(factor)} draws with a fit (convergence share {share:.2f}; conditional on a "
        "fit); original log HRs " + ", ".join(f"{k} {v:.3f}" for k, v in signs.items()))


@_cox_claim(
    "cox_corrected_unbiased",
    statement="The corrected-score Cox fit of {term} is unbiased, given a fit",
    statistic="bias (log-HR units) of the mean corrected log HR over converged draws against "
              "the original fit (real cohorts) or the true log HR (simulation cohorts)",
    criterion="within [-t, t], t = COX_BIAS_TOLERANCE (0.1 log HR)",
    units="draws with a converged corrected-score fit (independent releases)",
    ci_method="normal Monte Carlo interval over converged draws (on simulation cohorts "
              "widened by the original fit's SE, the cohort's sampling error)",
    tolerance="COX_BIAS_TOLERANCE")
def cox_corrected_unbiased(cox, *, release, **_) -> Evidence | None:
    """The corrected score's bias against the reference; on a simulation cohort
    untestable (one cohort's sampling error is wider than the tolerance)."""
    fit, cohort = release.corrected, release.cohort
    if fit is None or len(fit["ok"]) <= 1:
        return None
    ok, ref, simulated = fit["ok"], fit["ref"], cohort.simulated
    spread = np.sqrt(ok["log_hr"].var(ddof=1) / len(ok)
                     + (fit["orig_se"] ** 2 if simulated else 0.0))
    value = ok["log_hr"].mean() - ref
    h = Z95 * spread
    return release.evidence(
        value, value - h, value + h,
        fit["converged"] + f"; ±{COX_BIAS_TOLERANCE:g} in log HR is our tolerance",
        statistic=f"bias (log-HR units) of the mean corrected log HR over converged draws "
                  f"against {cohort.against} ({ref:.3f})",
        ci_method="normal Monte Carlo interval over converged draws" + (
            ", widened by the original fit's SE (the cohort's sampling error)"
            if simulated else ""),
        criterion=Tolerance(lambda t: f"within [{-t:g}, {t:g}]", COX_BIAS_TOLERANCE),
        reliable=fit["firm"], reliability_reason=fit["reason"],
        untestable=_COX_TRUTH_UNTESTABLE.format(
            what="the bias", se=fit["orig_se"]) if simulated else "")


@_cox_claim(
    "cox_corrected_coverage",
    statement="The corrected-score 95% intervals of {term} cover at about the nominal rate",
    statistic="share of draws whose interval covers the original fit (real cohorts) or the "
              "true log HR (simulation cohorts); a draw without a fit covers nothing",
    criterion=">= 0.95 - t, t = COX_COVERAGE_TOLERANCE (0.05)", units="draws (independent "
    "releases; they vary the privacy noise only, not the cohort)",
    ci_method="Clopper-Pearson (exact binomial) over draws",
    tolerance="COX_COVERAGE_TOLERANCE",
    untestable="the draws vary only the privacy noise of one cohort, so coverage against "
               "its own original fit or the true log HR tests no nominal coverage (a "
               "replicated-cohort simulation is needed); the number is kept")
def cox_corrected_coverage(cox, *, release, **_) -> Evidence | None:
    """Share of draws whose 95 % interval covers the reference (kept, untestable)."""
    fit, cohort = release.corrected, release.cohort
    if fit is None:
        return None
    cs, ref = fit["cs"], fit["ref"]
    hits = (cs["ci_lower"] <= ref) & (ref <= cs["ci_upper"])
    value, lo, hi = share_interval(int(hits.sum()), len(cs))
    return release.evidence(
        value, lo, hi, fit["converged"] + "; 0.05 below the nominal 0.95 would be our tolerance",
        statistic=f"share of draws whose interval covers {cohort.against} ({ref:.3f}; a draw "
                  "without a fit covers nothing)",
        criterion=Tolerance(lambda t: f">= {0.95 - t:g}", COX_COVERAGE_TOLERANCE),
        reliable=fit["firm"], reliability_reason=fit["reason"],
        untestable=_COX_TRUTH_UNTESTABLE.format(
            what="the coverage", se=fit["orig_se"]) if cohort.simulated
        else _COX_COVERAGE_UNTESTABLE)


@_cox_claim(
    "cox_patients_needed",
    statement="The cohort has enough persons for the corrected Cox fit to keep the "
              "original's conclusions (sign and 5% significance), if the observed effect "
              "were the true one",
    statistic=f"persons needed for {POWER:.0%} power with the SE scaled as 1/sqrt(n), taking "
              "the observed |log HR| of original_tau as true, largest over the original's "
              "significant group terms",
    criterion="<= the cohort's persons", units="draws with a converged corrected-score fit "
    "(the Monte Carlo error of the mean SE only)",
    ci_method="normal Monte Carlo interval of the mean SE over draws, squared (the Monte "
              "Carlo error only: not the effect's uncertainty)")
def cox_patients_needed(cox, *, release, **_) -> Evidence | None:
    """Persons needed for the corrected fit to keep the original's conclusions; no row
    when no group term of the original is significant.

    The statement is conditional ("if the observed effect were the true one"), and under
    that assumption it is decidable: the only error left is the Monte Carlo error of
    the mean SE over draws, which the interval carries. A corrected-score convergence
    share below :data:`COX_MIN_CONVERGED` makes the mean SE one of a selection of draws
    (``reliable=False``).
    """
    fit, rel, draws = release.corrected, release.rel, cox.draws
    if fit is None:
        return None
    need = rel[(rel["estimator"] == "corrected_score")
               & rel["term"].str.contains(" vs ", regex=False)]
    need = need[np.isfinite(need["patients_needed"])]
    if not len(need):
        return None
    worst = need.loc[need["patients_needed"].idxmax()]
    se = draws[release.mine & cox.group & draws["converged"]
               & (draws["estimator"] == "corrected_score") & (draws["term"] == worst["term"])]["se"]
    h = Z95 * se.std(ddof=1) / np.sqrt(len(se)) if len(se) > 1 else np.inf
    scale = worst["patients_needed"] / worst["se_mean"] ** 2
    persons = int(worst["persons"])
    return release.evidence(
        worst["patients_needed"], scale * max(worst["se_mean"] - h, 0.0) ** 2,
        scale * (worst["se_mean"] + h) ** 2,
        f"; the cohort has {persons} persons; decided under the statement's own assumption "
        "(the observed |log HR| of original_tau, fewer events, is the true effect): the "
        "interval carries only the Monte Carlo error of the mean SE, not the effect's "
        f"uncertainty; corrected-score convergence share {fit['share']:.2f}",
        reliable=fit["firm"], reliability_reason=fit["reason"],
        statistic=f"persons needed for {POWER:.0%} power with the SE scaled as 1/sqrt(n), "
                  "taking the observed |log HR| of original_tau as true, largest over the "
                  f"original's significant group terms ({worst['term']})",
        criterion=f"<= {persons}")


def cox_claims(table: pd.DataFrame, draws: pd.DataFrame, *, calibration: str) -> list[dict]:
    """The Cox claims of every cohort, ε and calibration (see the module notes).

    Parameters
    ----------
    table : pandas.DataFrame
        ``cox.csv``: per cohort, release, estimator and term the fit's summary.
    draws : pandas.DataFrame
        ``cox_draws.parquet``: per draw the fits.
    calibration : str
        The study's first calibration: its rows have the ids ``rrr.<claim>.<dataset>.eps<ε>``,
        every other calibration's ``...eps<ε>.<calibration>``.

    Returns
    -------
    list of dict
        One claims-table row per declared Cox claim and release.
    """
    return CLAIMS.evaluate(_Cox(table, draws, calibration), study=STUDY,
                           module=__name__, privacy_unit="patient")
