from dprepro.studies.rrr_survival import plan as rrr_plan  # noqa: E402
from dprepro.data.cohort_spec import cohort_config_problems  # noqa: E402
from dprepro.data.cohort_checks import check_cohort_tables  # noqa: E402
from dprepro.config.schema import ConfigError  # noqa: E402
from dprepro.figures.report_layout import ALL_COHORTS  # noqa: E402

RRR = config["rrr_survival"]
RRR_DIR = "results/rrr_survival"
RRR_RELEASE = "results/rrr_survival/releases/{dataset}"

# Every cohort the study names must be complete before any job runs.
if cohort_config_problems(config):
    raise ConfigError(
        "invalid configuration:\n  - " + "\n  - ".join(cohort_config_problems(config))
    )
# ... and every cohort table already on disk (file, bundled) must hold usable data.
RRR_TABLE_CHECK = check_cohort_tables(
    config, workflow_dir=workflow.basedir, working_dir=LAUNCH_DIR
)
for _warning in RRR_TABLE_CHECK.warnings:
    print(f"dprepro: warning: {_warning}", file=sys.stderr)
if RRR_TABLE_CHECK.problems:
    raise ConfigError(
        "cohort data not usable (nothing was run):\n  - "
        + "\n  - ".join(RRR_TABLE_CHECK.problems)
    )
RRR_COHORTS = rrr_plan.cohort_specs(config)
RRR_ALL = rrr_plan.releases(config)
RRR_LOGRANK = rrr_plan.releases(config, ("original", "rrr"))
# the releases whose curves the claims on the groups' curves read
RRR_CURVE_CLAIMS = [
    r
    for r in rrr_plan.releases(config, ("original", "rrr", "lnte"))
    if r["mechanism"] != "rrr" or r["calibration"] == RRR["calibration"]
]
# the non-private references (the original data, the noise-free grid discretisation) are
# computed by rrr_original, a reference rule; every other release by rrr_private_releases
RRR_REFERENCE_NAMES = list(rrr_plan.NO_EPSILON)
RRR_REFERENCE = rrr_plan.releases(config, RRR_REFERENCE_NAMES)
RRR_PRIVATE = rrr_plan.releases(
    config, [m for m in rrr_plan.MECHANISMS if m not in rrr_plan.NO_EPSILON]
)
# releases drawn many times (bands over draws, figure panels)
RRR_DRAWN = RRR_PRIVATE
# Figure 2 and the bands show RRR with the first configured calibration (the utility
# figure and the tables carry every calibration)
RRR_FIGURE_NAMES = list(
    dict.fromkeys(
        rrr_plan.release_name(r)
        for r in RRR_DRAWN
        if r["mechanism"] not in ("rrr", "rrr_debiased")
        or r["calibration"] == RRR["calibration"]
    )
)
# release folder names are the same for every dataset (mechanism and ε only)
RRR_PRIVATE_NAMES = list(dict.fromkeys(rrr_plan.release_name(r) for r in RRR_PRIVATE))
RRR_LOGRANK_NAMES = list(
    dict.fromkeys(
        rrr_plan.release_name(r) for r in RRR_LOGRANK if r["mechanism"] != "original"
    )
)
RRR_PRIVATE_FILES = [
    f"{RRR_RELEASE}/{name}/{file}"
    for name in RRR_PRIVATE_NAMES
    for file in ("medians.csv", "curves.parquet")
] + [f"{RRR_RELEASE}/{name}/logrank.csv" for name in RRR_LOGRANK_NAMES]
# the files of a cohort's non-private references (rrr_original)
RRR_REFERENCE_FILES = [
    f"{RRR_RELEASE}/{name}/{file}"
    for name in RRR_REFERENCE_NAMES
    for file in ("medians.csv", "curves.parquet")
] + [
    f"{RRR_RELEASE}/original/{file}" for file in ("logrank.csv", "logrank_permuted.csv")
]
RRR_ORIGIN = ",".join(sorted({spec.origin for spec in RRR_COHORTS.values()}))
RRR_FIGURE_PARAMS = {
    "epsilons": RRR["epsilons"],
    "cohorts": {d: rrr_plan.cohort_params(s) for d, s in RRR_COHORTS.items()},
    "dpi": config["figures"]["dpi"],
}
# Figure 2 of one cohort: the composite as PDF and PNG, each single panel as PNG only (a
# PDF of every panel cost about a quarter of the figure job's CPU)
RRR_FIGURE2_FILES = [
    f"{RRR_DIR}/figures/figure2_{{dataset}}.{ext}" for ext in ("pdf", "png")
] + [
    f"{RRR_DIR}/figures/figure2_{{dataset}}_{name}.png"
    for name in ["original", *RRR_FIGURE_NAMES]
]
RRR_FIGURE2 = [
    path.format(dataset=d) for d in RRR["datasets"] for path in RRR_FIGURE2_FILES
]
RRR_BANDS_FILES = [
    f"{RRR_DIR}/figures/km_bands_{{dataset}}.{ext}" for ext in ("pdf", "png")
]
RRR_BANDS = [
    path.format(dataset=d) for d in RRR["datasets"] for path in RRR_BANDS_FILES
]
# the parameters of one cohort's figure job (wildcard dataset): that cohort's only, so
# adding or changing another cohort does not rerun it
RRR_COHORT_FIGURE_PARAMS = {
    "datasets": lambda wc: [wc.dataset],
    "epsilons": RRR["epsilons"],
    "cohorts": lambda wc: {wc.dataset: rrr_plan.cohort_params(RRR_COHORTS[wc.dataset])},
    "dpi": config["figures"]["dpi"],
    "figure_dir": lambda wildcards, output: os.path.dirname(output[0]),
    "data_origin": lambda wc: RRR_COHORTS[wc.dataset].origin,
}


