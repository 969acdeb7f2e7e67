"""``repr_transfer`` drug sensitivity: DP linear regression per drug over random splits.

DP linear regression by sufficient statistics perturbation
(:class:`dprepro.learners.linear_regression.SSPLinearRegression`) per drug over random
train/test splits, scored by Spearman's ρ and the probabilistic concordance
index. The clipping weights are chosen on synthetic data
(:func:`clipping_weight_table`). Every row carries the privacy record of its
fit (:func:`dprepro.studies.repr_transfer.privacy.drug_privacy`).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from dprepro.runtime.privacy_record import budget_split
from dprepro.studies.repr_transfer.baselines import FeatureSelection, noisy_top_features
from dprepro.studies.repr_transfer.common import (
    MIN_TEST_RESPONSES,
    MIN_TRAIN_RESPONSES,
    REPRESENTATION_METHODS,
    eps_text,
    selected_row,
    stream_rng,
)
from dprepro.studies.repr_transfer.privacy import (
    DRUG_PRIVACY_COLUMNS,
    drug_learner,
    drug_learner_terms,
    drug_privacy,
    method_split,
)

__all__ = ["clipping_lookup", "clipping_settings", "clipping_weight_cache",
           "clipping_weight_table", "drug_experiment", "drug_list", "drug_splits",
           "method_dim", "public_centring"]


def drug_list(columns: Sequence, *, drugs: Sequence = (), max_drugs: int = 0) -> list[str]:
    """The drugs of the experiment, fixed before any response is read.

    ``drugs`` (``repr_transfer.drug.drugs``) lists them, each a column of the response
    table (GDSC ``DRUG_ID`` or the synthetic ``DRUG001`` ...); empty, every column in
    order. ``max_drugs`` (``repr_transfer.drug.max_drugs``; 0 = all) keeps the first
    ones. A listed drug without any response gets rows with NaN scores, not no rows
    (:func:`drug_experiment`).

    Raises
    ------
    ValueError
        A listed drug that is no column of the response table, naming the key.
    """
    known = [str(c) for c in columns]
    chosen = [str(d) for d in drugs] if len(drugs) else known
    have = set(known)
    missing = [d for d in chosen if d not in have]
    if missing:
        raise ValueError(f"repr_transfer.drug.drugs: {missing} are not drugs of the response "
                         f"table (it has {len(known)}, e.g. {known[:5]}); list drug ids as the "
                         "table names them (GDSC DRUG_ID)")
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"repr_transfer.drug.drugs lists a drug twice: {chosen}")
    return chosen[:max_drugs] if max_drugs else chosen


def drug_splits(response: pd.DataFrame, *, splits: int, test_size: int,
                rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random (train, test) row splits of the lines with at least one response.

    Each split draws ``test_size`` test lines; the rest are training lines.
    """
    eligible = np.flatnonzero(np.asarray(response.notna().any(axis=1)))
    if test_size < 2 or len(eligible) - test_size < 3:
        raise ValueError(f"test_size {test_size} leaves too few lines: {len(eligible)} lines "
                         "have a response; need >= 2 test and >= 3 training lines")
    out = []
    for _ in range(splits):
        perm = rng.permutation(eligible)
        out.append((np.sort(perm[test_size:]), np.sort(perm[:test_size])))
    return out


def clipping_weight_cache(base_seed: int, *, n_datasets: int = 20, n_noise: int = 20,
                          grid: Sequence[float] | None = None,
                          xx_noise: str = "wishart") -> Callable:
    """Memoised :func:`dprepro.learners.clipping.ssp_clipping_weights` by (n, d, ε).

    The stream ``drug/clipping/n<n>/d<d>/eps<ε>`` does not name the method, so
    every method with the same (n, d, ε) gets the same weights (the Laplace
    learner's stream ends in ``/laplace``). Synthetic data only: costs no privacy.
    """

    from dprepro.learners.clipping import ssp_clipping_weights

    @functools.cache
    def weights(n: int, d: int, epsilon: float) -> tuple[float, float]:
        suffix = "" if xx_noise == "wishart" else f"/{xx_noise}"
        rng = stream_rng(base_seed, f"drug/clipping/n{n}/d{d}/eps{eps_text(epsilon)}{suffix}")
        return ssp_clipping_weights(int(n), int(d), epsilon=float(epsilon), rng=rng,
                                    grid=grid, n_datasets=n_datasets, n_noise=n_noise,
                                    xx_noise=xx_noise)

    return weights


