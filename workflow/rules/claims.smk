# One claims table for the whole workflow: every configured study that has a
# claims table (STUDY_CLAIMS, filled by the study's .smk) is merged into
# results/claims.csv, and drawn one row per claim.
CLAIMS_INPUTS = [
    path for study in config["studies"] for path in STUDY_CLAIMS.get(study, [])
]
CLAIMS_TARGETS = [
    "results/claims.csv",
    "results/claims.pdf",
    "results/claims.png",
]


rule claims_table:
    input:
        tables=CLAIMS_INPUTS,
    output:
        table="results/claims.csv",
        prov=prov("results/claims.csv"),
    log:
        "results/logs/claims_table/claims_table.log",
    priority: CLAIMS_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        library_code=library_code("claims_table.py"),
    script:
        "../../scripts/claims_table.py"


rule claims_figure:
    input:
        table="results/claims.csv",
    output:
        pdf=report(
            "results/claims.pdf",
            caption="../report/claims.rst",
            category="claims",
        ),
        png="results/claims.png",
        prov_pdf=prov("results/claims.pdf"),
        prov_png=prov("results/claims.png"),
    log:
        "results/logs/claims_figure/claims_figure.log",
    priority: CLAIMS_PRIORITY
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        library_code=library_code("claims_figure.py"),
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/claims_figure.py"


rule claims:
    input:
        CLAIMS_TARGETS,
    localrule: True
