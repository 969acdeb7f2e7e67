# ---- repr_transfer: configuration, paths and helpers of the study ----
# Also the raw-file paths of the GDSC/DepMap/TCGA download rules in data.smk.

from dprepro.studies.repr_transfer.common import fitted_as  # noqa: E402
from dprepro.studies.repr_transfer.privacy import (
    epsilon_grid,
    figure_privacy_text,
)  # noqa: E402

REPR_RAW_ITEMS = {
    "gdsc": {"expression": ".zip", "dose_response": ".xlsx", "cell_lines": ".xlsx"},
    "depmap": {"expression": ".csv", "models": ".csv"},
    "tcga": {"expression": ".gz", "probemap": ".tsv", "phenotype": ".tsv.gz"},
}
REPR_RAW_SUFFIXES = (
    ".txt.zip",
    ".csv.gz",
    ".tsv.gz",
    ".zip",
    ".xlsx",
    ".csv",
    ".tsv",
    ".txt",
    ".gz",
)
REPR_RAW_FILE = r"(expression|dose_response|cell_lines|models|probemap|phenotype)(\.txt\.zip|\.csv\.gz|\.tsv\.gz|\.zip|\.xlsx|\.csv|\.tsv|\.txt|\.gz)"
GDSC_CACHE = {
    name: f"results/data/gdsc/{name}.parquet"
    for name in ("expression", "dose_response", "cell_lines")
}
DEPMAP_CACHE = {
    name: f"results/data/depmap/{name}.parquet" for name in ("expression", "models")
}
TCGA_CACHE = {
    name: f"results/data/tcga/{name}.parquet" for name in ("expression", "lineage")
}


def repr_raw_suffix(url, default):
    from urllib.parse import urlsplit

    name = Path(urlsplit(str(url)).path).name.lower()
    return next((s for s in REPR_RAW_SUFFIXES if name.endswith(s)), default)


def repr_raw(source, item):
    """Local path of one raw download, its suffix taken from the configured URL."""
    url = config["datasets"][source][f"{item}_url"]
    return f"results/data/raw/{source}/{item}{repr_raw_suffix(url, REPR_RAW_ITEMS[source][item])}"


def repr_raw_spec(source, rawfile):
    item = rawfile.split(".", 1)[0]
    spec = config["datasets"][source]
    return {
        "source": source,
        "item": item,
        "url": spec[f"{item}_url"],
        "sha256": spec[f"{item}_sha256"],
    }