def clipping_weight_table(n: int, settings: Sequence[tuple[int, float]], *,
                          base_seed: int, xx_noise: str = "wishart", n_datasets: int = 20,
                          n_noise: int = 20) -> pd.DataFrame:
    """Clipping weights for every (d, ε_learner) in ``settings`` at training size ``n``.

    ``n_datasets`` synthetic sets × ``n_noise`` noise draws score each grid pair
    (:func:`dprepro.learners.clipping.ssp_clipping_weights`; the authors use 20 × 20).
    """
    weights = clipping_weight_cache(base_seed, xx_noise=xx_noise, n_datasets=n_datasets,
                                    n_noise=n_noise)
    rows = []
    for d, eps in sorted(set((int(d), float(e)) for d, e in settings)):
        wx, wy = weights(int(n), d, eps)
        rows.append({"n": int(n), "d": d, "epsilon": eps, "w_x": wx, "w_y": wy})
    return pd.DataFrame(rows, columns=["n", "d", "epsilon", "w_x", "w_y"])


def method_dim(method: str, *, hyperparameters: pd.DataFrame, baselines: Mapping,
               pipeline: str | None = None) -> int:
    """Feature dimension the learner of ``method`` sees.

    A representation: its selected ``dim`` in ``hyperparameters`` (of
    ``pipeline``'s search when the table has a ``pipeline`` column); the fixed
    genes: their number; DP feature selection: the genes it selects. An
    equal-dimension control (``pca_vae_dim``) has its source's selected ``dim``.
    """
    if method in REPRESENTATION_METHODS:
        return int(selected_row(hyperparameters, method, pipeline)["dim"])
    if method == "fixed_genes":
        return len(baselines["fixed_genes"])
    if method == "dp_feature_selection":
        return int(baselines["feature_selection"]["n_genes"])
    raise ValueError(f"unknown method {method!r}")


def clipping_settings(methods: Sequence[str], *, epsilon: float,
                      hyperparameters: pd.DataFrame, baselines: Mapping,
                      extra_dim: int = 0, pipeline: str | None = None) -> list[tuple[int, float]]:
    """(d, ε_learner) of every method at total ``epsilon``: what the clipping weights depend on.

    ε_learner comes from :func:`dprepro.studies.repr_transfer.privacy.method_split`, the split
    the drug experiment spends; ``extra_dim`` counts columns the learner adds
    (:attr:`dprepro.studies.repr_transfer.privacy.Pipeline.extra_dim`).
    """
    return [(method_dim(m, hyperparameters=hyperparameters, baselines=baselines,
                        pipeline=pipeline) + extra_dim,
             method_split(m, epsilon).learner) for m in methods]


def clipping_lookup(tables: Sequence[pd.DataFrame]) -> Callable:
    """``(n, d, ε) -> (w_x, w_y)`` from precomputed :func:`clipping_weight_table` rows."""
    known = {}
    for table in tables:
        for row in table.itertuples(index=False):
            known[(int(row.n), int(row.d), float(row.epsilon))] = (float(row.w_x),
                                                                   float(row.w_y))

    def lookup(n: int, d: int, epsilon: float) -> tuple[float, float]:
        try:
            return known[(int(n), int(d), float(epsilon))]
        except KeyError:
            raise KeyError(f"no clipping weights for n={n}, d={d}, epsilon={epsilon}; "
                           f"known: {sorted(known)}") from None

    return lookup


def _pooled_response_sd(Y: np.ndarray, splits) -> list[float]:
    """Per split, the sd of its training lines' responses, all drugs pooled, each drug
    centred by its mean (NaN responses left out)."""
    sd_y = []
    for train, _ in splits:
        Yt = Y[train]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sd_y.append(float(np.nanstd(Yt - np.nanmean(Yt, axis=0), ddof=1)))
    return sd_y


def _drug_model(split, Xtr: np.ndarray, P: np.ndarray | None,
                response_prior, sd_y: float, weights: tuple[float, float] | None, *,
                ridge: float, rng, xx_noise: str):
    """The (unfitted) SSP learner of one fit of :func:`drug_experiment`.

    Centred and clipped by the public features ``P`` and ``response_prior`` when ``P`` is
    given, else by the private training features ``Xtr`` and the pooled response sd
    ``sd_y``; clipped at the clipping ``weights`` (w_x, w_y), which are None at ε = inf
    (no noise and no clipping).
    """
    centre = {}
    if P is not None:
        centre = {"x_center": P.mean(axis=0), "y_center": response_prior[0]}
    if weights is None:
        return drug_learner(split, ridge=ridge, xx_noise=xx_noise, **centre)
    wx, wy = weights
    if P is not None:
        sd_x = float(np.std(P - centre["x_center"], ddof=1))
        clip_y = wy * float(response_prior[1])
    else:
        sd_x = float(np.std(Xtr - Xtr.mean(axis=0), ddof=1))
        clip_y = wy * sd_y
    return drug_learner(split, ridge=ridge, clip_x=wx * sd_x, clip_y=clip_y, rng=rng,
                        xx_noise=xx_noise, **centre)


