"""What every step shares: atomic I/O, seeds, provenance sidecars, privacy records, the
step start-up, the library-code digests of the rules (code_version), canonical params, the
jobs' plans and their digests (job_plan), the
scheduler-timer cleanup and the studies' manifests (study_registry).

Its public names load their module on first use (:mod:`dprepro.runtime.exports`).
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "code_version": [
            "library_digest",
            "library_modules",
            "module_checksums",
            "script_library_digest",
            "scripts_library_code",
        ],
        "exports": ["lazy_exports"],
        "io": [
            "atomic_path",
            "read_table",
            "sha256_of",
            "write_csv",
            "write_json",
            "write_parquet",
        ],
        "job_plan": [
            "DIGEST_LENGTH",
            "JobParams",
            "JobPlans",
            "merged_params",
            "plan_digest",
            "plan_module_name",
            "plan_of_job",
        ],
        "params": [
            "COMPARED_TYPES",
            "DERIVING_ARGUMENTS",
            "EvaluatedParams",
            "NamedValues",
            "as_recorded",
            "canonical",
            "compared_text",
            "evaluated_params",
            "number_text",
        ],
        "privacy_record": [
            "AUDIT_PRIVACY",
            "BudgetSplit",
            "PrivacyRecord",
            "budget_split",
            "non_private",
            "provenance_of",
        ],
        "provenance": [
            "PACKAGES",
            "git_commit",
            "package_versions",
            "provenance_record",
            "sidecar_path",
            "write_provenance",
        ],
        "run_config": ["flatten", "run_config_subset", "study_sections"],
        "run_folder": [
            "RUNS_DIR",
            "STALE_LIST",
            "launch_relative",
            "remove_outputs",
            "run_directory",
            "stale_outputs",
            "write_stale_list",
        ],
        "scheduler_timers": ["SCHEDULER_FILE", "cancel_scheduler_timers"],
        "seeds": ["replicate_generators", "seed_record", "seed_sequence", "stable_id"],
        "study_registry": [
            "BOUNDARY_CLASSES",
            "ReportTable",
            "StudySpec",
            "privacy_boundary",
            "registered_studies",
            "study_of_rule",
            "study_spec",
        ],
        "step": [
            "THREAD_VARIABLES",
            "compile_library_for_jobs",
            "job_params",
            "pin_threads",
            "script_path",
            "scripts_first_for_jobs",
            "start",
            "write_sidecars",
        ],
        "verify": [
            "Mismatch",
            "Unevaluable",
            "VerifyReport",
            "current_params",
            "job_key",
            "recorded_jobs",
            "verify_run",
        ],
    },
)
