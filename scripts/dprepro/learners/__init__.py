"""DP learners of the repr study: objective-perturbation logistic regression, SSP linear
regression, clipping search, DP feature selection, their true ε (accounting), metrics.

Its public names load their module on first use (:mod:`dprepro.runtime.exports`).
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "accounting": [
            "SSP_STATISTICS",
            "objective_perturbation_epsilon",
            "selection_changed_parts",
            "selection_epsilon",
            "ssp_epsilon",
            "ssp_shares",
        ],
        "clipping": ["ssp_clipping_weights"],
        "feature_selection": [
            "dp_select_features",
            "hashed_parts",
            "hashed_votes",
            "noisy_top_features",
            "select_columns",
        ],
        "lasso": [
            "FINISH_ROUNDS",
            "FINISH_SWEEPS",
            "KKT_TOLERANCE",
            "LASSO_SOLVERS",
            "check_lasso_solver",
            "kkt_violation",
            "lasso_coef",
        ],
        "linear_regression": ["SSPLinearRegression"],
        "logistic_regression": [
            "DPLogisticRegression",
            "PendingFits",
            "clip_rows_to_unit_ball",
            "gradient_hessian",
            "minimise_perturbed_objectives",
        ],
        "metrics": ["probabilistic_c_index", "spearman"],
        "noise": [
            "objective_perturbation_noise",
            "objective_perturbation_noise_draws",
            "psd_repair",
            "ssp_laplace_noise",
            "ssp_laplace_noise_draws",
            "ssp_noise",
            "ssp_noise_draws",
            "wishart_noise",
        ],
    },
)
