from dprepro.studies.repr_transfer import jobs as repr_jobs  # noqa: E402
from dprepro.studies.repr_transfer.common import (  # noqa: E402
    REPRESENTATION_METHODS,
    VAE_JOB_METHODS,
)

# repr_transfer: representations learned on public expression, DP learners on the
# private lines (Niinimaki et al. 2019). The GDSC/DepMap download and parsing rules
# of paper mode live in data.smk.


# The study's names of paths and settings (repr_transfer_common.smk, from
# dprepro.studies.repr_transfer.plan) are included by the Snakefile before data.smk.


wildcard_constraints:
    representation=r"pca|random_projection|vae|supervised_vae|pca_vae_dim|vae_svae_dim",
    chunk=r"[0-9]+",
    pipeline="|".join(REPR_PIPELINES),


# repr_search and repr_fit run the representations that train no VAE; the VAE models' jobs
# are the same steps as rules of their own (repr_search_vae, repr_fit_vae, below), so that a
# cluster profile can send them alone to GPU nodes (docs/cluster.md)
REPR_VAE_JOBS = "|".join(VAE_JOB_METHODS)
REPR_OTHER_JOBS = "|".join(
    m for m in REPRESENTATION_METHODS if m not in VAE_JOB_METHODS
)


rule repr_public_data:
    input:
        unpack(REPR_PLAN.data_inputs("public")),
    output:
        **REPR_PUBLIC,
        **{f"prov_{k}": prov(v) for k, v in REPR_PUBLIC.items()},
        public_set=REPR_TABLES["public_set"],
        prov_public_set=prov(REPR_TABLES["public_set"]),
    log:
        "results/logs/repr_public_data/repr_public_data.log",
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["data"],
        runtime=20,
    params:
        **REPR_PLAN.job_params("repr_public_data", kind="public"),
        library_code=library_code("repr_data.py"),
    script:
        "../../scripts/repr_data.py"


rule repr_private_data:
    input:
        unpack(REPR_PLAN.data_inputs("private")),
    output:
        **REPR_PRIVATE,
        **{f"prov_{k}": prov(v) for k, v in REPR_PRIVATE.items()},
    log:
        "results/logs/repr_private_data/repr_private_data.log",
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["data"],
        runtime=20,
    params:
        **REPR_PLAN.job_params("repr_private_data", kind="private"),
        library_code=library_code("repr_data.py"),
    script:
        "../../scripts/repr_data.py"


rule repr_search:
    input:
        **REPR_PUBLIC,
    output:
        # one job per representation runs every pipeline's search, so a candidate that two
        # searches propose (their random start-up trials coincide) is fitted once
        **REPR_PLAN.search_outputs(),
    log:
        "results/logs/repr_search/{representation}.log",
    benchmark:
        "results/benchmarks/repr_search/{representation}.tsv"
    wildcard_constraints:
        representation=REPR_OTHER_JOBS,
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: REPR_PLAN.job_threads
    resources:
        # the PCA search holds one PCA fit at a time: at paper scale repr_fit's memory
        mem_mb=REPR_PLAN.fit_mem_mb,
        runtime=REPR_PLAN.search_runtime_of,
        # a VAE job's CPUs on SLURM, whatever the profile's cores (the cap of threads)
        cpus_per_task=REPR_PLAN.job_threads,
    params:
        **REPR_PLAN.job_params("repr_search"),
        library_code=library_code("repr_search.py"),
    script:
        "../../scripts/repr_search.py"


use rule repr_search as repr_search_vae with:
    wildcard_constraints:
        representation=REPR_VAE_JOBS,


rule repr_hyperparameter_table:
    input:
        candidates=REPR_PLAN.search_paths(),
    output:
        table=REPR_TABLES["hyperparameters"],
        prov=prov(REPR_TABLES["hyperparameters"]),
    log:
        "results/logs/repr_hyperparameter_table/repr_hyperparameter_table.log",
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **REPR_PLAN.job_params("repr_hyperparameter_table"),
        library_code=library_code("repr_select.py"),
    script:
        "../../scripts/repr_select.py"


