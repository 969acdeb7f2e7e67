"""Inputs: checked downloads, cBioPortal, survival cohorts by config, expression sources (GDSC,
DepMap, TCGA) and the synthetic stand-ins.

Its public names load their module on first use (:mod:`dprepro.runtime.exports`). The function
``download`` shares its module's name and stays there (``from dprepro.data.download import
download``).
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "cbioportal": ["ClinicalDownload", "DATA_TYPES", "DEFAULT_BASE", "GROUP_ATTRIBUTE", "LICENCE",
                   "STATUS_ATTRIBUTE", "STUDY_ID", "TIME_ATTRIBUTE", "clinical_data_url",
                   "clinical_long_to_wide", "fetch_clinical", "ipssr_survival_table",
                   "parse_os_status", "raw_filename"],
    "cohort_checks": ["CohortTableCheck", "check_cohort_tables", "cohort_table_path",
                      "follow_up_warnings"],
    "cohort_content": ["COLLINEAR_TOLERANCE", "CORE_COLUMNS", "EVENTS_PER_COEFFICIENT",
                       "analysis_size_problems", "cohort_frame_problems",
                       "cohort_frame_warnings", "covariate_design_problems", "covariates_of",
                       "require_analysable"],
    "cohort_labels": ["event_indicator", "group_spelling_problems", "label_key",
                      "respelled_counts", "spelling_collisions", "status_spelling_problems"],
    "cohort_options": ["SIMULATION_DEFAULTS", "cohort_option_problems", "covariate_columns",
                       "simulation_settings"],
    "cohort_spec": ["CohortBuild", "CohortSpec", "SOURCES", "absent_groups", "build_cohort",
                    "canonical_groups", "cohort_config_problems", "group_order",
                    "privacy_unit_of", "read_cohort_csv", "single_group_message",
                    "tidy_cohort"],
    "cohorts": ["IPSSR_GROUPS", "IPSSR_PUBLISHED", "check_survival_frame", "load_kidney",
                "read_csv_checked", "simulated_cox_cohort", "synthetic_ipssr_cohort",
                "date_hint", "decimal_comma_hint", "locate"],
    "depmap": ["depmap_tables", "read_depmap_expression", "read_depmap_models"],
    "download": ["ChecksumError", "DownloadError", "DownloadRecord", "fetch_json", "sha256_file",
                 "write_bytes_atomic", "write_json_atomic"],
    "expression": ["PREPROCESSORS", "PUBLIC_SOURCES", "harmonise_genes", "read_parquet_matrix",
                   "read_public_expression", "write_parquet_atomic"],
    "expression_io": ["DEPMAP_META_COLUMNS", "ExpressionDataError", "GDSC_CELL_LINE_COLUMNS",
                      "GDSC_DOSE_RESPONSE_COLUMNS", "GDSC_EXPRESSION_MEMBER"],
    "gdsc": ["gdsc_tables", "read_gdsc_cell_lines", "read_gdsc_dose_response",
             "read_gdsc_expression", "read_gdsc_ic50_matrix", "read_gdsc_sanger_ids"],
    "synthetic_expression": ["synthetic_public_private"],
    "tcga": ["TCGA_STUDY_OF_DISEASE", "holdout_labels", "read_tcga_phenotype",
             "read_tcga_probemap", "read_tcga_xena_expression", "tcga_tables"],
})
