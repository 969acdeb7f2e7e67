"""Study repr_transfer: DP drug-sensitivity and cancer-type prediction on representations learned
from public data.

Its manifest (:class:`dprepro.runtime.study_registry.StudySpec`) is all the workflow's shared
places know of it: the configuration reference, the claims catalogue, the report, the
privacy boundary and the configuration its jobs' sidecars record.
"""

from dprepro.runtime.study_registry import ReportTable, StudySpec

_OBJECTIVE = "objective perturbation (DP logistic regression)"
_SSP = "sufficient statistics perturbation (DP linear regression)"

SPEC = StudySpec(
    name="repr_transfer",
    config_key="repr_transfer",
    # its data sources: GDSC (private side), DepMap and TCGA (public side)
    rule_prefixes=("repr_", "gdsc_", "depmap_", "tcga_"),
    claim_prefix="repr",
    claims_modules=("dprepro.studies.repr_transfer.claims",),
    privacy_keys={
        "repr_transfer.selection.epsilon": (
            _OBJECTIVE,
            "ε of the DP learner scored in the hyperparameter search, on public data only"),
        "repr_transfer.cancer_type.epsilon": (
            _OBJECTIVE,
            "ε per released model of the cancer-type figure (the paper's headline)"),
        "repr_transfer.cancer_type.epsilons": (
            _OBJECTIVE,
            "ε sweep of the cancer-type task; the non-private fit (ε = ∞) is added"),
        "repr_transfer.drug.epsilon": (
            _SSP, "ε per released model of the drug figure (the paper's, 1)"),
        "repr_transfer.drug.epsilons": (
            _SSP,
            "ε sweep of the drug task (beyond the paper); the non-private fit (ε = ∞) is "
            "added"),
    },
    related_privacy_keys={
        "repr_transfer.pipelines":
            "`as_published` has no finite true ε; `corrected` is ε-DP per model",
        "repr_transfer.cancer_type.variant":
            "objective perturbation as coded by the authors, or CMS11",
        "repr_transfer.feature_selection.n_genes": "DP feature selection spends half of ε",
    },
    report_tables={
        "repr_claims": ReportTable(
            "results/repr_transfer/tables/claims.csv", "repr_transfer",
            "repr_transfer: claims",
            "One row per claim of the repr paper or beyond it, with its interval and verdict."),
        "repr_cancer_type": ReportTable(
            "results/repr_transfer/tables/cancer_type_summary.csv", "repr_transfer",
            "repr_transfer: cancer-type pairs",
            "One row per pipeline, method, ε and lineage pair: the mean CV accuracy and its "
            "SE."),
        "repr_drug": ReportTable(
            "results/repr_transfer/tables/drug_summary.csv", "repr_transfer",
            "repr_transfer: drug sensitivity",
            "One row per pipeline, method and ε: Spearman's ρ and the PC-index, mean and SE."),
    },
    privacy_boundary={
        # GDSC is the private side; the private lines mapped through a public
        # representation are still private records
        "sensitive": ("gdsc_download", "gdsc_preprocess", "repr_private_data", "repr_fit",
                      "repr_fit_vae"),
        # the experiments, tables and figures hold DP results beside their non-private
        # (epsilon = inf) references, told apart by `mechanism`; accuracy and Spearman are
        # measured on private test lines (not private)
        "reference": ("repr_cancer_type", "repr_drug", "repr_cancer_type_table",
                      "repr_drug_table", "repr_claims_table", "repr_figure"),
        # public data (DepMap, TCGA or the synthetic public set, restricted to the genes
        # shared with GDSC: the array's gene list is public annotation), the representation
        # candidates and hyperparameters chosen on it, and clipping weights chosen on
        # synthetic data given the private training-set size
        "public": ("depmap_download", "depmap_preprocess", "tcga_download", "tcga_preprocess",
                   "repr_public_data", "repr_search", "repr_search_vae",
                   "repr_hyperparameter_table",
                   "repr_clipping_weights"),
        "target": ("repr_transfer",),
    },
    fixed_datasets=("gdsc", "depmap", "tcga"),
)
