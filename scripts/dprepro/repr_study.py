r"""The ``repr_transfer`` study: experiments and tables of Niinimäki et al. (2019).

Pipeline (docs/design.md §5): a representation :math:`f` is learned on *public* expression only
(PCA, random projection, VAE); its hyperparameters are chosen on a public
auxiliary task (predicting the public lineage); the private lines are mapped
through :math:`f` and a DP learner is trained on them. The study is split by
concept; this module keeps every public name importable from one place:

* :mod:`dprepro.repr_common` -- study names and random streams;
* :mod:`dprepro.repr_baselines` -- the gene baselines and DP feature selection;
* :mod:`dprepro.repr_privacy` -- the ε grid, the budget split and the privacy
  records of every result row;
* :mod:`dprepro.repr_cancer` -- cancer-type pairs (DP logistic regression);
* :mod:`dprepro.repr_drug` -- drug sensitivity (SSP linear regression);
* here -- input data, representations and their selection, result tables.

Nothing here imports snakemake; torch is imported only when a VAE is fitted.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .repr_baselines import (
    FeatureSelection,
    MethodFeatures,
    centred_genes,
    hashed_parts,
    hashed_votes,
    mean_row_norm,
    method_features,
    noisy_top_features,
    part_key,
    subsample_votes,
    variable_genes,
)
from .repr_cancer import cancer_type_cases, cancer_type_experiment, case_label
from .repr_common import (
    BASELINES,
    EQUAL_DIM_CONTROLS,
    METHODS,
    REPRESENTATIONS,
    STUDY,
    eps_text,
    fitted_as,
    method_order,
    selected_row,
    stream_int,
    stream_rng,
)
from .repr_drug import (
    clipping_lookup,
    clipping_settings,
    clipping_weight_cache,
    clipping_weight_table,
    drug_experiment,
    drug_splits,
    method_dim,
    public_centring,
)
from .repr_privacy import (
    CANCER_PRIVACY_COLUMNS,
    DRUG_NOTE,
    DRUG_PRIVACY_COLUMNS,
    LOGISTIC_LOSS_C,
    cancer_privacy,
    drug_privacy,
    epsilon_grid,
    experiment_epsilons,
    method_split,
    table_records,
)

# scikit-learn, scipy.optimize and torch are imported where they are used, so
# that the table and data steps start quickly (one job per step on a laptop).

__all__ = [
    "BASELINES",
    "CANCER_COLUMNS",
    "CANCER_PRIVACY_COLUMNS",
    "DRUG_COLUMNS",
    "DRUG_NOTE",
    "DRUG_PRIVACY_COLUMNS",
    "EQUAL_DIM_CONTROLS",
    "LOGISTIC_LOSS_C",
    "METHODS",
    "REPRESENTATIONS",
    "STUDY",
    "FIGURES",
    "TABLES",
    "FeatureSelection",
    "MethodFeatures",
    "fitted_as",
    "noise_stream",
    "vae_hidden_width",
    "vae_training_mb",
    "vae_weights",
    "auxiliary_score",
    "cancer_privacy",
    "cancer_summary",
    "cancer_tables",
    "cancer_type_cases",
    "cancer_type_experiment",
    "cancer_type_table",
    "case_label",
    "centred_genes",
    "clipping_lookup",
    "clipping_settings",
    "clipping_weight_cache",
    "clipping_weight_table",
    "configure_torch",
    "drug_experiment",
    "drug_privacy",
    "drug_splits",
    "drug_summary",
    "drug_table",
    "drug_tables",
    "draw_figure",
    "eps_text",
    "epsilon_grid",
    "experiment_epsilons",
    "fit_representation",
    "hashed_parts",
    "hashed_votes",
    "mean_row_norm",
    "method_dim",
    "method_features",
    "method_split",
    "noisy_top_features",
    "part_key",
    "public_centring",
    "public_set_table",
    "real_data",
    "representation_frame",
    "select_hyperparameters",
    "seed_representations",
    "selected_spec",
    "stream_int",
    "stream_rng",
    "study_data",
    "subsample_votes",
    "synthetic_data",
    "table_records",
    "variable_genes",
]

#: Columns of ``cancer_type_accuracy.csv`` in order (the shared contract first).
CANCER_COLUMNS = (
    "case", "representation", "epsilon", "seed", "accuracy", "pipeline",
    "mechanism", "variant", "selection_epsilon", "learner_epsilon", "true_epsilon",
    "epsilon_if_bias_penalised", "privacy_note",
    "dim", "n_parts", "correct", "n_lines", "majority_accuracy", "folds", "data_origin",
)
#: Columns of ``drug_sensitivity.csv`` in order (the shared contract first).
DRUG_COLUMNS = (
    "representation", "epsilon", "seed", "drug", "spearman", "pc_index", "pipeline",
    "mechanism", "variant", "selection_epsilon", "learner_epsilon", "true_epsilon",
    "privacy_note",
    "dim", "n_parts", "splits", "n_train", "n_test", "data_origin",
)


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

    names = {"min_shared": int(settings["n_genes"]), "private_name": "synthetic private",
             "public_name": "synthetic public"}
    private, public = harmonise_genes(data["private_expression"], data["public_expression"],
                                      **names)
    local, _ = harmonise_genes(data["private_expression"], data["public_expression"],
                               local=True, **names)
    return {"public_expression": _named(public),
            "public_lineage": _lineage_frame(data["public_lineage"]),
            "private_expression": _named(private),
            "private_expression_line_local": _named(local),
            "private_lineage": _lineage_frame(data["private_lineage"]),
            "private_response": _named(data["private_response"])}


def public_set_table(*, source: str, source_lines: int, public_lines: int, private_lines: int,
                     excluded_by_cosmic_id: int = 0, excluded_by_sanger_model_id: int = 0,
                     held_out: int = 0, genes: int) -> pd.DataFrame:
    """One-row table of the public set's size after exclusion (``public_set.csv``).

    ``smaller_than_private`` flags the case the log and the report warn about.
    With DepMap the exclusion counts depend on which lines are private (the
    overlap), so the table is not a DP release (its sidecar says so).
    """
    return pd.DataFrame([{
        "source": source, "source_lines": int(source_lines),
        "excluded_by_cosmic_id": int(excluded_by_cosmic_id),
        "excluded_by_sanger_model_id": int(excluded_by_sanger_model_id),
        "held_out_cancer_types": int(held_out), "public_lines": int(public_lines),
        "private_lines": int(private_lines), "genes": int(genes),
        "smaller_than_private": bool(public_lines < private_lines)}])


def real_data(gdsc_expression: pd.DataFrame, depmap_expression: pd.DataFrame,
              depmap_models: pd.DataFrame, *, min_shared_genes: int,
              exclude_private_lines: bool, lineage_column: str = "TCGA_LABEL",
              gdsc_cell_lines: pd.DataFrame | None = None,
              gdsc_dose_response: pd.DataFrame | None = None,
              min_public_median: float | None = None, public_source: str = "depmap",
              holdout: Sequence[str] = ()) -> dict[str, pd.DataFrame]:
    """GDSC (private) and DepMap or TCGA (public) as the study's five tables.

    With ``public_source = "tcga"`` the second and third arguments are the
    TCGA caches (samples x symbols, and the ``lineage`` table of TCGA study
    labels by sample): tumours, not cell lines, so no line overlaps GDSC;
    instead, as the paper did, the samples of the private cancer types of the
    cases (``holdout``, TCGA study labels) are held out of the public set, so
    the representation never saw the types it is evaluated on.

    * low-expression filter (``min_public_median``, as the authors did):
      public genes whose median expression is below it are dropped before the
      genes are intersected and mapped (public data only: no privacy cost);

    * public lines: DepMap models, without those whose COSMIC id is a GDSC
      expression line when ``exclude_private_lines`` (the representation must
      not have seen the private lines); lineage = ``OncotreeLineage``;
    * both matrices restricted to the shared gene symbols and the private one
      quantile-mapped onto the public distribution, globally and line by line
      (:func:`dprepro.expression_data.harmonise_genes`);
    * private lineage = ``lineage_column`` of the cell-line details
      (``UNCLASSIFIED`` and empty values are missing); responses = LN_IC50 of
      every drug with at least one response among the expression lines.

    The private tables are returned only when cell lines and dose response
    are given.
    """
    from .expression_data import harmonise_genes

    private_ids = set(int(i) for i in gdsc_expression.index)
    public = depmap_expression
    # before any hold-out or exclusion: public_set.csv reports what each step removed
    n_source = len(public)
    if public_source == "tcga":
        models = depmap_models
        held = models["lineage"].reindex(public.index).isin(set(holdout)).to_numpy()
        public = public.loc[~held]
        if held.any():
            warnings.warn(f"held out {int(held.sum())} TCGA samples of the cases' cancer types "
                          f"{sorted(set(holdout))}; {len(public)} public samples left",
                          stacklevel=2)
    elif public_source != "depmap":
        raise ValueError(f"public_source must be 'depmap' or 'tcga', got {public_source!r}")
    else:
        models = depmap_models.set_index("ModelID")
    excluded = {"cosmic": 0, "sanger": 0}
    if public_source == "depmap" and exclude_private_lines:
        cosmic = models["COSMICID"].reindex(public.index)
        by_cosmic = cosmic.notna().to_numpy() & cosmic.fillna(-1).astype(np.int64).isin(
            private_ids).to_numpy()
        # a DepMap model whose COSMIC id is missing or differs may still be a GDSC line
        # under its Sanger model id (the GDSC release names both)
        private_sanger = set()
        if gdsc_cell_lines is not None and "SANGER_MODEL_ID" in gdsc_cell_lines.columns:
            ids = gdsc_cell_lines["SANGER_MODEL_ID"].reindex(sorted(private_ids)).dropna()
            private_sanger = {str(v) for v in ids if str(v)}
        by_sanger = np.zeros(len(public), dtype=bool)
        if private_sanger and "SangerModelID" in models.columns:
            by_sanger = models["SangerModelID"].reindex(public.index).astype(object).isin(
                private_sanger).to_numpy()
        excluded = {"cosmic": int(by_cosmic.sum()), "sanger": int((by_sanger & ~by_cosmic).sum())}
        public = public.loc[~(by_cosmic | by_sanger)]
    if len(public) < len(gdsc_expression):
        what = {"depmap": "DepMap models after excluding the GDSC lines",
                "tcga": "TCGA samples after holding out the cases' cancer types"}[public_source]
        warnings.warn(f"the public set ({len(public)} {what}) is smaller than the private set "
                      f"({len(gdsc_expression)} lines)", stacklevel=2)
    if min_public_median is not None:
        keep = public.median(axis=0).to_numpy() >= float(min_public_median)
        public = public.loc[:, keep]
    private, public_shared = harmonise_genes(gdsc_expression, public,
                                             min_shared=min_shared_genes)
    local, _ = harmonise_genes(gdsc_expression, public, min_shared=min_shared_genes, local=True)
    public = public_shared
    out = {"public_expression": _named(public),
           "public_lineage": _lineage_frame(models["lineage"].reindex(public.index)),
           "public_set": public_set_table(
               source=public_source, source_lines=n_source, public_lines=len(public),
               private_lines=len(gdsc_expression), excluded_by_cosmic_id=excluded["cosmic"],
               excluded_by_sanger_model_id=excluded["sanger"],
               held_out=n_source - len(public) - excluded["cosmic"] - excluded["sanger"],
               genes=public.shape[1])}
    if gdsc_cell_lines is not None and gdsc_dose_response is not None:
        if lineage_column not in gdsc_cell_lines.columns:
            raise ValueError(f"cell-line details lack column {lineage_column!r}; found "
                             f"{list(gdsc_cell_lines.columns)}")
        response = gdsc_dose_response.reindex(private.index).astype(float)
        response = response.loc[:, response.notna().any(axis=0)]
        out.update(private_expression=_named(private),
                   private_expression_line_local=_named(local),
                   private_lineage=_lineage_frame(
                       gdsc_cell_lines[lineage_column].reindex(private.index)),
                   private_response=_named(response))
    return out


def study_data(origin: str, kind: str, inputs, *, settings: Mapping,
               seed: int) -> tuple[dict[str, pd.DataFrame], dict | None]:
    """The public or private tables of the study and the seed record of their draw.

    ``origin`` ``"synthetic"``: :func:`synthetic_data` from stream
    ``data/synthetic``; ``"real"``: :func:`real_data` from the GDSC/DepMap
    caches named in ``inputs`` (``gdsc_expression``, ``depmap_expression``,
    ``depmap_models`` and, for ``kind = "private"``, ``gdsc_cell_lines``,
    ``gdsc_dose_response``).
    """
    from .expression_data import read_parquet_matrix
    from .seeds import seed_record, seed_sequence

    if kind not in ("public", "private"):
        raise ValueError(f"kind must be 'public' or 'private', got {kind!r}")
    private = kind == "private"
    if origin == "synthetic":
        stream = "data/synthetic"
        rng = np.random.default_rng(seed_sequence(seed, STUDY, stream, 0))
        data = synthetic_data(rng, settings, private=private)
        if not private:
            data["public_set"] = public_set_table(
                source="synthetic", source_lines=int(settings["n_public"]),
                public_lines=len(data["public_expression"]),
                private_lines=int(settings["n_private"]),
                genes=data["public_expression"].shape[1])
        return data, seed_record(seed, STUDY, stream, 1)
    if origin != "real":
        raise ValueError(f"origin must be 'synthetic' or 'real', got {origin!r}")
    tcga = settings.get("public_source", "depmap") == "tcga"
    data = real_data(
        read_parquet_matrix(inputs.gdsc_expression),
        read_parquet_matrix(inputs.tcga_expression if tcga else inputs.depmap_expression),
        read_parquet_matrix(inputs.tcga_lineage if tcga else inputs.depmap_models),
        public_source="tcga" if tcga else "depmap", holdout=settings.get("holdout", ()),
        min_shared_genes=settings["min_shared_genes"],
        exclude_private_lines=settings["exclude_private_lines"],
        min_public_median=settings.get("min_public_median"),
        lineage_column=settings["lineage_column"],
        gdsc_cell_lines=(read_parquet_matrix(inputs.gdsc_cell_lines)
                         if "gdsc_cell_lines" in inputs.keys() else None),
        gdsc_dose_response=read_parquet_matrix(inputs.gdsc_dose_response) if private else None)
    return data, None


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
        ``device``, ``log_every``), and ``max_hidden_width``, the cap of
        :func:`vae_hidden_width`.

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

        options = dict(vae_options or {})
        cap = options.pop("max_hidden_width", None)
        return VAERepresentation(
            dim,
            n_hidden_layers=int(spec["hidden_layers"]),
            hidden_width=vae_hidden_width(dim, spec["width_multiplier"], cap),
            learning_rate=float(spec["learning_rate"]),
            random_state=rng,
            **options,
        ).fit(public)
    raise ValueError(f"unknown representation {representation!r}; expected one of "
                     f"{list(REPRESENTATIONS)}")


def vae_hidden_width(dim: int, multiplier: int, cap: int | None = None) -> int:
    """A VAE candidate's hidden width: ``multiplier`` x r, at most ``cap``.

    ``cap`` is ``vae.max_hidden_width`` (None: no cap).
    """
    width = int(multiplier) * int(dim)
    return width if cap is None else min(width, int(cap))


def vae_training_mb(n_features: int, width: int, layers: int, *, base_mb: float) -> float:
    r"""Peak memory (MB) of training the VAE of :mod:`dprepro.vae` on ``n_features`` genes.

    Its weights: the encoder's first and the decoder's last layer
    (:math:`2 n_{features} w`), :math:`2 (L - 1) w^2` between hidden layers, and
    the small latent layers (left out, as the biases: a few :math:`w` each).
    Each weight is held four times in float32 during training (value, gradient,
    Adam's two moments): 16 bytes. ``base_mb`` is the rest (the data and the
    process), from a measured fit (``benchmarks/paper_scale.csv``).
    """
    return float(base_mb) + 16 * vae_weights(n_features, width, layers) / 2**20


def vae_weights(n_features: int, width: int, layers: int) -> int:
    """The big weight matrices of the VAE (:func:`vae_training_mb`): what memory and an
    epoch's arithmetic grow with."""
    return 2 * int(n_features) * int(width) + 2 * max(int(layers) - 1, 0) * int(width) ** 2


