# ---- ldp_indicators: configuration, wildcards and helpers of the study ----
LDP = config["ldp_indicators"]
LDP_DIR = "results/ldp_indicators"


wildcard_constraints:
    censoring=r"[0-9]+",
    n=r"[0-9]+",
    design=r"main|convergence",
    mechanism=r"[a-z0-9_]+",


def ldp_setting(label):
    for setting in LDP["censoring"]:
        if setting["label"] == label:
            return setting
    raise ValueError(f"unknown censoring label {label!r}")


def ldp_t_grid():
    grid = LDP["t_grid"]
    step = (grid["stop"] - grid["start"]) / (grid["num"] - 1)
    return [grid["start"] + i * step for i in range(grid["num"])]


def ldp_settings(design, censorings, sample_sizes, alphas):
    """One replicate job per (mechanism, censoring, n, α) of a design."""
    return [
        {
            "design": design,
            "mechanism": m,
            "censoring": c,
            "n": int(n),
            "alpha": float(a),
            "lambda_t": ldp_setting(c)["lambda_t"],
        }
        for m in LDP["mechanisms"]
        for c in censorings
        for n in sample_sizes
        for a in alphas
    ]


def ldp_estimate_paths(settings):
    """Replicate file of each setting: one file holds every α of its design."""
    return [
        f"{LDP_DIR}/replicates/{s['design']}/{s['mechanism']}/cens{s['censoring']}"
        f"_n{s['n']}.parquet"
        for s in settings
    ]


def ldp_design_alphas(design):
    """The α a replicate job of ``design`` runs (all on the same samples)."""
    if design == "convergence":
        return sorted({float(a) for a in LDP["convergence"]["alphas"]})
    return sorted({float(a) for a in LDP["alphas"] + LDP["alpha_grid"]})
