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
objective perturbation with CMS11's correction) are rows of origin ``beyond``; the
audit's deliberately mis-scaled controls are not claims (they show the audit's power).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from dprepro.claims.table import claim_row, claims_frame

__all__ = ["MECHANISM_STUDY", "pipeline_claim", "privacy_claims"]

#: Mechanism of an audit row -> (study, local?, the paper's statement and its source).
MECHANISM_STUDY = {
    "laplace_indicators": ("ldp_indicators", True,
                           "paper §3 (Z = δ + Laplace(1/α) on each failure indicator)"),
    "randomized_response": ("ldp_indicators", True, ""),
    "rrr": ("rrr_survival", True,
            "De Faveri et al. (SEBD 2024), Section 4 (RRR's ε-DP property, Equation 3)"),
    "lnte": ("rrr_survival", False,
             "De Faveri et al. (SEBD 2024), Section 2 (LNTE of Gondara & Wang 2020, "
             "'ensuring DP')"),
    "objective_perturbation": ("repr_transfer", False,
                               "Niinimäki et al. (2019), Section 3 (DP logistic regression "
                               "by objective perturbation)"),
    "ssp": ("repr_transfer", False,
            "Niinimäki et al. (2019), Section 3 (DP linear regression by sufficient "
            "statistics perturbation)"),
}
#: The published proof a row without an analytic ε rests on.
_PROOFS = {
    "objective_perturbation": "Chaudhuri, Monteleoni & Sarwate (2011), Theorem 6, under its "
                              "premises (bias penalised, exact minimiser)",
}
_PRIVACY_UNIT = {"ldp_indicators": "individual",
                 "rrr_survival": "patient", "repr_transfer": "cell line"}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def privacy_claims(audit: pd.DataFrame) -> pd.DataFrame:
    """Claims rows of the privacy statements, from the audit table.

    Parameters
    ----------
    audit : pandas.DataFrame
        ``privacy_audit.csv``: ``mechanism``, ``variant``, ``role`` (published,
        corrected, control), ``claimed_epsilon``, ``true_epsilon`` (NaN: not computed,
        inf: no finite ε), ``empirical_epsilon_lower_bound``, ``level``, ``draws``.

    Returns
    -------
    pandas.DataFrame
        One row per published or corrected audit row, with the studies' prefixes,
        plus the repr pipeline's end-to-end statement (:func:`pipeline_claim`) when
        the audit covers the repr learners.
    """
    needed = {"mechanism", "variant", "role", "claimed_epsilon", "true_epsilon",
              "empirical_epsilon_lower_bound", "level", "draws"}
    missing = sorted(needed - set(audit.columns))
    if missing:
        raise ValueError(f"the audit table lacks columns {missing}")
    rows = []
    for row in audit[audit["role"] != "control"].itertuples(index=False):
        if row.mechanism not in MECHANISM_STUDY:
            raise ValueError(f"audit mechanism {row.mechanism!r} has no study in "
                             "MECHANISM_STUDY")
        study, local, source = MECHANISM_STUDY[row.mechanism]
        symbol = "α" if study == "ldp_indicators" else "ε"
        stated = float(row.claimed_epsilon)
        lower = float(row.empirical_epsilon_lower_bound)
        true = float(row.true_epsilon)
        known = not math.isnan(true)
        upper = true if known else math.inf
        origin = "paper" if (row.role == "published" and source) else "beyond"
        kind = "LDP" if local else "DP"
        untestable = ""
        if not known and lower <= stated:
            proof = _PROOFS.get(row.mechanism, "its analysis")
            untestable = (f"an audit can refute a privacy guarantee but not prove one, and no "
                          f"analytic ε is computed for this variant; the guarantee rests on "
                          f"{proof}")
        prefix = study.split("_")[0]
        rows.append(claim_row(
            study=study,
            claim_id=(f"{prefix}.privacy.{row.mechanism}.{_slug(row.variant)}."
                      f"{'alpha' if symbol == 'α' else 'eps'}{stated:g}"),
            claim=f"{row.mechanism.replace('_', ' ')} ({row.variant}) is {stated:g}-{kind} "
                  f"as stated ({symbol} = {stated:g})",
            source=source if origin == "paper" else "beyond the paper: the project's "
                                                     f"{row.role} mechanism",
            claim_origin=origin,
            statistic=f"privacy loss ε: from the audit's lower confidence bound "
                      f"(level 1 − {float(row.level):g}) to the analytic true ε",
            reproduced_value=upper if known else lower,
            ci_lower=min(lower, upper), ci_upper=upper,
            ci_method=(f"lower end: Clopper–Pearson bound of the audit over {int(row.draws):,} "
                       "draws on worst-case neighbours; upper end: the analytic true ε "
                       + ("(exact)" if known else "(not computed: unbounded above)")),
            criterion=f"<= {stated:g}", privacy_unit=_PRIVACY_UNIT[study],
            data_origin="simulation", untestable=untestable,
            note=(f"audit row {row.mechanism} / {row.variant} ({row.role}); true ε "
                  f"{'= ' + format(true, 'g') if known else 'not computed'}; "
                  f"lower bound {lower:.3g}; neighbouring inputs are synthetic")))
    claims = [r for r in rows]
    pipeline = pipeline_claim(audit)
    if pipeline is not None:
        claims.append(pipeline)
    return claims_frame(claims)


def pipeline_claim(audit: pd.DataFrame) -> dict | None:
    """The repr paper's "the same DP guarantee as the learning algorithm of step 3".

    As published, the pipeline's private steps outside the DP learner (the global
    quantile mapping of the private lines, DP feature selection's data-dependent parts)
    and SSP's Wishart noise leave no finite ε (docs/repr_transfer.md): the statement
    fails by analysis; the audit's largest lower bound among the published repr
    learners at their smallest stated ε is the empirical side of the interval.
    """
    learners = audit[(audit["role"] == "published")
                     & audit["mechanism"].isin(["objective_perturbation", "ssp"])]
    if learners.empty:
        return None
    stated = float(learners["claimed_epsilon"].min())
    at = learners[np.isclose(learners["claimed_epsilon"], stated)]
    lower = float(at["empirical_epsilon_lower_bound"].max())
    return claim_row(
        study="repr_transfer", claim_id=f"repr.privacy.pipeline.as_published.eps{stated:g}",
        claim="the as-published process (representation, then a DP learner) has the same DP "
              f"guarantee as the learner of step 3 (ε = {stated:g})",
        source="Niinimäki et al. (2019), Section 2 ('the same DP-guarantees as the learning "
               "algorithm of step 3')",
        claim_origin="paper",
        statistic="privacy loss ε of the as-published pipeline: from the audit's largest "
                  "lower bound among its learners to the analytic true ε",
        reproduced_value=math.inf, ci_lower=lower, ci_upper=math.inf,
        ci_method="lower end: the audit (Clopper–Pearson); upper end: analysis (no finite ε)",
        criterion=f"<= {stated:g}", privacy_unit=_PRIVACY_UNIT["repr_transfer"],
        data_origin="simulation",
        note="as published, the private lines also pass through steps outside the DP "
             "learner (a global quantile mapping, DP feature selection's data-dependent "
             "parts) and SSP's Wishart step has a data-dependent support: no finite ε is "
             "proven (docs/repr_transfer.md, 'What each row guarantees'); the corrected "
             "pipeline's rows state their finite ε")
