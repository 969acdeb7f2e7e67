rule ipssr_download:
    output:
        patient=cbioportal_raw("patient"),
        sample=cbioportal_raw("sample"),
        manifest="results/data/raw/cbioportal/manifest.json",
    log:
        "results/logs/ipssr_download/ipssr_download.log",
    localrule: True
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        base=config["datasets"]["ipssr"]["cbioportal_url"],
        study_id=config["datasets"]["ipssr"]["study_id"],
        downloads=config["downloads"],
    script:
        "../../scripts/cbioportal_download.py"


rule rrr_cohort:
    input:
        unpack(cohort_inputs),
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
