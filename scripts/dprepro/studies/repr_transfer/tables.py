"""The ``repr_transfer`` study's result tables: per-row results, summaries and their columns.

Pipeline (docs/design.md §5): a representation :math:`f` is learned on *public* expression
only (PCA, random projection, VAE); its hyperparameters are chosen on a public auxiliary
task (predicting the public lineage); the private lines are mapped through :math:`f` and
a DP learner is trained on them. The study is split by concept:

* :mod:`dprepro.studies.repr_transfer.common` -- study names and random streams;
* :mod:`dprepro.studies.repr_transfer.study_data` -- the public and private data;
* :mod:`dprepro.studies.repr_transfer.fitting` and :mod:`~dprepro.studies.repr_transfer.search`
  -- representation fits and the hyperparameter search;
* :mod:`dprepro.studies.repr_transfer.baselines` -- the gene baselines and DP feature selection;
* :mod:`dprepro.studies.repr_transfer.privacy` -- the ε grid, the budget split and the
  privacy records of every result row;
* :mod:`dprepro.studies.repr_transfer.cancer_type` -- cancer-type pairs (DP logistic
  regression); :mod:`dprepro.studies.repr_transfer.drug` -- drug sensitivity (SSP);
* here -- the tables built from the experiments' rows.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dprepro.studies.repr_transfer.common import (
    MIN_TEST_RESPONSES,
    MIN_TRAIN_RESPONSES,
    method_order,
)

__all__ = [
    "CANCER_COLUMNS",
    "DRUG_COLUMNS",
    "TABLES",
    "cancer_summary",
    "cancer_tables",
    "cancer_type_table",
    "drug_summary",
    "drug_table",
    "drug_tables",
]

#: Columns of ``cancer_type_accuracy.csv`` in order (the shared contract first).
CANCER_COLUMNS = (
    "case", "representation", "epsilon", "seed", "accuracy", "pipeline",
    "mechanism", "variant", "selection_epsilon", "learner_epsilon", "true_epsilon",
    "epsilon_scope", "epsilon_if_bias_penalised", "privacy_note",
    "dim", "n_parts", "correct", "n_lines", "majority_accuracy", "folds", "data_origin",
)
#: Columns of ``drug_sensitivity.csv`` in order (the shared contract first).
DRUG_COLUMNS = (
    "representation", "epsilon", "seed", "drug", "spearman", "pc_index", "pipeline",
    "mechanism", "variant", "selection_epsilon", "learner_epsilon", "true_epsilon",
    "epsilon_scope", "privacy_note",
    "dim", "n_parts", "splits", "n_train", "n_test", "data_origin",
)


_method_order = method_order


def with_pipeline(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows without a ``pipeline`` column are the paper's pipeline."""
    return frame if "pipeline" in frame.columns else frame.assign(pipeline="as_published")


def pipeline_order(values: pd.Series) -> pd.Series:
    from dprepro.studies.repr_transfer.privacy import PIPELINES

    return values.map({p: i for i, p in enumerate(PIPELINES)}).fillna(len(PIPELINES))


def _private_first(frame: pd.DataFrame) -> pd.Series:
    """Sort key on ε with the non-private rows (empty ε) last."""
    return frame["epsilon"].fillna(np.inf)


def cancer_type_table(frames: Sequence[pd.DataFrame], *, data_origin: str,
                      cases: Sequence[str] | None = None) -> pd.DataFrame:
    """``cancer_type_accuracy.csv``: the experiments' rows in contract column order.

    Sorted by case (in ``cases`` order, else by name), method (study order),
    pipeline (as published, then corrected), ε (non-private last) and seed.
    """
    table = with_pipeline(pd.concat(frames, ignore_index=True)).assign(data_origin=data_origin)
    missing = set(CANCER_COLUMNS) - set(table.columns)
    if missing:
        raise ValueError(f"cancer-type rows lack columns {sorted(missing)}")
    order = {c: i for i, c in enumerate(cases or sorted(set(table["case"])))}
    table = table.assign(_c=table["case"].map(order), _m=_method_order(table["representation"]),
                         _p=pipeline_order(table["pipeline"]), _e=_private_first(table))
    table = table.sort_values(["_c", "_m", "_p", "_e", "seed"], kind="stable")
    return table.loc[:, list(CANCER_COLUMNS)].reset_index(drop=True)


