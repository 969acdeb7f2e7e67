# ---- ldp_indicators: the study's files and job plans (dprepro.studies.ldp_indicators.jobs) ----
from dprepro.studies.ldp_indicators.jobs import StudyPlan as LdpStudyPlan  # noqa: E402

# the rules' params carry a digest of each job's plan (plan_sha256); the steps rebuild it
LDP = LdpStudyPlan(config)
LDP_DIR = "results/ldp_indicators"
LDP_TABLES = LDP.tables
LDP_FIGURE_TITLES = LDP.figure_titles


wildcard_constraints:
    censoring=r"[0-9]+",
    n=r"[0-9]+",
    design=LDP.design_pattern(),
    mechanism=r"[a-z0-9_.]+",


STUDY_CLAIMS["ldp_indicators"] = [LDP.claims]
# The convergence study (n up to 4000) is the slowest part: its own target,
# `ldp_convergence`, so that `ldp_indicators` stays fast; `all` runs both.
STUDY_TARGETS["ldp_indicators"] = LDP.core_targets + LDP.convergence_targets


rule ldp_simulate:
    # one job per design and mechanism for every censoring at the study's n: a setting's
    # simulation costs about what a job's start-up does
    output:
        **LDP.simulate_outputs(),
    log:
        "results/logs/ldp_simulate/{design}_{mechanism}.log",
    benchmark:
        "results/benchmarks/ldp_simulate/{design}_{mechanism}.tsv"
    wildcard_constraints:
        design=LDP.design_pattern(convergence=False),
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=LDP.simulate_resources["mem_mb"],
        runtime=LDP.simulate_resources["runtime"],
    params:
        **LDP.job_params("ldp_simulate"),
        library_code=library_code("ldp_simulate.py"),
    script:
        "../../scripts/ldp_simulate.py"


rule ldp_simulate_convergence:
    # one job per mechanism for every n of the convergence study
    output:
        **LDP.convergence_outputs(),
    log:
        "results/logs/ldp_simulate_convergence/{mechanism}.log",
    benchmark:
        "results/benchmarks/ldp_simulate_convergence/{mechanism}.tsv"
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=LDP.convergence_resources["mem_mb"],
        runtime=LDP.convergence_resources["runtime"],
    params:
        **LDP.job_params("ldp_simulate_convergence"),
        library_code=library_code("ldp_simulate.py"),
    script:
        "../../scripts/ldp_simulate.py"


rule ldp_mse_table:
    input:
        estimates=LDP.estimates("main"),
    output:
        table=LDP_TABLES["mse"],
        prov=prov(LDP_TABLES["mse"]),
    log:
        "results/logs/ldp_mse_table/ldp_mse_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **LDP.job_params("ldp_mse_table", table="mse"),
        library_code=library_code("ldp_release_table.py"),
    script:
        "../../scripts/ldp_release_table.py"


rule ldp_claims:
    input:
        estimates=LDP.estimates("claims"),
    output:
        table=LDP.claims,
        prov=prov(LDP.claims),
    log:
        "results/logs/ldp_claims/ldp_claims.log",
    benchmark:
        "results/benchmarks/ldp_claims/ldp_claims.tsv"
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **LDP.job_params("ldp_claims"),
        library_code=library_code("ldp_claims.py"),
    script:
        "../../scripts/ldp_claims.py"


rule ldp_alpha_grid_table:
    input:
        estimates=LDP.estimates("grid"),
    output:
        table=LDP_TABLES["alpha_grid"],
        prov=prov(LDP_TABLES["alpha_grid"]),
    log:
        "results/logs/ldp_alpha_grid_table/ldp_alpha_grid_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **LDP.job_params("ldp_alpha_grid_table", table="alpha_grid"),
        library_code=library_code("ldp_release_table.py"),
    script:
        "../../scripts/ldp_release_table.py"