RRR_UTILITY = [f"{RRR_DIR}/figures/utility.{ext}" for ext in ("pdf", "png")]
RRR_TABLES = {
    name: f"{RRR_DIR}/tables/{name}.csv"
    for name in (
        "median_survival",
        "pairwise_logrank",
        "logrank_rejection_rate",
        "utility",
        "km_bands",
        "km_curves",
    )
}
RRR_CLAIMS = f"{RRR_DIR}/tables/claims.csv"
# per release, draw and group: the sup-distances behind utility.csv, which the claims read
RRR_DISTANCES = f"{RRR_DIR}/scores/sup_distances.parquet"
STUDY_CLAIMS["rrr_survival"] = [RRR_CLAIMS]
STUDY_TARGETS["rrr_survival"] = [
    *RRR_TABLES.values(),
    RRR_CLAIMS,
    *RRR_FIGURE2,
    *RRR_BANDS,
    *RRR_UTILITY,
]
# Cox regression on the released group (beyond the paper): the study's cohorts and the
# Cox-only ones (rrr_survival.cox.extra_datasets, e.g. simulations with known hazard ratios)
RRR_COX = RRR["cox"]
RRR_COX_COHORTS = rrr_plan.cox_specs(config)
RRR_COX_FITS = "results/rrr_survival/cox/{dataset}/fits.parquet"
RRR_COX_TABLE = f"{RRR_DIR}/tables/cox.csv"
RRR_COX_DRAWS = f"{RRR_DIR}/tables/cox_draws.parquet"
RRR_COX_FOREST = f"{RRR_DIR}/figures/cox_forest_{{dataset}}.{{ext}}"
RRR_COX_BIAS = [f"{RRR_DIR}/figures/cox_bias_coverage.{ext}" for ext in ("pdf", "png")]
RRR_COX_PARAMS = {
    "groups": {d: list(s.groups) for d, s in RRR_COX_COHORTS.items()},
    "privacy_unit": {d: s.privacy_unit for d, s in RRR_COX_COHORTS.items()},
    "data_origin": {d: s.origin for d, s in RRR_COX_COHORTS.items()},
}
STUDY_TARGETS["rrr_survival"] += [
    RRR_COX_TABLE,
    RRR_COX_DRAWS,
    *expand(RRR_COX_FOREST, dataset=list(RRR_COX_COHORTS), ext=("pdf", "png")),
    *RRR_COX_BIAS,
]


# the non-private references of one cohort (the original data, the noise-free grid
# discretisation): one job per cohort, so that a fault in one cohort's data removes only that
# cohort's files (Snakemake deletes every output of a failed job)
rule rrr_original:
    input:
        cohorts=["results/data/cohorts/{dataset}.parquet"],
    output:
        medians=[f"{RRR_RELEASE}/{name}/medians.csv" for name in RRR_REFERENCE_NAMES],
        curves=[f"{RRR_RELEASE}/{name}/curves.parquet" for name in RRR_REFERENCE_NAMES],
        logrank=f"{RRR_RELEASE}/original/logrank.csv",
        # the same tests with labels permuted among persons: the ε = 0 reference
        logrank_permuted=f"{RRR_RELEASE}/original/logrank_permuted.csv",
        prov=[prov(path) for path in RRR_REFERENCE_FILES],
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
        library_code=library_code("rrr_analyse.py"),
        datasets=lambda wc: [wc.dataset],
        releases=lambda wc: [r for r in RRR_REFERENCE if r["dataset"] == wc.dataset],
        # the original is analysed once; draws = the permuted-label reference's draws
        draws=RRR["draws"],
        seed=config["seed"],
        groups=lambda wc: {wc.dataset: list(RRR_COHORTS[wc.dataset].groups)},
        privacy_unit=lambda wc: {wc.dataset: RRR_COHORTS[wc.dataset].privacy_unit},
    script:
        "../../scripts/rrr_analyse.py"