#: Representations whose fit uses no randomness (PCA: exact SVD): one fit serves every seed.
DETERMINISTIC = ("pca",)


def seed_representations(representation: str, spec: Mapping, public: pd.DataFrame,
                         private_sets: Mapping[str, pd.DataFrame], *, seeds: int,
                         base_seed: int, stream: str, vae_options: Mapping | None = None,
                         log=None) -> pd.DataFrame:
    """Fit ``representation`` on ``public`` once per seed and map every set through it.

    Seed ``s`` fits with the generator of stream ``stream``, replicate ``s``
    (:func:`dprepro.seeds.seed_sequence`); ``private_sets`` maps a ``set``
    label (``private``, ``private_line_local``) to the private matrix mapped
    through it. A representation in :data:`DETERMINISTIC` ignores the
    generator, so its single fit and mapping are reused for every seed (the
    rows are the same values the per-seed fits gave). Returns the frames of
    :func:`representation_frame` with a ``seed`` column, seed after seed.
    """
    from .seeds import seed_sequence

    names = list(private_sets)
    if not names or names[0] != "private":
        raise ValueError(f"private_sets must start with 'private', got {names}")
    frames, fitted = [], None
    for seed in range(int(seeds)):
        if fitted is None or representation not in DETERMINISTIC:
            rng = np.random.default_rng(seed_sequence(base_seed, STUDY, stream, seed))
            if log is not None:
                log.info("%s seed %d: %s on public %d x %d", representation, seed, dict(spec),
                         *public.shape)
            model = fit_representation(representation, spec, public, rng=rng,
                                       vae_options=vae_options)
            private = private_sets["private"]
            fitted = representation_frame(
                model.transform(public), model.transform(private), public.index,
                private.index,
                extra_sets={name: model.transform(frame.loc[private.index])
                            for name, frame in private_sets.items() if name != "private"})
        elif log is not None:
            log.info("%s seed %d: the seed-0 fit (a deterministic fit)", representation, seed)
        frames.append(fitted.assign(seed=seed))
    return pd.concat(frames, ignore_index=True)


