r"""The ``repr_transfer`` study: experiments and tables of Niinimäki et al. (2019).

Pipeline (docs/design.md §5): a representation :math:`f` is learned on *public*
expression only (PCA, random projection, VAE); its hyperparameters are chosen
on a public auxiliary task (predicting the public lineage); the private lines
are mapped through :math:`f` and a DP learner is trained on them:

* cancer-type pairs -- binary classification between two lineages of the
  private lines, DP logistic regression by objective perturbation
  (:class:`dprepro.dp_learners.DPLogisticRegression`), stratified k-fold CV
  accuracy;
* drug sensitivity -- DP linear regression by sufficient statistics
  perturbation (:class:`dprepro.dp_learners.SSPLinearRegression`) per drug
  over random train/test splits, Spearman's ρ and the probabilistic
  concordance index.

Baselines that need no public representation: a fixed gene set
(``fixed_genes``) and DP feature selection by subsample-and-aggregate
(``dp_feature_selection``, half of ε for the selection, half for the learner),
both on the gene values centred by the public gene means.

Every result row carries its privacy statement (:func:`cancer_privacy`,
:func:`drug_privacy`): the stated ε, the mechanism and variant, the budget
split and ``true_epsilon``, the level the computation as run actually
guarantees (``inf`` where no finite ε holds; see the notes).

Randomness comes only from :func:`dprepro.seeds.seed_sequence` streams named
after the step, the case/drug and ε, with the representation seed as the
replicate, so a row does not depend on which other rows a job computes.
Nothing here imports snakemake; torch is imported only when a VAE is fitted.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .seeds import seed_sequence

# scikit-learn, scipy.optimize and torch are imported where they are used, so
# that the table and data steps start quickly (one job per step on a laptop).

#: Bound on |l''| of the logistic loss (CMS11's c), as in dprepro.dp_learners.
LOGISTIC_LOSS_C = 0.25

__all__ = [
    "BASELINES",
    "METHODS",
    "REPRESENTATIONS",
    "STUDY",
    "FeatureSelection",
    "auxiliary_score",
    "cancer_privacy",
    "cancer_summary",
    "cancer_type_cases",
    "cancer_type_experiment",
    "cancer_type_table",
    "case_label",
    "centred_genes",
    "clipping_lookup",
    "clipping_weight_cache",
    "clipping_weight_table",
    "configure_torch",
    "drug_experiment",
    "drug_privacy",
    "drug_splits",
    "drug_summary",
    "drug_table",
    "fit_representation",
    "mean_row_norm",
    "noisy_top_features",
    "representation_frame",
    "select_hyperparameters",
    "real_data",
    "stream_int",
    "stream_rng",
    "subsample_votes",
    "synthetic_data",
    "variable_genes",
]

STUDY = "repr_transfer"
REPRESENTATIONS = ("pca", "random_projection", "vae")
BASELINES = ("fixed_genes", "dp_feature_selection")
METHODS = REPRESENTATIONS + BASELINES

#: Columns of ``cancer_type_accuracy.csv`` in order (docs/design.md §2 contract first).
CANCER_COLUMNS = (
    "case", "representation", "epsilon", "seed", "accuracy",
    "mechanism", "variant", "selection_epsilon", "learner_epsilon", "true_epsilon",
    "epsilon_if_bias_penalised", "privacy_note",
    "dim", "correct", "n_lines", "folds", "data_origin",
)
#: Columns of ``drug_sensitivity.csv`` in order (docs/design.md §2 contract first).
DRUG_COLUMNS = (
    "representation", "epsilon", "seed", "drug", "spearman", "pc_index",
    "mechanism", "variant", "selection_epsilon", "learner_epsilon", "true_epsilon",
    "privacy_note",
    "dim", "splits", "n_train", "n_test", "data_origin",
)


# --------------------------------------------------------------------------- #
# random streams
# --------------------------------------------------------------------------- #
def stream_rng(base_seed: int, step: str, replicate: int = 0) -> np.random.Generator:
    """Generator of ``SeedSequence([base, crc32("repr_transfer"), crc32(step), replicate])``."""
    return np.random.default_rng(seed_sequence(base_seed, STUDY, step, replicate))


def stream_int(base_seed: int, step: str) -> int:
    """A 32-bit integer seed for scikit-learn's ``random_state`` from a named stream."""
    return int(seed_sequence(base_seed, STUDY, step, 0).generate_state(1)[0])


