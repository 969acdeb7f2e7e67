# Cohorts of rrr_survival (any name under `datasets`): sources and downloads.
# Layout from dprepro.rrr_paths; no dataset names in the rules.
from dprepro import rrr_paths  # noqa: E402


rule cbioportal_download:
    output:
        patient=rrr_paths.cbioportal_raw("{study}", "patient"),
        sample=rrr_paths.cbioportal_raw("{study}", "sample"),
        manifest="results/data/raw/cbioportal/{study}_manifest.json",
    log:
        "results/logs/cbioportal_download/{study}.log",
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        base=lambda wc: rrr_paths.cbioportal_base(config, wc.study),
        datasets=lambda wc: rrr_paths.cbioportal_studies(config)[wc.study],
        downloads=config["downloads"],
    script:
        "../../scripts/cbioportal_download.py"


rule cohort_download:
    output:
        table="results/data/raw/cohorts/{dataset}.csv",
        prov=prov("results/data/raw/cohorts/{dataset}.csv"),
    log:
        "results/logs/cohort_download/{dataset}.log",
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        url=lambda wc: config["datasets"][wc.dataset]["url"],
        sha256=lambda wc: config["datasets"][wc.dataset]["sha256"],
        downloads=config["downloads"],
    script:
        "../../scripts/rrr_cohort_download.py"


rule rrr_cohort:
    input:
        unpack(lambda wc: rrr_paths.cohort_inputs(config, wc.dataset, workflow.basedir)),
    output:
        cohort="results/data/cohorts/{dataset}.parquet",
        prov=prov("results/data/cohorts/{dataset}.parquet"),
    log:
        "results/logs/rrr_cohort/{dataset}.log",
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        spec=lambda wc: config["datasets"][wc.dataset],
        seed=config["seed"],
    script:
        "../../scripts/rrr_cohort.py"
