from dprepro.studies.rrr_survival import plan as rrr_plan  # noqa: E402
from dprepro.studies.rrr_survival import jobs as rrr_jobs  # noqa: E402
from dprepro.studies.rrr_survival.jobs import StudyPlan, cohort_problems  # noqa: E402
from dprepro.config.schema import ConfigError  # noqa: E402
from dprepro.figures.report_layout import ALL_COHORTS  # noqa: E402

# The study's files and each job's plan (dprepro.studies.rrr_survival.jobs): the rules'
# params carry a digest of it (plan_sha256), the steps rebuild it from the configuration.
RRR = StudyPlan(config)
# Every cohort the study names must be complete, and every cohort table already on disk
# usable, before any job runs.
RRR_PROBLEMS, RRR_WARNINGS = cohort_problems(config, workflow.basedir, LAUNCH_DIR)
for _warning in RRR_WARNINGS:
    print(f"dprepro: warning: {_warning}", file=sys.stderr)
if RRR_PROBLEMS:
    raise ConfigError(RRR_PROBLEMS[0])
RRR_RELEASE = rrr_jobs.RELEASE
RRR_COHORTS = RRR.cohorts
RRR_COX_COHORTS = RRR.cox_cohorts
RRR_FIGURE2_FILES = RRR.figure2_files
RRR_BANDS_FILES = RRR.bands_files
RRR_UTILITY = RRR.utility_files
RRR_TABLES = RRR.tables
RRR_COX_FOREST = RRR.cox_forest
RRR_COX_BIAS = RRR.cox_bias
STUDY_CLAIMS["rrr_survival"] = [RRR.claims]
STUDY_TARGETS["rrr_survival"] = RRR.targets


# the non-private references of one cohort (the original data, the noise-free grid
# discretisation): one job per cohort, so that a fault in one cohort's data removes only that
# cohort's files (Snakemake deletes every output of a failed job)
rule rrr_original:
    input:
        cohorts=["results/data/cohorts/{dataset}.parquet"],
    output:
        medians=RRR.outputs(RRR.reference_names, "medians.csv"),
        curves=RRR.outputs(RRR.reference_names, "curves.parquet"),
        logrank=f"{RRR_RELEASE}/original/logrank.csv",
        # the same tests with labels permuted among persons: the ε = 0 reference
        logrank_permuted=f"{RRR_RELEASE}/original/logrank_permuted.csv",
        prov=[prov(path) for path in RRR.reference_files],
    log:
        "results/logs/rrr_original/{dataset}.log",
    benchmark:
        "results/benchmarks/rrr_original/{dataset}.tsv"
    # the curves table (then Figure 2, the longest job) waits on it, as on the releases
    priority: 60
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        **RRR.job_params("rrr_original"),
        library_code=library_code("rrr_analyse.py"),
    script:
        "../../scripts/rrr_analyse.py"


rule rrr_private_releases:
    input:
        cohorts=["results/data/cohorts/{dataset}.parquet"],
    output:
        medians=RRR.outputs(RRR.private_names, "medians.csv"),
        curves=RRR.outputs(RRR.private_names, "curves.parquet"),
        logrank=RRR.outputs(RRR.logrank_names, "logrank.csv"),
        prov=[prov(path) for path in RRR.private_files],
    log:
        "results/logs/rrr_private_releases/{dataset}.log",
    benchmark:
        "results/benchmarks/rrr_private_releases/{dataset}.tsv"
    # every table waits on all releases: start each as soon as its cohort exists (the
    # largest cohort's takes longest), before the other cohorts' loading
    priority: 60
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        **RRR.job_params("rrr_private_releases"),
        library_code=library_code("rrr_analyse.py"),
    script:
        "../../scripts/rrr_analyse.py"


rule rrr_median_table:
    input:
        medians=RRR.release_files("all", "medians.csv"),
    output:
        table=RRR_TABLES["median_survival"],
        prov=prov(RRR_TABLES["median_survival"]),
    log:
        "results/logs/rrr_median_table/rrr_median_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **RRR.job_params("rrr_median_table", table="median_survival"),
        library_code=library_code("rrr_tables.py"),
    script:
        "../../scripts/rrr_tables.py"


rule rrr_logrank_table:
    input:
        medians=RRR.release_files("all", "medians.csv"),
        logrank=RRR.release_files("logrank", "logrank.csv"),
    output:
        table=RRR_TABLES["pairwise_logrank"],
        prov=prov(RRR_TABLES["pairwise_logrank"]),
    log:
        "results/logs/rrr_logrank_table/rrr_logrank_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **RRR.job_params("rrr_logrank_table", table="pairwise_logrank"),
        library_code=library_code("rrr_tables.py"),
    script:
        "../../scripts/rrr_tables.py"


