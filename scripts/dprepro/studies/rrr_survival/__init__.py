"""Study rrr_survival: Revised Randomized Response against LNTE on Kaplan–Meier curves, medians and
log-rank tests.

Its manifest (:class:`dprepro.runtime.study_registry.StudySpec`) is all the workflow's shared
places know of it: the configuration reference, the claims catalogue, the report, the
privacy boundary and the configuration its jobs' sidecars record (a cohort's job: that
cohort's ``datasets`` entry only).
"""

from dprepro.runtime.study_registry import ReportTable, StudySpec

SPEC = StudySpec(
    name="rrr_survival",
    config_key="rrr_survival",
    # the cohorts' sources (cBioPortal, a download, a file) are this study's data
    rule_prefixes=("rrr_", "cbioportal_", "cohort_"),
    claim_prefix="rrr",
    claims_modules=("dprepro.studies.rrr_survival.claims",),
    privacy_keys={
        "rrr_survival.epsilons": (
            "randomized response on the group (RRR); Laplace on counts (LNTE)",
            "stated ε per person (`privacy_unit`); tables add the true ε of each calibration"),
    },
    related_privacy_keys={
        "rrr_survival.calibration": "`paper` is truly (ε + ln(k − 1))-LDP; `exact` is ε-LDP",
        "rrr_survival.extra_calibrations": "RRR calibrations run beside `calibration`",
    },
    report_tables={
        "rrr_claims": ReportTable(
            "results/rrr_survival/tables/claims.csv", "rrr_survival", "rrr_survival: claims",
            "One row per claim of the rrr paper or beyond it, with its interval and verdict."),
        "rrr_median_survival": ReportTable(
            "results/rrr_survival/tables/median_survival.csv", "rrr_survival",
            "rrr_survival: median survival (Table 2)",
            "One row per cohort, release, ε and group: the median and its interval, with the "
            "release's privacy columns."),
        "rrr_logrank_rejection": ReportTable(
            "results/rrr_survival/tables/logrank_rejection_rate.csv", "rrr_survival",
            "rrr_survival: log-rank rejection rates (Table 1)",
            "One row per cohort, release, ε and pair of groups: the share of draws whose "
            "log-rank test rejects."),
        "rrr_utility": ReportTable(
            "results/rrr_survival/tables/utility.csv", "rrr_survival",
            "rrr_survival: utility against ε",
            "One row per cohort, release and ε: the mean sup-distance to the original KM "
            "curve."),
    },
    privacy_boundary={
        "sensitive": ("cbioportal_download", "cohort_download", "rrr_cohort"),
        "privatization": ("rrr_private_releases",),
        "reference": (
            # the bands are quantiles over many independent draws of each mechanism (N·ε
            # if published): a summary for the reader, release = false in its provenance
            "rrr_bands_table",
            "rrr_original", "rrr_median_table", "rrr_logrank_table", "rrr_rejection_table",
            "rrr_utility_table", "rrr_curves_table", "rrr_claims_table", "rrr_figure2",
            "rrr_km_bands", "rrr_utility",
            # the Cox fits compare every release's fit with the original's (fitted in the
            # same job); each private fit is post-processing of its RRR release, the table
            # and figures hold both
            "rrr_cox", "rrr_cox_table", "rrr_cox_forest_figure",
            "rrr_cox_bias_coverage_figure"),
        "target": ("rrr_survival",),
    },
    # the cohorts it reads are those its section lists (and those only the Cox analysis
    # reads); a job of one cohort records that cohort's entry only
    datasets_key="datasets",
    extra_datasets_keys=("cox.extra_datasets",),
    # a cohort is its datasets entry: no study setting changes it
    source_rules=("rrr_cohort", "cohort_download", "cbioportal_download"),
    # the non-private reference, which no release setting reaches
    reference_rules=("rrr_original",),
    release_keys=("epsilons", "calibration", "extra_calibrations"),
)
