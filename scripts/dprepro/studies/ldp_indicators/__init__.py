"""Study ldp_indicators: a local-DP failure indicator in conditional (Beran) survival estimation.

Its manifest (:class:`dprepro.runtime.study_registry.StudySpec`) is all the workflow's shared
places know of it: the configuration reference, the claims catalogue, the report, the
privacy boundary and the configuration its jobs' sidecars record.
"""

from dprepro.runtime.study_registry import ReportTable, StudySpec

_ALPHA_MECHANISM = "as `ldp_indicators.alphas`"

SPEC = StudySpec(
    name="ldp_indicators",
    config_key="ldp_indicators",
    rule_prefixes=("ldp_",),
    claim_prefix="ldp",
    claims_modules=("dprepro.studies.ldp_indicators.claims",),
    privacy_keys={
        "ldp_indicators.alphas": (
            "Laplace on the failure indicator δ (Z = δ + Laplace(1/α)); randomized response",
            "α-LDP per person, each α exact; the levels of Figure 1"),
        "ldp_indicators.alpha_grid": (
            _ALPHA_MECHANISM,
            "α-LDP levels of the integrated-MSE-against-α curve (beyond the paper)"),
        "ldp_indicators.convergence.alphas": (
            _ALPHA_MECHANISM,
            "α-LDP levels of the MSE-against-n curves (beyond the paper)"),
    },
    related_privacy_keys={
        "ldp_indicators.mechanisms": "which local mechanisms the α apply to",
        "ldp_indicators.variants.noise_scales":
            "Laplace scale c/α: only c = 1 is α-LDP (others: α/c)",
    },
    report_tables={
        "ldp_claims": ReportTable(
            "results/ldp_indicators/tables/claims.csv", "ldp_indicators",
            "ldp_indicators: claims",
            "One row per claim of the ldp paper or beyond it, with its interval and verdict."),
        "ldp_imse_alpha": ReportTable(
            "results/ldp_indicators/tables/mse_alpha_grid.csv", "ldp_indicators",
            "ldp_indicators: integrated MSE against α",
            "One row per estimator, censoring level and α (simulation, no real data)."),
    },
    privacy_boundary={
        "simulation": ("ldp_simulate", "ldp_simulate_convergence", "ldp_mse_table",
                       "ldp_figure", "ldp_claims", "ldp_clip_table", "ldp_hazard_table",
                       "ldp_floor_table", "ldp_variant_table", "ldp_alpha_grid_table",
                       "ldp_convergence_table"),
        "target": ("ldp_indicators", "ldp_convergence"),
    },
)
