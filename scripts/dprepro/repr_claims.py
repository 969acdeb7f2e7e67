r"""The ``repr_transfer`` claims table: the paper's statements tested on our numbers.

Niinimäki et al. (2019) conclude that representations learned on public data
make DP learning on the private lines better than the genes themselves, and
that a VAE and PCA do about equally well. Each statement is tested per
pipeline (``as_published`` and ``corrected``) at the study's ε on

* the cancer-type task: CV accuracy averaged over the cases, and
* the drug task: Spearman's ρ averaged over the drugs,

as paired differences per representation seed (methods share the seeds' noise
streams and the folds/splits), with a paired percentile bootstrap interval
over seeds (:func:`dprepro.claims.bootstrap_interval`). With few seeds the
intervals are wide and the verdict often ``inconclusive``: that is the honest
answer, not a failure of the claim.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .claims import bootstrap_interval, claim_row, claims_frame
from .repr_common import STUDY, stream_rng

__all__ = ["EQUIVALENCE_MARGIN", "repr_claims"]

#: |VAE - PCA| below this counts as "about equal" (accuracy / Spearman units).
EQUIVALENCE_MARGIN = 0.05

_SOURCE = "Niinimäki et al. (2019), Results and Discussion"


def _per_seed(table: pd.DataFrame, value: str, *, pipeline: str,
              epsilon: float) -> pd.DataFrame:
    """Seeds x methods: ``value`` averaged over cases (or drugs) at one ε and pipeline."""
    rows = table[(table["pipeline"] == pipeline) & np.isclose(table["epsilon"].astype(float),
                                                               float(epsilon))]
    wide = rows.groupby(["seed", "representation"])[value].mean().unstack("representation")
    return wide.sort_index()


def _difference_claim(wide: pd.DataFrame, a: str, b: str, *, claim_id: str, claim: str,
                      statistic: str, criterion: str, rng: np.random.Generator,
                      note: str) -> dict | None:
    if a not in wide.columns or b not in wide.columns:
        return None
    pair = wide[[a, b]].dropna()
    if len(pair) < 2:
        return None
    estimate, lower, upper = bootstrap_interval(
        lambda x, y: float(np.mean(x - y)), [pair[a].to_numpy(), pair[b].to_numpy()], rng=rng)
    return claim_row(study=STUDY, claim_id=claim_id, claim=claim, source=_SOURCE,
                     statistic=statistic, reproduced_value=estimate, ci_lower=lower,
                     ci_upper=upper, criterion=criterion,
                     note=f"{note}; paired bootstrap over {len(pair)} representation seeds")


def repr_claims(cancer: pd.DataFrame, drug: pd.DataFrame, *, cancer_epsilon: float,
                drug_epsilon: float, pipelines: Sequence[str],
                base_seed: int) -> pd.DataFrame:
    """Claims rows for every pipeline (see the module docstring).

    ``cancer``/``drug`` are ``cancer_type_accuracy.csv`` and
    ``drug_sensitivity.csv``. Claims whose methods were not run are left out.
    """
    for value in (cancer_epsilon, drug_epsilon):
        if not math.isfinite(float(value)):
            raise ValueError(f"claims are tested at a finite epsilon, got {value}")
    rows = []
    for pipeline in pipelines:
        tasks = (
            ("cancer", cancer_epsilon,
             _per_seed(cancer, "accuracy", pipeline=pipeline, epsilon=cancer_epsilon),
             "CV accuracy, mean over cases"),
            ("drug", drug_epsilon,
             _per_seed(drug, "spearman", pipeline=pipeline, epsilon=drug_epsilon),
             "Spearman's rho, mean over drugs"),
        )
        for task, epsilon, wide, what in tasks:
            eps = f"{float(epsilon):g}"
            rng = stream_rng(base_seed, f"claims/{pipeline}/{task}")
            for rep in ("pca", "vae", "random_projection"):
                rows.append(_difference_claim(
                    wide, rep, "fixed_genes",
                    claim_id=f"repr.{pipeline}.{task}.{rep}_beats_fixed_genes",
                    claim=f"{task}: {rep} beats the fixed gene set at epsilon = {eps} "
                          f"({pipeline} pipeline)",
                    statistic=f"{what}: {rep} - fixed_genes", criterion="> 0", rng=rng,
                    note=f"pipeline {pipeline}"))
            rows.append(_difference_claim(
                wide, "vae", "pca", claim_id=f"repr.{pipeline}.{task}.vae_about_pca",
                claim=f"{task}: the VAE does about as well as PCA at epsilon = {eps} "
                      f"({pipeline} pipeline)",
                statistic=f"{what}: vae - pca",
                criterion=f"within [-{EQUIVALENCE_MARGIN:g}, {EQUIVALENCE_MARGIN:g}]", rng=rng,
                note=f"pipeline {pipeline}; margin {EQUIVALENCE_MARGIN:g} is ours"))
    return claims_frame(r for r in rows if r is not None)
