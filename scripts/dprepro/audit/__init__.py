"""The privacy audit: empirical lower bounds on ε for every registered mechanism and learner, and
its figure.

Its public names load their module on first use (:mod:`dprepro.runtime.exports`).
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "bound": ["AuditResult", "epsilon_lower_bound"],
    "claims": ["confidence", "privacy_claims"],
    "figure": ["privacy_audit"],
    "learner_audits": ["audit_objective_perturbation", "audit_ssp"],
    "release_audits": ["audit_grid_lnte", "audit_indicator_mechanism", "audit_laplace_indicators",
                       "audit_lnte", "audit_rrr"],
    "selection_audits": ["audit_feature_selection", "selection_audit_data"],
    "suite": ["audit_row_key", "audit_row_seeds", "control_run_alpha", "indicator_audit_plan",
              "rrr_run_audit_plan", "run_all_audits"],
})