rule ldp_convergence_table:
    input:
        estimates=LDP.estimates("convergence"),
    output:
        table=LDP_TABLES["mse_vs_n"],
        rates=LDP_TABLES["rates"],
        prov=prov(LDP_TABLES["mse_vs_n"]),
        prov_rates=prov(LDP_TABLES["rates"]),
    log:
        "results/logs/ldp_convergence_table/ldp_convergence_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **LDP.job_params("ldp_convergence_table", table="convergence"),
        library_code=library_code("ldp_release_table.py"),
    script:
        "../../scripts/ldp_release_table.py"


rule ldp_variant_table:
    input:
        estimates=LDP.variant_inputs,
    output:
        table=f"{LDP_DIR}/tables/mse_{{variant}}.csv",
        prov=prov(f"{LDP_DIR}/tables/mse_{{variant}}.csv"),
    log:
        "results/logs/ldp_variant_table/{variant}.log",
    wildcard_constraints:
        variant="|".join(LDP.variants),
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **LDP.job_params("ldp_variant_table"),
        library_code=library_code("ldp_variant_table.py"),
    script:
        "../../scripts/ldp_variant_table.py"


rule ldp_hazard_table:
    input:
        estimates=LDP.estimates("main"),
    output:
        table=LDP_TABLES["hazard"],
        prov=prov(LDP_TABLES["hazard"]),
    log:
        "results/logs/ldp_hazard_table/ldp_hazard_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **LDP.job_params("ldp_hazard_table", table="hazard"),
        library_code=library_code("ldp_release_table.py"),
    script:
        "../../scripts/ldp_release_table.py"


rule ldp_clip_table:
    input:
        estimates=LDP.estimates("main"),
    output:
        table=LDP_TABLES["clip"],
        prov=prov(LDP_TABLES["clip"]),
    log:
        "results/logs/ldp_clip_table/ldp_clip_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **LDP.job_params("ldp_clip_table", table="clip"),
        library_code=library_code("ldp_release_table.py"),
    script:
        "../../scripts/ldp_release_table.py"


rule ldp_floor_table:
    input:
        mse=LDP_TABLES["mse"],
        hazard=LDP_TABLES["hazard"],
    output:
        table=LDP_TABLES["floor"],
        prov=prov(LDP_TABLES["floor"]),
    log:
        "results/logs/ldp_floor_table/ldp_floor_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        **LDP.job_params("ldp_floor_table"),
        library_code=library_code("ldp_floor_table.py"),
    script:
        "../../scripts/ldp_floor_table.py"


rule ldp_figure:
    input:
        unpack(LDP.figure_input),
    output:
        pdf=report(
            f"{LDP_DIR}/figures/{{figure}}.pdf",
            caption="../report/ldp_figure.rst",
            category=REPORT_SECTIONS["ldp_indicators"],
            subcategory=lambda wc: LDP_FIGURE_TITLES[wc.figure],
            labels=lambda wc: {
                "figure": LDP_FIGURE_TITLES[wc.figure],
                "format": "PDF",
            },
        ),
        png=report(
            f"{LDP_DIR}/figures/{{figure}}.png",
            caption="../report/ldp_figure.rst",
            category=REPORT_SECTIONS["ldp_indicators"],
            subcategory=lambda wc: LDP_FIGURE_TITLES[wc.figure],
            labels=lambda wc: {
                "figure": LDP_FIGURE_TITLES[wc.figure],
                "format": "PNG",
            },
        ),
        prov_pdf=prov(f"{LDP_DIR}/figures/{{figure}}.pdf"),
        prov_png=prov(f"{LDP_DIR}/figures/{{figure}}.png"),
    log:
        "results/logs/ldp_figure/{figure}.log",
    wildcard_constraints:
        figure="|".join(LDP.figure_inputs),
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **LDP.job_params("ldp_figure"),
        library_code=library_code("ldp_plot.py"),
    script:
        "../../scripts/ldp_plot.py"


rule ldp_indicators:
    input:
        LDP.core_targets,
    localrule: True


rule ldp_convergence:
    input:
        LDP.convergence_targets,
    localrule: True