def _distinct_parts(values: pd.Series) -> str | None:
    """DP feature selection's k over a drug's splits: one value, or the distinct ones ``;``-joined.

    The corrected pipeline's k comes from the split's nominal training size, the
    same for every split; the authors' k = ⌊√n⌋ of the lines with a response can
    differ between splits.
    """
    ks = sorted({int(v) for v in values.dropna()})  # text values (see drug_table)
    return ";".join(map(str, ks)) if ks else None


def drug_table(frames: Sequence[pd.DataFrame], *, data_origin: str) -> pd.DataFrame:
    """``drug_sensitivity.csv``: per (method, ε, seed, drug) the mean over splits.

    ``splits`` counts the splits that fitted a model (enough responses of the drug,
    :func:`dprepro.studies.repr_transfer.drug.drug_experiment`); a drug without any has
    ``splits = 0`` and NaN scores, but its rows.
    """
    rows = with_pipeline(pd.concat(frames, ignore_index=True))
    if "n_parts" not in rows.columns:  # rows from before the column existed
        rows = rows.assign(n_parts=pd.NA)
    # as text: a numeric column would make pandas cast the joined k's back to numbers
    rows = rows.assign(n_parts=rows["n_parts"].astype("string"),
                       _model=(rows["n_train"] >= MIN_TRAIN_RESPONSES)
                       & (rows["n_test"] >= MIN_TEST_RESPONSES))
    keys = ["representation", "pipeline", "epsilon", "seed", "drug"]
    privacy = ["mechanism", "variant", "selection_epsilon", "learner_epsilon", "true_epsilon",
               "epsilon_scope", "privacy_note", "dim"]
    grouped = rows.groupby(keys, dropna=False, sort=False)
    table = grouped.agg(spearman=("spearman", "mean"), pc_index=("pc_index", "mean"),
                        splits=("_model", "sum"), n_train=("n_train", "mean"),
                        n_test=("n_test", "mean"),
                        n_parts=("n_parts", _distinct_parts)).reset_index()
    first = grouped[privacy].first().reset_index()
    table = table.merge(first, on=keys, how="left").assign(data_origin=data_origin)
    table = table.assign(_m=_method_order(table["representation"]),
                         _p=pipeline_order(table["pipeline"]), _e=_private_first(table))
    table = table.sort_values(["_m", "_p", "_e", "seed", "drug"], kind="stable")
    return table.loc[:, list(DRUG_COLUMNS)].reset_index(drop=True)


def _mean_se(values: pd.Series) -> tuple[float, float, int]:
    v = values.to_numpy(dtype=float)
    n = len(v)
    if n > 1:
        se = 0.0 if np.ptp(v) == 0 else float(np.std(v, ddof=1) / math.sqrt(n))
    else:
        se = np.nan
    return float(np.mean(v)), se, n


