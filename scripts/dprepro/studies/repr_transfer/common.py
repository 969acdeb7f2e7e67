"""Names and random streams shared by the modules of the ``repr_transfer`` study.

Randomness comes only from :func:`dprepro.runtime.seeds.seed_sequence` streams named
after the step, the case/drug and ε, with the representation seed as the
replicate, so a result row does not depend on which other rows a job computes.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dprepro.runtime.seeds import seed_sequence

__all__ = ["BASELINES", "EQUAL_DIM_CONTROLS", "METHODS", "MIN_TEST_RESPONSES",
           "MIN_TRAIN_RESPONSES", "REPRESENTATIONS",
           "REPRESENTATION_METHODS", "STUDY", "SUPERVISED", "VAE_JOB_METHODS", "VAE_MODELS",
           "dim_source",
           "eps_text", "fit_stream", "fitted_as", "method_order", "selected_row",
           "stream_int", "stream_rng"]

STUDY = "repr_transfer"
REPRESENTATIONS = ("pca", "random_projection", "vae", "supervised_vae")
BASELINES = ("fixed_genes", "dp_feature_selection")
#: Representations that are a torch VAE (the joint model is a VAE with a classification head).
VAE_MODELS = ("vae", "supervised_vae")
#: Representations fitted with the public samples' auxiliary labels (the lineage).
SUPERVISED = ("supervised_vae",)
#: Controls fitted as one representation at the dimension another one's search
#: selected: ``pca_vae_dim`` is PCA with the VAE's r. The DP learners' noise grows
#: with the feature dimension (SSP's L1 sensitivity is d²B²), so "VAE vs PCA" at
#: each one's own r mixes the representation with its r; the control separates them.
#: ``vae_svae_dim`` is the VAE (λ = 0) with the joint model's selected r, learning
#: rate, depth and width, fitted from the joint model's fit stream
#: (:func:`fit_stream`): the same split, batches, initial weights and noise, so only
#: the supervised term differs.
EQUAL_DIM_CONTROLS = {"pca_vae_dim": ("pca", "vae"), "vae_svae_dim": ("vae", "supervised_vae")}
#: Controls fitted from their source's stream (a paired ablation, not a second draw).
SHARED_FIT_STREAM = ("vae_svae_dim",)
#: Methods whose features are a representation fitted on the public set.
REPRESENTATION_METHODS = REPRESENTATIONS + tuple(EQUAL_DIM_CONTROLS)
METHODS = REPRESENTATION_METHODS + BASELINES
#: A drug split fits a model only with at least this many training and test responses of
#: the drug; below, its rows stay, with NaN scores (the set of rows is fixed by the
#: configuration, not by the private responses).
MIN_TRAIN_RESPONSES, MIN_TEST_RESPONSES = 3, 2


def stream_rng(base_seed: int, step: str, replicate: int = 0) -> np.random.Generator:
    """Generator of ``SeedSequence([base, crc32("repr_transfer"), crc32(step), replicate])``."""
    return np.random.default_rng(seed_sequence(base_seed, STUDY, step, replicate))


def stream_int(base_seed: int, step: str) -> int:
    """A 32-bit integer seed for scikit-learn's ``random_state`` from a named stream."""
    return int(seed_sequence(base_seed, STUDY, step, 0).generate_state(1)[0])


def eps_text(epsilon: float) -> str:
    """ε as it appears in stream and file names: ``1``, ``0.5``, ``inf``."""
    return "inf" if not math.isfinite(epsilon) else f"{float(epsilon):g}"


def fitted_as(method: str) -> str:
    """The representation ``method`` is fitted as (itself, or a control's model)."""
    return EQUAL_DIM_CONTROLS[method][0] if method in EQUAL_DIM_CONTROLS else method


#: The representation methods whose search and fit jobs train a VAE: the VAE, the joint
#: model and the VAE control. Their jobs are rules of their own (``repr_search_vae``,
#: ``repr_fit_vae``), so that a cluster profile can send them, and only them, to GPU nodes.
VAE_JOB_METHODS = tuple(m for m in REPRESENTATION_METHODS if fitted_as(m) in VAE_MODELS)


def fit_stream(method: str) -> str:
    """The stream ``repr_fit`` fits ``method`` from: ``fit/<method>``, or its source's for a
    paired control (:data:`SHARED_FIT_STREAM`)."""
    return f"fit/{dim_source(method) if method in SHARED_FIT_STREAM else method}"


def dim_source(method: str) -> str:
    """The representation whose selected r ``method`` uses (itself, or a control's source)."""
    return EQUAL_DIM_CONTROLS[method][1] if method in EQUAL_DIM_CONTROLS else method


def selected_row(hyperparameters: pd.DataFrame, method: str,
                 pipeline: str | None = None) -> pd.Series:
    """The selected candidate of the search whose r ``method`` uses (:func:`dim_source`).

    ``pipeline`` picks the search when the table has a ``pipeline`` column.
    ValueError unless exactly one row is selected.
    """
    source = dim_source(method)
    table = hyperparameters
    mask = (table["representation"] == source) & table["selected"].astype(bool)
    if pipeline is not None and "pipeline" in table.columns:
        mask &= table["pipeline"] == pipeline
    chosen = table[mask]
    if len(chosen) != 1:
        raise ValueError(f"hyperparameters: expected one selected {source} row"
                         f"{f' of pipeline {pipeline}' if pipeline else ''}, found {len(chosen)}")
    return chosen.iloc[0]


def method_order(values: pd.Series) -> pd.Series:
    """Sort key of methods in study order (representations, then baselines)."""
    return values.map({m: i for i, m in enumerate(METHODS)}).fillna(len(METHODS))
