LDP = config["ldp_indicators"]
LDP_DIR = "results/ldp_indicators"


LDP_LABELS = [s["label"] for s in LDP["censoring"]]
LDP_MAIN = ldp_settings("main", LDP_LABELS, [LDP["n"]], LDP["alphas"])
LDP_GRID = ldp_settings("main", LDP_LABELS, [LDP["n"]], LDP["alpha_grid"])
LDP_CONV = ldp_settings(
    "convergence",
    [LDP["convergence"]["censoring"]],
    LDP["convergence"]["sample_sizes"],
    LDP["convergence"]["alphas"],
)
LDP_FIGURES = {
    name: [f"{LDP_DIR}/figures/{name}.pdf", f"{LDP_DIR}/figures/{name}.png"]
    for name in ("figure1", "mse_vs_alpha", "mse_vs_n")
}
STUDY_TARGETS["ldp_indicators"] = [
    f"{LDP_DIR}/tables/mse.csv",
    f"{LDP_DIR}/tables/findings.csv",
    f"{LDP_DIR}/tables/mse_alpha_grid.csv",
    f"{LDP_DIR}/tables/mse_vs_n.csv",
    f"{LDP_DIR}/tables/convergence_rates.csv",
    *[path for paths in LDP_FIGURES.values() for path in paths],
]


rule ldp_simulate:
    output:
        estimates=f"{LDP_DIR}/replicates/{{design}}/cens{{censoring}}_n{{n}}_alpha{{alpha}}.parquet",
        prov=prov(
            f"{LDP_DIR}/replicates/{{design}}/cens{{censoring}}_n{{n}}_alpha{{alpha}}.parquet"
        ),
    log:
        "results/logs/ldp_simulate/{design}_cens{censoring}_n{n}_alpha{alpha}.log",
    benchmark:
        "results/benchmarks/ldp_simulate/{design}_cens{censoring}_n{n}_alpha{alpha}.tsv"
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc: 600 + int(wc.n) // 4,
        runtime=lambda wc: 5 + int(wc.n) ** 2 // 400_000,
    params:
        seed=config["seed"],
        setting=lambda wc: ldp_setting(wc.censoring),
        replicates=lambda wc: (
            LDP["convergence"]["replicates"]
            if wc.design == "convergence"
            else LDP["replicates"]
        ),
        x=LDP["x"],
        bandwidth_multiplier=LDP["bandwidth_multiplier"],
        clip_phat=LDP["clip_phat"],
        t=ldp_t_grid(),
    script:
        "../../scripts/ldp_simulate.py"


rule ldp_mse_table:
    input:
        estimates=ldp_estimate_paths(LDP_MAIN),
    output:
        table=f"{LDP_DIR}/tables/mse.csv",
        prov=prov(f"{LDP_DIR}/tables/mse.csv"),
    log:
        "results/logs/ldp_mse_table/ldp_mse_table.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="mse",
        settings=LDP_MAIN,
        x=LDP["x"],
    script:
        "../../scripts/ldp_aggregate.py"


rule ldp_findings:
    input:
        mse=f"{LDP_DIR}/tables/mse.csv",
    output:
        table=f"{LDP_DIR}/tables/findings.csv",
        prov=prov(f"{LDP_DIR}/tables/findings.csv"),
    log:
        "results/logs/ldp_findings/ldp_findings.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        near_ratio=1.5,
    script:
        "../../scripts/ldp_findings.py"


rule ldp_figure1:
    input:
        table=f"{LDP_DIR}/tables/mse.csv",
    output:
        pdf=report(
            LDP_FIGURES["figure1"][0],
            caption="../report/ldp_figure1.rst",
            category="ldp_indicators",
        ),
        png=LDP_FIGURES["figure1"][1],
        prov_pdf=prov(LDP_FIGURES["figure1"][0]),
        prov_png=prov(LDP_FIGURES["figure1"][1]),
    log:
        "results/logs/ldp_figure1/ldp_figure1.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="figure1",
        alphas=LDP["alphas"],
        log_scale=LDP["log_scale"],
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/ldp_plot.py"


rule ldp_alpha_grid_table:
    input:
        estimates=ldp_estimate_paths(LDP_GRID),
    output:
        table=f"{LDP_DIR}/tables/mse_alpha_grid.csv",
        prov=prov(f"{LDP_DIR}/tables/mse_alpha_grid.csv"),
    log:
        "results/logs/ldp_alpha_grid_table/ldp_alpha_grid_table.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="alpha_grid",
        settings=LDP_GRID,
        x=LDP["x"],
    script:
        "../../scripts/ldp_aggregate.py"


rule ldp_mse_vs_alpha:
    input:
        table=f"{LDP_DIR}/tables/mse_alpha_grid.csv",
    output:
        pdf=report(
            LDP_FIGURES["mse_vs_alpha"][0],
            caption="../report/ldp_mse_vs_alpha.rst",
            category="ldp_indicators",
        ),
        png=LDP_FIGURES["mse_vs_alpha"][1],
        prov_pdf=prov(LDP_FIGURES["mse_vs_alpha"][0]),
        prov_png=prov(LDP_FIGURES["mse_vs_alpha"][1]),
    log:
        "results/logs/ldp_mse_vs_alpha/ldp_mse_vs_alpha.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="mse_vs_alpha",
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/ldp_plot.py"


rule ldp_convergence_table:
    input:
        estimates=ldp_estimate_paths(LDP_CONV),
    output:
        table=f"{LDP_DIR}/tables/mse_vs_n.csv",
        rates=f"{LDP_DIR}/tables/convergence_rates.csv",
        prov=prov(f"{LDP_DIR}/tables/mse_vs_n.csv"),
        prov_rates=prov(f"{LDP_DIR}/tables/convergence_rates.csv"),
    log:
        "results/logs/ldp_convergence_table/ldp_convergence_table.log",
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="convergence",
        settings=LDP_CONV,
        x=LDP["x"],
    script:
        "../../scripts/ldp_aggregate.py"


rule ldp_mse_vs_n:
    input:
        table=f"{LDP_DIR}/tables/mse_vs_n.csv",
        rates=f"{LDP_DIR}/tables/convergence_rates.csv",
    output:
        pdf=report(
            LDP_FIGURES["mse_vs_n"][0],
            caption="../report/ldp_mse_vs_n.rst",
            category="ldp_indicators",
        ),
        png=LDP_FIGURES["mse_vs_n"][1],
        prov_pdf=prov(LDP_FIGURES["mse_vs_n"][0]),
        prov_png=prov(LDP_FIGURES["mse_vs_n"][1]),
    log:
        "results/logs/ldp_mse_vs_n/ldp_mse_vs_n.log",
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="mse_vs_n",
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/ldp_plot.py"


rule ldp_indicators:
    input:
        STUDY_TARGETS["ldp_indicators"],
    localrule: True