def _eps_text(epsilon: float) -> str:
    return "inf" if not math.isfinite(epsilon) else f"{float(epsilon):g}"


# --------------------------------------------------------------------------- #
# input data
# --------------------------------------------------------------------------- #
_UNKNOWN_LINEAGE = ("", "UNCLASSIFIED", "UNABLE TO CLASSIFY", "NA", "NAN", "NONE", "UNKNOWN")


def _lineage_frame(values: pd.Series) -> pd.DataFrame:
    text = values.astype("string").str.strip()
    text = text.mask(text.str.upper().isin(_UNKNOWN_LINEAGE))
    frame = pd.DataFrame({"lineage": text.astype(object).where(text.notna(), None)})
    frame.index = pd.Index([str(i) for i in values.index], name="sample")
    return frame


def _named(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out.index = pd.Index([str(i) for i in frame.index], name="sample")
    out.columns = pd.Index([str(c) for c in frame.columns], name=frame.columns.name)
    return out


def synthetic_data(rng: np.random.Generator, settings: Mapping, *,
                   private: bool = True) -> dict[str, pd.DataFrame]:
    """The SYNTHETIC public/private pair, private expression quantile-mapped onto public.

    ``settings`` are keyword arguments of
    :func:`dprepro.synthetic_expression.synthetic_public_private` (``n_public``,
    ``n_private``, ``n_genes``, ``rank``, ``n_lineages``, ``n_drugs``, ...).
    Returns ``public_expression``, ``public_lineage``, ``private_expression``,
    ``private_lineage``, ``private_response`` (frames indexed by ``sample``);
    with ``private=False`` only the public two (the same values: the public
    matrix is not changed by the mapping, and every gene is shared).
    """
    from .synthetic_expression import synthetic_public_private

    data = synthetic_public_private(rng, **dict(settings))
    if not private:
        return {"public_expression": _named(data["public_expression"].astype(np.float32)),
                "public_lineage": _lineage_frame(data["public_lineage"])}
    from .expression_data import harmonise_genes

    private, public = harmonise_genes(data["private_expression"], data["public_expression"],
                                      min_shared=int(settings["n_genes"]),
                                      private_name="synthetic private",
                                      public_name="synthetic public")
    return {"public_expression": _named(public),
            "public_lineage": _lineage_frame(data["public_lineage"]),
            "private_expression": _named(private),
            "private_lineage": _lineage_frame(data["private_lineage"]),
            "private_response": _named(data["private_response"])}


def real_data(gdsc_expression: pd.DataFrame, depmap_expression: pd.DataFrame,
              depmap_models: pd.DataFrame, *, min_shared_genes: int,
              exclude_private_lines: bool, lineage_column: str = "TCGA_LABEL",
              gdsc_cell_lines: pd.DataFrame | None = None,
              gdsc_dose_response: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """GDSC (private) and DepMap (public) as the study's five tables.

    * public lines: DepMap models, without those whose COSMIC id is a GDSC
      expression line when ``exclude_private_lines`` (the representation must
      not have seen the private lines); lineage = ``OncotreeLineage``;
    * both matrices restricted to the shared gene symbols and the private one
      quantile-mapped onto the public distribution
      (:func:`dprepro.expression_data.harmonise_genes`);
    * private lineage = ``lineage_column`` of the cell-line details
      (``UNCLASSIFIED`` and empty values are missing); responses = LN_IC50 of
      every drug with at least one response among the expression lines.

    The private tables are returned only when cell lines and dose response
    are given.
    """
    from .expression_data import harmonise_genes

    private_ids = set(int(i) for i in gdsc_expression.index)
    models = depmap_models.set_index("ModelID")
    public = depmap_expression
    if exclude_private_lines:
        cosmic = models["COSMICID"].reindex(public.index)
        drop = cosmic.notna().to_numpy() & cosmic.fillna(-1).astype(np.int64).isin(
            private_ids).to_numpy()
        public = public.loc[~drop]
    private, public = harmonise_genes(gdsc_expression, public, min_shared=min_shared_genes)
    out = {"public_expression": _named(public),
           "public_lineage": _lineage_frame(models["lineage"].reindex(public.index))}
    if gdsc_cell_lines is not None and gdsc_dose_response is not None:
        if lineage_column not in gdsc_cell_lines.columns:
            raise ValueError(f"cell-line details lack column {lineage_column!r}; found "
                             f"{list(gdsc_cell_lines.columns)}")
        response = gdsc_dose_response.reindex(private.index).astype(float)
        response = response.loc[:, response.notna().any(axis=0)]
        out.update(private_expression=_named(private),
                   private_lineage=_lineage_frame(
                       gdsc_cell_lines[lineage_column].reindex(private.index)),
                   private_response=_named(response))
    return out


# --------------------------------------------------------------------------- #
# representations and hyperparameter selection (public data only)
# --------------------------------------------------------------------------- #
def configure_torch(threads: int, device: str) -> str:
    """Pin torch's CPU threads and make CUDA kernels deterministic; return the device used."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    torch.set_num_threads(max(1, int(threads)))
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False
    return device


def fit_representation(representation: str, spec: Mapping, public: pd.DataFrame, *,
                       rng: np.random.Generator, vae_options: Mapping | None = None):
    """Fit one representation on the public matrix (samples x genes).

    Parameters
    ----------
    representation : {"pca", "random_projection", "vae"}
    spec : mapping
        ``dim``; for the VAE also ``learning_rate``, ``hidden_layers`` and
        ``width_multiplier`` (hidden width = multiplier x dim).
    rng : numpy.random.Generator
        Seeds the random projection and every random choice of the VAE
        (validation split, batch order, initial weights, noise). PCA uses the
        exact SVD and no randomness.
    vae_options : mapping, optional
        Extra :class:`dprepro.representations.VAERepresentation` arguments
        (``batch_size``, ``max_epochs``, ``patience``, ``validation_fraction``,
        ``device``, ``log_every``).

    Returns
    -------
    A fitted transformer with ``transform(DataFrame)``.
    """
    dim = int(spec["dim"])
    if representation == "pca":
        # exactly dprepro.representations.fit_pca (tested equal), without importing torch
        from sklearn.decomposition import PCA

        m, d = np.shape(public)
        if not 1 <= dim <= min(m, d):
            raise ValueError(f"dim must be in [1, {min(m, d)}], got {dim}")
        return PCA(n_components=dim, svd_solver="full").fit(public)
    if representation == "random_projection":
        from .representations import RandomProjection

        return RandomProjection(dim, random_state=rng).fit(public)
    if representation == "vae":
        from .vae import VAERepresentation  # the only representation that needs torch

        return VAERepresentation(
            dim,
            n_hidden_layers=int(spec["hidden_layers"]),
            hidden_width=int(spec["width_multiplier"]) * dim,
            learning_rate=float(spec["learning_rate"]),
            random_state=rng,
            **dict(vae_options or {}),
        ).fit(public)
    raise ValueError(f"unknown representation {representation!r}; expected one of "
                     f"{list(REPRESENTATIONS)}")


def representation_frame(public: np.ndarray, private: np.ndarray, public_index,
                         private_index) -> pd.DataFrame:
    """Public and private representations in one long frame (``set``, ``sample``, z01...)."""
    public, private = np.asarray(public, float), np.asarray(private, float)
    dim = public.shape[1]
    cols = [f"z{j + 1:02d}" for j in range(dim)]
    frames = [pd.DataFrame(values, columns=cols).assign(set=name, sample=[str(s) for s in index])
              for name, values, index in (("public", public, public_index),
                                          ("private", private, private_index))]
    frame = pd.concat(frames, ignore_index=True)
    return frame.loc[:, ["set", "sample", *cols]]


def auxiliary_score(Z, labels, *, folds: int, random_state: int) -> dict:
    """Public auxiliary task: CV accuracy of a non-private logistic regression on ``Z``.

    Predicts the (multi-class) lineage of the public samples from their
    representation: standardised features, scikit-learn's
    ``LogisticRegression`` (L2, C = 1, lbfgs), ``StratifiedKFold(folds,
    shuffle=True, random_state)``. Samples without a lineage and lineages with
    fewer than ``folds`` samples are left out.

    Returns
    -------
    dict
        ``score`` (mean fold accuracy), ``score_se`` (its standard error over
        folds), ``n_samples``, ``n_classes``.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    Z = np.asarray(Z, dtype=float)
    labels = pd.Series(np.asarray(labels, dtype=object))
    if len(labels) != Z.shape[0]:
        raise ValueError(f"labels has {len(labels)} entries for {Z.shape[0]} rows")
    counts = labels.dropna().value_counts()
    kept = counts.index[counts >= folds]
    mask = labels.isin(kept).to_numpy()
    if len(kept) < 2:
        raise ValueError(f"the auxiliary task needs two lineages with >= {folds} public samples "
                         f"each; lineage counts: {counts.to_dict()}")
    Z, y = Z[mask], labels[mask].to_numpy(dtype=str)
    accs = []
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=int(random_state))
    for train, test in skf.split(Z, y):
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
        model.fit(Z[train], y[train])
        accs.append(float(np.mean(model.predict(Z[test]) == y[test])))
    accs = np.asarray(accs)
    return {"score": float(accs.mean()),
            "score_se": float(accs.std(ddof=1) / math.sqrt(len(accs))) if len(accs) > 1 else 0.0,
            "n_samples": int(mask.sum()), "n_classes": int(len(kept))}


def select_hyperparameters(candidates: pd.DataFrame) -> pd.DataFrame:
    """Mark the best candidate of each representation (``selected``).

    Best = highest auxiliary ``score``; ties go to the smaller ``dim``, then to
    the first candidate in the given order. Returns a copy sorted by
    representation (study order) and candidate order, with a boolean
    ``selected`` column.
    """
    missing = {"representation", "candidate", "dim", "score"} - set(candidates.columns)
    if missing:
        raise ValueError(f"candidates lack columns {sorted(missing)}")
    unknown = set(candidates["representation"]) - set(REPRESENTATIONS)
    if unknown:
        raise ValueError(f"unknown representation(s) {sorted(unknown)}")
    if candidates["score"].isna().any():
        raise ValueError("a candidate has no score")
    out = candidates.reset_index(drop=True).copy()
    out["_order"] = np.arange(len(out))
    out["_rep"] = out["representation"].map(REPRESENTATIONS.index)
    out["selected"] = False
    for _, group in out.groupby("_rep", sort=True):
        best = group.sort_values(["score", "dim", "_order"], ascending=[False, True, True],
                                 kind="stable").index[0]
        out.loc[best, "selected"] = True
    out = out.sort_values(["_rep", "_order"], kind="stable").drop(columns=["_order", "_rep"])
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------- #
# baselines on genes
# --------------------------------------------------------------------------- #
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


# --------------------------------------------------------------------------- #
# privacy statements
# --------------------------------------------------------------------------- #
_NON_PRIVATE = {"mechanism": "non_private", "epsilon": np.nan, "variant": "",
                "selection_epsilon": np.nan, "learner_epsilon": np.nan, "true_epsilon": np.nan,
                "privacy_note": "non-private reference (epsilon = inf)"}


def _budget_split(epsilon: float, feature_selection: bool) -> tuple[float, float, str]:
    """(selection ε, learner ε, note prefix): DP feature selection takes half of ε."""
    if not feature_selection:
        return np.nan, epsilon, ""
    half = epsilon / 2
    return half, half, f"selection {half:g} (subsample-and-aggregate, Laplace) + learner {half:g}; "


def cancer_privacy(epsilon: float, *, variant: str, l2: float, feature_selection: bool) -> dict:
    r"""Privacy columns of a cancer-type row (DP logistic regression, objective perturbation).

    ``true_epsilon`` is the level the computation as run guarantees:
    the ``cms11`` variant is pure ε-DP (CMS11 Algorithm 2, bounded
    neighbours); the ``paper`` variant (the authors' code) leaves the bias
    unpenalised and skips the ε' correction, so CMS11's proof gives no finite
    bound (``inf``); ``epsilon_if_bias_penalised`` is the bound
    :math:`\epsilon + 2\log(1 + c/\alpha)`, :math:`c = 1/4`, that it would have
    with the bias penalised (docstring of
    :class:`dprepro.dp_learners.DPLogisticRegression`). With feature selection
    half of ε goes to the selection (Laplace, exact) and half to the learner.
    """
    if variant not in ("paper", "cms11"):
        raise ValueError(f"variant must be 'paper' or 'cms11', got {variant!r}")
    if not math.isfinite(epsilon):
        return {**_NON_PRIVATE, "epsilon_if_bias_penalised": np.nan}
    epsilon = float(epsilon)
    sel, learner, split = _budget_split(epsilon, feature_selection)
    if variant == "cms11":
        true, bound = epsilon, epsilon
        note = f"{split}objective perturbation as CMS11 Alg. 2: pure epsilon-DP"
    else:
        bound = epsilon + 2.0 * math.log1p(LOGISTIC_LOSS_C / float(l2))
        true = np.inf
        note = (f"{split}objective perturbation as the paper's code: bias unpenalised, no "
                f"epsilon' correction, so no finite epsilon is proven; with the bias penalised "
                f"the bound would be eps + 2 log(1 + 1/(4*{float(l2):g})) = {bound:.3f}")
    mechanism = ("subsample_and_aggregate+objective_perturbation" if feature_selection
                 else "objective_perturbation")
    return {"mechanism": mechanism, "epsilon": epsilon, "variant": variant,
            "selection_epsilon": sel, "learner_epsilon": learner, "true_epsilon": true,
            "epsilon_if_bias_penalised": bound, "privacy_note": note}


DRUG_NOTE = ("epsilon covers the perturbed X'X (Wishart) and X'y (Laplace); the centring means "
             "and the clipping scales sd(X), sd(y) are taken from the private training lines "
             "without noise, as in the paper's code, so no finite epsilon holds for the whole "
             "computation")


def drug_privacy(epsilon: float, *, feature_selection: bool) -> dict:
    """Privacy columns of a drug-sensitivity row (SSP linear regression)."""
    if not math.isfinite(epsilon):
        return dict(_NON_PRIVATE)
    epsilon = float(epsilon)
    sel, learner, split = _budget_split(epsilon, feature_selection)
    return {"mechanism": "subsample_and_aggregate+ssp" if feature_selection else "ssp",
            "epsilon": epsilon, "variant": "", "selection_epsilon": sel,
            "learner_epsilon": learner, "true_epsilon": np.inf, "privacy_note": split + DRUG_NOTE}


# --------------------------------------------------------------------------- #
# cancer-type pairs
# --------------------------------------------------------------------------- #
def case_label(pair: Sequence[str]) -> str:
    return f"{pair[0]} vs {pair[1]}"


def cancer_type_cases(lineage: pd.Series, *, n_lineages: int, min_count: int,
                      cases: Sequence[Sequence[str]] | None = None) -> list[tuple[str, str]]:
    """The lineage pairs classified in the private data.

    Given ``cases`` (pairs of lineage names) they are checked and returned;
    otherwise every pair of the ``n_lineages`` most frequent private lineages
    with at least ``min_count`` lines (ties by name), most frequent first.
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
    l2, variant : see :class:`dprepro.dp_learners.DPLogisticRegression`.
    base_seed, stream : int, str
        Noise of (case, ε, seed) comes from stream ``<stream>/<case>/eps<ε>``,
        replicate = seed, used fold after fold.
    scales : mapping seed -> float
        Public mean row norm of each seed's representation.
    selection : FeatureSelection, optional
        Select ``n_select`` genes per training fold with half of ε; then
        ``private`` holds the centred gene values (the same for every seed).

    Returns
    -------
    DataFrame, one row per (case, seed, ε): ``case``, ``seed``, ``epsilon``,
    ``accuracy`` (pooled over folds), ``correct``, ``n_lines``, ``folds``,
    ``dim`` and the privacy columns of :func:`cancer_privacy`.
    """
    from sklearn.model_selection import StratifiedKFold

    from .dp_learners import DPLogisticRegression

    seeds = sorted(private)
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
        rngs = {(s, e): stream_rng(base_seed, f"{stream}/{case}/eps{_eps_text(e)}", s)
                for s in seeds for e in epsilons}
        correct = {(s, e): 0 for s in seeds for e in epsilons}
        for train, test in splits:
            tr, te = idx[train], idx[test]
            if selection is not None:
                votes, k = subsample_votes(private[seeds[0]][tr], y[train], selection.n_select,
                                           sparsity=selection.sparsity,
                                           lasso_max_iter=selection.lasso_max_iter)
            for s in seeds:
                X = private[s]
                for e in epsilons:
                    rng = rngs[(s, e)]
                    if selection is not None:
                        cols = noisy_top_features(votes, k, selection.n_select,
                                                  epsilon=e / 2, rng=rng)
                        Xtr, Xte = X[np.ix_(tr, cols)], X[np.ix_(te, cols)]
                        scale = mean_row_norm(selection.public[:, cols])
                        eps_learner = e / 2
                    else:
                        Xtr, Xte = X[tr], X[te]
                        scale = scales[s]
                        eps_learner = e
                    model = DPLogisticRegression(
                        eps_learner, l2=l2, scale=scale, variant=variant,
                        rng=rng if math.isfinite(e) else None,
                    ).fit(Xtr, y[train])
                    correct[(s, e)] += int(np.sum(model.predict(Xte) == y[test]))
        dim = selection.n_select if selection is not None else private[seeds[0]].shape[1]
        for s in seeds:
            for e in epsilons:
                rows.append({"case": case, "seed": s, "epsilon_value": float(e),
                             "accuracy": correct[(s, e)] / len(idx), "correct": correct[(s, e)],
                             "n_lines": len(idx), "folds": folds, "dim": dim,
                             **cancer_privacy(e, variant=variant, l2=l2,
                                              feature_selection=selection is not None)})
    return pd.DataFrame(rows).drop(columns="epsilon_value")


# --------------------------------------------------------------------------- #
# drug sensitivity
# --------------------------------------------------------------------------- #
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
                          grid: Sequence[float] | None = None) -> Callable:
    """Memoised :func:`dprepro.dp_learners.ssp_clipping_weights` by (n, d, ε).

    The stream ``drug/clipping/n<n>/d<d>/eps<ε>`` does not name the method, so
    every method with the same (n, d, ε) gets the same weights. Synthetic data
    only: costs no privacy.
    """

    from .dp_learners import ssp_clipping_weights

    @functools.cache
    def weights(n: int, d: int, epsilon: float) -> tuple[float, float]:
        rng = stream_rng(base_seed, f"drug/clipping/n{n}/d{d}/eps{_eps_text(epsilon)}")
        return ssp_clipping_weights(int(n), int(d), epsilon=float(epsilon), rng=rng,
                                    grid=grid, n_datasets=n_datasets, n_noise=n_noise)

    return weights