def repr_canonical(value):
    """Dicts with sorted keys, so reordering keys in a YAML file reruns nothing."""
    if isinstance(value, dict):
        return {k: repr_canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [repr_canonical(v) for v in value]
    return value


def repr_public_source():
    """'depmap' or 'tcga': the public expression of the real-data mode."""
    return config["repr_transfer"]["public_source"]


def repr_tcga_holdout():
    """TCGA study labels of the cases' private cancer types, held out of the public set."""
    from dprepro.data.tcga import holdout_labels

    from dprepro.config.schema import ConfigError

    cases = config["repr_transfer"]["cancer_type"]["cases"]
    column = config["datasets"]["gdsc"]["lineage_column"]
    if column != "TCGA_LABEL":
        raise ConfigError(
            "invalid configuration:\n  - config key 'datasets.gdsc.lineage_column': got "
            f"{column!r}, but repr_transfer.public_source 'tcga' names cancer types by TCGA "
            "study (the cases' types are held out of TCGA); use TCGA_LABEL"
        )
    if not cases:
        raise ConfigError(
            "invalid configuration:\n  - config key 'repr_transfer.cancer_type.cases': empty, "
            "but repr_transfer.public_source is 'tcga', which holds the private cancer types "
            "of every case out of the public data; list the cases (pairs of TCGA_LABELs)"
        )
    return holdout_labels(cases)


def repr_data_origin():
    """'synthetic' or 'real'; GDSC and DepMap must both be synthetic or both real."""
    sources = {s: config["datasets"][s]["source"] for s in ("gdsc", "depmap")}
    if repr_public_source() == "tcga":
        sources.pop("depmap")
    if len(set(sources.values())) != 1:
        from dprepro.config.schema import ConfigError

        raise ConfigError(
            "invalid configuration:\n  - config key 'datasets.depmap.source': got "
            f"{sources['depmap']!r} but datasets.gdsc.source is {sources['gdsc']!r}; the "
            "public and private expression sets must both be synthetic or both downloaded"
        )
    return "synthetic" if sources["gdsc"] == "synthetic" else "real"


def repr_data_inputs(kind):
    """Inputs of repr_public_data / repr_private_data: none for the synthetic pair."""

    def inputs(wildcards):
        if repr_data_origin() == "synthetic":
            return {}
        out = {"gdsc_expression": GDSC_CACHE["expression"]}
        if repr_public_source() == "tcga":
            out.update(
                tcga_expression=TCGA_CACHE["expression"],
                tcga_lineage=TCGA_CACHE["lineage"],
            )
        else:
            out.update(
                depmap_expression=DEPMAP_CACHE["expression"],
                depmap_models=DEPMAP_CACHE["models"],
                # the GDSC lines' Sanger model ids, to exclude them from DepMap
                gdsc_cell_lines=GDSC_CACHE["cell_lines"],
            )
        if kind == "private":
            out["gdsc_dose_response"] = GDSC_CACHE["dose_response"]
            out["gdsc_cell_lines"] = GDSC_CACHE["cell_lines"]
        return out

    return inputs


def repr_trials(representation):
    """Optuna trials of one representation's search (fewer for the slow VAE)."""
    selection = config["repr_transfer"]["selection"]
    return int(selection["vae_trials" if representation == "vae" else "trials"])


def repr_search_space(representation):
    """The search space of one representation (VAE keys only for the VAE: no reruns)."""
    spec = config["repr_transfer"]
    space = {"dim_range": list(spec["selection"]["dim_range"])}
    if representation == "vae":
        vae = spec["vae"]
        space.update(
            learning_rate_range=list(vae["learning_rate_range"]),
            hidden_layers=list(vae["hidden_layers"]),
            width_multipliers=list(vae["width_multipliers"]),
        )
    return space


def repr_search_objective(pipeline):
    """The paper's objective: DP logistic regression on held-out public lineage pairs,
    with the objective-perturbation variant of ``pipeline`` (corrected: cms11)."""
    from dprepro.studies.repr_transfer.privacy import pipeline as pipeline_spec

    spec = config["repr_transfer"]
    selection = spec["selection"]
    variant = pipeline_spec(pipeline).cancer_variant or spec["cancer_type"]["variant"]
    return {
        "pairs": selection["pairs"],
        "pair_list": [list(pair) for pair in selection["pair_list"]],
        "pair_folds": selection["pair_folds"],
        "startup_trials": selection["startup_trials"],
        "noise_draws": selection["noise_draws"],
        "folds": selection["folds"],
        "epsilon": selection["epsilon"],
        "variant": variant,
        "l2": spec["cancer_type"]["l2"],
    }


def repr_search_runtime(representation):
    """Minutes of every pipeline's search of one representation (the SLURM limit).

    Paper scale is sized from benchmarks/paper_scale.csv (CPU, one thread): PCA is nested,
    so one exact-SVD fit at r_max per pair fold (REPR_FIT_PCA_PAPER, 2x margin); the VAE
    either stops each trial at selection.trial_minutes (an overrun is a failed trial) or,
    without a budget, every trial may run vae.max_epochs epochs of the measured epoch time
    (2x margin) per pair fold. Scoring (DP logistic regression over the pairs) is about a
    minute a trial at paper scale: 2 minutes each. The synthetic sizes take seconds.
    """
    selection = config["repr_transfer"]["selection"]
    searches = len(config["repr_transfer"]["pipelines"])
    trials = repr_trials(representation)
    paper = REPR_ORIGIN != "synthetic"
    scoring = searches * trials * (2 if paper else 1)
    if representation == "vae":
        budget = selection.get("trial_minutes")
        if budget is not None:
            return int(10 + scoring + searches * trials * budget + 1)
        epochs = config["repr_transfer"]["vae"]["max_epochs"]
        if not paper:
            return 10 + searches * trials * max(2, epochs // 20)
        fit_minutes = 2 * epochs * repr_vae_epoch_seconds() / 60
        return int(
            10 + scoring + searches * trials * selection["pair_folds"] * fit_minutes + 1
        )
    if paper and representation == "pca":
        return (
            10
            + scoring
            + selection["pair_folds"] * REPR_FIT_PCA_PAPER["minutes_per_seed"]
        )
    return 10 + scoring


def repr_trial_seconds(representation):
    """The VAE search's budget per trial in seconds (selection.trial_minutes); None: none."""
    minutes = config["repr_transfer"]["selection"].get("trial_minutes")
    if representation != "vae" or minutes is None:
        return None
    return 60.0 * float(minutes)


def repr_search_paths():
    return [
        f"results/repr_transfer/candidates/{p}/{r}.csv"
        for p in config["repr_transfer"]["pipelines"]
        for r in config["repr_transfer"]["representations"]
    ]


def repr_vae_options(representation):
    """VAE training options; empty for the other representations (no spurious reruns)."""
    if representation != "vae":
        return {}
    vae = config["repr_transfer"]["vae"]
    keys = ("batch_size", "max_epochs", "patience", "validation_fraction", "device")
    options = {key: vae[key] for key in keys}
    if (
        vae["max_hidden_width"] is not None
    ):  # only when set: no reruns of uncapped searches
        options["max_hidden_width"] = vae["max_hidden_width"]
    return options


def repr_representation_methods():
    """The configured representations, then the equal-dimension control when it applies."""
    spec = config["repr_transfer"]
    methods = list(spec["representations"])
    if spec["equal_dim_control"] and {"pca", "vae"} <= set(methods):
        methods.append("pca_vae_dim")
    return methods


def repr_methods():
    return repr_representation_methods() + list(config["repr_transfer"]["baselines"])


def repr_baseline_params():
    """What the configured baselines need (fixed genes, feature selection settings)."""
    spec = config["repr_transfer"]
    out = {}
    if "fixed_genes" in spec["baselines"]:
        out["fixed_genes"] = list(spec["fixed_genes"])
    if "dp_feature_selection" in spec["baselines"]:
        out["feature_selection"] = repr_canonical(spec["feature_selection"])
    return out


def repr_experiment_inputs():
    data = "results/data/repr_transfer"
    spec = config["repr_transfer"]
    out = {
        "private_lineage": f"{data}/private_lineage.parquet",
        "private_response": f"{data}/private_response.parquet",
        # each pipeline's representations are fitted with its own search's hyperparameters
        "representations": lambda wc: [
            f"results/repr_transfer/representations/{wc.pipeline}/{r}.parquet"
            for r in repr_representation_methods()
        ],
    }
    if spec["baselines"]:
        out["public_expression"] = f"{data}/public_expression.parquet"
        out["private_expression"] = f"{data}/private_expression.parquet"
        out["private_expression_line_local"] = (
            f"{data}/private_expression_line_local.parquet"
        )
    return out


def repr_privacy_settings(kind):
    """What the privacy records of a result table are rebuilt from (learner settings)."""
    spec = config["repr_transfer"][kind]
    keys = (
        ("variant", "l2")
        if kind == "cancer_type"
        else ("ridge", "response_center", "response_scale")
    )
    return {key: spec[key] for key in keys}


def repr_figure_settings(figure):
    """Learner settings plus the single-ε panel's ε of one figure."""
    kind = REPR_FIGURE_KIND[figure]
    settings = {**repr_privacy_settings(kind), "epsilon": REPR[kind]["epsilon"]}
    if kind == "drug":
        settings.update(
            {k: REPR[kind][k] for k in ("response_center", "response_scale")}
        )
    return settings


def repr_drug_paths():
    chunks = config["repr_transfer"]["drug"]["chunks"]
    return [
        f"results/repr_transfer/experiments/drug_{p}_chunk{c}.parquet"
        for p in config["repr_transfer"]["pipelines"]
        for c in range(chunks)
    ]


def repr_cancer_type_paths():
    return [
        f"results/repr_transfer/experiments/cancer_type_{p}.parquet"
        for p in config["repr_transfer"]["pipelines"]
    ]


REPR = config["repr_transfer"]
REPR_DIR = "results/repr_transfer"
REPR_DATA = "results/data/repr_transfer"
REPR_ORIGIN = repr_data_origin()
REPR_METHODS = repr_methods()
REPR_PUBLIC = {
    name: f"{REPR_DATA}/public_{name}.parquet" for name in ("expression", "lineage")
}
REPR_PRIVATE = {
    name: f"{REPR_DATA}/private_{name}.parquet"
    for name in ("expression", "expression_line_local", "lineage", "response")
}
REPR_TABLES = {
    name: f"{REPR_DIR}/tables/{name}.csv"
    for name in (
        "hyperparameters",
        "cancer_type_accuracy",
        "cancer_type_summary",
        "drug_sensitivity",
        "drug_summary",
        "claims",
        "public_set",
    )
}
# each figure: the experiment (and its summary table) it is drawn from
REPR_FIGURE_KIND = {
    "cancer_type_accuracy": "cancer_type",
    "cancer_type_vs_epsilon": "cancer_type",
    "drug_prediction": "drug",
    "drug_vs_epsilon": "drug",
}
REPR_SUMMARY = {"cancer_type": "cancer_type_summary", "drug": "drug_summary"}


def repr_caption_privacy(figure, pipeline):
    """The privacy sentence of a figure's report caption, in the figure's own words."""
    return figure_privacy_text(
        REPR_FIGURE_KIND[figure],
        pipeline,
        variant=config["repr_transfer"]["cancer_type"]["variant"],
    )


REPR_PIPELINES = list(REPR["pipelines"])
REPR_FIGURES = {
    (name, pipeline): [
        f"{REPR_DIR}/figures/{name}_{pipeline}.pdf",
        f"{REPR_DIR}/figures/{name}_{pipeline}.png",
    ]
    for name in REPR_FIGURE_KIND
    for pipeline in REPR_PIPELINES
}
STUDY_CLAIMS["repr_transfer"] = [REPR_TABLES["claims"]]
STUDY_TARGETS["repr_transfer"] = [
    *REPR_TABLES.values(),
    *[path for paths in REPR_FIGURES.values() for path in paths],
]
REPR_DATA_SETTINGS = (
    repr_canonical(REPR["synthetic"])
    if REPR_ORIGIN == "synthetic"
    else {
        "min_shared_genes": REPR["min_shared_genes"],
        "min_public_median": REPR["min_public_median"],
        "lineage_column": config["datasets"]["gdsc"]["lineage_column"],
        "exclude_private_lines": config["datasets"]["depmap"]["exclude_private_lines"],
        # only with TCGA, so the DepMap mode's parameters (and jobs) stay as they were
        **(
            {"public_source": "tcga", "holdout": repr_tcga_holdout()}
            if repr_public_source() == "tcga"
            else {}
        ),
    }
)
# synthetic sizes need little memory; GDSC x DepMap matrices (~1,000 and ~1,500 lines
# x ~15,000 shared genes) need more
REPR_MEM_MB = (
    {"data": 2000, "learn": 2000}
    if REPR_ORIGIN == "synthetic"
    else {"data": 8000, "learn": 6000}
)

# repr_fit at paper scale (benchmarks/paper_scale.csv: 10,535 TCGA samples x 17,737
# genes): one exact-SVD PCA fit peaks at ~7.2 GB and takes up to ~2,560 s CPU (time
# extrapolated from 500-2,000 samples as m^2 n); declared with the margins of
# tests/test_paper_scale.py: 1.5x the peak, 2x the time, once per seed and pipeline.
REPR_FIT_PCA_PAPER = {"mem_mb": 11000, "minutes_per_seed": 86}
# one VAE epoch at paper scale (benchmarks/paper_scale.csv: r = 20, one hidden layer of
# 1,280, one CPU thread, measured at load ~15): ~307 s; a fit runs up to vae.max_epochs
# epochs, so the limits below are epochs x this (2x margin); a GPU is far faster
# Its peak was 3,051 MB, of which the weights (2 x 17,737 x 1,280, 16 bytes each with
# gradient and Adam moments) ~693 MB: the rest, ~2,360 MB, is the data and the process.
REPR_VAE_PAPER = {"epoch_seconds": 307, "n_features": 17737, "base_mb": 2360}


def repr_vae_widest():
    """(hidden width, layers) of the widest VAE candidate the configuration allows."""
    from dprepro.studies.repr_transfer.fitting import vae_hidden_width

    vae = REPR["vae"]
    width = vae_hidden_width(
        max(REPR["selection"]["dim_range"]),
        max(vae["width_multipliers"]),
        vae["max_hidden_width"],
    )
    return width, max(vae["hidden_layers"])


def repr_vae_mem_mb():
    """The VAE jobs' memory at paper scale: 1.5x the widest allowed candidate's training."""
    from dprepro.studies.repr_transfer.fitting import vae_training_mb

    width, layers = repr_vae_widest()
    peak = vae_training_mb(
        REPR_VAE_PAPER["n_features"], width, layers, base_mb=REPR_VAE_PAPER["base_mb"]
    )
    return int(1.5 * peak + 1)


def repr_vae_epoch_seconds():
    """The measured paper-scale epoch, scaled by the widest allowed candidate's weights
    (an epoch's arithmetic grows with them) when it is wider than the measured one."""
    from dprepro.studies.repr_transfer.fitting import vae_weights

    width, layers = repr_vae_widest()
    n = REPR_VAE_PAPER["n_features"]
    ratio = vae_weights(n, width, layers) / vae_weights(n, 1280, 1)
    return REPR_VAE_PAPER["epoch_seconds"] * max(1.0, ratio)


def repr_pipeline_outputs(path_of):
    """Named outputs of a job that writes one file per pipeline: ``path_of(pipeline)``
    under the pipeline's name, its provenance sidecar under ``prov_<pipeline>``."""
    out = {p: path_of(p) for p in REPR_PIPELINES}
    out.update({f"prov_{p}": prov(path_of(p)) for p in REPR_PIPELINES})
    return out


def repr_fit_mem_mb(wildcards):
    if REPR_ORIGIN != "synthetic" and fitted_as(wildcards.representation) == "pca":
        return REPR_FIT_PCA_PAPER["mem_mb"]
    if REPR_ORIGIN != "synthetic" and wildcards.representation == "vae":
        return max(REPR_MEM_MB["learn"], repr_vae_mem_mb())
    return REPR_MEM_MB["learn"]


def repr_fit_runtime(wildcards):
    """Minutes for all seeds of one representation, for every pipeline's candidate."""
    pipelines = len(REPR["pipelines"])
    if wildcards.representation == "vae":
        if REPR_ORIGIN != "synthetic":
            epochs = REPR["vae"]["max_epochs"]
            per_seed = 2 * epochs * repr_vae_epoch_seconds() / 60
            return int(per_seed * REPR["seeds"] * pipelines + 1)
        return 60 * REPR["seeds"] * pipelines
    if REPR_ORIGIN != "synthetic" and fitted_as(wildcards.representation) == "pca":
        return REPR_FIT_PCA_PAPER["minutes_per_seed"] * REPR["seeds"] * pipelines
    return 10 * pipelines
