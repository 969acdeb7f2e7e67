"""Features of the ``repr_transfer`` methods: representations and the gene baselines.

Baselines that need no public representation: a fixed gene set
(``fixed_genes``) and DP feature selection by subsample-and-aggregate
(``dp_feature_selection``; ε split by :func:`dprepro.privacy.budget_split`),
both on the gene values centred by the public gene means.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .repr_common import REPRESENTATIONS

__all__ = ["FeatureSelection", "MethodFeatures", "centred_genes", "mean_row_norm",
           "method_features", "noisy_top_features", "subsample_votes", "variable_genes"]


def variable_genes(public: pd.DataFrame, n: int) -> list[str]:
    """The ``n`` genes of largest public variance (all genes when ``n`` is 0), column order.

    Uses public data only, so restricting DP feature selection to these
    candidates costs no privacy.
    """
    if n <= 0 or n >= public.shape[1]:
        return list(public.columns)
    var = public.var(axis=0, ddof=1).to_numpy()
    top = np.sort(np.argsort(-var, kind="stable")[:n])
    return list(public.columns[top])


def centred_genes(public: pd.DataFrame, private: pd.DataFrame, genes: Sequence[str]):
    """Public and private gene values minus the public gene means (a privacy-free centring)."""
    missing = [g for g in genes if g not in public.columns or g not in private.columns]
    if missing:
        raise KeyError(f"genes not in the expression matrices: {missing[:20]}"
                       + (f" ... ({len(missing)} in all)" if len(missing) > 20 else ""))
    pub = public.loc[:, list(genes)].to_numpy(float)
    mean = pub.mean(axis=0)
    return pub - mean, private.loc[:, list(genes)].to_numpy(float) - mean


def mean_row_norm(Z) -> float:
    """Mean Euclidean row norm: the DP logistic regression's ``scale`` (from public rows)."""
    norm = float(np.mean(np.linalg.norm(np.asarray(Z, float), axis=1)))
    if not norm > 0:
        raise ValueError("public rows have zero norm; cannot scale")
    return norm


@dataclasses.dataclass(frozen=True)
class FeatureSelection:
    """DP feature selection by subsample-and-aggregate on the training lines.

    Attributes
    ----------
    n_select : int
        Genes selected (m).
    public : ndarray
        Centred public gene values, same columns as the private gene matrix;
        only used for the public row-norm scale of the logistic regression.
    sparsity, lasso_max_iter : as :func:`dprepro.dp_learners.dp_select_features`.
    """

    n_select: int
    public: np.ndarray
    sparsity: float = 1.0
    lasso_max_iter: int = 10_000

    def votes(self, X, y) -> tuple[np.ndarray, int]:
        """:func:`subsample_votes` of the training lines ``(X, y)`` with these settings."""
        return subsample_votes(X, y, self.n_select, sparsity=self.sparsity,
                               lasso_max_iter=self.lasso_max_iter)