rule rrr_rejection_table:
    input:
        medians=RRR.release_files("all", "medians.csv"),
        logrank=RRR.release_files("logrank", "logrank.csv"),
    output:
        table=RRR_TABLES["logrank_rejection_rate"],
        prov=prov(RRR_TABLES["logrank_rejection_rate"]),
    log:
        "results/logs/rrr_rejection_table/rrr_rejection_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **RRR.job_params("rrr_rejection_table", table="logrank_rejection_rate"),
        library_code=library_code("rrr_tables.py"),
    script:
        "../../scripts/rrr_tables.py"


rule rrr_utility_table:
    input:
        medians=RRR.release_files("all", "medians.csv"),
        curves=RRR.release_files("all", "curves.parquet"),
    output:
        table=RRR_TABLES["utility"],
        distances=RRR.distances,
        prov=[prov(RRR_TABLES["utility"]), prov(RRR.distances)],
    log:
        "results/logs/rrr_utility_table/rrr_utility_table.log",
    # feeds the claims and the utility figure: beside Figure 2, not after the figures
    priority: 45
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        **RRR.job_params("rrr_utility_table", table="utility"),
        library_code=library_code("rrr_tables.py"),
    script:
        "../../scripts/rrr_tables.py"


rule rrr_bands_table:
    input:
        medians=RRR.release_files("private", "medians.csv"),
        curves=RRR.release_files("private", "curves.parquet"),
    output:
        table=RRR_TABLES["km_bands"],
        prov=prov(RRR_TABLES["km_bands"]),
    log:
        "results/logs/rrr_bands_table/rrr_bands_table.log",
    # then the bands table and figure, beside Figure 2
    priority: 40
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        **RRR.job_params("rrr_bands_table", table="km_bands"),
        library_code=library_code("rrr_tables.py"),
    script:
        "../../scripts/rrr_tables.py"


rule rrr_curves_table:
    input:
        medians=RRR.release_files("all", "medians.csv"),
        curves=RRR.release_files("all", "curves.parquet"),
    output:
        table=RRR_TABLES["km_curves"],
        prov=prov(RRR_TABLES["km_curves"]),
    log:
        "results/logs/rrr_curves_table/rrr_curves_table.log",
    # Figure 2 waits on this table and is the longest job: start it first
    priority: 50
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **RRR.job_params("rrr_curves_table", table="km_curves"),
        library_code=library_code("rrr_tables.py"),
    script:
        "../../scripts/rrr_tables.py"


rule rrr_claims_table:
    input:
        medians=RRR.release_files("all", "medians.csv"),
        # the curves' sup-distances, computed once by the utility table's job
        distances=RRR.distances,
        logrank=RRR.release_files("logrank", "logrank.csv"),
        permuted=RRR.release_files("original", "logrank_permuted.csv"),
        # the claims on the groups' curves (separation, LNTE's restarts)
        group_curves=RRR.release_files("curve_claims", "curves.parquet"),
        # the Cox claims
        cox=RRR.cox_table,
        cox_draws=RRR.cox_draws,
    output:
        table=RRR.claims,
        prov=prov(RRR.claims),
    log:
        "results/logs/rrr_claims_table/rrr_claims_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        **RRR.job_params("rrr_claims_table"),
        library_code=library_code("rrr_claims.py"),
    script:
        "../../scripts/rrr_claims.py"


# one job per cohort and figure: a job of every cohort cost less (one start-up, imports and
# read of the aggregated table, about 2 CPU-s, instead of one per cohort), but a fault in
# one cohort's figure deleted every cohort's files of the job (Snakemake removes every
# output of a failed job)
rule rrr_figure2:
    input:
        curves=RRR_TABLES["km_curves"],
    output:
        [
            report(
                path,
                caption="../report/rrr_figure2.rst",
                **rrr_plan.cohort_report_flags(
                    path, RRR_COHORTS, REPORT_SECTIONS["rrr_survival"]
                ),
            )
            for path in RRR_FIGURE2_FILES
        ],
        [prov(path) for path in RRR_FIGURE2_FILES],
    log:
        "results/logs/rrr_figure2/{dataset}.log",
    benchmark:
        "results/benchmarks/rrr_figure2/{dataset}.tsv"
    # the longest job: start it as soon as its table exists
    priority: 50
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        **RRR.job_params("rrr_figure2", figure="figure2"),
        library_code=library_code("rrr_plot.py"),
    script:
        "../../scripts/rrr_plot.py"


