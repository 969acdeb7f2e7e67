STUDY_TARGETS["audit"] = [
    "results/audit/privacy_audit.csv",
    "results/audit/privacy_audit.pdf",
    "results/audit/privacy_audit.png",
    "results/audit/claims.csv",
]
# the papers' privacy statements, decided by analysis and the audit, join the claims
STUDY_CLAIMS["audit"] = ["results/audit/claims.csv"]


rule privacy_audit_table:
    output:
        table="results/audit/privacy_audit.csv",
        prov=prov("results/audit/privacy_audit.csv"),
    log:
        "results/logs/privacy_audit_table/privacy_audit_table.log",
    benchmark:
        "results/benchmarks/privacy_audit_table/privacy_audit_table.tsv"
    priority: TABLE_PRIORITY
    conda:
        "../../envs/learning.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=15,
    params:
        library_code=library_code("privacy_audit.py"),
        seed=config["seed"],
        draws_scale=config["audit"]["draws_scale"],
        learner_draws_scale=config["audit"]["learner_draws_scale"],
        level=config["audit"]["level"],
        # the RRR releases this run makes ([k, ε, calibration]): each gets an audit row,
        # and so a privacy claim, where the shipped rows do not cover it
        rrr_settings=(
            rrr_plan.privacy_settings(config)
            if "rrr_survival" in config["studies"]
            else []
        ),
    script:
        "../../scripts/privacy_audit.py"


rule privacy_audit_figure:
    input:
        table="results/audit/privacy_audit.csv",
    output:
        pdf=report(
            "results/audit/privacy_audit.pdf",
            caption="../report/privacy_audit.rst",
            category="audit",
            subcategory="privacy audit",
            labels={"figure": "lower bounds on ε", "format": "PDF"},
        ),
        png=report(
            "results/audit/privacy_audit.png",
            caption="../report/privacy_audit.rst",
            category="audit",
            subcategory="privacy audit",
            labels={"figure": "lower bounds on ε", "format": "PNG"},
        ),
        prov_pdf=prov("results/audit/privacy_audit.pdf"),
        prov_png=prov("results/audit/privacy_audit.png"),
    log:
        "results/logs/privacy_audit_figure/privacy_audit_figure.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        library_code=library_code("privacy_audit_plot.py"),
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/privacy_audit_plot.py"


rule audit_claims_table:
    input:
        audit="results/audit/privacy_audit.csv",
    output:
        table="results/audit/claims.csv",
        prov=prov("results/audit/claims.csv"),
    log:
        "results/logs/audit_claims_table/audit_claims_table.log",
    priority: CLAIMS_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        library_code=library_code("audit_claims.py"),
    script:
        "../../scripts/audit_claims.py"


rule audit:
    input:
        STUDY_TARGETS["audit"],
    localrule: True
