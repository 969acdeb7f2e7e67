# ---- ldp_indicators: the study's plan (dprepro.studies.ldp_indicators.plan) and rules ----
import re

from dprepro.studies.ldp_indicators.plan import LdpPlan, simulate_minutes  # noqa: E402

LDP = config["ldp_indicators"]
LDP_DIR = "results/ldp_indicators"
LDP_PLAN = LdpPlan(LDP, seed=config["seed"])
LDP_DESIGNS = LDP_PLAN.designs


wildcard_constraints:
    censoring=r"[0-9]+",
    n=r"[0-9]+",
    design="|".join(re.escape(d) for d in LDP_DESIGNS),
    mechanism=r"[a-z0-9_.]+",


LDP_LABELS = [s["label"] for s in LDP["censoring"]]
LDP_MAIN = LDP_PLAN.settings("main", LDP_LABELS, [LDP["n"]], LDP["alphas"])
LDP_GRID = LDP_PLAN.settings("main", LDP_LABELS, [LDP["n"]], LDP["alpha_grid"])
LDP_CONV = LDP_PLAN.settings(
    "convergence",
    [LDP["convergence"]["censoring"]],
    LDP["convergence"]["sample_sizes"],
    LDP["convergence"]["alphas"],
    LDP["convergence"]["mechanisms"],
)
LDP_VARIANTS = {
    name: LDP_PLAN.variant_settings(name) for name in ("x", "noise_scale", "phat")
}
# the variant columns of each variant table
LDP_VARIANT_COLUMNS = {"x": "x", "noise_scale": "noise_scale", "phat": "phat_at"}
# the claims read the Figure 1 replicates (the α of Figure 1 and the largest α of
# the grid, for "F̂ and F̌ coincide as α → ∞": the same files) and every variant's
LDP_CLAIMS = LDP_PLAN.settings(
    "main",
    LDP_LABELS,
    [LDP["n"]],
    sorted({float(a) for a in LDP["alphas"] + [max(LDP["alpha_grid"])]}),
) + [s for name in LDP_VARIANTS for s in LDP_VARIANTS[name] if s["design"] != "main"]
LDP_TABLES = {
    "mse": f"{LDP_DIR}/tables/mse.csv",
    "alpha_grid": f"{LDP_DIR}/tables/mse_alpha_grid.csv",
    "mse_vs_n": f"{LDP_DIR}/tables/mse_vs_n.csv",
    "rates": f"{LDP_DIR}/tables/convergence_rates.csv",
    "hazard": f"{LDP_DIR}/tables/hazard_mse.csv",
    "floor": f"{LDP_DIR}/tables/variance_floor.csv",
    "clip": f"{LDP_DIR}/tables/mse_clip.csv",
}
# One rule draws every figure; each figure's function in dprepro.studies.ldp_indicators.figures takes
# these tables (by argument name) and options.
LDP_FIGURE_INPUTS = {
    "figure1": {"mse": LDP_TABLES["mse"]},
    "mse_vs_alpha": {"imse": LDP_TABLES["alpha_grid"]},
    "mse_vs_n": {"imse": LDP_TABLES["mse_vs_n"], "rates": LDP_TABLES["rates"]},
    "nelson_aalen": {"mse": LDP_TABLES["hazard"]},
    "bias_variance": {"mse": LDP_TABLES["mse"]},
}
LDP_FIGURE_TITLES = {
    "figure1": "Figure 1: MSE against t",
    "mse_vs_alpha": "integrated MSE against α",
    "mse_vs_n": "convergence in n",
    "nelson_aalen": "cumulative hazard",
    "bias_variance": "bias and variance",
}
LDP_FIGURE_OPTIONS = {
    "figure1": {"alphas": LDP["alphas"], "log_scale": LDP["log_scale"]},
    "mse_vs_alpha": {},
    "mse_vs_n": {},
    "nelson_aalen": {"alphas": LDP["alphas"], "log_scale": LDP["log_scale"]},
    "bias_variance": {"alphas": LDP["alphas"]},
}
LDP_FIGURES = {
    name: [f"{LDP_DIR}/figures/{name}.pdf", f"{LDP_DIR}/figures/{name}.png"]
    for name in LDP_FIGURE_INPUTS
}
STUDY_CLAIMS["ldp_indicators"] = [f"{LDP_DIR}/tables/claims.csv"]
# The convergence study (n up to 4000) is the slowest part: its own target,
# `ldp_convergence`, so that `ldp_indicators` stays fast; `all` runs both.
LDP_CONVERGENCE_TARGETS = [
    LDP_TABLES["mse_vs_n"],
    LDP_TABLES["rates"],
    *LDP_FIGURES["mse_vs_n"],
]
LDP_CORE_TARGETS = [
    LDP_TABLES["mse"],
    *STUDY_CLAIMS["ldp_indicators"],
    LDP_TABLES["alpha_grid"],
    LDP_TABLES["hazard"],
    LDP_TABLES["floor"],
    # the unclipped F̂_n exists only when the release clips p̂
    *([LDP_TABLES["clip"]] if LDP["clip_phat"] else []),
    *[f"{LDP_DIR}/tables/mse_{name}.csv" for name in LDP_VARIANTS],
    *[
        path
        for name, paths in LDP_FIGURES.items()
        if name != "mse_vs_n"
        for path in paths
    ],
]
STUDY_TARGETS["ldp_indicators"] = LDP_CORE_TARGETS + LDP_CONVERGENCE_TARGETS


