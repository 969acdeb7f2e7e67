"""The papers' privacy statements as claims, decided by analysis and the privacy audit.

Each paper states a privacy guarantee for the mechanism it runs ("Z = δ + Laplace(1/α)
is α-LDP", "RRR is ε-DP", "LNTE ensures DP", "the process has the same DP guarantee
as the learning algorithm of step 3"). These are the most consequential statements of
the papers, so the claims table carries them as rows ``<study>.privacy.<mechanism>...``
beside the statistical ones. A row's evidence is the audit's row of the same mechanism
and stated level (``results/audit/privacy_audit.csv``): the analytic true ε (exact,
where the mechanism has a closed form) and the audit's empirical lower confidence bound
L on ε (level ``1 − 1e-9`` by default), with the criterion "≤ the stated ε (or α)":

* ``holds`` when the true ε is at most the stated one (the audit's L is below it too);
* ``fails`` when L exceeds the stated level (proved with the audit's confidence) or the
  interval [L, true ε] lies above it;
* ``untestable`` when no analytic ε is computed and L does not refute the statement:
  an audit can refute a privacy guarantee but never prove one (the guarantee then
  rests on its published proof, named in the note).

The project's own mechanisms (randomized response on δ, RRR with the exact calibration,
objective perturbation with CMS11's correction, grid LNTE, SSP's Laplace noise on XᵀX,
DP feature selection with hashed parts) are rows of origin ``beyond``; the
audit's deliberately mis-scaled controls are not claims (they show the audit's power).
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pandas as pd

from dprepro.claims.registry import CLAIMS, Evidence
from dprepro.claims.table import claims_frame
from dprepro.mechanisms.identity import identities, identity
from dprepro.mechanisms.registry import MECHANISMS

__all__ = ["confidence", "privacy_claims"]

_STATISTIC = ("privacy loss ε: from the audit's lower confidence bound (level 1 − {level:g}) "
              "to the analytic true ε")
_CI_METHOD = ("lower end: Clopper–Pearson bound of the audit over the draws on worst-case "
              "neighbours; upper end: the analytic true ε (exact, or unbounded above where "
              "not computed)")
_UNITS = "the audit's draws on worst-case neighbouring inputs (synthetic)"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


class _Audit:
    """The audit table as the privacy declarations read it."""

    def __init__(self, audit: pd.DataFrame):
        needed = {"mechanism", "variant", "role", "claimed_epsilon", "true_epsilon",
                  "empirical_epsilon_lower_bound", "level", "draws"}
        missing = sorted(needed - set(audit.columns))
        if missing:
            raise ValueError(f"the audit table lacks columns {missing}")
        declared = {e.name for e in identities(audited=True)
                    if _claim_id(e) in CLAIMS}
        unknown = sorted(set(audit.loc[audit["role"] != "control", "mechanism"]) - declared)
        if unknown:
            raise ValueError(
                f"audit mechanisms {unknown} have no privacy claim: a mechanism on δ needs its "
                f"IndicatorMechanism registered in dprepro.mechanisms.registry itself "
                f"(registered there: {list(MECHANISMS)}), any other a MechanismIdentity "
                "with audited=True in dprepro.mechanisms.identity")
        self.table = audit

    def rows_of(self, mechanism: str) -> list[dict]:
        """One binding per published or corrected audit row of ``mechanism``."""
        mine = self.table[(self.table["role"] != "control")
                          & (self.table["mechanism"] == mechanism)]
        return [{"variant": row.variant, "variant_slug": _slug(row.variant),
                 "stated": float(row.claimed_epsilon), "row": row}
                for row in mine.itertuples(index=False)]


def confidence(significance) -> float:
    """The confidence level of a row whose interval starts at the audit's lower bound.

    The audit's ``level`` is the significance of its one-sided bound (1e-9): the bound
    holds with probability at least 1 − level; the upper end, the analytic ε, is exact.
    """
    significance = float(significance)
    if not 0 < significance < 1:
        raise ValueError(f"the audit's level must be in (0, 1), got {significance!r}")
    return 1.0 - significance


def _over(mechanism: str):
    return lambda audit: audit.rows_of(mechanism)


def _mechanism_evidence(audit: _Audit, *, origin, variant, variant_slug, stated, row
                        ) -> Evidence:
    """The audit row's interval [L, true ε] against the stated ε; see the module notes."""
    entry = identity(row.mechanism)
    lower = float(row.empirical_epsilon_lower_bound)
    true = float(row.true_epsilon)
    known = not math.isnan(true)
    upper = true if known else math.inf
    untestable = ""
    if not known and lower <= stated:
        proof = entry.proof or "its analysis"
        untestable = (f"an audit can refute a privacy guarantee but not prove one, and no "
                      f"analytic ε is computed for this variant; the guarantee rests on "
                      f"{proof}")
    paper = origin == "paper" and row.role == "published"
    return Evidence(
        upper if known else lower, min(lower, upper), upper,
        fields={"level": float(row.level)}, level=confidence(row.level),
        ci_method=(f"lower end: Clopper–Pearson bound of the audit over {int(row.draws):,} "
                   "draws on worst-case neighbours; upper end: the analytic true ε "
                   + ("(exact)" if known else "(not computed: unbounded above)")),
        source=None if paper else f"beyond the paper: the project's {row.role} mechanism",
        claim_origin=None if paper else "beyond",
        privacy_unit=entry.privacy_unit, untestable=untestable,
        note=(f"audit row {row.mechanism} / {row.variant} ({row.role}); true ε "
              f"{'= ' + format(true, 'g') if known else 'not computed'}; "
              f"lower bound {lower:.3g}; neighbouring inputs are synthetic"))


