"""DP learners of the repr study: objective-perturbation logistic regression, SSP linear
regression, clipping search, DP feature selection, metrics.

Its public names load their module on first use (:mod:`dprepro.runtime.exports`).
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "clipping": ["ssp_clipping_weights"],
    "feature_selection": ["dp_select_features", "select_columns"],
    "linear_regression": ["SSPLinearRegression"],
    "logistic_regression": ["DPLogisticRegression", "clip_rows_to_unit_ball"],
    "metrics": ["probabilistic_c_index", "spearman"],
    "noise": ["objective_perturbation_noise", "objective_perturbation_noise_draws", "psd_repair",
              "ssp_laplace_noise", "ssp_noise", "ssp_noise_draws", "wishart_noise"],
})