def subsample_votes(X, y, n_select: int, *, sparsity: float = 1.0, n_parts: int | None = None,
                    lasso_max_iter: int = 10_000) -> tuple[np.ndarray, int]:
    r"""The vote counts of :func:`dprepro.dp_learners.dp_select_features`, before noise.

    Rows with a missing response are dropped; the rows are split into
    :math:`k = \lfloor\sqrt n\rfloor` interleaved parts, a Lasso
    (``alpha = sparsity / n``) is fitted on each, and its ``n_select`` largest
    :math:`|\beta_j|` get one vote. The votes do not depend on ε, so one
    computation serves every ε and seed; :func:`noisy_top_features` then adds
    the noise exactly as ``dp_select_features`` does (same draws from the same
    generator, tested).

    Returns
    -------
    (votes, k) : ndarray of shape (p,), int
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Lasso

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    keep = ~np.isnan(y)
    X, y = X[keep], y[keep]
    n, p = X.shape
    if not 1 <= n_select <= p:
        raise ValueError(f"n_select must be in [1, {p}], got {n_select}")
    k = int(math.isqrt(n)) if n_parts is None else int(n_parts)
    if not 1 <= k <= n:
        raise ValueError(f"n_parts must be in [1, {n}], got {k}")
    votes = np.zeros(p)
    lasso = Lasso(alpha=sparsity / n, fit_intercept=True, max_iter=lasso_max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for i in range(k):
            lasso.fit(X[i::k], y[i::k])
            votes[np.argsort(-np.abs(lasso.coef_), kind="stable")[:n_select]] += 1.0
    return votes, k


def noisy_top_features(votes, n_parts: int, n_select: int, *, epsilon: float,
                       rng: np.random.Generator | None) -> np.ndarray:
    r"""The ``n_select`` largest of :math:`v_j/k + \mathrm{Laplace}(2m/(k\epsilon))`.

    ε-DP for bounded neighbours (:func:`dprepro.dp_learners.dp_select_features`).
    With ``epsilon = inf`` no noise is drawn: the non-private selection.
    """
    votes = np.asarray(votes, dtype=float)
    frac = votes / n_parts
    if math.isfinite(epsilon):
        frac = frac + rng.laplace(0.0, 2.0 * n_select / (n_parts * epsilon), size=votes.size)
    return np.argsort(-frac, kind="stable")[:n_select]



@dataclasses.dataclass(frozen=True)
class MethodFeatures:
    """What an experiment needs of one method.

    Attributes
    ----------
    private : mapping seed -> ndarray (n_private, d)
        Private features per representation seed (the same matrix for every
        seed of a gene baseline).
    scales : mapping seed -> float
        Public mean row norm (the logistic regression's ``scale``).
    selection : FeatureSelection or None
        Set for ``dp_feature_selection``.
    genes : list of str
        Candidate genes of a gene baseline (empty for representations).
    public : mapping seed -> ndarray (n_public, d)
        The public lines' features, same columns as ``private`` (public
        centring and clipping scales of the corrected pipeline).
    """

    private: Mapping[int, np.ndarray]
    scales: Mapping[int, float]
    selection: FeatureSelection | None
    genes: list
    public: Mapping[int, np.ndarray] = dataclasses.field(default_factory=dict)


def method_features(method: str, *, seeds: int, samples, representations: Mapping,
                    public_expression: pd.DataFrame | None = None,
                    private_expression: pd.DataFrame | None = None,
                    baselines: Mapping | None = None,
                    private_set: str = "private") -> MethodFeatures:
    """Private features, public scales and the feature selection of one method.

    Parameters
    ----------
    method : str
        A representation (its long frame of :func:`dprepro.repr_study.representation_frame`
        rows with a ``seed`` column is ``representations[method]``) or a baseline.
    seeds : int
        Number of representation seeds.
    samples : index
        The private lines, in the order of the labels / responses.
    public_expression, private_expression : DataFrame
        Needed by the gene baselines.
    baselines : mapping
        ``fixed_genes`` (list) and ``feature_selection`` (``n_genes``,
        ``candidate_genes``, ``sparsity``, ``lasso_max_iter``).
    private_set : str
        The ``set`` label of the private rows of a representation frame (one
        per quantile mapping, :attr:`dprepro.repr_privacy.Pipeline.private_set`);
        the gene baselines take ``private_expression`` as given.
    """
    if method in REPRESENTATIONS:
        frame = representations[method]
        cols = [c for c in frame.columns if c.startswith("z")]
        private, scales, public = {}, {}, {}
        for seed in range(seeds):
            rows = frame[frame["seed"] == seed]
            private_rows = rows[rows["set"] == private_set].set_index("sample")
            if not len(private_rows):
                raise ValueError(f"{method} representation has no rows of set {private_set!r}")
            private[seed] = private_rows.loc[samples, cols].to_numpy(float)
            public[seed] = rows.loc[rows["set"] == "public", cols].to_numpy(float)
            scales[seed] = mean_row_norm(public[seed])
        return MethodFeatures(private, scales, None, [], public)
    baselines = dict(baselines or {})
    if method == "fixed_genes":
        genes = list(baselines["fixed_genes"])
    elif method == "dp_feature_selection":
        fs = baselines["feature_selection"]
        genes = variable_genes(public_expression, fs["candidate_genes"])
    else:
        raise ValueError(f"unknown method {method!r}")
    public_c, private_c = centred_genes(public_expression, private_expression.loc[samples],
                                        genes)
    private = {seed: private_c for seed in range(seeds)}
    scales = {seed: mean_row_norm(public_c) for seed in range(seeds)}
    public = {seed: public_c for seed in range(seeds)}
    selection = None
    if method == "dp_feature_selection":
        selection = FeatureSelection(n_select=fs["n_genes"], public=public_c,
                                     sparsity=fs["sparsity"],
                                     lasso_max_iter=fs["lasso_max_iter"])
    return MethodFeatures(private, scales, selection, genes, public)
