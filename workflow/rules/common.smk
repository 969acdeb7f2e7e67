import sys
from pathlib import Path

from snakemake.utils import validate

# The library lives next to the step scripts; the workflow imports it for
# config checks only (layers point down: Snakefile -> rules -> scripts -> dprepro).
sys.path.insert(0, str(Path(workflow.basedir) / "scripts"))

from dprepro.config import check_config, load_schema  # noqa: E402

SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"

# Our check first: one line per problem naming the key; then Snakemake's own
# validate, which also fills in the schema's defaults.
check_config(config, load_schema(SCHEMA))
validate(config, str(SCHEMA))


wildcard_constraints:
    censoring=r"[0-9]+",
    n=r"[0-9]+",
    alpha=r"[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?",
    design=r"main|convergence",


def prov(path):
    """Provenance sidecar written next to every table and figure."""
    return f"{path}.prov.json"


def fmt_number(value):
    """Canonical text of a number in file names (0.2 -> '0.2', 2.0 -> '2')."""
    return f"{float(value):g}"


STUDY_TARGETS = {}


def study_targets(studies):
    return [path for study in studies for path in STUDY_TARGETS[study]]


# ---- ldp_indicators helpers ----


def ldp_setting(label):
    for setting in config["ldp_indicators"]["censoring"]:
        if setting["label"] == label:
            return setting
    raise ValueError(f"unknown censoring label {label!r}")


def ldp_t_grid():
    grid = config["ldp_indicators"]["t_grid"]
    step = (grid["stop"] - grid["start"]) / (grid["num"] - 1)
    return [grid["start"] + i * step for i in range(grid["num"])]


def ldp_settings(design, censorings, sample_sizes, alphas):
    return [
        {
            "design": design,
            "censoring": c,
            "n": int(n),
            "alpha": float(a),
            "lambda_t": ldp_setting(c)["lambda_t"],
        }
        for c in censorings
        for n in sample_sizes
        for a in alphas
    ]


def ldp_estimate_paths(settings):
    return [
        f"results/ldp_indicators/replicates/{s['design']}/cens{s['censoring']}_n{s['n']}"
        f"_alpha{fmt_number(s['alpha'])}.parquet"
        for s in settings
    ]