def representation_frame(public: np.ndarray, private: np.ndarray, public_index,
                         private_index, *, extra_sets: Mapping | None = None) -> pd.DataFrame:
    """Public and private representations in one long frame (``set``, ``sample``, z01...).

    ``extra_sets`` adds further private matrices (rows = ``private_index``)
    under their own ``set`` label, e.g. ``private_line_local``.
    """
    sets = [("public", public, public_index), ("private", private, private_index)]
    sets += [(name, values, private_index) for name, values in (extra_sets or {}).items()]
    dim = np.asarray(public).shape[1]
    cols = [f"z{j + 1:02d}" for j in range(dim)]
    frames = [pd.DataFrame(np.asarray(values, float), columns=cols).assign(
                  set=name, sample=[str(s) for s in index])
              for name, values, index in sets]
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
    """Mark the selected candidate of each (pipeline, representation) search (``selected``).

    The one-standard-error rule (Hastie, Tibshirani & Friedman 2009, §7.10):
    with :math:`s^*` the highest auxiliary ``score`` and :math:`se^*` its
    ``score_se`` (0 when the column is absent), the selected candidate is the
    smallest ``dim`` among the candidates with ``score`` ≥ :math:`s^* - se^*`;
    ties go to the higher score, then to the first candidate in the given
    order. The scores of two r within one SE are not told apart by the
    search, so the simpler representation is taken. Trials whose ``status``
    is not ``complete`` (over their wall-clock budget) have no score and are
    never selected; a search with no complete trial is an error. Returns a copy sorted by pipeline
    (study order; rows without a ``pipeline`` column are one search), then
    representation (study order) and candidate order, with a boolean
    ``selected`` column.
    """
    missing = {"representation", "candidate", "dim", "score"} - set(candidates.columns)
    if missing:
        raise ValueError(f"candidates lack columns {sorted(missing)}")
    unknown = set(candidates["representation"]) - set(REPRESENTATIONS)
    if unknown:
        raise ValueError(f"unknown representation(s) {sorted(unknown)}")
    failed = (candidates["status"] != "complete") if "status" in candidates.columns else \
        pd.Series(False, index=candidates.index)
    if candidates.loc[~failed, "score"].isna().any():
        raise ValueError("a completed candidate has no score")
    out = candidates.reset_index(drop=True).copy()
    failed = failed.reset_index(drop=True)
    out["_order"] = np.arange(len(out))
    out["_rep"] = out["representation"].map(REPRESENTATIONS.index)
    out["_pipe"] = _pipeline_order(out["pipeline"]) if "pipeline" in out.columns else 0
    out["selected"] = False
    se = (out["score_se"].fillna(0.0) if "score_se" in out.columns
          else pd.Series(0.0, index=out.index))
    for key, group in out.groupby(["_pipe", "_rep"], sort=True):
        group = group[~failed[group.index]]  # a trial over its budget has no score
        if group.empty:
            raise ValueError(f"every trial of search {key} failed (status over_budget): raise "
                             "repr_transfer.selection.trial_minutes or narrow the VAE space")
        top = group.sort_values(["score", "dim", "_order"], ascending=[False, True, True],
                                kind="stable").index[0]
        near = group[group["score"] >= out.loc[top, "score"] - se[top]]
        best = near.sort_values(["dim", "score", "_order"], ascending=[True, False, True],
                                kind="stable").index[0]
        out.loc[best, "selected"] = True
    out = out.sort_values(["_pipe", "_rep", "_order"], kind="stable")
    return out.drop(columns=["_order", "_rep", "_pipe"]).reset_index(drop=True)