rule rrr_private_releases:
    input:
        cohorts=["results/data/cohorts/{dataset}.parquet"],
    output:
        medians=[f"{RRR_RELEASE}/{name}/medians.csv" for name in RRR_PRIVATE_NAMES],
        curves=[f"{RRR_RELEASE}/{name}/curves.parquet" for name in RRR_PRIVATE_NAMES],
        logrank=[f"{RRR_RELEASE}/{name}/logrank.csv" for name in RRR_LOGRANK_NAMES],
        prov=[prov(path) for path in RRR_PRIVATE_FILES],
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
        library_code=library_code("rrr_analyse.py"),
        datasets=lambda wc: [wc.dataset],
        releases=lambda wc: [r for r in RRR_PRIVATE if r["dataset"] == wc.dataset],
        draws=RRR["draws"],
        seed=config["seed"],
        groups=lambda wc: {wc.dataset: list(RRR_COHORTS[wc.dataset].groups)},
        privacy_unit=lambda wc: {wc.dataset: RRR_COHORTS[wc.dataset].privacy_unit},
    script:
        "../../scripts/rrr_analyse.py"


rule rrr_median_table:
    input:
        medians=rrr_plan.release_files(RRR_ALL, "medians.csv"),
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
        library_code=library_code("rrr_tables.py"),
        table="median_survival",
        options={
            "releases": RRR_ALL,
        },
    script:
        "../../scripts/rrr_tables.py"


rule rrr_logrank_table:
    input:
        medians=rrr_plan.release_files(RRR_ALL, "medians.csv"),
        logrank=rrr_plan.release_files(RRR_LOGRANK, "logrank.csv"),
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
        library_code=library_code("rrr_tables.py"),
        table="pairwise_logrank",
        options={
            "releases": RRR_ALL,
            "logrank_releases": RRR_LOGRANK,
        },
    script:
        "../../scripts/rrr_tables.py"


rule rrr_rejection_table:
    input:
        medians=rrr_plan.release_files(RRR_ALL, "medians.csv"),
        logrank=rrr_plan.release_files(RRR_LOGRANK, "logrank.csv"),
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
        library_code=library_code("rrr_tables.py"),
        table="logrank_rejection_rate",
        options={
            "releases": RRR_ALL,
            "logrank_releases": RRR_LOGRANK,
            "significance": RRR["significance"],
        },
    script:
        "../../scripts/rrr_tables.py"


rule rrr_utility_table:
    input:
        medians=rrr_plan.release_files(RRR_ALL, "medians.csv"),
        curves=rrr_plan.release_files(RRR_ALL, "curves.parquet"),
    output:
        table=RRR_TABLES["utility"],
        distances=RRR_DISTANCES,
        prov=[prov(RRR_TABLES["utility"]), prov(RRR_DISTANCES)],
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
        library_code=library_code("rrr_tables.py"),
        table="utility",
        options={
            "releases": RRR_ALL,
        },
    script:
        "../../scripts/rrr_tables.py"


rule rrr_bands_table:
    input:
        medians=rrr_plan.release_files(RRR_DRAWN, "medians.csv"),
        curves=rrr_plan.release_files(RRR_DRAWN, "curves.parquet"),
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
        library_code=library_code("rrr_tables.py"),
        table="km_bands",
        options={
            "releases": RRR_DRAWN,
            "band_level": RRR["band_level"],
            # quantiles over this many draws: a reference, not a release
            "draws": RRR["draws"],
        },
    script:
        "../../scripts/rrr_tables.py"


rule rrr_curves_table:
    input:
        medians=rrr_plan.release_files(RRR_ALL, "medians.csv"),
        curves=rrr_plan.release_files(RRR_ALL, "curves.parquet"),
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
        library_code=library_code("rrr_tables.py"),
        table="km_curves",
        options={
            "releases": RRR_ALL,
        },
    script:
        "../../scripts/rrr_tables.py"


