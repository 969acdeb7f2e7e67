import os
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


def bundled(path):
    """A file shipped with the workflow, wherever the working directory is."""
    return str(Path(workflow.basedir) / path)


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


# ---- rrr_survival helpers ----


def dataset_origin(dataset):
    spec = config["datasets"][dataset]
    return "synthetic" if spec["source"] == "synthetic" else "real"


def rrr_releases(mechanisms=("original", "rrr", "lnte")):
    rrr = config["rrr_survival"]
    out = []
    for dataset in rrr["datasets"]:
        for mechanism in mechanisms:
            epsilons = [None] if mechanism == "original" else rrr["epsilons"]
            for eps in epsilons:
                out.append(
                    {
                        "dataset": dataset,
                        "mechanism": mechanism,
                        "epsilon": None if eps is None else float(eps),
                        "calibration": rrr["calibration"] if mechanism == "rrr" else "",
                        "data_origin": dataset_origin(dataset),
                    }
                )
    return out


def rrr_release_dir(release):
    base = f"results/rrr_survival/releases/{release['dataset']}"
    if release["mechanism"] == "original":
        return f"{base}/original"
    return f"{base}/{release['mechanism']}_eps{fmt_number(release['epsilon'])}"


def rrr_release_files(releases, name):
    return [f"{rrr_release_dir(r)}/{name}" for r in releases]


def cbioportal_raw(kind):
    spec = config["datasets"]["ipssr"]
    return f"results/data/raw/cbioportal/{spec['study_id']}_{kind}.json"


def cohort_inputs(wildcards):
    spec = config["datasets"][wildcards.dataset]
    if spec["source"] == "bundled":
        return {
            "table": bundled("resources/kidney/kidney.csv"),
            "checksum": bundled("resources/kidney/kidney.csv.sha256"),
        }
    if spec["source"] == "file":
        return {"table": spec["path"]}
    if spec["source"] == "cbioportal":
        return {
            "patient": cbioportal_raw("patient"),
            "sample": cbioportal_raw("sample"),
        }
    return {}
