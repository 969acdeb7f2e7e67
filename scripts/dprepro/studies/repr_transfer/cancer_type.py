"""``repr_transfer`` cancer-type pairs: DP logistic regression between two private lineages.

Binary classification between two lineages of the private lines, DP logistic
regression by objective perturbation
(:class:`dprepro.learners.logistic_regression.DPLogisticRegression`), stratified k-fold CV
accuracy. Every row carries the privacy record of its fit
(:func:`dprepro.studies.repr_transfer.privacy.cancer_privacy`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from dprepro.runtime.privacy_record import budget_split
from dprepro.studies.repr_transfer.baselines import (
    FeatureSelection,
    mean_row_norm,
    noisy_top_features,
)
from dprepro.studies.repr_transfer.common import eps_text, stream_int, stream_rng
from dprepro.studies.repr_transfer.privacy import (
    CANCER_PRIVACY_COLUMNS,
    cancer_learner,
    cancer_privacy,
)

__all__ = ["case_label", "cancer_type_cases", "cancer_type_experiment"]


def case_label(pair: Sequence[str]) -> str:
    return f"{pair[0]} vs {pair[1]}"


def cancer_type_cases(lineage: pd.Series, *, n_lineages: int, min_count: int,
                      cases: Sequence[Sequence[str]] | None = None) -> list[tuple[str, str]]:
    """The lineage pairs classified in the private data.

    Given ``cases`` (pairs of lineage names) they are checked and returned;
    otherwise every pair of the ``n_lineages`` most frequent private lineages
    with at least ``min_count`` lines (ties by name), most frequent first. That
    choice is read off the private data: the rows of such cases have no finite ε
    (:func:`dprepro.studies.repr_transfer.privacy.automatic_cases`).
    """
    counts = pd.Series(lineage).dropna().value_counts()
    if cases:
        out = []
        for pair in cases:
            a, b = (str(x) for x in pair)
            if a == b:
                raise ValueError(f"case {pair!r} pairs a lineage with itself")
            for name in (a, b):
                if counts.get(name, 0) < min_count:
                    raise ValueError(
                        f"case {a!r} vs {b!r}: lineage {name!r} has {counts.get(name, 0)} private "
                        f"lines, need >= {min_count}; lineages: {counts.to_dict()}")
            out.append((a, b))
        return out
    order = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    top = [str(name) for name, count in order if count >= min_count][:n_lineages]
    if len(top) < 2:
        raise ValueError(f"need two private lineages with >= {min_count} lines for a case; "
                         f"lineages: {counts.to_dict()}")
    return list(itertools.combinations(top, 2))


def cancer_type_experiment(
    private: Mapping[int, np.ndarray],
    lineage: pd.Series,
    cases: Sequence[tuple[str, str]],
    *,
    epsilons: Sequence[float],
    folds: int,
    l2: float,
    variant: str,
    base_seed: int,
    stream: str,
    scales: Mapping[int, float] | None = None,
    selection: FeatureSelection | None = None,
    mapping: str = "global",
    automatic_cases: bool,
) -> pd.DataFrame:
    """Stratified k-fold CV accuracy of DP logistic regression on lineage pairs.

    Parameters
    ----------
    private : mapping seed -> ndarray (n_private, d)
        Private features per representation seed, rows aligned with ``lineage``.
    lineage : Series
        Private lineage per line (NaN for unknown).
    cases : sequence of (lineage_a, lineage_b)
    epsilons : sequence of float
        Total ε per fit; ``inf`` gives the non-private counterpart.
    folds : int
        ``StratifiedKFold(folds, shuffle=True)``; the folds of a case are the
        same for every method, seed and ε (stream ``cancer_type/folds/<case>``).
    l2, variant : see :class:`dprepro.learners.logistic_regression.DPLogisticRegression`.
    base_seed, stream : int, str
        Noise of (case, ε, seed) comes from stream ``<stream>/<case>/eps<ε>``,
        replicate = seed, used fold after fold.
    scales : mapping seed -> float
        Public mean row norm of each seed's representation.
    selection : FeatureSelection, optional
        Select ``n_select`` genes per training fold with its share of ε
        (:func:`dprepro.runtime.privacy_record.budget_split`); then
        ``private`` holds the centred gene values (the same for every seed).
    mapping : {"global", "line_local"}
        How ``private`` was quantile-mapped (the experiment cannot see it; the
        default claims nothing); ``global`` makes every row's ``true_epsilon`` infinite
        (:func:`dprepro.studies.repr_transfer.privacy.cancer_privacy`).
    automatic_cases : bool
        Whether ``cases`` were chosen from the private lineage counts
        (:func:`dprepro.studies.repr_transfer.privacy.automatic_cases`; no default: the
        caller knows where its cases came from): then every private row's
        ``true_epsilon`` is infinite.

    Returns
    -------
    DataFrame, one row per (case, seed, ε): ``case``, ``seed``, ``epsilon``,
    ``accuracy`` (pooled over folds), ``correct``, ``n_lines``,
    ``majority_accuracy`` (share of the larger lineage), ``folds``,
    ``dim``, ``n_parts`` (DP feature selection: the k of each fold in fold
    order, ``;``-separated; empty for other methods) and the privacy columns
    of :func:`cancer_privacy`.
    """
    from sklearn.model_selection import StratifiedKFold

    from dprepro.learners.logistic_regression import PendingFits

    seeds = sorted(private)
    splits_of = {e: budget_split(e, feature_selection=selection is not None) for e in epsilons}
    records = {}
    line_ids = np.asarray(lineage.index, dtype=object)
    lineage = pd.Series(np.asarray(lineage, dtype=object))
    rows = []
    for pair in cases:
        case = case_label(pair)
        mask = lineage.isin(pair).to_numpy()
        idx = np.flatnonzero(mask)
        y = (lineage.to_numpy()[idx] == pair[1]).astype(int)
        skf = StratifiedKFold(n_splits=folds, shuffle=True,
                              random_state=stream_int(base_seed, f"cancer_type/folds/{case}"))
        splits = list(skf.split(np.zeros(len(idx)), y))
        rngs = {(s, e): stream_rng(base_seed, f"{stream}/{case}/eps{eps_text(e)}", s)
                for s in seeds for e in epsilons}
        correct = {(s, e): 0 for s in seeds for e in epsilons}
        parts = []  # k of each fold's feature selection (its Laplace scale is 4m/(k ε_sel))
        # every fit of the case is queued (its noise drawn in the order of a loop of fits,
        # after the selection's draws) and minimised together; predictions follow
        pending, tests = PendingFits(), []
        for train, test in splits:
            tr, te = idx[train], idx[test]
            if selection is not None:
                votes, k = selection.votes(private[seeds[0]][tr], y[train], line_ids[tr],
                                           nominal=len(tr))
                parts.append(str(int(k)))
            for s in seeds:
                X = private[s]
                for e in epsilons:
                    rng, split = rngs[(s, e)], splits_of[e]
                    if selection is not None:
                        cols = noisy_top_features(votes, k, selection.n_select,
                                                  epsilon=split.selection, rng=rng,
                                                  changed_parts=selection.changed_parts)
                        Xtr, Xte = X[np.ix_(tr, cols)], X[np.ix_(te, cols)]
                        scale = mean_row_norm(selection.public[:, cols])
                    else:
                        Xtr, Xte = X[tr], X[te]
                        scale = scales[s]
                    model = cancer_learner(split, variant=variant, l2=l2, scale=scale, rng=rng)
                    pending.add(model, Xtr, y[train])
                    tests.append(((s, e), Xte, y[test]))
                    records[(s, e)] = cancer_privacy(split, model, mapping=mapping,
                                                     selection=selection,
                                                     automatic_cases=automatic_cases)
        for model, (key, Xte, yte) in zip(pending.solve(), tests, strict=True):
            correct[key] += int(np.sum(model.predict(Xte) == yte))
        dim = selection.n_select if selection is not None else private[seeds[0]].shape[1]
        # always predicting the larger lineage: the bar an unbalanced pair must clear
        majority = float(max(np.mean(y), 1 - np.mean(y)))
        for s in seeds:
            for e in epsilons:
                rows.append({"case": case, "seed": s, "epsilon_value": float(e),
                             "accuracy": correct[(s, e)] / len(idx), "correct": correct[(s, e)],
                             "n_lines": len(idx), "majority_accuracy": majority,
                             "folds": folds, "dim": dim,
                             "n_parts": ";".join(parts) if parts else None,
                             **records[(s, e)].columns(CANCER_PRIVACY_COLUMNS)})
    return pd.DataFrame(rows).drop(columns="epsilon_value")