def drug_experiment(
    private: Mapping[int, np.ndarray],
    response: pd.DataFrame,
    drugs: Sequence[str],
    *,
    epsilons: Sequence[float],
    splits: Sequence[tuple[np.ndarray, np.ndarray]],
    ridge: float,
    base_seed: int,
    stream: str,
    clipping_weights: Callable[[int, int, float], tuple[float, float]],
    selection: FeatureSelection | None = None,
    xx_noise: str = "wishart",
    public: Mapping[int, np.ndarray] | None = None,
    response_prior: tuple[float, float] | None = None,
    mapping: str = "global",
    automatic_drugs: bool,
) -> pd.DataFrame:
    """Per drug and split: SSP linear regression on the training lines, scored on the test lines.

    As in the paper's code (``diffpri.processData``/``predictL``): X and y are
    centred by the training means, clipped at :math:`w_x\\,sd(X)` and
    :math:`w_y\\,sd(Y)` (sd of all centred entries of the training features;
    sd of all drugs' centred training responses pooled), with :math:`(w_x,
    w_y)` from ``clipping_weights(n_train, d, ε_learner)`` (n_train = the
    nominal training size, before lines without a response are dropped);
    ε = inf fits without noise or clipping. Scores: Spearman's ρ and the
    PC-index with σ = the drug's response sd over all lines.

    The corrected pipeline passes ``public`` (the public lines' features per
    seed, same columns as ``private``) and ``response_prior`` (a-priori
    centre and scale of the responses): X is then centred by the public
    feature means and clipped at :math:`w_x\\,sd(X_{pub})`, y centred at the
    prior centre and clipped at :math:`w_y \\cdot` the prior scale, so no
    statistic of the private lines enters except through the noisy XᵀX and
    Xᵀy (with ``xx_noise = "laplace"``: pure ε-DP). ``mapping`` says how
    ``private`` was quantile-mapped (the default ``global`` claims nothing: it voids any finite ε,
    :func:`dprepro.studies.repr_transfer.privacy.drug_privacy`). ``automatic_drugs``
    (no default: the caller knows where ``drugs`` came from): the drugs were read off the
    private dose-response table, so no row has a finite ε
    (:func:`dprepro.studies.repr_transfer.privacy.automatic_drugs`).

    Every (drug, split) gives rows, so which rows exist is fixed before any response
    is read: a split with fewer than
    :data:`~dprepro.studies.repr_transfer.common.MIN_TRAIN_RESPONSES` training or
    :data:`~dprepro.studies.repr_transfer.common.MIN_TEST_RESPONSES` test responses of
    the drug fits no model, and its rows have NaN ``spearman`` and ``pc_index`` (and no
    ``n_parts``), their counts in ``n_train`` and ``n_test``.

    Returns
    -------
    DataFrame, one row per (drug, seed, ε, split): ``drug``, ``seed``,
    ``epsilon``, ``split``, ``spearman``, ``pc_index``, ``n_train``,
    ``n_test``, ``dim``, ``n_parts`` (DP feature selection's k, from which its
    Laplace scale 4m/(k ε_sel) follows; missing for other methods) and the
    privacy columns of :func:`drug_privacy`.
    """
    from dprepro.learners.metrics import probabilistic_c_index, spearman

    seeds = sorted(private)
    if public is not None and response_prior is None:
        raise ValueError("public centring needs response_prior = (centre, scale)")
    Y = response.to_numpy(dtype=float)
    line_ids = np.asarray(response.index, dtype=object)
    col = {str(c): j for j, c in enumerate(response.columns)}
    sd_y = _pooled_response_sd(Y, splits)
    fs = selection is not None
    dim = selection.n_select if fs else private[seeds[0]].shape[1]
    splits_of = {e: budget_split(e, feature_selection=fs) for e in epsilons}
    rows = []
    for drug in drugs:
        y_all = Y[:, col[str(drug)]]
        with warnings.catch_warnings():  # under 2 responses: NaN, and no model is fitted
            warnings.simplefilter("ignore", RuntimeWarning)
            noise_sd = float(np.nanstd(y_all, ddof=1))
        rngs = {(s, e): stream_rng(base_seed, f"{stream}/{drug}/eps{eps_text(e)}", s)
                for s in seeds for e in epsilons}
        for split_no, (train, test) in enumerate(splits):
            tr, te = train[~np.isnan(y_all[train])], test[~np.isnan(y_all[test])]
            if len(tr) < MIN_TRAIN_RESPONSES or len(te) < MIN_TEST_RESPONSES:
                # no model, but its rows (no noise drawn: the other splits' draws stay)
                counts = {"drug": str(drug), "split": split_no, "n_train": len(tr),
                          "n_test": len(te), "dim": dim}
                rows += [_no_model_row(counts, s, e, splits_of[e], public=public is not None,
                                       xx_noise=xx_noise, mapping=mapping, selection=selection,
                                       automatic_drugs=automatic_drugs)
                         for s in seeds for e in epsilons]
                continue
            ytr, yte = y_all[tr], y_all[te]
            if fs:
                # k from the nominal training size, as the clipping weights (lines
                # without this drug's response are dropped after the parts are fixed)
                votes, k = selection.votes(private[seeds[0]][tr], ytr, line_ids[tr],
                                           nominal=len(train))
            for s in seeds:
                X = private[s]
                for e in epsilons:
                    rng, split = rngs[(s, e)], splits_of[e]
                    if fs:
                        cols = noisy_top_features(votes, k, selection.n_select,
                                                  epsilon=split.selection, rng=rng,
                                                  changed_parts=selection.changed_parts)
                        Xtr, Xte = X[np.ix_(tr, cols)], X[np.ix_(te, cols)]
                    else:
                        Xtr, Xte = X[tr], X[te]
                    P = None if public is None else (public[s][:, cols] if fs else public[s])
                    weights = None  # ε = inf: no noise, no clipping
                    if math.isfinite(e):
                        extra = 1 if public is not None else 0  # the intercept column
                        weights = clipping_weights(len(train), dim + extra, split.learner)
                    model = _drug_model(split, Xtr, P, response_prior, sd_y[split_no], weights,
                                        ridge=ridge, rng=rng, xx_noise=xx_noise)
                    pred = model.fit(Xtr, ytr).predict(Xte)
                    rows.append({"drug": str(drug), "seed": s, "epsilon_value": float(e),
                                 "split": split_no, "spearman": spearman(yte, pred),
                                 "pc_index": probabilistic_c_index(yte, pred, noise_sd=noise_sd),
                                 "n_train": len(tr), "n_test": len(te), "dim": dim,
                                 "n_parts": k if fs else None,
                                 **drug_privacy(split, model, mapping=mapping,
                                                selection=selection,
                                                automatic_drugs=automatic_drugs).columns(
                                     DRUG_PRIVACY_COLUMNS)})
    frame = pd.DataFrame(rows)
    if not len(frame):
        return frame
    return frame.assign(n_parts=frame["n_parts"].astype("Int64")).drop(columns="epsilon_value")


