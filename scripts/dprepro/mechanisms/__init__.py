"""Privacy mechanisms: indicator mechanisms and their registry, Revised Randomized Response (plain
and debiased), LNTE as published and on a grid.

Its public names load their module on first use (:mod:`dprepro.runtime.exports`). The function
``identity`` shares its module's name and stays there.
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "debiased_rrr": ["DebiasedCurves", "DebiasedRRR", "bootstrap_medians", "debiased_curves"],
    "grid_lnte": ["GridDiscretisation", "GridLNTE", "actuarial_survival", "consistent_counts",
                  "grid_calibration",
                  "grid_counts", "isotonic_fit", "label_replacement_epsilon"],
    "identity": ["BEYOND", "IDENTITIES", "MechanismIdentity", "identities", "mechanism_name",
                 "register_identity", "unregister_identity", "words"],
    "indicator_draws": ["debias_randomized_response", "laplace_indicators",
                        "randomized_response_indicators", "randomized_response_keep_probability"],
    "lnte": ["LNTE", "LNTEResult", "LNTE_CI_METHOD", "LNTE_NOTE", "lnte_band", "lnte_median",
             "lnte_survival"],
    "registry": ["IndicatorMechanism", "MECHANISMS", "PRIVACY_UNIT", "REFERENCE",
                 "by_release_name", "check_mechanism_names", "draw_records", "get_mechanism",
                 "indicator_mechanism", "joint_records", "records_of", "register", "rescaled",
                 "row_record", "unregister"],
    "rrr": ["CALIBRATIONS", "RevisedRandomizedResponse", "privatize_labels",
            "rrr_keep_probability", "rrr_true_epsilon", "transition_matrix"],
})
