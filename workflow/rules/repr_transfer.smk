REPR = config["repr_transfer"]
REPR_DIR = "results/repr_transfer"
REPR_DATA = "results/data/repr_transfer"
REPR_ORIGIN = repr_data_origin()
REPR_METHODS = repr_methods()
REPR_PUBLIC = {
    name: f"{REPR_DATA}/public_{name}.parquet" for name in ("expression", "lineage")
}
REPR_PRIVATE = {
    name: f"{REPR_DATA}/private_{name}.parquet"
    for name in ("expression", "lineage", "response")
}
REPR_TABLES = {
    name: f"{REPR_DIR}/tables/{name}.csv"
    for name in (
        "hyperparameters",
        "cancer_type_accuracy",
        "cancer_type_summary",
        "drug_sensitivity",
        "drug_summary",
    )
}
REPR_FIGURES = {
    name: [f"{REPR_DIR}/figures/{name}.pdf", f"{REPR_DIR}/figures/{name}.png"]
    for name in (
        "cancer_type_accuracy",
        "cancer_type_vs_epsilon",
        "drug_prediction",
        "drug_vs_epsilon",
    )
}
STUDY_TARGETS["repr_transfer"] = [
    *REPR_TABLES.values(),
    *[path for paths in REPR_FIGURES.values() for path in paths],
]
GDSC_CACHE = {
    name: f"results/data/gdsc/{name}.parquet"
    for name in ("expression", "dose_response", "cell_lines")
}
DEPMAP_CACHE = {
    name: f"results/data/depmap/{name}.parquet" for name in ("expression", "models")
}
REPR_DATA_SETTINGS = (
    repr_canonical(REPR["synthetic"])
    if REPR_ORIGIN == "synthetic"
    else {
        "min_shared_genes": REPR["min_shared_genes"],
        "lineage_column": config["datasets"]["gdsc"]["lineage_column"],
        "exclude_private_lines": config["datasets"]["depmap"]["exclude_private_lines"],
    }
)
# synthetic sizes need little memory; GDSC x DepMap matrices (~1,000 and ~1,500 lines
# x ~15,000 shared genes) need more
REPR_MEM_MB = (
    {"data": 2000, "learn": 2000}
    if REPR_ORIGIN == "synthetic"
    else {"data": 8000, "learn": 6000}
)
REPR_RAW_FILE = r"(expression|dose_response|cell_lines|models)(\.txt\.zip|\.csv\.gz|\.zip|\.xlsx|\.csv|\.txt|\.gz)"


wildcard_constraints:
    representation=r"pca|random_projection|vae",
    candidate=r"r[0-9]+(_lr[0-9.e+-]+_h[0-9]+_w[0-9]+)?",
    chunk=r"[0-9]+",


rule gdsc_download:
    output:
        file="results/data/raw/gdsc/{rawfile}",
        record="results/data/raw/gdsc/{rawfile}.download.json",
    log:
        "results/logs/gdsc_download/{rawfile}.log",
    wildcard_constraints:
        rawfile=REPR_RAW_FILE,
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=60,
    params:
        spec=lambda wc: repr_raw_spec("gdsc", wc.rawfile),
        downloads=config["downloads"],
    script:
        "../../scripts/repr_download.py"


rule depmap_download:
    output:
        file="results/data/raw/depmap/{rawfile}",
        record="results/data/raw/depmap/{rawfile}.download.json",
    log:
        "results/logs/depmap_download/{rawfile}.log",
    wildcard_constraints:
        rawfile=REPR_RAW_FILE,
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=60,
    params:
        spec=lambda wc: repr_raw_spec("depmap", wc.rawfile),
        downloads=config["downloads"],
    script:
        "../../scripts/repr_download.py"


rule gdsc_preprocess:
    input:
        expression=repr_raw("gdsc", "expression"),
        dose_response=repr_raw("gdsc", "dose_response"),
        cell_lines=repr_raw("gdsc", "cell_lines"),
    output:
        **GDSC_CACHE,
        **{f"prov_{k}": prov(v) for k, v in GDSC_CACHE.items()},
    log:
        "results/logs/gdsc_preprocess/gdsc_preprocess.log",
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=30,
    params:
        kind="gdsc",
    script:
        "../../scripts/repr_preprocess.py"


rule depmap_preprocess:
    input:
        expression=repr_raw("depmap", "expression"),
        models=repr_raw("depmap", "models"),
    output:
        **DEPMAP_CACHE,
        **{f"prov_{k}": prov(v) for k, v in DEPMAP_CACHE.items()},
    log:
        "results/logs/depmap_preprocess/depmap_preprocess.log",
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=30,
    params:
        kind="depmap",
    script:
        "../../scripts/repr_preprocess.py"