def selected_spec(hyperparameters: pd.DataFrame, representation: str,
                  pipeline: str | None = None) -> dict:
    """The selected candidate of one search as a :func:`fit_representation` spec.

    ``pipeline`` picks the search when the table has a ``pipeline`` column.
    An equal-dimension control (:data:`EQUAL_DIM_CONTROLS`) is fitted as its
    model at its source's selected ``dim`` (``pca_vae_dim``: PCA at the VAE's r).
    ValueError unless exactly one row is selected.
    """
    row = selected_row(hyperparameters, representation, pipeline)
    spec = {"dim": int(row["dim"])}
    model = fitted_as(representation)
    if model != representation:
        if model != "pca":
            raise ValueError(f"control {representation!r}: only PCA controls are defined")
        return spec
    if representation == "vae":
        spec.update(learning_rate=float(row["learning_rate"]),
                    hidden_layers=int(row["hidden_layers"]),
                    width_multiplier=int(row["width_multiplier"]))
    return spec


def noise_stream(method: str, representations: Mapping[str, pd.DataFrame]) -> str:
    """The method name whose DP noise streams the experiments draw ``method``'s noise from.

    Every method has its own streams, so two models of a pipeline fitted on the
    same private lines never share noise draws (a combination of two releases
    could cancel shared noise). The one exception: an equal-dimension control
    whose features are its model's to the bit (the same r and a deterministic
    fit) *is* that model: it draws the model's noise and gives its rows, the same
    release and not a second one.

    Parameters
    ----------
    method : str
        A method of :data:`METHODS`.
    representations : mapping of str to DataFrame
        The pipeline's representation frames (``z..`` feature columns), by method.

    Returns
    -------
    str
        The method whose streams ``method`` uses: itself, or a control's model.
    """
    if method not in EQUAL_DIM_CONTROLS:
        return method
    model = fitted_as(method)
    if model not in representations:
        return method
    mine, theirs = representations[method], representations[model]
    columns = [c for c in mine.columns if str(c).startswith("z")]
    # the same release only if the features are the same to the bit (same r, and the
    # deterministic fit gave the same numbers)
    same = (columns == [c for c in theirs.columns if str(c).startswith("z")]
            and mine.shape == theirs.shape
            and np.array_equal(mine[columns].to_numpy(), theirs[columns].to_numpy()))
    return model if same else method