rule repr_fit:
    input:
        hyperparameters=REPR_TABLES["hyperparameters"],
        public_expression=REPR_PUBLIC["expression"],
        private_expression=REPR_PRIVATE["expression"],
        private_expression_line_local=REPR_PRIVATE["expression_line_local"],
        # the joint model's auxiliary target (the public lineages); none for the others
        public_lineage=REPR_PLAN.fit_lineage,
    output:
        # one job per representation fits every pipeline's selected candidate (as
        # repr_search searches them): a candidate two pipelines select is fitted once
        **REPR_PLAN.fit_outputs(),
    log:
        "results/logs/repr_fit/{representation}.log",
    benchmark:
        "results/benchmarks/repr_fit/{representation}.tsv"
    wildcard_constraints:
        representation=REPR_OTHER_JOBS,
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: REPR_PLAN.job_threads
    resources:
        mem_mb=REPR_PLAN.fit_mem_mb,
        runtime=REPR_PLAN.fit_runtime,
        # a VAE job's CPUs on SLURM, whatever the profile's cores (the cap of threads)
        cpus_per_task=REPR_PLAN.job_threads,
    params:
        **REPR_PLAN.job_params("repr_fit"),
        library_code=library_code("repr_fit.py"),
    script:
        "../../scripts/repr_fit.py"


use rule repr_fit as repr_fit_vae with:
    wildcard_constraints:
        representation=REPR_VAE_JOBS,


rule repr_cancer_type:
    input:
        **REPR_PLAN.experiment_inputs(),
    output:
        rows=f"{REPR_DIR}/experiments/cancer_type_{{pipeline}}.parquet",
        prov=prov(f"{REPR_DIR}/experiments/cancer_type_{{pipeline}}.parquet"),
    log:
        "results/logs/repr_cancer_type/{pipeline}.log",
    benchmark:
        "results/benchmarks/repr_cancer_type/{pipeline}.tsv"
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["learn"],
        runtime=REPR_PLAN.cancer_type_runtime(),
    params:
        **REPR_PLAN.job_params("repr_cancer_type"),
        library_code=library_code("repr_cancer_type.py"),
    script:
        "../../scripts/repr_cancer_type.py"


rule repr_clipping_weights:
    input:
        hyperparameters=REPR_TABLES["hyperparameters"],
        private_response=REPR_PRIVATE["response"],
    output:
        # one job for every pipeline: each job's start-up costs more than its arithmetic
        **REPR_PLAN.clipping_outputs(),
    log:
        "results/logs/repr_clipping_weights/repr_clipping_weights.log",
    benchmark:
        "results/benchmarks/repr_clipping_weights/repr_clipping_weights.tsv"
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=REPR_PLAN.clipping_runtime(),
    params:
        **REPR_PLAN.job_params("repr_clipping_weights"),
        library_code=library_code("repr_clipping.py"),
    script:
        "../../scripts/repr_clipping.py"


rule repr_drug:
    input:
        **REPR_PLAN.experiment_inputs(),
        clipping=f"{REPR_DIR}/experiments/clipping_{{pipeline}}.csv",
    output:
        rows=f"{REPR_DIR}/experiments/drug_{{pipeline}}_chunk{{chunk}}.parquet",
        prov=prov(f"{REPR_DIR}/experiments/drug_{{pipeline}}_chunk{{chunk}}.parquet"),
    log:
        "results/logs/repr_drug/{pipeline}_chunk{chunk}.log",
    benchmark:
        "results/benchmarks/repr_drug/{pipeline}_chunk{chunk}.tsv"
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["learn"],
        runtime=REPR_PLAN.drug_runtime(),
    params:
        **REPR_PLAN.job_params("repr_drug"),
        library_code=library_code("repr_drug.py"),
    script:
        "../../scripts/repr_drug.py"


