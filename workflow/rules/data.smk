# Cohorts of rrr_survival (any name under `datasets`): sources and downloads.
# Layout from dprepro.studies.rrr_survival.plan; no dataset names in the rules.
from dprepro.studies.rrr_survival import plan as rrr_plan  # noqa: E402
from dprepro.studies.rrr_survival.jobs import StudyPlan as CohortPlan  # noqa: E402

# the cohorts' sources and loading jobs (dprepro.studies.rrr_survival.jobs)
COHORTS = CohortPlan(config)


rule cbioportal_download:
    output:
        patient=rrr_plan.cbioportal_raw("{study}", "patient"),
        sample=rrr_plan.cbioportal_raw("{study}", "sample"),
        manifest="results/data/raw/cbioportal/{study}_manifest.json",
    log:
        "results/logs/cbioportal_download/{study}.log",
    priority: TABLE_PRIORITY + 1
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        **COHORTS.cbioportal_params(),
        library_code=library_code("cbioportal_download.py"),
        downloads=canonical(config["downloads"]),
    script:
        "../../scripts/cbioportal_download.py"


rule cohort_download:
    output:
        table="results/data/raw/cohorts/{dataset}.csv",
        prov=prov("results/data/raw/cohorts/{dataset}.csv"),
    log:
        "results/logs/cohort_download/{dataset}.log",
    priority: TABLE_PRIORITY + 1
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        library_code=library_code("rrr_cohort_download.py"),
        url=COHORTS.dataset_entry("url"),
        sha256=COHORTS.dataset_entry("sha256"),
        downloads=canonical(config["downloads"]),
    script:
        "../../scripts/rrr_cohort_download.py"


rule rrr_cohort:
    input:
        unpack(COHORTS.cohort_inputs(workflow.basedir, LAUNCH_DIR)),
    output:
        cohort="results/data/cohorts/{dataset}.parquet",
        prov=prov("results/data/cohorts/{dataset}.parquet"),
    log:
        "results/logs/rrr_cohort/{dataset}.log",
    # generated or downloaded cohorts (IPSS-R) first: their release jobs are the longest
    priority: COHORTS.cohort_priority(TABLE_PRIORITY)
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **COHORTS.job_params("rrr_cohort"),
        library_code=library_code("rrr_cohort.py"),
    script:
        "../../scripts/rrr_cohort.py"


# ---- GDSC (private), DepMap and TCGA (public) raw files of repr_transfer's paper mode ----


rule gdsc_download:
    output:
        file="results/data/raw/gdsc/{rawfile}",
        record="results/data/raw/gdsc/{rawfile}.download.json",
    log:
        "results/logs/gdsc_download/{rawfile}.log",
    wildcard_constraints:
        rawfile=REPR_RAW_FILE,
    priority: REPR_CHAIN_PRIORITY
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=60,
    params:
        library_code=library_code("repr_download.py"),
        spec=REPR_PLAN.raw_spec_param("gdsc"),
        downloads=canonical(config["downloads"]),
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
    priority: REPR_CHAIN_PRIORITY
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=60,
    params:
        library_code=library_code("repr_download.py"),
        spec=REPR_PLAN.raw_spec_param("depmap"),
        downloads=canonical(config["downloads"]),
    script:
        "../../scripts/repr_download.py"


rule tcga_download:
    output:
        file="results/data/raw/tcga/{rawfile}",
        record="results/data/raw/tcga/{rawfile}.download.json",
    log:
        "results/logs/tcga_download/{rawfile}.log",
    wildcard_constraints:
        rawfile=REPR_RAW_FILE,
    priority: REPR_CHAIN_PRIORITY
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        # the toil TPM matrix is about 4 GB gzipped
        runtime=240,
    params:
        library_code=library_code("repr_download.py"),
        spec=REPR_PLAN.raw_spec_param("tcga"),
        downloads=canonical(config["downloads"]),
    script:
        "../../scripts/repr_download.py"


rule gdsc_preprocess:
    input:
        expression=REPR_PLAN.raw("gdsc", "expression"),
        dose_response=REPR_PLAN.raw("gdsc", "dose_response"),
        cell_lines=REPR_PLAN.raw("gdsc", "cell_lines"),
    output:
        **GDSC_CACHE,
        **{f"prov_{k}": prov(v) for k, v in GDSC_CACHE.items()},
    log:
        "results/logs/gdsc_preprocess/gdsc_preprocess.log",
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=30,
    params:
        library_code=library_code("repr_preprocess.py"),
        kind="gdsc",
    script:
        "../../scripts/repr_preprocess.py"


rule depmap_preprocess:
    input:
        expression=REPR_PLAN.raw("depmap", "expression"),
        models=REPR_PLAN.raw("depmap", "models"),
    output:
        **DEPMAP_CACHE,
        **{f"prov_{k}": prov(v) for k, v in DEPMAP_CACHE.items()},
    log:
        "results/logs/depmap_preprocess/depmap_preprocess.log",
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=30,
    params:
        library_code=library_code("repr_preprocess.py"),
        kind="depmap",
    script:
        "../../scripts/repr_preprocess.py"


rule tcga_preprocess:
    input:
        expression=REPR_PLAN.raw("tcga", "expression"),
        probemap=REPR_PLAN.raw("tcga", "probemap"),
        phenotype=REPR_PLAN.raw("tcga", "phenotype"),
        # the array's gene list (column names only): the genes kept from TCGA
        genes=GDSC_CACHE["expression"],
    output:
        **TCGA_CACHE,
        **{f"prov_{k}": prov(v) for k, v in TCGA_CACHE.items()},
    log:
        "results/logs/tcga_preprocess/tcga_preprocess.log",
    benchmark:
        "results/benchmarks/tcga_preprocess/tcga_preprocess.tsv"
    priority: REPR_CHAIN_PRIORITY
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        # streamed: the kept float32 block (~17,000 genes x 10,535 samples) plus one line
        mem_mb=4000,
        runtime=120,
    params:
        library_code=library_code("repr_preprocess.py"),
        kind="tcga",
        options={"cancer_type_column": config["datasets"]["tcga"]["cancer_type_column"]},
    script:
        "../../scripts/repr_preprocess.py"
