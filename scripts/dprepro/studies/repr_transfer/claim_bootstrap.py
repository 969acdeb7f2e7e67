r"""Paired differences of the ``repr_transfer`` claims and their bootstrap intervals.

The claims (:mod:`dprepro.studies.repr_transfer.claims`) compare two methods as
paired differences per independent unit and representation seed (methods share the
seeds' noise streams and the folds/splits). This module builds those differences
from the result tables (units × seeds matrices for the cancer task and for drugs
without per-split rows, drugs × splits × seeds cubes for the drug task) and their
intervals: a two-way cluster bootstrap (:func:`cluster_bootstrap`), its lineage
version for cases built from pairs of lineages (:func:`lineage_bootstrap`) and the
three-factor crossed bootstrap over drugs, splits and seeds
(:func:`crossed_bootstrap`). Every function draws from the generator it is given, in
a fixed order, so a claim's interval depends only on its stream.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprepro.claims.table import bootstrap_counts, percentile_interval

__all__ = ["RESAMPLES", "UNIT", "PairedInterval", "case_lineages", "cluster_bootstrap",
           "crossed_bootstrap", "difference_cube", "difference_matrix", "dims",
           "lineage_bootstrap", "paired_interval", "split_cube", "unit_seed_table"]

#: Bootstrap resamples per claim.
RESAMPLES = 2000
#: Per task: the unit a row of the result table measures, its value column and its name.
UNIT = {"cancer": ("case", "accuracy", "CV accuracy"),
        "drug": ("drug", "spearman", "Spearman's rho")}


def unit_seed_table(table: pd.DataFrame, task: str, *, pipeline: str) -> pd.DataFrame:
    """Rows (unit, seed, epsilon), methods as columns: the task's value, splits averaged.

    Non-private rows (ε missing or inf) get ``epsilon = inf``.
    """
    unit, value, _ = UNIT[task]
    rows = table[table["pipeline"] == pipeline]
    eps = pd.to_numeric(rows["epsilon"], errors="coerce").fillna(math.inf).astype(float)
    rows = rows.assign(epsilon=eps)
    return (rows.groupby([unit, "seed", "epsilon", "representation"])[value].mean()
            .unstack("representation"))


def difference_matrix(wide: pd.DataFrame, a: str, b: str, eps_a: float,
            eps_b: float) -> pd.DataFrame | None:
    """Units x seeds of (a at eps_a) - (b at eps_b); units with a missing value dropped."""
    if a not in wide.columns or b not in wide.columns:
        return None
    first, second = _at(wide, eps_a)[a], _at(wide, eps_b)[b]
    diff = (first - second).unstack("seed")
    return diff.dropna(axis=0, how="any").astype(float)


def _at(wide: pd.DataFrame, epsilon: float) -> pd.DataFrame:
    levels = wide.index.get_level_values("epsilon").to_numpy(float)
    mask = levels == epsilon if math.isinf(epsilon) else np.isclose(levels, epsilon)
    return wide[mask].droplevel("epsilon")


def cluster_bootstrap(D: np.ndarray, *, rng: np.random.Generator, resamples: int = RESAMPLES,
                      other: np.ndarray | None = None) -> np.ndarray:
    r"""Two-way cluster bootstrap of the mean of a units × seeds matrix.

    Each resample draws units (rows) and seeds (columns) with replacement,
    independently, and returns :math:`\bar D^* = \mathrm{mean}(D[u^*, s^*])`
    (a pigeonhole bootstrap over both crossed factors, Owen 2007). With
    ``other`` (a second units × seeds matrix, the same seeds), its units are
    drawn independently and the statistic is :math:`\bar D^* - \bar O^*`;
    the seeds drawn are shared. One seed
    column: only units are resampled.
    """
    D = np.asarray(D, dtype=float)
    n_units, n_seeds = D.shape
    # counts of each unit / seed per resample: mean(D[u*, s*]) = cu' D cs / (U S)
    cu = bootstrap_counts(n_units, rng=rng, resamples=resamples) if n_units > 1 else \
        np.ones((resamples, 1))
    cs = bootstrap_counts(n_seeds, rng=rng, resamples=resamples) if n_seeds > 1 else \
        np.ones((resamples, 1))
    out = np.einsum("bu,us,bs->b", cu, D, cs) / (n_units * n_seeds)
    if other is not None:
        other = np.asarray(other, dtype=float)
        co = bootstrap_counts(other.shape[0], rng=rng, resamples=resamples) \
            if other.shape[0] > 1 else np.ones((resamples, 1))
        out = out - np.einsum("bu,us,bs->b", co, other, cs) / (other.shape[0] * n_seeds)
    return out


def crossed_bootstrap(C: np.ndarray, *, rng: np.random.Generator,
                      resamples: int = RESAMPLES) -> np.ndarray:
    r"""Bootstrap of the mean of a drugs × splits × seeds array over three crossed factors.

    Each resample draws drugs (counts :math:`a_d`), splits (:math:`b_p`) and
    seeds (:math:`c_s`) with replacement, independently, and returns

    .. math:: \bar C^* = \frac{1}{DPS}\sum_{d,p,s} a_d\, b_p\, c_s\, C_{dps}

    (the pigeonhole bootstrap of Owen 2007 with three factors). A split
    effect shared by every drug moves all of a resample's drugs together, so
    it widens the interval; resampling drugs alone would average it away. A
    factor with one level is not resampled.
    """
    C = np.asarray(C, dtype=float)
    if C.ndim != 3:
        raise ValueError(f"expected a drugs x splits x seeds array, got shape {C.shape}")

    def counts(n):
        return (bootstrap_counts(n, rng=rng, resamples=resamples) if n > 1
                else np.ones((resamples, 1)))

    a, b, c = (counts(n) for n in C.shape)
    return np.einsum("bd,dps,bp,bs->b", a, C, b, c, optimize=True) / C.size


def split_cube(splits: pd.DataFrame | None, pipeline: str) -> pd.DataFrame | None:
    """Per-split rows as (drug, split, seed, epsilon) x representation, Spearman's ρ."""
    if splits is None:
        return None
    rows = splits[splits["pipeline"] == pipeline] if "pipeline" in splits.columns else splits
    eps = pd.to_numeric(rows["epsilon"], errors="coerce").fillna(math.inf).astype(float)
    return (rows.assign(epsilon=eps)
            .groupby(["drug", "split", "seed", "epsilon", "representation"])["spearman"].mean()
            .unstack("representation"))