def _no_model_row(counts: Mapping, seed: int, epsilon: float, split, *, public: bool,
                  xx_noise: str, mapping: str, selection, automatic_drugs: bool) -> dict:
    """The row of a (drug, split, seed, ε) whose split has too few responses to fit: NaN
    scores, the counts, and the privacy columns of the learner that would have run
    (:func:`dprepro.studies.repr_transfer.privacy.table_records` rebuilds the same)."""
    terms = drug_learner_terms(split, xx_noise=xx_noise, public_centres=public)
    record = drug_privacy(split, terms, mapping=mapping, selection=selection,
                          automatic_drugs=automatic_drugs)
    return {"drug": counts["drug"], "seed": seed, "epsilon_value": float(epsilon),
            "split": counts["split"], "spearman": np.nan, "pc_index": np.nan,
            "n_train": counts["n_train"], "n_test": counts["n_test"], "dim": counts["dim"],
            "n_parts": None, **record.columns(DRUG_PRIVACY_COLUMNS)}


def public_centring(spec, features, settings: Mapping) -> dict:
    """:func:`drug_experiment` keywords of a pipeline's centring.

    The corrected pipeline (``spec.public_centring``) centres and clips with
    the public features (``features.public``) and the a-priori response
    centre and scale (``settings["response_center"]``, ``["response_scale"]``);
    the paper's pipeline uses the private training lines (no keywords).
    """
    if not spec.public_centring:
        return {}
    return {"public": features.public,
            "response_prior": (float(settings["response_center"]),
                               float(settings["response_scale"]))}
