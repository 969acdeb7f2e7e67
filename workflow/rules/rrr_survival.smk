RRR = config["rrr_survival"]
RRR_DIR = "results/rrr_survival"
RRR_ALL = rrr_releases()
RRR_LOGRANK = rrr_releases(("original", "rrr"))
RRR_PRIVATE = rrr_releases(("rrr", "lnte"))
RRR_ORIGIN = ",".join(sorted({dataset_origin(d) for d in RRR["datasets"]}))
RRR_PANELS = "abcdefghijklmnopqrstuvwxyz"[: 1 + 2 * len(RRR["epsilons"])]
RRR_FIGURE2 = [
    f"{RRR_DIR}/figures/figure2_{d}{suffix}.{ext}"
    for d in RRR["datasets"]
    for suffix in [""] + [f"_{letter}" for letter in RRR_PANELS]
    for ext in ("pdf", "png")
]
RRR_BANDS = [
    f"{RRR_DIR}/figures/km_bands_{d}.{ext}"
    for d in RRR["datasets"]
    for ext in ("pdf", "png")
]
RRR_UTILITY = [f"{RRR_DIR}/figures/utility.{ext}" for ext in ("pdf", "png")]
RRR_TABLES = {
    kind: f"{RRR_DIR}/tables/{name}.csv"
    for kind, name in [
        ("medians", "median_survival"),
        ("logrank", "pairwise_logrank"),
        ("rejection", "logrank_rejection_rate"),
        ("utility", "utility"),
        ("bands", "km_bands"),
        ("curves", "km_curves"),
    ]
}
STUDY_TARGETS["rrr_survival"] = [
    *RRR_TABLES.values(),
    *RRR_FIGURE2,
    *RRR_BANDS,
    *RRR_UTILITY,
]
RRR_RELEASE = "results/rrr_survival/releases/{dataset}"


rule rrr_original:
    input:
        cohort="results/data/cohorts/{dataset}.parquet",
    output:
        medians=f"{RRR_RELEASE}/original/medians.csv",
        logrank=f"{RRR_RELEASE}/original/logrank.csv",
        curves=f"{RRR_RELEASE}/original/curves.parquet",
        prov_medians=prov(f"{RRR_RELEASE}/original/medians.csv"),
        prov_logrank=prov(f"{RRR_RELEASE}/original/logrank.csv"),
        prov_curves=prov(f"{RRR_RELEASE}/original/curves.parquet"),
    log:
        "results/logs/rrr_original/{dataset}.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        mechanism="original",
        grid_points=RRR["grid_points"],
    script:
        "../../scripts/rrr_analyse.py"


rule rrr_release:
    input:
        cohort="results/data/cohorts/{dataset}.parquet",
    output:
        medians=f"{RRR_RELEASE}/rrr_eps{{epsilon}}/medians.csv",
        logrank=f"{RRR_RELEASE}/rrr_eps{{epsilon}}/logrank.csv",
        curves=f"{RRR_RELEASE}/rrr_eps{{epsilon}}/curves.parquet",
        prov_medians=prov(f"{RRR_RELEASE}/rrr_eps{{epsilon}}/medians.csv"),
        prov_logrank=prov(f"{RRR_RELEASE}/rrr_eps{{epsilon}}/logrank.csv"),
        prov_curves=prov(f"{RRR_RELEASE}/rrr_eps{{epsilon}}/curves.parquet"),
    log:
        "results/logs/rrr_release/{dataset}_eps{epsilon}.log",
    benchmark:
        "results/benchmarks/rrr_release/{dataset}_eps{epsilon}.tsv"
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        mechanism="rrr",
        calibration=RRR["calibration"],
        draws=RRR["draws"],
        grid_points=RRR["grid_points"],
        seed=config["seed"],
    script:
        "../../scripts/rrr_analyse.py"


rule lnte_release:
    input:
        cohort="results/data/cohorts/{dataset}.parquet",
    output:
        medians=f"{RRR_RELEASE}/lnte_eps{{epsilon}}/medians.csv",
        curves=f"{RRR_RELEASE}/lnte_eps{{epsilon}}/curves.parquet",
        prov_medians=prov(f"{RRR_RELEASE}/lnte_eps{{epsilon}}/medians.csv"),
        prov_curves=prov(f"{RRR_RELEASE}/lnte_eps{{epsilon}}/curves.parquet"),
    log:
        "results/logs/lnte_release/{dataset}_eps{epsilon}.log",
    benchmark:
        "results/benchmarks/lnte_release/{dataset}_eps{epsilon}.tsv"
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        mechanism="lnte",
        calibration="",
        draws=RRR["draws"],
        grid_points=RRR["grid_points"],
        seed=config["seed"],
    script:
        "../../scripts/rrr_analyse.py"