_method_order = method_order


def _with_pipeline(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows without a ``pipeline`` column are the paper's pipeline."""
    return frame if "pipeline" in frame.columns else frame.assign(pipeline="as_published")


def _pipeline_order(values: pd.Series) -> pd.Series:
    from .repr_privacy import PIPELINES

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
    table = _with_pipeline(pd.concat(frames, ignore_index=True)).assign(data_origin=data_origin)
    missing = set(CANCER_COLUMNS) - set(table.columns)
    if missing:
        raise ValueError(f"cancer-type rows lack columns {sorted(missing)}")
    order = {c: i for i, c in enumerate(cases or sorted(set(table["case"])))}
    table = table.assign(_c=table["case"].map(order), _m=_method_order(table["representation"]),
                         _p=_pipeline_order(table["pipeline"]), _e=_private_first(table))
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
    """``drug_sensitivity.csv``: per (method, ε, seed, drug) the mean over splits."""
    rows = _with_pipeline(pd.concat(frames, ignore_index=True))
    if "n_parts" not in rows.columns:  # rows from before the column existed
        rows = rows.assign(n_parts=pd.NA)
    # as text: a numeric column would make pandas cast the joined k's back to numbers
    rows = rows.assign(n_parts=rows["n_parts"].astype("string"))
    keys = ["representation", "pipeline", "epsilon", "seed", "drug"]
    privacy = ["mechanism", "variant", "selection_epsilon", "learner_epsilon", "true_epsilon",
               "privacy_note", "dim"]
    grouped = rows.groupby(keys, dropna=False, sort=False)
    table = grouped.agg(spearman=("spearman", "mean"), pc_index=("pc_index", "mean"),
                        splits=("split", "nunique"), n_train=("n_train", "mean"),
                        n_test=("n_test", "mean"),
                        n_parts=("n_parts", _distinct_parts)).reset_index()
    first = grouped[privacy].first().reset_index()
    table = table.merge(first, on=keys, how="left").assign(data_origin=data_origin)
    table = table.assign(_m=_method_order(table["representation"]),
                         _p=_pipeline_order(table["pipeline"]), _e=_private_first(table))
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
    table = _with_pipeline(table)
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
                     _p=_pipeline_order(out["pipeline"]), _e=_private_first(out))
    out = out.sort_values(["_c", "_m", "_p", "_e"], kind="stable")
    return out.drop(columns=["_c", "_m", "_p", "_e"]).reset_index(drop=True)


