"""Features of the ``repr_transfer`` methods: representations and the gene baselines.

Baselines that need no public representation: a fixed gene set
(``fixed_genes``) and DP feature selection by subsample-and-aggregate
(``dp_feature_selection``; ε split by :func:`dprepro.runtime.privacy_record.budget_split`),
both on the gene values centred by the public gene means.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from dprepro.learners.accounting import selection_changed_parts
from dprepro.learners.feature_selection import hashed_parts, hashed_votes, noisy_top_features
from dprepro.runtime.seeds import seed_sequence
from dprepro.studies.repr_transfer.common import REPRESENTATION_METHODS

__all__ = ["FeatureSelection", "MethodFeatures", "centred_genes", "hashed_parts",
           "hashed_votes", "mean_row_norm", "method_features", "noisy_top_features",
           "part_key", "subsample_votes", "variable_genes"]


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
    sparsity, lasso_max_iter : as :func:`dprepro.learners.feature_selection.dp_select_features`.
    n_parts : int, optional
        k of the public scheme; ``None`` with ``hashed`` true: k = ⌊√N⌋ of
        the fit's nominal training size N (:meth:`parts`).
    part_key : bytes
        Key of the hash (:func:`part_key`); needed by the public scheme.
    hashed : bool, optional
        Which scheme runs. False: the authors' (:func:`subsample_votes`: k =
        ⌊√n⌋ interleaved parts of the n lines with a response, Lasso α =
        sparsity / n), whose k, α and part of every line depend on which
        private lines are present and have a response, so it has no proven
        ε. True: the public scheme (:func:`hashed_votes`): k = ``n_parts``
        (fixed before any private value is read) or ⌊√N⌋ with N the number of
        training lines the fit is given (the split's or fold's lines, before
        lines without a response are dropped: a count of private lines, the
        same on every replacement neighbour of those lines), α = sparsity / k²,
        each line's part a keyed hash of its id. Replacing one line by one with
        another id (the replacement relation of every corrected mechanism,
        which keeps N) moves it to another part: two parts change, L1 sensitivity
        of the vote fractions 4m/k (:attr:`changed_parts` = 2,
        :func:`hashed_votes`). ``None`` (default): true exactly when
        ``n_parts`` is set (the earlier signature).
    lasso_solver : {"coordinate_descent", "lars"}
        How each part's Lasso is solved (:func:`dprepro.learners.lasso.lasso_coef`):
        scikit-learn's coordinate descent at its tolerance (the authors') or the
        exact homotopy.
    """

    n_select: int
    public: np.ndarray
    sparsity: float = 1.0
    lasso_max_iter: int = 10_000
    n_parts: int | None = None
    part_key: bytes = b""
    hashed: bool | None = None
    lasso_solver: str = "coordinate_descent"

    @property
    def public_parts(self) -> bool:
        """Whether k, α and the parts are fixed without looking at the private values."""
        return self.n_parts is not None if self.hashed is None else bool(self.hashed)

    def parts(self, nominal: int) -> int:
        """k of the public scheme for a fit given ``nominal`` training lines.

        ``n_parts`` when set, else the authors' rule k = ⌊√N⌋ applied to the
        nominal size N (a count of the lines the fit is given, not of those
        with a value), at least 1.
        """
        if self.n_parts is not None:
            return int(self.n_parts)
        if isinstance(nominal, bool) or not isinstance(nominal, int | np.integer) or nominal < 1:
            raise ValueError("k = isqrt(N) needs the nominal training size N (a positive "
                             f"integer), got {nominal!r}")
        return max(1, math.isqrt(int(nominal)))

    @property
    def changed_parts(self) -> int:
        """Parts a replacement neighbour can change: 2 with hashed parts, 1 as the authors state.

        With hashed parts a line replaced by one with another id leaves its
        part and enters another (:func:`hashed_votes`); the authors' scheme
        keeps their stated 2m/k (its ε is void anyway, see ``n_parts``);
        :func:`dprepro.learners.accounting.selection_changed_parts`.
        """
        return selection_changed_parts(self.public_parts)

    def votes(self, X, y, lines=None, *, nominal: int | None = None) -> tuple[np.ndarray, int]:
        """Vote counts and k of the training lines ``(X, y)``, ids ``lines``.

        ``nominal``: the fit's nominal training size N (:meth:`parts`; default
        the number of rows of ``X``), used by the public scheme without
        ``n_parts``.
        """
        if not self.public_parts:
            return subsample_votes(X, y, self.n_select, sparsity=self.sparsity,
                                   lasso_max_iter=self.lasso_max_iter,
                                   lasso_solver=self.lasso_solver)
        if lines is None:
            raise ValueError("the hashed part assignment needs the training lines' ids")
        k = self.parts(int(np.shape(X)[0]) if nominal is None else nominal)
        return hashed_votes(X, y, lines, self.n_select, n_parts=k,
                            key=self.part_key, sparsity=self.sparsity,
                            lasso_max_iter=self.lasso_max_iter,
                            lasso_solver=self.lasso_solver)


