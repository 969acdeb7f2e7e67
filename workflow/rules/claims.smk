from dprepro.figures.report_tables import (  # noqa: E402
    page_parameters,
    report_page_flags,
    report_pages,
    report_tables,
)

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
            category=REPORT_SECTIONS["claims"],
            subcategory="all claims",
            labels={"figure": "verdicts by study and origin", "format": "PDF"},
        ),
        png=report(
            "results/claims.png",
            caption="../report/claims.rst",
            category=REPORT_SECTIONS["claims"],
            subcategory="all claims",
            labels={"figure": "verdicts by study and origin", "format": "PNG"},
        ),
        detail=report(
            "results/claims_detail.pdf",
            caption="../report/claims.rst",
            category=REPORT_SECTIONS["claims"],
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
# A table with a row per cohort (pipeline) is a page per cohort (pipeline), filed with that
# cohort's (pipeline's) figures under its title. A cohort's pages come from a job of that
# cohort alone (rule report_cohort_tables), as its figures do: Snakemake deletes every
# output of a failed job, so one cohort's fault must not delete another's pages.
REPORT_TABLES = report_tables(config["studies"])
REPORT_PART_TITLES = {
    "dataset": {d: spec.display_title for d, spec in RRR_COHORTS.items()},
    "pipeline": {
        p: REPR_PIPELINE_TITLES[p] for p in config["repr_transfer"]["pipelines"]
    },
}
REPORT_PARTS = {
    "dataset": list(RRR_COHORTS) if "rrr_survival" in config["studies"] else [],
    "pipeline": (
        config["repr_transfer"]["pipelines"]
        if "repr_transfer" in config["studies"]
        else []
    ),
}
REPORT_PAGES = report_pages(config["studies"], REPORT_PARTS)
# the pages the rule report_tables writes: all but the cohorts' ...
REPORT_RUN_PAGES = {n: p for n, p in REPORT_PAGES.items() if p.split != "dataset"}
# ... which rule report_cohort_tables writes, one job per cohort (by table name)
REPORT_COHORT_PAGES = {
    page.table: page
    for page in report_pages(
        config["studies"], {**REPORT_PARTS, "dataset": ["{dataset}"]}
    ).values()
    if page.split == "dataset" and REPORT_PARTS["dataset"]
}
REPORT_TABLE_TARGETS = [page.path for page in REPORT_PAGES.values()]


rule report_tables:
    input:
        **{
            name: REPORT_TABLES[name].csv
            for name in dict.fromkeys(p.table for p in REPORT_RUN_PAGES.values())
        },
    output:
        **{
            name: report(
                page.path,
                caption="../report/report_table.rst",
                **report_page_flags(page, config["studies"], REPORT_PART_TITLES),
            )
            for name, page in REPORT_RUN_PAGES.items()
        },
        prov=[prov(page.path) for page in REPORT_RUN_PAGES.values()],
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
        pages={name: page_parameters(page) for name, page in REPORT_RUN_PAGES.items()},
    script:
        "../../scripts/report_tables.py"


rule report_cohort_tables:
    input:
        **{name: REPORT_TABLES[name].csv for name in REPORT_COHORT_PAGES},
    output:
        **{
            name: report(
                page.path,
                caption="../report/report_table.rst",
                **report_page_flags(page, config["studies"], REPORT_PART_TITLES),
            )
            for name, page in REPORT_COHORT_PAGES.items()
        },
        prov=[prov(page.path) for page in REPORT_COHORT_PAGES.values()],
    log:
        "results/logs/report_cohort_tables/{dataset}.log",
    priority: CLAIMS_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        library_code=library_code("report_tables.py"),
        pages=lambda wc: {
            name: page_parameters(page, wc.dataset)
            for name, page in REPORT_COHORT_PAGES.items()
        },
    script:
        "../../scripts/report_tables.py"


# ... and the introduction (rule report_introduction): every target list naming the
# report's pages names it too
REPORT_INTRODUCTION = "results/report/introduction.rst"
REPORT_INTRODUCTION_PAGE = "results/report/introduction.html"
REPORT_TABLE_TARGETS += [REPORT_INTRODUCTION, REPORT_INTRODUCTION_PAGE]


# The introduction is written by a rule, not only by the Snakefile's global `report:` text:
# Snakemake renders that text with the configuration alone, while the verdicts are in the
# run's claims table. The rule reads the table (its outputs have provenance sidecars like
# every other), its reStructuredText becomes the landing page (Snakefile: `report:`), and
# the same page, as HTML, is the report's first section.
rule report_introduction:
    input:
        claims="results/claims.csv",
    output:
        rst=REPORT_INTRODUCTION,
        html=report(
            REPORT_INTRODUCTION_PAGE,
            caption="../report/introduction.rst",
            category=INTRODUCTION,
            subcategory="what was run",
            labels={"page": "introduction", "format": "HTML"},
        ),
        prov=[prov(REPORT_INTRODUCTION), prov(REPORT_INTRODUCTION_PAGE)],
    log:
        "results/logs/report_introduction/report_introduction.log",
    priority: CLAIMS_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        library_code=library_code("report_introduction.py"),
        # every configuration value (the data sets, the seed, the dpi it describes): a
        # change of any rewrites the page, as it does the run's manifest (a digest: see
        # rule run_manifest)
        configuration_sha256=plan_digest(config),
        sections={s: REPORT_SECTIONS[s] for s in [*config["studies"], "claims"]},
        # the shipped configuration files of the run (they name its mode), not every file's
        # path: the same configuration from another file reruns nothing
        configfiles=[
            f"config/{os.path.basename(f)}"
            for f in workflow.configfiles
            if os.path.dirname(os.path.abspath(f))
            == os.path.join(workflow.basedir, "config")
        ],
        # the target the page's "rebuild one figure" line names
        example=next(
            (
                p
                for s in config["studies"]
                for p in STUDY_TARGETS[s]
                if p.endswith(".pdf")
            ),
            "results/claims.pdf",
        ),
    script:
        "../../scripts/report_introduction.py"


rule claims:
    input:
        CLAIMS_TARGETS,
    localrule: True