def clipping_weight_table(n: int, settings: Sequence[tuple[int, float]], *,
                          base_seed: int) -> pd.DataFrame:
    """Clipping weights for every (d, ε_learner) in ``settings`` at training size ``n``."""
    weights = clipping_weight_cache(base_seed)
    rows = []
    for d, eps in sorted(set((int(d), float(e)) for d, e in settings)):
        wx, wy = weights(int(n), d, eps)
        rows.append({"n": int(n), "d": d, "epsilon": eps, "w_x": wx, "w_y": wy})
    return pd.DataFrame(rows, columns=["n", "d", "epsilon", "w_x", "w_y"])


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

    Returns
    -------
    DataFrame, one row per (drug, seed, ε, split): ``drug``, ``seed``,
    ``epsilon``, ``split``, ``spearman``, ``pc_index``, ``n_train``,
    ``n_test``, ``dim`` and the privacy columns of :func:`drug_privacy`.
    """
    from .dp_learners import SSPLinearRegression
    from .metrics import probabilistic_c_index, spearman

    seeds = sorted(private)
    Y = response.to_numpy(dtype=float)
    col = {str(c): j for j, c in enumerate(response.columns)}
    # pooled response scale of each split's training lines (all drugs, centred per drug)
    sd_y = []
    for train, _ in splits:
        Yt = Y[train]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sd_y.append(float(np.nanstd(Yt - np.nanmean(Yt, axis=0), ddof=1)))
    fs = selection is not None
    dim = selection.n_select if fs else private[seeds[0]].shape[1]
    rows = []
    for drug in drugs:
        y_all = Y[:, col[str(drug)]]
        noise_sd = float(np.nanstd(y_all, ddof=1))
        rngs = {(s, e): stream_rng(base_seed, f"{stream}/{drug}/eps{_eps_text(e)}", s)
                for s in seeds for e in epsilons}
        for split, (train, test) in enumerate(splits):
            tr, te = train[~np.isnan(y_all[train])], test[~np.isnan(y_all[test])]
            if len(tr) < 3 or len(te) < 2:
                continue
            ytr, yte = y_all[tr], y_all[te]
            if fs:
                votes, k = subsample_votes(private[seeds[0]][tr], ytr, selection.n_select,
                                           sparsity=selection.sparsity,
                                           lasso_max_iter=selection.lasso_max_iter)
            for s in seeds:
                X = private[s]
                for e in epsilons:
                    rng = rngs[(s, e)]
                    eps_learner = e / 2 if fs else e
                    if fs:
                        cols = noisy_top_features(votes, k, selection.n_select,
                                                  epsilon=e / 2, rng=rng)
                        Xtr, Xte = X[np.ix_(tr, cols)], X[np.ix_(te, cols)]
                    else:
                        Xtr, Xte = X[tr], X[te]
                    if math.isfinite(e):
                        wx, wy = clipping_weights(len(train), dim, eps_learner)
                        sd_x = float(np.std(Xtr - Xtr.mean(axis=0), ddof=1))
                        model = SSPLinearRegression(eps_learner, clip_x=wx * sd_x,
                                                    clip_y=wy * sd_y[split], ridge=ridge, rng=rng)
                    else:
                        model = SSPLinearRegression(np.inf, clip_x=np.inf, clip_y=np.inf,
                                                    ridge=ridge)
                    pred = model.fit(Xtr, ytr).predict(Xte)
                    rows.append({"drug": str(drug), "seed": s, "epsilon_value": float(e),
                                 "split": split, "spearman": spearman(yte, pred),
                                 "pc_index": probabilistic_c_index(yte, pred, noise_sd=noise_sd),
                                 "n_train": len(tr), "n_test": len(te), "dim": dim,
                                 **drug_privacy(e, feature_selection=fs)})
    frame = pd.DataFrame(rows)
    return frame.drop(columns="epsilon_value") if len(frame) else frame


# --------------------------------------------------------------------------- #
# tables
# --------------------------------------------------------------------------- #
def _method_order(values: pd.Series) -> pd.Series:
    return values.map({m: i for i, m in enumerate(METHODS)}).fillna(len(METHODS))


def _private_first(frame: pd.DataFrame) -> pd.Series:
    """Sort key on ε with the non-private rows (empty ε) last."""
    return frame["epsilon"].fillna(np.inf)


def cancer_type_table(frames: Sequence[pd.DataFrame], *, data_origin: str,
                      cases: Sequence[str] | None = None) -> pd.DataFrame:
    """``cancer_type_accuracy.csv``: the experiments' rows in contract column order.

    Sorted by case (in ``cases`` order, else by name), method (study order),
    ε (non-private last) and seed.
    """
    table = pd.concat(frames, ignore_index=True).assign(data_origin=data_origin)
    missing = set(CANCER_COLUMNS) - set(table.columns)
    if missing:
        raise ValueError(f"cancer-type rows lack columns {sorted(missing)}")
    order = {c: i for i, c in enumerate(cases or sorted(set(table["case"])))}
    table = table.assign(_c=table["case"].map(order), _m=_method_order(table["representation"]),
                         _e=_private_first(table))
    table = table.sort_values(["_c", "_m", "_e", "seed"], kind="stable")
    return table.loc[:, list(CANCER_COLUMNS)].reset_index(drop=True)


def drug_table(frames: Sequence[pd.DataFrame], *, data_origin: str) -> pd.DataFrame:
    """``drug_sensitivity.csv``: per (method, ε, seed, drug) the mean over splits."""
    rows = pd.concat(frames, ignore_index=True)
    keys = ["representation", "epsilon", "seed", "drug"]
    privacy = ["mechanism", "variant", "selection_epsilon", "learner_epsilon", "true_epsilon",
               "privacy_note", "dim"]
    grouped = rows.groupby(keys, dropna=False, sort=False)
    table = grouped.agg(spearman=("spearman", "mean"), pc_index=("pc_index", "mean"),
                        splits=("split", "nunique"), n_train=("n_train", "mean"),
                        n_test=("n_test", "mean")).reset_index()
    first = grouped[privacy].first().reset_index()
    table = table.merge(first, on=keys, how="left").assign(data_origin=data_origin)
    table = table.assign(_m=_method_order(table["representation"]), _e=_private_first(table))
    table = table.sort_values(["_m", "_e", "seed", "drug"], kind="stable")
    return table.loc[:, list(DRUG_COLUMNS)].reset_index(drop=True)


def _mean_se(values: pd.Series) -> tuple[float, float, int]:
    v = values.to_numpy(dtype=float)
    n = len(v)
    if n > 1:
        se = 0.0 if np.ptp(v) == 0 else float(np.std(v, ddof=1) / math.sqrt(n))
    else:
        se = np.nan
    return float(np.mean(v)), se, n


def cancer_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ± SE over representation seeds per (case, method, ε), plus ``case = "all"``.

    The ``all`` rows average the cases within each seed first, then take mean
    and SE over seeds.
    """
    per_seed_all = (table.groupby(["representation", "epsilon", "mechanism", "variant", "seed"],
                                  dropna=False, sort=False)["accuracy"].mean().reset_index()
                    .assign(case="all"))
    rows = []
    for source in (table, per_seed_all):
        for key, group in source.groupby(["case", "representation", "epsilon", "mechanism",
                                          "variant"], dropna=False, sort=False):
            mean, se, n = _mean_se(group["accuracy"])
            rows.append(dict(zip(["case", "representation", "epsilon", "mechanism", "variant"],
                                 key, strict=True), accuracy_mean=mean, accuracy_se=se,
                             n_seeds=n))
    out = pd.DataFrame(rows)
    true = table.groupby(["representation", "epsilon", "mechanism", "variant"],
                         dropna=False, sort=False)["true_epsilon"].first().reset_index()
    out = out.merge(true, on=["representation", "epsilon", "mechanism", "variant"], how="left")
    cases = list(dict.fromkeys(table["case"])) + ["all"]
    out = out.assign(_c=out["case"].map({c: i for i, c in enumerate(cases)}),
                     _m=_method_order(out["representation"]), _e=_private_first(out))
    out = out.sort_values(["_c", "_m", "_e"], kind="stable")
    return out.drop(columns=["_c", "_m", "_e"]).reset_index(drop=True)


def drug_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ± SE over representation seeds of the mean over drugs, per (method, ε)."""
    keys = ["representation", "epsilon", "mechanism", "variant"]
    per_seed = table.groupby([*keys, "seed"], dropna=False, sort=False)[
        ["spearman", "pc_index"]].mean().reset_index()
    rows = []
    for key, group in per_seed.groupby(keys, dropna=False, sort=False):
        s_mean, s_se, n = _mean_se(group["spearman"])
        p_mean, p_se, _ = _mean_se(group["pc_index"])
        rows.append(dict(zip(keys, key, strict=True), spearman_mean=s_mean, spearman_se=s_se,
                         pc_index_mean=p_mean, pc_index_se=p_se, n_seeds=n,
                         n_drugs=int(table.loc[table["representation"] == key[0], "drug"]
                                     .nunique())))
    out = pd.DataFrame(rows)
    true = table.groupby(keys, dropna=False, sort=False)["true_epsilon"].first().reset_index()
    out = out.merge(true, on=keys, how="left")
    out = out.assign(_m=_method_order(out["representation"]), _e=_private_first(out))
    return out.sort_values(["_m", "_e"], kind="stable").drop(columns=["_m", "_e"]).reset_index(
        drop=True)