rule rrr_claims_table:
    input:
        medians=rrr_plan.release_files(RRR_ALL, "medians.csv"),
        # the curves' sup-distances, computed once by the utility table's job
        distances=RRR_DISTANCES,
        logrank=rrr_plan.release_files(RRR_LOGRANK, "logrank.csv"),
        permuted=rrr_plan.release_files(
            [r for r in RRR_ALL if r["mechanism"] == "original"],
            "logrank_permuted.csv",
        ),
        # the claims on the groups' curves (separation, LNTE's restarts)
        group_curves=rrr_plan.release_files(RRR_CURVE_CLAIMS, "curves.parquet"),
        # the Cox claims
        cox=RRR_COX_TABLE,
        cox_draws=RRR_COX_DRAWS,
    output:
        table=RRR_CLAIMS,
        prov=prov(RRR_CLAIMS),
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
        library_code=library_code("rrr_claims.py"),
        releases=RRR_ALL,
        logrank_releases=RRR_LOGRANK,
        significance=RRR["significance"],
        seed=config["seed"],
        clustered=[d for d, s in RRR_COHORTS.items() if s.rows_per_person > 1],
        curve_releases=RRR_CURVE_CLAIMS,
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
        **RRR_COHORT_FIGURE_PARAMS,
        library_code=library_code("rrr_plot.py"),
        figure="figure2",
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
        **RRR_COHORT_FIGURE_PARAMS,
        # the bands are quantiles over this many draws of each mechanism
        library_code=library_code("rrr_plot.py"),
        figure="km_bands",
        draws=RRR["draws"],
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
        **RRR_FIGURE_PARAMS,
        library_code=library_code("rrr_plot.py"),
        datasets=RRR["datasets"],
        figure="utility",
        figure_dir=lambda wildcards, output: os.path.dirname(output[0]),
        data_origin=RRR_ORIGIN,
    script:
        "../../scripts/rrr_plot.py"


# Cox fits of one cohort: the original (reference) and every estimator on every RRR release
# (the releases' own label draws, regenerated from their streams), all draws
rule rrr_cox:
    input:
        cohort="results/data/cohorts/{dataset}.parquet",
    output:
        fits=RRR_COX_FITS,
        prov=prov(RRR_COX_FITS),
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
        library_code=library_code("rrr_cox.py"),
        groups=lambda wc: list(RRR_COX_COHORTS[wc.dataset].groups),
        covariates=lambda wc: list(RRR_COX_COHORTS[wc.dataset].covariates),
        releases=rrr_plan.cox_releases(config),
        draws=RRR["draws"],
        seed=config["seed"],
        estimators=RRR_COX["estimators"],
        simex_replicates=RRR_COX["simex_replicates"],
        lambdas=RRR_COX["lambdas"],
        tau_at_risk=RRR_COX["tau_at_risk"],
        clustered=lambda wc: RRR_COX_COHORTS[wc.dataset].rows_per_person > 1,
        privacy_unit=lambda wc: RRR_COX_COHORTS[wc.dataset].privacy_unit,
        data_origin=lambda wc: RRR_COX_COHORTS[wc.dataset].origin,
    script:
        "../../scripts/rrr_cox.py"


rule rrr_cox_table:
    input:
        fits=expand(RRR_COX_FITS, dataset=list(RRR_COX_COHORTS)),
    output:
        table=RRR_COX_TABLE,
        draws=RRR_COX_DRAWS,
        prov=[prov(RRR_COX_TABLE), prov(RRR_COX_DRAWS)],
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
        **RRR_COX_PARAMS,
        library_code=library_code("rrr_cox_table.py"),
        true_log_hr={
            d: {
                f"{g} vs {s.groups[0]}": v for g, v in s.true_log_hazard_ratios.items()
            }
            for d, s in RRR_COX_COHORTS.items()
            if s.true_log_hazard_ratios
        },
    script:
        "../../scripts/rrr_cox_table.py"


rule rrr_cox_forest_figure:
    input:
        table=RRR_COX_TABLE,
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
        **RRR_COX_PARAMS,
        library_code=library_code("rrr_cox_plot.py"),
        figure="forest",
        calibration=RRR["calibration"],
        titles={d: s.display_title for d, s in RRR_COX_COHORTS.items()},
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/rrr_cox_plot.py"


rule rrr_cox_bias_coverage_figure:
    input:
        table=RRR_COX_TABLE,
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
        **RRR_COX_PARAMS,
        library_code=library_code("rrr_cox_plot.py"),
        figure="bias_coverage",
        calibration=RRR["calibration"],
        titles={d: s.display_title for d, s in RRR_COX_COHORTS.items()},
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/rrr_cox_plot.py"


rule rrr_survival:
    input:
        STUDY_TARGETS["rrr_survival"],
    localrule: True