def part_key(base_seed: int) -> bytes:
    """16-byte key of the part hash, from stream ``feature_selection/parts`` of ``base_seed``.

    A key fixed by the configuration (not by the data): the part of a line
    is then a function of its id alone.
    """
    state = seed_sequence(base_seed, "repr_transfer", "feature_selection/parts", 0)
    return state.generate_state(4, dtype=np.uint32).astype("<u4").tobytes()


def subsample_votes(X, y, n_select: int, *, sparsity: float = 1.0, n_parts: int | None = None,
                    lasso_max_iter: int = 10_000,
                    lasso_solver: str = "coordinate_descent") -> tuple[np.ndarray, int]:
    r"""The vote counts of :func:`dprepro.learners.feature_selection.dp_select_features`, before
    noise.

    Rows with a missing response are dropped; the rows are split into
    :math:`k = \lfloor\sqrt n\rfloor` interleaved parts, a Lasso
    (``alpha = sparsity / n``) is fitted on each, and its ``n_select`` largest
    :math:`|\beta_j|` get one vote. The votes do not depend on ε, so one
    computation serves every ε and seed; :func:`noisy_top_features` then adds
    the noise exactly as ``dp_select_features`` does (same draws from the same
    generator, tested). ``lasso_solver``: :func:`dprepro.learners.lasso.lasso_coef`.

    Returns
    -------
    (votes, k) : ndarray of shape (p,), int
    """
    from sklearn.exceptions import ConvergenceWarning

    from dprepro.learners.lasso import check_lasso_solver, lasso_coef

    check_lasso_solver(lasso_solver)
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for i in range(k):
            coef = lasso_coef(X[i::k], y[i::k], sparsity / n, solver=lasso_solver,
                              max_iter=lasso_max_iter)
            votes[np.argsort(-np.abs(coef), kind="stable")[:n_select]] += 1.0
    return votes, k


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
                    private_set: str = "private", public_parts: bool = False,
                    base_seed: int = 0) -> MethodFeatures:
    """Private features, public scales and the feature selection of one method.

    Parameters
    ----------
    method : str
        A representation (its long frame of
        :func:`dprepro.studies.repr_transfer.fitting.representation_frame`
        rows with a ``seed`` column is ``representations[method]``) or a baseline.
    seeds : int
        Number of representation seeds.
    samples : index
        The private lines, in the order of the labels / responses.
    public_expression, private_expression : DataFrame
        Needed by the gene baselines.
    baselines : mapping
        ``fixed_genes`` (list) and ``feature_selection`` (``n_genes``,
        ``candidate_genes``, ``sparsity``, ``lasso_max_iter``, optionally
        ``lasso_solver``, default ``coordinate_descent``).
    private_set : str
        The ``set`` label of the private rows of a representation frame (one
        per quantile mapping, :attr:`dprepro.studies.repr_transfer.privacy.Pipeline.private_set`);
        the gene baselines take ``private_expression`` as given.
    public_parts : bool
        DP feature selection with public k, α and hashed parts
        (``feature_selection.n_parts``, or ⌊√N⌋ of each fit's nominal training
        size N when it is null; key :func:`part_key` of ``base_seed``;
        :attr:`dprepro.studies.repr_transfer.privacy.Pipeline.public_selection`) instead of
        the authors' data-dependent ones.
    base_seed : int
        The configuration's seed (the part key).
    """
    if method in REPRESENTATION_METHODS:
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
                                     lasso_max_iter=fs["lasso_max_iter"],
                                     n_parts=(int(fs["n_parts"]) if public_parts
                                              and fs.get("n_parts") is not None else None),
                                     part_key=part_key(base_seed) if public_parts else b"",
                                     hashed=bool(public_parts),
                                     lasso_solver=fs.get("lasso_solver", "coordinate_descent"))
    return MethodFeatures(private, scales, selection, genes, public)
