# ---- ldp_indicators: configuration, wildcards and helpers of the study ----
import re

LDP = config["ldp_indicators"]
LDP_DIR = "results/ldp_indicators"


def ldp_designs():
    """Every replicate design: its α (all run on the same samples), x, N and p̂ point.

    ``main`` (Figure 1 and the α grid), ``convergence`` (n varies), and the
    variants of ``variants``: ``x<value>`` (another x), ``noise_scale``
    (rescaled mechanisms) and ``phat_at_x`` (p̂ evaluated at (x, Y_i)).
    """
    base = {
        "x": float(LDP["x"]),
        "replicates": LDP["replicates"],
        "noise_draws": LDP["noise_draws"],
        "phat_at_x": False,
    }
    alphas = sorted({float(a) for a in LDP["alphas"]})
    designs = {
        "main": base
        | {"alphas": sorted({float(a) for a in LDP["alphas"] + LDP["alpha_grid"]})},
        "convergence": base
        | {
            "alphas": sorted({float(a) for a in LDP["convergence"]["alphas"]}),
            "replicates": LDP["convergence"]["replicates"],
            "noise_draws": LDP["convergence"]["noise_draws"],
        },
    }
    variants = LDP["variants"]
    for x in variants["x_values"]:
        if float(x) != float(LDP["x"]):
            designs[f"x{fmt_number(x)}"] = base | {"alphas": alphas, "x": float(x)}
    if any(float(c) != 1.0 for c in variants["noise_scales"]):
        designs["noise_scale"] = base | {"alphas": alphas}
    if variants["phat_at_x"]:
        designs["phat_at_x"] = base | {"alphas": alphas, "phat_at_x": True}
    return designs


LDP_DESIGNS = ldp_designs()


wildcard_constraints:
    censoring=r"[0-9]+",
    n=r"[0-9]+",
    design="|".join(re.escape(d) for d in LDP_DESIGNS),
    mechanism=r"[a-z0-9_.]+",


def ldp_sorted(mapping):
    """A config mapping with sorted keys, so reordering keys in a YAML file reruns nothing."""
    return {key: mapping[key] for key in sorted(mapping)}


def ldp_setting(label):
    for setting in LDP["censoring"]:
        if setting["label"] == label:
            return setting
    raise ValueError(f"unknown censoring label {label!r}")


def ldp_t_grid():
    grid = LDP["t_grid"]
    step = (grid["stop"] - grid["start"]) / (grid["num"] - 1)
    return [grid["start"] + i * step for i in range(grid["num"])]


def ldp_settings(design, censorings, sample_sizes, alphas, mechanisms=None, **extra):
    """One table setting per (mechanism, censoring, n, α) of a design (+ ``extra`` keys)."""
    return [
        {
            "design": design,
            "mechanism": m,
            "censoring": c,
            "n": int(n),
            "alpha": float(a),
            "lambda_t": ldp_setting(c)["lambda_t"],
            "lambda_c": ldp_setting(c)["lambda_c"],
            "noise_draws": LDP_DESIGNS[design]["noise_draws"],
            **extra,
        }
        for m in (LDP["mechanisms"] if mechanisms is None else mechanisms)
        for c in censorings
        for n in sample_sizes
        for a in alphas
    ]


def ldp_variant_settings(variant):
    """Settings of one variant table, each with the variant's column (and a claims tag)."""
    spec, labels = LDP["variants"], [s["label"] for s in LDP["censoring"]]
    m, main_x = spec["mechanism"], float(LDP["x"])

    def settings(design, mechanism, **extra):
        return ldp_settings(
            design, labels, [LDP["n"]], LDP["alphas"], [mechanism], **extra
        )

    out = []
    if variant == "x":
        for x in spec["x_values"]:
            if float(x) == main_x:
                out += settings("main", m, x=main_x)
            else:
                tag = f"@x{fmt_number(x)}"
                out += settings(f"x{fmt_number(x)}", m, x=float(x), tag=tag)
    elif variant == "noise_scale":
        for c in spec["noise_scales"]:
            if float(c) == 1.0:
                out += settings("main", m, noise_scale=1.0)
            else:
                out += settings(
                    "noise_scale", f"{m}_scale{float(c):g}", noise_scale=float(c)
                )
    elif variant == "phat":
        out += settings("main", m, phat_at="X_i")
        if spec["phat_at_x"]:
            out += settings("phat_at_x", m, phat_at="x", tag="@phat_x")
    return out


def ldp_estimate_paths(settings):
    """Replicate file of each setting: one file holds every α of its design."""
    return [
        ldp_replicate_path(s["design"], s["mechanism"], s["censoring"], s["n"])
        for s in settings
    ]


def ldp_replicate_path(design, mechanism, censoring, n):
    return f"{LDP_DIR}/replicates/{design}/{mechanism}/cens{censoring}_n{n}.parquet"


def ldp_replicate_outputs(design, mechanism, censorings, sample_sizes):
    """Named outputs of one simulation job: a replicate file (and its sidecar) per
    (censoring, n), keyed ``cens<label>_n<n>`` as in ``ldp_replicate_settings``."""
    out = {}
    for c in censorings:
        for n in sample_sizes:
            path = ldp_replicate_path(design, mechanism, c, int(n))
            out[f"cens{c}_n{int(n)}"] = path
            out[f"prov_cens{c}_n{int(n)}"] = prov(path)
    return out


def ldp_replicate_settings(censorings, sample_sizes):
    """What a simulation job runs, output by output: censoring label, its rates, n."""
    return [
        {
            "output": f"cens{c}_n{int(n)}",
            "censoring": c,
            "n": int(n),
            "setting": ldp_sorted(ldp_setting(c)),
        }
        for c in censorings
        for n in sample_sizes
    ]


def ldp_simulate_params(design, censorings, sample_sizes):
    """Params of a simulation job of ``design`` (None: the job's ``{design}`` wildcard)
    for every (censoring, n) it runs."""

    def of_design(key):
        if design is None:
            return lambda wc: LDP_DESIGNS[wc.design][key]
        return LDP_DESIGNS[design][key]

    return {
        "design": (lambda wc: wc.design) if design is None else design,
        "seed": config["seed"],
        "alphas": of_design("alphas"),
        "phat_at_x": of_design("phat_at_x"),
        "settings": ldp_replicate_settings(censorings, sample_sizes),
        "replicates": of_design("replicates"),
        "noise_draws": of_design("noise_draws"),
        "x": of_design("x"),
        "bandwidth_multiplier": LDP["bandwidth_multiplier"],
        "clip_phat": LDP["clip_phat"],
        # p̂(x, t) and the unclipped F̂_n only at the α of Figure 1 (claims, clip table)
        "extra_alphas": LDP["alphas"],
        "t": ldp_t_grid(),
    }


def ldp_simulate_minutes(n):
    """SLURM minutes of one (censoring, n) setting (O(n^2) presmoothing)."""
    return 5 + int(n) ** 2 // 400_000
