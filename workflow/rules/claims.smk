from dprepro.figures.report_tables import report_table_path, report_tables  # noqa: E402

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
    "results/claims_detail.pdf",
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
            subcategory="all claims",
            labels={"figure": "verdicts by study and origin", "format": "PDF"},
        ),
        png=report(
            "results/claims.png",
            caption="../report/claims.rst",
            category="claims",
            subcategory="all claims",
            labels={"figure": "verdicts by study and origin", "format": "PNG"},
        ),
        detail=report(
            "results/claims_detail.pdf",
            caption="../report/claims.rst",
            category="claims",
            subcategory="all claims",
            labels={"figure": "claims one by one", "format": "PDF"},
        ),
        prov_pdf=prov("results/claims.pdf"),
        prov_png=prov("results/claims.png"),
        prov_detail=prov("results/claims_detail.pdf"),
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
        rows_per_page=18,
    script:
        "../../scripts/claims_figure.py"


# The report shows the claims and each study's headline tables as tables (HTML pages
# it displays inline; a CSV would only be a download): the studies' manifests list them.
REPORT_TABLES = report_tables(config["studies"])
REPORT_TABLE_TARGETS = [report_table_path(name) for name in REPORT_TABLES]


rule report_tables:
    input:
        **{name: table.csv for name, table in REPORT_TABLES.items()},
    output:
        **{
            name: report(
                report_table_path(name),
                caption="../report/report_table.rst",
                category=table.category,
                subcategory=table.subcategory,
                labels={"table": table.title, "format": "HTML table"},
            )
            for name, table in REPORT_TABLES.items()
        },
        prov=[prov(report_table_path(name)) for name in REPORT_TABLES],
    log:
        "results/logs/report_tables/report_tables.log",
    priority: CLAIMS_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        library_code=library_code("report_tables.py"),
        titles={name: table.title for name, table in REPORT_TABLES.items()},
        captions={
            name: f"{table.caption} CSV: {table.csv}"
            for name, table in REPORT_TABLES.items()
        },
    script:
        "../../scripts/report_tables.py"


rule claims:
    input:
        CLAIMS_TARGETS,
    localrule: True