def _claim_id(entry) -> str:
    level = "alpha" if entry.study == "ldp_indicators" else "eps"
    return (f"{entry.study.split('_')[0]}.privacy.{entry.name}.{{variant_slug}}."
            f"{level}{{stated:g}}")


def _declare_mechanism(entry) -> None:
    """The privacy statement of one audited registry entry, with its source and origin."""
    symbol = "α" if entry.study == "ldp_indicators" else "ε"
    kind = "LDP" if entry.local else "DP"
    CLAIMS.declare(
        _claim_id(entry), study=entry.study, group="privacy",
        statement=f"{entry.statement} ({{variant}}) is {{stated:g}}-{kind} as stated "
                  f"({symbol} = {{stated:g}})",
        origin=entry.origin, source=entry.source, statistic=_STATISTIC,
        criterion="<= {stated:g}", units=_UNITS, ci_method=_CI_METHOD,
        over=_over(entry.name))(functools.partial(_mechanism_evidence, origin=entry.origin))


# one declaration per audited mechanism of the registry, in its order
for _entry in identities(audited=True):
    _declare_mechanism(_entry)


def _pipeline_binding(audit: _Audit) -> list[dict]:
    repr_learners = [e.name for e in identities("repr_transfer", audited=True)]
    learners = audit.table[(audit.table["role"] == "published")
                           & audit.table["mechanism"].isin(repr_learners)]
    if learners.empty:
        return []
    return [{"stated": float(learners["claimed_epsilon"].min()), "learners": learners}]


@CLAIMS.declare(
    "repr.privacy.pipeline.as_published.eps{stated:g}", study="repr_transfer", group="privacy",
    statement="the as-published process (representation, then a DP learner) has the same DP "
              "guarantee as the learner of step 3 (ε = {stated:g})",
    origin="paper",
    source="Niinimäki et al. (2019), Section 2 ('the same DP-guarantees as the learning "
           "algorithm of step 3')",
    statistic="privacy loss ε of the as-published pipeline: from the audit's largest lower "
              "bound among its learners to the analytic true ε",
    criterion="<= {stated:g}", units=_UNITS,
    ci_method="lower end: the audit (Clopper–Pearson); upper end: analysis (no finite ε)",
    over=_pipeline_binding)
def pipeline_evidence(audit: _Audit, *, stated, learners) -> Evidence:
    """The repr paper's "the same DP guarantee as the learning algorithm of step 3".

    As published, the pipeline's private steps outside the DP learner (the global
    quantile mapping of the private lines, DP feature selection's data-dependent parts)
    and SSP's Wishart noise leave no finite ε (docs/repr_transfer.md): the statement
    fails by analysis; the audit's largest lower bound among the published repr
    learners at their smallest stated ε is the empirical side of the interval.
    """
    at = learners[np.isclose(learners["claimed_epsilon"], stated)]
    lower = float(at["empirical_epsilon_lower_bound"].max())
    return Evidence(
        math.inf, lower, math.inf,
        privacy_unit=identity(str(learners["mechanism"].iloc[0])).privacy_unit,
        # the largest of several lower bounds: each fails with probability at most its
        # level, so the largest at most their sum (union bound)
        level=confidence(at["level"].sum()),
        note="as published, the private lines also pass through steps outside the DP "
             "learner (a global quantile mapping, DP feature selection's data-dependent "
             "parts) and SSP's Wishart step has a data-dependent support: no finite ε is "
             "proven (docs/repr_transfer.md, 'What each row guarantees'); the corrected "
             "pipeline's rows state a finite ε per released model given its training lines, "
             "except where the run reads a choice off the private data: cancer-type cases "
             "picked from the private lineage counts (repr_transfer.cancer_type.cases empty) "
             "or drugs read off the private dose-response table (repr_transfer.drug.drugs "
             "empty on real data) print inf")


def privacy_claims(audit: pd.DataFrame) -> pd.DataFrame:
    """Claims rows of the privacy statements (declared above), from the audit table.

    Parameters
    ----------
    audit : pandas.DataFrame
        ``privacy_audit.csv``: ``mechanism``, ``variant``, ``role`` (published,
        corrected, control), ``claimed_epsilon``, ``true_epsilon`` (NaN: not computed,
        inf: no finite ε), ``empirical_epsilon_lower_bound``, ``level``, ``draws``.

    Returns
    -------
    pandas.DataFrame
        One row per published or corrected audit row, with the studies' prefixes, in
        declaration order, plus the repr pipeline's end-to-end statement when the audit
        covers the repr learners.
    """
    rows = CLAIMS.evaluate(_Audit(audit), group="privacy", data_origin="simulation")
    return claims_frame(rows)
