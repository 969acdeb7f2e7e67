r"""The ``repr_transfer`` claim on the paper's assumption about the public and private data.

Niinimäki et al. (2019, Section 2) assume that the private and the public expression
data "are either draws from the same distribution or otherwise distributed similarly
enough that using the same mapping to compute a representation is reasonable". The row
``repr.<pipeline>.<learned>_public_private_similar`` reads it off the mapping itself:
per representation seed, the private lines' mean squared distance from the public
lines' centroid in the learned representation, over the public lines' own,

.. math:: \rho = \frac{\frac{1}{n_{priv}}\sum_{i \in priv} \lVert z_i - \bar z_{pub}\rVert^2}
                      {\frac{1}{n_{pub}}\sum_{j \in pub} \lVert z_j - \bar z_{pub}\rVert^2},

averaged over the seeds: 1 when the two sets are alike in the representation, above 1
when the private lines lie off the public data's (a shift or a wider spread), below 1
when the mapping squeezes them. "Similarly enough" is our criterion, a ratio within
:math:`[1/(1 + t), 1 + t]`, ``t`` = :data:`SIMILARITY_TOLERANCE` (the verdicts at half and
twice it beside). The interval is a percentile bootstrap that resamples the public and
the private lines independently (the same lines in every seed), on a stream of its own
(no other row's draws change).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from dprepro.claims.registry import CLAIMS, Evidence
from dprepro.claims.table import Tolerance, percentile_interval
from dprepro.studies.repr_transfer.claim_bootstrap import RESAMPLES
from dprepro.studies.repr_transfer.claim_data import with_units
from dprepro.studies.repr_transfer.common import STUDY, stream_rng

__all__ = ["SIMILARITY_TOLERANCE", "spread_ratio"]

#: How far the private lines' spread about the public centroid may be from the public
#: lines' own for "distributed similarly enough" (ratio within [1/(1 + t), 1 + t]; ours).
SIMILARITY_TOLERANCE = 0.5


def _coordinates(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith("z")]


def spread_ratio(frame: pd.DataFrame, *, rng: np.random.Generator | None = None,
                 resamples: int = RESAMPLES) -> tuple[float, np.ndarray | None]:
    """:math:`\\rho` of a representation table (``set``, ``sample``, ``seed``, ``z..``) and,
    with ``rng``, its bootstrap statistics (lines of each set resampled independently)."""
    z = _coordinates(frame)
    seeds = sorted(frame["seed"].unique())
    sets = {}
    for name in ("public", "private"):
        part = frame[frame["set"] == name]
        # lines x seeds x coordinates: the same lines in every seed
        wide = part.set_index(["sample", "seed"])[z].unstack("seed")
        sets[name] = wide.to_numpy(float).reshape(len(wide), len(z), len(seeds)).transpose(
            0, 2, 1)

    def ratio(public, private):
        centre = public.mean(axis=-3, keepdims=True)
        own = ((public - centre) ** 2).sum(axis=-1).mean(axis=-2)
        other = ((private - centre) ** 2).sum(axis=-1).mean(axis=-2)
        return (other / own).mean(axis=-1)

    estimate = float(ratio(sets["public"], sets["private"]))
    if rng is None:
        return estimate, None
    n_pub, n_priv = len(sets["public"]), len(sets["private"])
    pub = rng.integers(0, n_pub, size=(resamples, n_pub))
    priv = rng.integers(0, n_priv, size=(resamples, n_priv))
    stats = np.array([ratio(sets["public"][i], sets["private"][j])
                      for i, j in zip(pub, priv, strict=True)])
    return estimate, stats


def _bindings(data) -> list[dict]:
    """Each pipeline and learned representation whose table the claims job was given."""
    tables: Mapping = getattr(data, "representations", None) or {}
    return [{"pipeline": p, "learned": r} for p, r in tables]


@CLAIMS.declare(
    "repr.{pipeline}.{learned}_public_private_similar", study=STUDY,
    statement="the public and the private expression data are distributed similarly enough "
              "that using the same mapping ({learned}, learned on the public data) is "
              "reasonable ({pipeline} pipeline)",
    origin="paper",
    source="Niinimäki et al. (2019), Section 2 (assumption (1): 'X_priv and X_pub ... are "
           "either draws from the same distribution or otherwise distributed similarly "
           "enough that using the same mapping to compute a representation is reasonable')",
    statistic="mean squared distance of the private lines from the public lines' centroid "
              "in the {learned} representation, over the public lines' own (mean over "
              "representation seeds)",
    criterion=with_units("within [1/(1 + t), 1 + t], t = SIMILARITY_TOLERANCE (0.5, ours)"),
    units="public and private cell lines (each set resampled on its own)",
    ci_method="percentile bootstrap over the public and the private lines, independently",
    tolerance="SIMILARITY_TOLERANCE", over=_bindings)
def public_private_similar(data, *, pipeline: str, learned: str) -> Evidence | None:
    """The paper's assumption read off the learned mapping (see the module notes)."""
    frame = data.representations[(pipeline, learned)]
    rng = stream_rng(data.base_seed, f"claims/{pipeline}/similarity/{learned}")
    value, stats = spread_ratio(frame, rng=rng)
    _, lower, upper = percentile_interval(value, stats)
    counts = frame.drop_duplicates("sample")["set"].value_counts()
    units = int(min(counts.get("public", 0), counts.get("private", 0)))
    return Evidence(
        value, lower, upper, units=units,
        criterion=Tolerance(lambda t: with_units(f"within [{1 / (1 + t):.3g}, {1 + t:g}]"),
                            SIMILARITY_TOLERANCE),
        note=f"pipeline {pipeline}; {int(counts.get('public', 0))} public and "
             f"{int(counts.get('private', 0))} private lines, "
             f"{frame['seed'].nunique()} representation seeds; 1 = the private lines lie "
             "about the public centroid as the public ones do; 'similarly enough' read as "
             f"a ratio within a factor {1 + SIMILARITY_TOLERANCE:g} (our choice)")