rule ldp_simulate:
    # one job per design and mechanism for every censoring at the study's n: a setting's
    # simulation costs about what a job's start-up does
    output:
        **LDP_PLAN.replicate_outputs("{design}", "{mechanism}", LDP_LABELS, [LDP["n"]]),
    log:
        "results/logs/ldp_simulate/{design}_{mechanism}.log",
    benchmark:
        "results/benchmarks/ldp_simulate/{design}_{mechanism}.tsv"
    wildcard_constraints:
        design="|".join(re.escape(d) for d in LDP_DESIGNS if d != "convergence"),
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=600 + LDP["n"] // 4,
        runtime=len(LDP_LABELS) * simulate_minutes(LDP["n"]),
    params:
        **LDP_PLAN.simulate_params(None, LDP_LABELS, [LDP["n"]]),
        library_code=library_code("ldp_simulate.py"),
    script:
        "../../scripts/ldp_simulate.py"


rule ldp_simulate_convergence:
    # one job per mechanism for every n of the convergence study
    output:
        **LDP_PLAN.replicate_outputs(
            "convergence",
            "{mechanism}",
            [LDP["convergence"]["censoring"]],
            LDP["convergence"]["sample_sizes"],
        ),
    log:
        "results/logs/ldp_simulate_convergence/{mechanism}.log",
    benchmark:
        "results/benchmarks/ldp_simulate_convergence/{mechanism}.tsv"
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=600 + max(LDP["convergence"]["sample_sizes"]) // 4,
        runtime=sum(simulate_minutes(n) for n in LDP["convergence"]["sample_sizes"]),
    params:
        **LDP_PLAN.simulate_params(
            "convergence",
            [LDP["convergence"]["censoring"]],
            LDP["convergence"]["sample_sizes"],
        ),
        library_code=library_code("ldp_simulate.py"),
    script:
        "../../scripts/ldp_simulate.py"


rule ldp_mse_table:
    input:
        estimates=LDP_PLAN.estimate_paths(LDP_MAIN),
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
        library_code=library_code("ldp_release_table.py"),
        settings=LDP_MAIN,
        x=LDP["x"],
        table="mse",
    script:
        "../../scripts/ldp_release_table.py"


rule ldp_claims:
    input:
        estimates=LDP_PLAN.estimate_paths(LDP_CLAIMS),
    output:
        table=f"{LDP_DIR}/tables/claims.csv",
        prov=prov(f"{LDP_DIR}/tables/claims.csv"),
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
        library_code=library_code("ldp_claims.py"),
        seed=config["seed"],
        settings=LDP_CLAIMS,
        n=LDP["n"],
        x=LDP["x"],
        censorings=LDP_LABELS,
        alphas=LDP["alphas"],
        grid_alphas=[max(LDP["alpha_grid"])],
        mechanisms=LDP["mechanisms"],
        claims=canonical(LDP["claims"]),
        variants=canonical(LDP["variants"]),
        noise_draws=LDP["noise_draws"],
    script:
        "../../scripts/ldp_claims.py"


rule ldp_alpha_grid_table:
    input:
        estimates=LDP_PLAN.estimate_paths(LDP_GRID),
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
        library_code=library_code("ldp_release_table.py"),
        settings=LDP_GRID,
        x=LDP["x"],
        table="alpha_grid",
    script:
        "../../scripts/ldp_release_table.py"


rule ldp_convergence_table:
    input:
        estimates=LDP_PLAN.estimate_paths(LDP_CONV),
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
        library_code=library_code("ldp_release_table.py"),
        settings=LDP_CONV,
        x=LDP["x"],
        table="convergence",
    script:
        "../../scripts/ldp_release_table.py"


rule ldp_variant_table:
    input:
        estimates=lambda wc: LDP_PLAN.estimate_paths(LDP_VARIANTS[wc.variant]),
    output:
        table=f"{LDP_DIR}/tables/mse_{{variant}}.csv",
        prov=prov(f"{LDP_DIR}/tables/mse_{{variant}}.csv"),
    log:
        "results/logs/ldp_variant_table/{variant}.log",
    wildcard_constraints:
        variant="|".join(LDP_VARIANTS),
    priority: TABLE_PRIORITY
    conda:
        "../../envs/survival.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        library_code=library_code("ldp_variant_table.py"),
        settings=lambda wc: LDP_VARIANTS[wc.variant],
        column=lambda wc: LDP_VARIANT_COLUMNS[wc.variant],
        x=LDP["x"],
    script:
        "../../scripts/ldp_variant_table.py"


rule ldp_hazard_table:
    input:
        estimates=LDP_PLAN.estimate_paths(LDP_MAIN),
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
        library_code=library_code("ldp_release_table.py"),
        settings=LDP_MAIN,
        x=LDP["x"],
        table="hazard",
    script:
        "../../scripts/ldp_release_table.py"


rule ldp_clip_table:
    input:
        estimates=LDP_PLAN.estimate_paths(LDP_MAIN),
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
        library_code=library_code("ldp_release_table.py"),
        settings=LDP_MAIN,
        x=LDP["x"],
        table="clip",
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
        library_code=library_code("ldp_floor_table.py"),
        censoring=LDP["censoring"],
    script:
        "../../scripts/ldp_floor_table.py"


rule ldp_figure:
    input:
        unpack(lambda wc: LDP_FIGURE_INPUTS[wc.figure]),
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
        figure="|".join(LDP_FIGURE_INPUTS),
    conda:
        "../../envs/plotting.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        library_code=library_code("ldp_plot.py"),
        options=lambda wc: LDP_FIGURE_OPTIONS[wc.figure],
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/ldp_plot.py"


rule ldp_indicators:
    input:
        LDP_CORE_TARGETS,
    localrule: True


rule ldp_convergence:
    input:
        LDP_CONVERGENCE_TARGETS,
    localrule: True