def difference_cube(wide: pd.DataFrame | None, a: str, b: str, eps_a: float,
          eps_b: float) -> np.ndarray | None:
    """Drugs x splits x seeds of (a at eps_a) - (b at eps_b); drugs with a gap dropped."""
    if wide is None or a not in wide.columns or b not in wide.columns:
        return None
    diff = (_at(wide, eps_a)[a] - _at(wide, eps_b)[b]).unstack(["split", "seed"])
    diff = diff.dropna(axis=0, how="any")
    if diff.empty:
        return None
    splits = diff.columns.get_level_values("split").unique()
    seeds = diff.columns.get_level_values("seed").unique()
    full = pd.MultiIndex.from_product([splits, seeds], names=["split", "seed"])
    diff = diff.reindex(columns=full)
    if diff.isna().to_numpy().any():
        raise ValueError(f"per-split rows of {a} vs {b} do not cover every split x seed")
    return diff.to_numpy(float).reshape(len(diff), len(splits), len(seeds))


def case_lineages(cases: Sequence[str]) -> list[tuple[str, str]] | None:
    """The two lineages of each case label ``"a vs b"``
    (:func:`dprepro.studies.repr_transfer.cancer_type.case_label`).

    ``None`` when a label is not of that form (then the cases are resampled).
    """
    pairs = [tuple(str(c).split(" vs ")) for c in cases]
    return pairs if all(len(p) == 2 for p in pairs) else None


def lineage_bootstrap(D, cases: Sequence[str], *, rng: np.random.Generator,
                      resamples: int = RESAMPLES) -> np.ndarray:
    r"""Cluster bootstrap of a cases × seeds matrix whose cases are pairs of lineages.

    Each resample draws the lineages with replacement (counts :math:`c_l`)
    and the seeds with replacement (counts :math:`s_j`), and rebuilds the
    cases from the drawn lineages: case :math:`(a, b)` enters
    :math:`c_a c_b` times, as it would in the cases of the resampled
    lineages. The statistic is the weighted mean

    .. math:: \bar D^* = \frac{\sum_{(a,b)} c_a c_b \sum_j s_j D_{(a,b), j}}
                              {S \sum_{(a,b)} c_a c_b}.

    Resamples that draw no case (one lineage only) are dropped: the
    distribution is conditional on at least one case.
    """
    D = np.asarray(D, dtype=float)
    pairs = case_lineages(cases)
    if pairs is None:
        raise ValueError(f"case labels must be 'a vs b', got {list(cases)[:3]}")
    lineages = sorted({name for pair in pairs for name in pair})
    index = {name: i for i, name in enumerate(lineages)}
    a = np.array([index[p[0]] for p in pairs])
    b = np.array([index[p[1]] for p in pairs])
    cl = bootstrap_counts(len(lineages), rng=rng, resamples=resamples)
    n_seeds = D.shape[1]
    cs = bootstrap_counts(n_seeds, rng=rng, resamples=resamples) if n_seeds > 1 else \
        np.ones((resamples, 1))
    w = cl[:, a] * cl[:, b]
    total = w.sum(axis=1)
    keep = total > 0
    out = np.einsum("bu,us,bs->b", w[keep], D, cs[keep]) / (total[keep] * n_seeds)
    return out