def _with_dim(out: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """``dim`` (the features each method's learner sees, per pipeline) beside the summary."""
    if "dim" not in table.columns:
        return out
    dims = table.groupby(["representation", "pipeline"], sort=False)["dim"].agg(
        lambda d: float(d.iloc[0]) if d.nunique(dropna=False) == 1 else np.nan).reset_index()
    return out.merge(dims, on=["representation", "pipeline"], how="left")


def cancer_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ± SE over representation seeds per (case, method, pipeline, ε), plus ``case = "all"``.

    The ``all`` rows average the cases within each seed first, then take mean
    and SE over seeds.
    """
    table = with_pipeline(table)
    keys = ["representation", "pipeline", "epsilon", "mechanism", "variant"]
    per_seed_all = (table.groupby([*keys, "seed"], dropna=False, sort=False)["accuracy"].mean()
                    .reset_index().assign(case="all"))
    rows = []
    for source in (table, per_seed_all):
        for key, group in source.groupby(["case", *keys], dropna=False, sort=False):
            mean, se, n = _mean_se(group["accuracy"])
            rows.append(dict(zip(["case", *keys], key, strict=True), accuracy_mean=mean,
                             accuracy_se=se, n_seeds=n))
    out = pd.DataFrame(rows)
    true = table.groupby(keys, dropna=False, sort=False)["true_epsilon"].first().reset_index()
    out = out.merge(true, on=keys, how="left")
    out = _with_dim(out, table)
    if "majority_accuracy" in table.columns:
        majority = table.groupby("case", sort=False)["majority_accuracy"].first()
        out["majority_accuracy"] = out["case"].map(
            {**majority.to_dict(), "all": float(majority.mean())})
    cases = list(dict.fromkeys(table["case"])) + ["all"]
    out = out.assign(_c=out["case"].map({c: i for i, c in enumerate(cases)}),
                     _m=_method_order(out["representation"]),
                     _p=pipeline_order(out["pipeline"]), _e=_private_first(out))
    out = out.sort_values(["_c", "_m", "_p", "_e"], kind="stable")
    return out.drop(columns=["_c", "_m", "_p", "_e"]).reset_index(drop=True)


def drug_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ± SE over representation seeds of the mean over drugs, per (method, pipeline, ε).

    ``n_drugs`` counts the method's drugs with a fitted model (``splits`` > 0).
    """
    table = with_pipeline(table)
    keys = ["representation", "pipeline", "epsilon", "mechanism", "variant"]
    per_seed = table.groupby([*keys, "seed"], dropna=False, sort=False)[
        ["spearman", "pc_index"]].mean().reset_index()
    rows = []
    for key, group in per_seed.groupby(keys, dropna=False, sort=False):
        s_mean, s_se, n = _mean_se(group["spearman"])
        p_mean, p_se, _ = _mean_se(group["pc_index"])
        rows.append(dict(zip(keys, key, strict=True), spearman_mean=s_mean, spearman_se=s_se,
                         pc_index_mean=p_mean, pc_index_se=p_se, n_seeds=n,
                         n_drugs=int(table.loc[(table["representation"] == key[0])
                                               & (table.get("splits", 1) > 0), "drug"]
                                     .nunique())))
    out = pd.DataFrame(rows)
    true = table.groupby(keys, dropna=False, sort=False)["true_epsilon"].first().reset_index()
    out = out.merge(true, on=keys, how="left")
    out = _with_dim(out, table)
    out = out.assign(_m=_method_order(out["representation"]),
                     _p=pipeline_order(out["pipeline"]), _e=_private_first(out))
    return out.sort_values(["_m", "_p", "_e"], kind="stable").drop(
        columns=["_m", "_p", "_e"]).reset_index(drop=True)


def cancer_tables(frames: Sequence[pd.DataFrame], *,
                  data_origin: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``cancer_type_accuracy.csv`` and its summary from the experiment rows (cases in order)."""
    cases = list(dict.fromkeys(c for f in frames for c in f["case"]))
    table = cancer_type_table(frames, data_origin=data_origin, cases=cases)
    return table, cancer_summary(table)


def drug_tables(frames: Sequence[pd.DataFrame], *,
                data_origin: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``drug_sensitivity.csv`` and its summary (chunks without rows are skipped)."""
    table = drug_table([f for f in frames if len(f)], data_origin=data_origin)
    return table, drug_summary(table)


#: The table builder of each experiment kind: (table, summary) from the rows.
TABLES = {"cancer_type": cancer_tables, "drug": drug_tables}