rule rrr_median_table:
    input:
        medians=rrr_release_files(RRR_ALL, "medians.csv"),
    output:
        table=RRR_TABLES["medians"],
        prov=prov(RRR_TABLES["medians"]),
    log:
        "results/logs/rrr_median_table/rrr_median_table.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="medians",
        releases=RRR_ALL,
    script:
        "../../scripts/rrr_tables.py"


rule rrr_logrank_table:
    input:
        medians=rrr_release_files(RRR_ALL, "medians.csv"),
        logrank=rrr_release_files(RRR_LOGRANK, "logrank.csv"),
    output:
        table=RRR_TABLES["logrank"],
        prov=prov(RRR_TABLES["logrank"]),
    log:
        "results/logs/rrr_logrank_table/rrr_logrank_table.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="logrank",
        releases=RRR_ALL,
        logrank_releases=RRR_LOGRANK,
    script:
        "../../scripts/rrr_tables.py"


rule rrr_rejection_table:
    input:
        medians=rrr_release_files(RRR_ALL, "medians.csv"),
        logrank=rrr_release_files(RRR_LOGRANK, "logrank.csv"),
    output:
        table=RRR_TABLES["rejection"],
        prov=prov(RRR_TABLES["rejection"]),
    log:
        "results/logs/rrr_rejection_table/rrr_rejection_table.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="rejection",
        releases=RRR_ALL,
        logrank_releases=RRR_LOGRANK,
        significance=RRR["significance"],
    script:
        "../../scripts/rrr_tables.py"


rule rrr_utility_table:
    input:
        medians=rrr_release_files(RRR_ALL, "medians.csv"),
        curves=rrr_release_files(RRR_ALL, "curves.parquet"),
    output:
        table=RRR_TABLES["utility"],
        prov=prov(RRR_TABLES["utility"]),
    log:
        "results/logs/rrr_utility_table/rrr_utility_table.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        kind="utility",
        releases=RRR_ALL,
    script:
        "../../scripts/rrr_tables.py"


rule rrr_bands_table:
    input:
        medians=rrr_release_files(RRR_PRIVATE, "medians.csv"),
        curves=rrr_release_files(RRR_PRIVATE, "curves.parquet"),
    output:
        table=RRR_TABLES["bands"],
        prov=prov(RRR_TABLES["bands"]),
    log:
        "results/logs/rrr_bands_table/rrr_bands_table.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        kind="bands",
        releases=RRR_PRIVATE,
        band_level=RRR["band_level"],
    script:
        "../../scripts/rrr_tables.py"


rule rrr_curves_table:
    input:
        medians=rrr_release_files(RRR_ALL, "medians.csv"),
        curves=rrr_release_files(RRR_ALL, "curves.parquet"),
    output:
        table=RRR_TABLES["curves"],
        prov=prov(RRR_TABLES["curves"]),
    log:
        "results/logs/rrr_curves_table/rrr_curves_table.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="curves",
        releases=RRR_ALL,
    script:
        "../../scripts/rrr_tables.py"


rule rrr_figure2:
    input:
        curves=RRR_TABLES["curves"],
    output:
        report(
            RRR_FIGURE2,
            caption="../report/rrr_figure2.rst",
            category="rrr_survival",
        ),
        [prov(path) for path in RRR_FIGURE2],
    log:
        "results/logs/rrr_figure2/rrr_figure2.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        kind="figure2",
        datasets=RRR["datasets"],
        epsilons=RRR["epsilons"],
        figure_dir=lambda wildcards, output: os.path.dirname(output[0]),
        dpi=config["figures"]["dpi"],
        data_origin=RRR_ORIGIN,
    script:
        "../../scripts/rrr_plot.py"


rule rrr_km_bands:
    input:
        bands=RRR_TABLES["bands"],
        curves=RRR_TABLES["curves"],
    output:
        report(
            RRR_BANDS,
            caption="../report/rrr_km_bands.rst",
            category="rrr_survival",
        ),
        [prov(path) for path in RRR_BANDS],
    log:
        "results/logs/rrr_km_bands/rrr_km_bands.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        kind="bands",
        datasets=RRR["datasets"],
        epsilons=RRR["epsilons"],
        figure_dir=lambda wildcards, output: os.path.dirname(output[0]),
        dpi=config["figures"]["dpi"],
        data_origin=RRR_ORIGIN,
    script:
        "../../scripts/rrr_plot.py"


rule rrr_utility:
    input:
        utility=RRR_TABLES["utility"],
    output:
        report(
            RRR_UTILITY,
            caption="../report/rrr_utility.rst",
            category="rrr_survival",
        ),
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
        kind="utility",
        datasets=RRR["datasets"],
        epsilons=RRR["epsilons"],
        figure_dir=lambda wildcards, output: os.path.dirname(output[0]),
        dpi=config["figures"]["dpi"],
        data_origin=RRR_ORIGIN,
    script:
        "../../scripts/rrr_plot.py"


rule rrr_survival:
    input:
        STUDY_TARGETS["rrr_survival"],
    localrule: True