rule repr_cancer_type_table:
    input:
        rows=REPR_PLAN.cancer_type_paths(),
    output:
        table=REPR_TABLES["cancer_type_accuracy"],
        summary=REPR_TABLES["cancer_type_summary"],
        prov=prov(REPR_TABLES["cancer_type_accuracy"]),
        prov_summary=prov(REPR_TABLES["cancer_type_summary"]),
    log:
        "results/logs/repr_cancer_type_table/repr_cancer_type_table.log",
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **REPR_PLAN.job_params("repr_cancer_type_table", kind="cancer_type"),
        library_code=library_code("repr_tables.py"),
    script:
        "../../scripts/repr_tables.py"


rule repr_drug_table:
    input:
        rows=REPR_PLAN.drug_paths(),
    output:
        table=REPR_TABLES["drug_sensitivity"],
        summary=REPR_TABLES["drug_summary"],
        prov=prov(REPR_TABLES["drug_sensitivity"]),
        prov_summary=prov(REPR_TABLES["drug_summary"]),
    log:
        "results/logs/repr_drug_table/repr_drug_table.log",
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        **REPR_PLAN.job_params("repr_drug_table", kind="drug"),
        library_code=library_code("repr_tables.py"),
    script:
        "../../scripts/repr_tables.py"


rule repr_claims_table:
    input:
        cancer_type=REPR_TABLES["cancer_type_accuracy"],
        drug=REPR_TABLES["drug_sensitivity"],
        drug_rows=REPR_PLAN.drug_paths(),
        # the learned maps: the paper's assumption that public and private data are alike
        representations=REPR_PLAN.similarity_inputs(),
    output:
        table=REPR_TABLES["claims"],
        prov=prov(REPR_TABLES["claims"]),
    log:
        "results/logs/repr_claims_table/repr_claims_table.log",
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **REPR_PLAN.job_params("repr_claims_table"),
        library_code=library_code("repr_claims.py"),
    script:
        "../../scripts/repr_claims.py"


# the report's names of pipelines and figures
REPR_PIPELINE_TITLES = repr_jobs.PIPELINE_TITLES
REPR_FIGURE_TITLES = repr_jobs.FIGURE_TITLES


rule repr_figure:
    input:
        summary=REPR_PLAN.summary_input,
    output:
        pdf=report(
            f"{REPR_DIR}/figures/{{figure}}_{{pipeline}}.pdf",
            caption="../report/repr_figure.rst",
            category=REPORT_SECTIONS["repr_transfer"],
            subcategory=lambda wc: REPR_PIPELINE_TITLES[wc.pipeline],
            labels=lambda wc: {
                "figure": REPR_FIGURE_TITLES[wc.figure],
                "format": "PDF",
            },
        ),
        png=report(
            f"{REPR_DIR}/figures/{{figure}}_{{pipeline}}.png",
            caption="../report/repr_figure.rst",
            category=REPORT_SECTIONS["repr_transfer"],
            subcategory=lambda wc: REPR_PIPELINE_TITLES[wc.pipeline],
            labels=lambda wc: {
                "figure": REPR_FIGURE_TITLES[wc.figure],
                "format": "PNG",
            },
        ),
        prov_pdf=prov(f"{REPR_DIR}/figures/{{figure}}_{{pipeline}}.pdf"),
        prov_png=prov(f"{REPR_DIR}/figures/{{figure}}_{{pipeline}}.png"),
    log:
        "results/logs/repr_figure/{figure}_{pipeline}.log",
    wildcard_constraints:
        figure="|".join(repr_plan.FIGURE_KIND),
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **REPR_PLAN.job_params("repr_figure"),
        library_code=library_code("repr_plot.py"),
        # read by the report caption (workflow/report/repr_figure.rst)
        privacy=REPR_PLAN.caption_privacy_param,
    script:
        "../../scripts/repr_plot.py"


rule repr_transfer:
    input:
        STUDY_TARGETS["repr_transfer"],
    localrule: True