rule repr_public_data:
    input:
        unpack(repr_data_inputs("public")),
    output:
        **REPR_PUBLIC,
        **{f"prov_{k}": prov(v) for k, v in REPR_PUBLIC.items()},
    log:
        "results/logs/repr_public_data/repr_public_data.log",
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["data"],
        runtime=20,
    params:
        kind="public",
        origin=REPR_ORIGIN,
        seed=config["seed"],
        settings=REPR_DATA_SETTINGS,
    script:
        "../../scripts/repr_data.py"


rule repr_private_data:
    input:
        unpack(repr_data_inputs("private")),
    output:
        **REPR_PRIVATE,
        **{f"prov_{k}": prov(v) for k, v in REPR_PRIVATE.items()},
    log:
        "results/logs/repr_private_data/repr_private_data.log",
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["data"],
        runtime=20,
    params:
        kind="private",
        origin=REPR_ORIGIN,
        seed=config["seed"],
        settings=REPR_DATA_SETTINGS,
    script:
        "../../scripts/repr_data.py"


rule repr_candidate:
    input:
        **REPR_PUBLIC,
    output:
        candidate=f"{REPR_DIR}/candidates/{{representation}}/{{candidate}}.csv",
        prov=prov(f"{REPR_DIR}/candidates/{{representation}}/{{candidate}}.csv"),
    log:
        "results/logs/repr_candidate/{representation}_{candidate}.log",
    benchmark:
        "results/benchmarks/repr_candidate/{representation}_{candidate}.tsv"
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["learn"],
        runtime=lambda wc: 120 if wc.representation == "vae" else 10,
    params:
        spec=lambda wc: repr_candidate_spec(wc.representation, wc.candidate),
        vae=lambda wc: repr_vae_options(wc.representation),
        folds=REPR["selection"]["folds"],
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_candidate.py"