rule rrr_km_bands:
    input:
        bands=RRR_TABLES["km_bands"],
        curves=RRR_TABLES["km_curves"],
    output:
        [
            report(
                path,
                caption="../report/rrr_km_bands.rst",
                **rrr_plan.cohort_report_flags(
                    path, RRR_COHORTS, REPORT_SECTIONS["rrr_survival"]
                ),
            )
            for path in RRR_BANDS_FILES
        ],
        [prov(path) for path in RRR_BANDS_FILES],
    log:
        "results/logs/rrr_km_bands/{dataset}.log",
    benchmark:
        "results/benchmarks/rrr_km_bands/{dataset}.tsv"
    # beside Figure 2
    priority: 40
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **RRR.job_params("rrr_km_bands", figure="km_bands"),
        library_code=library_code("rrr_plot.py"),
    script:
        "../../scripts/rrr_plot.py"


rule rrr_utility:
    input:
        utility=RRR_TABLES["utility"],
    output:
        [
            report(
                path,
                caption="../report/rrr_utility.rst",
                category=REPORT_SECTIONS["rrr_survival"],
                subcategory=ALL_COHORTS,
                labels=rrr_plan.report_labels(path),
            )
            for path in RRR_UTILITY
        ],
        [prov(path) for path in RRR_UTILITY],
    log:
        "results/logs/rrr_utility/rrr_utility.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **RRR.job_params("rrr_utility", figure="utility"),
        library_code=library_code("rrr_plot.py"),
    script:
        "../../scripts/rrr_plot.py"


# Cox fits of one cohort: the original (reference) and every estimator on every RRR release
# (the releases' own label draws, regenerated from their streams), all draws
rule rrr_cox:
    input:
        cohort="results/data/cohorts/{dataset}.parquet",
    output:
        fits=RRR.cox_fits,
        prov=prov(RRR.cox_fits),
    log:
        "results/logs/rrr_cox/{dataset}.log",
    benchmark:
        "results/benchmarks/rrr_cox/{dataset}.tsv"
    priority: 45
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        **RRR.job_params("rrr_cox"),
        library_code=library_code("rrr_cox.py"),
    script:
        "../../scripts/rrr_cox.py"


rule rrr_cox_table:
    input:
        fits=expand(RRR.cox_fits, dataset=list(RRR.cox_cohorts)),
    output:
        table=RRR.cox_table,
        draws=RRR.cox_draws,
        prov=[prov(RRR.cox_table), prov(RRR.cox_draws)],
    log:
        "results/logs/rrr_cox_table/rrr_cox_table.log",
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **RRR.job_params("rrr_cox_table"),
        library_code=library_code("rrr_cox_table.py"),
    script:
        "../../scripts/rrr_cox_table.py"


rule rrr_cox_forest_figure:
    input:
        table=RRR.cox_table,
    output:
        figure=[
            report(
                path,
                caption="../report/rrr_cox.rst",
                **rrr_plan.cohort_report_flags(
                    path, RRR_COX_COHORTS, REPORT_SECTIONS["rrr_survival"]
                ),
            )
            for path in expand(RRR_COX_FOREST, ext=("pdf", "png"), allow_missing=True)
        ],
        prov=[
            prov(path)
            for path in expand(RRR_COX_FOREST, ext=("pdf", "png"), allow_missing=True)
        ],
    log:
        "results/logs/rrr_cox_forest_figure/{dataset}.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **RRR.job_params("rrr_cox_forest_figure", figure="forest"),
        library_code=library_code("rrr_cox_plot.py"),
    script:
        "../../scripts/rrr_cox_plot.py"


rule rrr_cox_bias_coverage_figure:
    input:
        table=RRR.cox_table,
    output:
        figure=[
            report(
                path,
                caption="../report/rrr_cox.rst",
                category=REPORT_SECTIONS["rrr_survival"],
                subcategory=ALL_COHORTS,
                labels=rrr_plan.report_labels(path),
            )
            for path in RRR_COX_BIAS
        ],
        prov=[prov(path) for path in RRR_COX_BIAS],
    log:
        "results/logs/rrr_cox_bias_coverage_figure/rrr_cox_bias_coverage_figure.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **RRR.job_params("rrr_cox_bias_coverage_figure", figure="bias_coverage"),
        library_code=library_code("rrr_cox_plot.py"),
    script:
        "../../scripts/rrr_cox_plot.py"


rule rrr_survival:
    input:
        STUDY_TARGETS["rrr_survival"],
    localrule: True