def drug_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ± SE over representation seeds of the mean over drugs, per (method, pipeline, ε)."""
    table = _with_pipeline(table)
    keys = ["representation", "pipeline", "epsilon", "mechanism", "variant"]
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
    out = _with_dim(out, table)
    out = out.assign(_m=_method_order(out["representation"]),
                     _p=_pipeline_order(out["pipeline"]), _e=_private_first(out))
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


#: Each figure: the summary table it is drawn from and the experiment it shows.
FIGURES = {
    "cancer_type_accuracy": {"table": "cancer_type_summary", "kind": "cancer_type"},
    "cancer_type_vs_epsilon": {"table": "cancer_type_summary", "kind": "cancer_type"},
    "drug_prediction": {"table": "drug_summary", "kind": "drug"},
    "drug_vs_epsilon": {"table": "drug_summary", "kind": "drug"},
}


def draw_figure(name: str, summary: pd.DataFrame, *, settings: Mapping, data_origin: str,
                pipeline: str = "as_published"):
    """Draw figure ``name`` of :data:`FIGURES` for one pipeline from its summary table.

    ``settings`` is the experiment's configuration block (``epsilon`` of the
    single-ε panels, ``variant`` of the cancer-type task).
    """
    from . import plots_repr as plots
    from .repr_privacy import pipeline as pipeline_spec
    from .repr_privacy import pipeline_header

    spec = pipeline_spec(pipeline)
    summary = _with_pipeline(summary)
    summary = summary[summary["pipeline"] == spec.name]
    if not len(summary):
        raise ValueError(f"the summary has no rows of pipeline {spec.name!r}")
    settings = {**settings, "variant": spec.cancer_variant or settings.get("variant")}

    draw = {
        "cancer_type_accuracy": lambda: plots.repr_cancer_type_cases(
            summary, epsilon=settings["epsilon"], variant=settings["variant"],
            data_origin=data_origin, pipeline=spec.name),
        "cancer_type_vs_epsilon": lambda: plots.repr_cancer_type_vs_epsilon(
            summary, variant=settings["variant"], data_origin=data_origin,
            pipeline=spec.name),
        "drug_prediction": lambda: plots.repr_drug_prediction(
            summary, epsilon=settings["epsilon"], data_origin=data_origin,
            pipeline=spec.name),
        "drug_vs_epsilon": lambda: plots.repr_drug_vs_epsilon(summary, data_origin=data_origin),
    }
    if name not in draw:
        raise ValueError(f"unknown repr_transfer figure {name!r}; expected one of {list(draw)}")
    fig = draw[name]()
    fig.text(0.01, 0.995, pipeline_header(spec.name), ha="left", va="top", fontsize=7,
             color="0.3")
    return fig
