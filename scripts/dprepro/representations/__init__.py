"""Representations learned on public data: PCA, random projection, the torch VAE (and its
Adam steps), quantile normalisation.

Its public names load their module on first use (:mod:`dprepro.runtime.exports`).
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "adam": ["AdamSteps"],
        "base": [
            "FeatureNamesMixin",
            "FitBudgetExceeded",
            "as_generator",
            "check_float",
            "check_int",
        ],
        "pca": [
            "EXACT_MAX_SIDE",
            "PCA_DEFAULTS",
            "SVD_SOLVERS",
            "fit_pca",
            "pca_solver",
            "truncate_pca",
        ],
        "quantile": ["QuantileScaler", "quantile_map"],
        "random_projection": ["RandomProjection"],
        "supervised_vae": ["SupervisedVAE", "SupervisedVAERepresentation", "encode_labels"],
        "vae": ["VAE", "VAERepresentation"],
        "vae_size": ["vae_hidden_width", "vae_training_mb", "vae_weights"],
    },
)