def dims(table: pd.DataFrame, pipeline: str) -> dict:
    """Each method's feature dimension (``dim``) in ``pipeline``'s rows; {} without it."""
    if "dim" not in table.columns:
        return {}
    rows = table if "pipeline" not in table.columns else table[table["pipeline"] == pipeline]
    found = rows.groupby("representation")["dim"].unique()
    return {method: int(d[0]) for method, d in found.items() if len(d) == 1 and pd.notna(d[0])}


@dataclass(frozen=True)
class PairedInterval:
    """The mean paired difference of two methods and its bootstrap interval.

    Attributes
    ----------
    estimate, lower, upper : float
        The mean over units × seeds (× splits) and its percentile interval (the point
        itself when a single unit leaves nothing to resample).
    units : int
        Independent units behind the interval: lineages (cases built from pairs of
        them), cases, drugs, or the smaller of drugs and splits.
    resampled : str
        What the bootstrap resampled, as the claim's note states it.
    method : str
        How the interval was obtained (the row's ``ci_method``).
    crossed : bool
        ``True`` for a drugs × splits × seeds cube (:func:`crossed_bootstrap`).
    """

    estimate: float
    lower: float
    upper: float
    units: int
    resampled: str
    method: str
    crossed: bool = False


def paired_interval(D: pd.DataFrame | None, cube: np.ndarray | None, *, unit: str,
                    rng: np.random.Generator) -> PairedInterval | None:
    """The interval of a − b from its units × seeds matrix ``D`` or drug ``cube``.

    Parameters
    ----------
    D : pandas.DataFrame or None
        Units × seeds of a − b (:func:`difference_matrix`), units as the index.
    cube : numpy.ndarray or None
        Drugs × splits × seeds of a − b (:func:`difference_cube`); used for the drug
        task whenever the per-split rows give it.
    unit : str
        ``"case"`` or ``"drug"`` (:data:`UNIT`).
    rng : numpy.random.Generator
        The claim's stream (a shared one is drawn by the claims in a fixed order).

    Returns
    -------
    PairedInterval or None
        ``None`` when neither gives a unit (the methods were not run).
    """
    if unit == "drug" and cube is not None:
        drugs, splits, seeds = cube.shape
        estimate = float(cube.mean())
        if max(cube.shape) > 1:
            _, lower, upper = percentile_interval(estimate, crossed_bootstrap(cube, rng=rng))
        else:
            lower = upper = estimate
        return PairedInterval(
            estimate, lower, upper, min(drugs, splits),
            f"crossed bootstrap over {drugs} drugs x {splits} splits x {seeds} "
            "representation seeds",
            "crossed percentile bootstrap over drugs, splits and representation seeds"
            if max(cube.shape) > 1 else "none: a single unit, the interval is the point",
            crossed=True)
    if D is None or D.shape[0] < 1:
        return None
    labels = list(D.index)
    D = np.asarray(D, dtype=float)
    pairs = case_lineages(labels) if unit == "case" else None
    estimate = float(D.mean())
    units = D.shape[0]
    if pairs is not None:
        # the independent units are the lineages, not the cases built from them
        units = len({name for pair in pairs for name in pair})
        resampled = (lineage_bootstrap(D, labels, rng=rng) if units >= 2
                     else cluster_bootstrap(D, rng=rng) if D.shape[1] >= 2 else None)
        what = f"{units} lineages (the {D.shape[0]} cases rebuilt from them)"
        over = "lineages (cases rebuilt from them)" if units >= 2 else "cases (one lineage)"
    else:
        resampled = cluster_bootstrap(D, rng=rng) if units >= 2 or D.shape[1] >= 2 else None
        what, over = f"{D.shape[0]} {unit}s", f"{unit}s"
    if resampled is not None:
        _, lower, upper = percentile_interval(estimate, resampled)
    else:
        lower = upper = estimate
    return PairedInterval(
        estimate, lower, upper, units,
        f"cluster bootstrap over {what} x {D.shape[1]} representation seeds",
        f"cluster percentile bootstrap over {over} and representation seeds"
        if resampled is not None else "none: a single unit, the interval is the point")