rule repr_hyperparameter_table:
    input:
        candidates=repr_candidate_paths(),
    output:
        table=REPR_TABLES["hyperparameters"],
        prov=prov(REPR_TABLES["hyperparameters"]),
    log:
        "results/logs/repr_hyperparameter_table/repr_hyperparameter_table.log",
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        representations=REPR["representations"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_select.py"


rule repr_fit:
    input:
        hyperparameters=REPR_TABLES["hyperparameters"],
        public_expression=REPR_PUBLIC["expression"],
        private_expression=REPR_PRIVATE["expression"],
    output:
        representation=f"{REPR_DIR}/representations/{{representation}}.parquet",
        prov=prov(f"{REPR_DIR}/representations/{{representation}}.parquet"),
    log:
        "results/logs/repr_fit/{representation}.log",
    benchmark:
        "results/benchmarks/repr_fit/{representation}.tsv"
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["learn"],
        runtime=lambda wc: 60 * REPR["seeds"] if wc.representation == "vae" else 10,
    params:
        vae=lambda wc: repr_vae_options(wc.representation),
        seeds=REPR["seeds"],
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_fit.py"


rule repr_cancer_type:
    input:
        **repr_experiment_inputs(),
    output:
        rows=f"{REPR_DIR}/experiments/cancer_type.parquet",
        prov=prov(f"{REPR_DIR}/experiments/cancer_type.parquet"),
    log:
        "results/logs/repr_cancer_type/repr_cancer_type.log",
    benchmark:
        "results/benchmarks/repr_cancer_type/repr_cancer_type.tsv"
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["learn"],
        runtime=60,
    params:
        kind="cancer_type",
        methods=REPR_METHODS,
        settings=repr_canonical(REPR["cancer_type"]),
        baselines=repr_baseline_params(),
        seeds=REPR["seeds"],
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_experiment.py"


rule repr_clipping_weights:
    input:
        hyperparameters=REPR_TABLES["hyperparameters"],
        private_response=REPR_PRIVATE["response"],
    output:
        table=f"{REPR_DIR}/experiments/clipping_eps{{eps}}.csv",
        prov=prov(f"{REPR_DIR}/experiments/clipping_eps{{eps}}.csv"),
    log:
        "results/logs/repr_clipping_weights/eps{eps}.log",
    benchmark:
        "results/benchmarks/repr_clipping_weights/eps{eps}.tsv"
    wildcard_constraints:
        eps=r"[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?",
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        methods=REPR_METHODS,
        baselines=repr_baseline_params(),
        test_size=REPR["drug"]["test_size"],
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_clipping.py"


rule repr_drug:
    input:
        **repr_experiment_inputs(),
        clipping=repr_clipping_paths(),
    output:
        rows=f"{REPR_DIR}/experiments/drug_chunk{{chunk}}.parquet",
        prov=prov(f"{REPR_DIR}/experiments/drug_chunk{{chunk}}.parquet"),
    log:
        "results/logs/repr_drug/chunk{chunk}.log",
    benchmark:
        "results/benchmarks/repr_drug/chunk{chunk}.tsv"
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=REPR_MEM_MB["learn"],
        runtime=120,
    params:
        kind="drug",
        methods=REPR_METHODS,
        settings=repr_canonical(REPR["drug"]),
        baselines=repr_baseline_params(),
        seeds=REPR["seeds"],
        seed=config["seed"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_experiment.py"


rule repr_cancer_type_table:
    input:
        rows=[f"{REPR_DIR}/experiments/cancer_type.parquet"],
    output:
        table=REPR_TABLES["cancer_type_accuracy"],
        summary=REPR_TABLES["cancer_type_summary"],
        prov=prov(REPR_TABLES["cancer_type_accuracy"]),
        prov_summary=prov(REPR_TABLES["cancer_type_summary"]),
    log:
        "results/logs/repr_cancer_type_table/repr_cancer_type_table.log",
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="cancer_type",
        methods=REPR_METHODS,
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_tables.py"


rule repr_drug_table:
    input:
        rows=repr_drug_paths(),
    output:
        table=REPR_TABLES["drug_sensitivity"],
        summary=REPR_TABLES["drug_summary"],
        prov=prov(REPR_TABLES["drug_sensitivity"]),
        prov_summary=prov(REPR_TABLES["drug_summary"]),
    log:
        "results/logs/repr_drug_table/repr_drug_table.log",
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        kind="drug",
        methods=REPR_METHODS,
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_tables.py"


rule repr_cancer_type_figure:
    input:
        summary=REPR_TABLES["cancer_type_summary"],
    output:
        pdf=report(
            REPR_FIGURES["cancer_type_accuracy"][0],
            caption="../report/repr_cancer_type_figure.rst",
            category="repr_transfer",
        ),
        png=REPR_FIGURES["cancer_type_accuracy"][1],
        prov_pdf=prov(REPR_FIGURES["cancer_type_accuracy"][0]),
        prov_png=prov(REPR_FIGURES["cancer_type_accuracy"][1]),
    log:
        "results/logs/repr_cancer_type_figure/repr_cancer_type_figure.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="cancer_type",
        epsilon=REPR["cancer_type"]["epsilon"],
        variant=REPR["cancer_type"]["variant"],
        dpi=config["figures"]["dpi"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_plot.py"


rule repr_cancer_type_vs_epsilon:
    input:
        summary=REPR_TABLES["cancer_type_summary"],
    output:
        pdf=report(
            REPR_FIGURES["cancer_type_vs_epsilon"][0],
            caption="../report/repr_cancer_type_vs_epsilon.rst",
            category="repr_transfer",
        ),
        png=REPR_FIGURES["cancer_type_vs_epsilon"][1],
        prov_pdf=prov(REPR_FIGURES["cancer_type_vs_epsilon"][0]),
        prov_png=prov(REPR_FIGURES["cancer_type_vs_epsilon"][1]),
    log:
        "results/logs/repr_cancer_type_vs_epsilon/repr_cancer_type_vs_epsilon.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="cancer_type_vs_epsilon",
        variant=REPR["cancer_type"]["variant"],
        dpi=config["figures"]["dpi"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_plot.py"


rule repr_drug_figure:
    input:
        summary=REPR_TABLES["drug_summary"],
    output:
        pdf=report(
            REPR_FIGURES["drug_prediction"][0],
            caption="../report/repr_drug_figure.rst",
            category="repr_transfer",
        ),
        png=REPR_FIGURES["drug_prediction"][1],
        prov_pdf=prov(REPR_FIGURES["drug_prediction"][0]),
        prov_png=prov(REPR_FIGURES["drug_prediction"][1]),
    log:
        "results/logs/repr_drug_figure/repr_drug_figure.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="drug",
        epsilon=REPR["drug"]["epsilon"],
        dpi=config["figures"]["dpi"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_plot.py"


rule repr_drug_vs_epsilon:
    input:
        summary=REPR_TABLES["drug_summary"],
    output:
        pdf=report(
            REPR_FIGURES["drug_vs_epsilon"][0],
            caption="../report/repr_drug_vs_epsilon.rst",
            category="repr_transfer",
        ),
        png=REPR_FIGURES["drug_vs_epsilon"][1],
        prov_pdf=prov(REPR_FIGURES["drug_vs_epsilon"][0]),
        prov_png=prov(REPR_FIGURES["drug_vs_epsilon"][1]),
    log:
        "results/logs/repr_drug_vs_epsilon/repr_drug_vs_epsilon.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="drug_vs_epsilon",
        dpi=config["figures"]["dpi"],
        data_origin=REPR_ORIGIN,
    script:
        "../../scripts/repr_plot.py"


rule repr_transfer:
    input:
        STUDY_TARGETS["repr_transfer"],
    localrule: True
