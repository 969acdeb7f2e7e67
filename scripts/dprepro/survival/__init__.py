"""Survival estimators: Kaplan–Meier, medians, log-rank (plain and cluster-robust), conditional
Beran / Nelson–Aalen and their bandwidth, Cox regression (also on a group label misclassified by
a known matrix).

Its public names load their module on first use (:mod:`dprepro.runtime.exports`). The function
``kaplan_meier`` shares its module's name and stays there (``from
dprepro.survival.kaplan_meier import kaplan_meier``); :class:`KaplanMeier` is the estimator.
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "bandwidth": ["dpik", "dpik_rows"],
        "cluster_logrank": ["pairwise_robust_logrank", "robust_score_test"],
        "conditional": [
            "beran_cdf",
            "conditional_estimator_sets",
            "conditional_nelson_aalen",
            "generalized_beran_cdf",
            "presmoothed_indicator_groups",
            "presmoothed_indicator_sets",
            "presmoothed_indicators",
            "private_beran_cdf",
            "uniform_kernel_window",
        ],
        "corrected_score": [
            "CorrectedScoreResult",
            "corrected_score_cox",
            "corrected_score_cox_draws",
        ],
        "cox": ["CoxPH", "fit_cox_batch", "treatment_dummies"],
        "cox_core": ["CoxBatch", "Layout", "cumulative_at", "fit_in_chunks", "solve"],
        "cox_levels": ["factor_labels", "fit_levels"],
        "cox_misclassification": [
            "check_misclassification_matrix",
            "mc_simex_cox",
            "mc_simex_cox_draws",
            "misclassify",
            "rrr_matrix",
            "stochastic_matrix_power",
            "unbiased_label_weights",
        ],
        "kaplan_meier": ["KMBatch", "KaplanMeier", "km_batch"],
        "logrank": ["LogrankBatch", "pairwise_logrank", "pairwise_logrank_batch"],
        "median": ["MedianSurvival", "km_median", "km_median_r"],
        "simex_extrapolation": [
            "EXTRAPOLANTS",
            "SimexResult",
            "check_simex_options",
            "estimate_frame",
            "simex_result",
        ],
    },
)
