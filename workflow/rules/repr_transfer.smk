# repr_transfer: representations learned on public expression, DP learners on the
# private lines (Niinimaki et al. 2019). The GDSC/DepMap download and parsing rules
# of paper mode live in data.smk.


# The study's names of paths and settings (repr_transfer_common.smk, from
# dprepro.studies.repr_transfer.plan) are included by the Snakefile before data.smk.


wildcard_constraints:
    representation=r"pca|random_projection|vae|supervised_vae|pca_vae_dim|vae_svae_dim",
    chunk=r"[0-9]+",
    pipeline="|".join(REPR_PIPELINES),


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
        library_code=library_code("repr_data.py"),
        kind="public",
        origin=REPR_ORIGIN,
        seed=config["seed"],
        settings=REPR_DATA_SETTINGS,
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
        library_code=library_code("repr_data.py"),
        kind="private",
        origin=REPR_ORIGIN,
        seed=config["seed"],
        settings=REPR_DATA_SETTINGS,
    script:
        "../../scripts/repr_data.py"


rule repr_search:
    input:
        **REPR_PUBLIC,
    output:
        # one job per representation runs every pipeline's search, so a candidate that two
        # searches propose (their random start-up trials coincide) is fitted once
        **REPR_PLAN.pipeline_outputs(
            lambda p: f"{REPR_DIR}/candidates/{p}/{{representation}}.csv"
        ),
    log:
        "results/logs/repr_search/{representation}.log",
    benchmark:
        "results/benchmarks/repr_search/{representation}.tsv"
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        # the PCA search holds one PCA fit at a time: at paper scale repr_fit's memory
        mem_mb=REPR_PLAN.fit_mem_mb,
        runtime=lambda wc: REPR_PLAN.search_runtime(wc.representation),
    params:
        library_code=library_code("repr_search.py"),
        pipelines=REPR_PIPELINES,
        trials=lambda wc: REPR_PLAN.trials(wc.representation),
        space=lambda wc: REPR_PLAN.search_space(wc.representation),
        objectives={p: REPR_PLAN.search_objective(p) for p in REPR_PIPELINES},
        vae=lambda wc: REPR_PLAN.vae_options(wc.representation),
        pca=lambda wc: REPR_PLAN.pca_options(wc.representation),
        trial_seconds=lambda wc: REPR_PLAN.trial_seconds(wc.representation),
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_search.py"


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
        library_code=library_code("repr_select.py"),
        representations=REPR["representations"],
        data_origin=REPR_ORIGIN,
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
        **REPR_PLAN.pipeline_outputs(
            lambda p: f"{REPR_DIR}/representations/{p}/{{representation}}.parquet"
        ),
    log:
        "results/logs/repr_fit/{representation}.log",
    benchmark:
        "results/benchmarks/repr_fit/{representation}.tsv"
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_PLAN.fit_mem_mb,
        runtime=REPR_PLAN.fit_runtime,
    params:
        library_code=library_code("repr_fit.py"),
        pipelines=REPR_PIPELINES,
        vae=lambda wc: REPR_PLAN.vae_options(wc.representation),
        pca=lambda wc: REPR_PLAN.pca_options(wc.representation),
        # the joint model's final fit: the cases' lineages out of its cross-entropy
        unlabelled=REPR_PLAN.fit_unlabelled,
        seeds=REPR["seeds"],
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_fit.py"


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
        library_code=library_code("repr_cancer_type.py"),
        methods=REPR_METHODS,
        settings=canonical(REPR["cancer_type"]),
        baselines=REPR_PLAN.baseline_params(),
        seeds=REPR["seeds"],
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_cancer_type.py"


rule repr_clipping_weights:
    input:
        hyperparameters=REPR_TABLES["hyperparameters"],
        private_response=REPR_PRIVATE["response"],
    output:
        # one job for every pipeline: each job's start-up costs more than its arithmetic
        **REPR_PLAN.pipeline_outputs(
            lambda p: f"{REPR_DIR}/experiments/clipping_{p}.csv"
        ),
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
        library_code=library_code("repr_clipping.py"),
        methods=REPR_METHODS,
        baselines=REPR_PLAN.baseline_params(),
        epsilons=epsilon_grid(REPR["drug"]),
        test_size=REPR["drug"]["test_size"],
        clipping_datasets=REPR["drug"]["clipping_datasets"],
        clipping_noise_draws=REPR["drug"]["clipping_noise_draws"],
        pipelines=REPR_PIPELINES,
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
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
        library_code=library_code("repr_drug.py"),
        methods=REPR_METHODS,
        settings=canonical(REPR["drug"]),
        # whether the drugs are read off the private responses (then no finite ε)
        privacy_settings=REPR_PLAN.privacy_settings("drug"),
        baselines=REPR_PLAN.baseline_params(),
        seeds=REPR["seeds"],
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
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
        library_code=library_code("repr_tables.py"),
        kind="cancer_type",
        settings=REPR_PLAN.privacy_settings("cancer_type"),
        data_origin=REPR_ORIGIN,
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
        library_code=library_code("repr_tables.py"),
        kind="drug",
        settings=REPR_PLAN.privacy_settings("drug"),
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_tables.py"


# (pipeline, representation) of the learned maps the similarity claims read
REPR_SIMILARITY = [
    [p, r]
    for p in REPR_PIPELINES
    for r in ("pca", "vae")
    if r in REPR_PLAN.representation_methods()
]


rule repr_claims_table:
    input:
        cancer_type=REPR_TABLES["cancer_type_accuracy"],
        drug=REPR_TABLES["drug_sensitivity"],
        drug_rows=REPR_PLAN.drug_paths(),
        # the learned maps: the paper's assumption that public and private data are alike
        representations=[
            f"{REPR_DIR}/representations/{p}/{r}.parquet" for p, r in REPR_SIMILARITY
        ],
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
        library_code=library_code("repr_claims.py"),
        epsilons={k: REPR[k]["epsilon"] for k in ("cancer_type", "drug")},
        pipelines=REPR_PIPELINES,
        cancer_settings=REPR_PLAN.privacy_settings("cancer_type"),
        drug_settings=REPR_PLAN.privacy_settings("drug"),
        vae_learning_rates=REPR["vae"]["learning_rate_range"],
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
        representation_keys=REPR_SIMILARITY,
    script:
        "../../scripts/repr_claims.py"


REPR_PIPELINE_TITLES = {
    "as_published": "pipeline as published",
    "corrected": "corrected pipeline",
}
REPR_FIGURE_TITLES = {
    "cancer_type_accuracy": "cancer-type pairs",
    "cancer_type_vs_epsilon": "cancer type against ε",
    "drug_prediction": "drug sensitivity",
    "drug_vs_epsilon": "drug sensitivity against ε",
}


rule repr_figure:
    input:
        summary=lambda wc: REPR_TABLES[REPR_SUMMARY[REPR_FIGURE_KIND[wc.figure]]],
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
        figure="|".join(REPR_FIGURE_KIND),
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        library_code=library_code("repr_plot.py"),
        settings=lambda wc: REPR_PLAN.figure_settings(wc.figure),
        dpi=config["figures"]["dpi"],
        data_origin=REPR_ORIGIN,
        # read by the report caption (workflow/report/repr_figure.rst)
        privacy=lambda wc: REPR_PLAN.caption_privacy(wc.figure, wc.pipeline),
    script:
        "../../scripts/repr_plot.py"


rule repr_transfer:
    input:
        STUDY_TARGETS["repr_transfer"],
    localrule: True
