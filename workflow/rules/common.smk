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
# Each study's .smk adds its claims table(s) here; workflow/rules/claims.smk
# merges those of the configured studies into results/claims.csv.
STUDY_CLAIMS = {}


def study_targets(studies):
    return [path for study in studies for path in STUDY_TARGETS[study]]


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


# ---- repr_transfer helpers ----

REPR_RAW_ITEMS = {
    "gdsc": {"expression": ".zip", "dose_response": ".xlsx", "cell_lines": ".xlsx"},
    "depmap": {"expression": ".csv", "models": ".csv"},
}
REPR_RAW_SUFFIXES = (".txt.zip", ".csv.gz", ".zip", ".xlsx", ".csv", ".txt", ".gz")


def repr_canonical(value):
    """Dicts with sorted keys, so reordering keys in a YAML file reruns nothing."""
    if isinstance(value, dict):
        return {k: repr_canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [repr_canonical(v) for v in value]
    return value


def repr_data_origin():
    """'synthetic' or 'real'; GDSC and DepMap must both be synthetic or both real."""
    sources = {s: config["datasets"][s]["source"] for s in ("gdsc", "depmap")}
    if len(set(sources.values())) != 1:
        from dprepro.config import ConfigError

        raise ConfigError(
            "invalid configuration:\n  - config key 'datasets.depmap.source': got "
            f"{sources['depmap']!r} but datasets.gdsc.source is {sources['gdsc']!r}; the "
            "public and private expression sets must both be synthetic or both downloaded"
        )
    return "synthetic" if sources["gdsc"] == "synthetic" else "real"


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


def repr_data_inputs(kind):
    """Inputs of repr_public_data / repr_private_data: none for the synthetic pair."""

    def inputs(wildcards):
        if repr_data_origin() == "synthetic":
            return {}
        out = {
            "gdsc_expression": "results/data/gdsc/expression.parquet",
            "depmap_expression": "results/data/depmap/expression.parquet",
            "depmap_models": "results/data/depmap/models.parquet",
        }
        if kind == "private":
            out["gdsc_dose_response"] = "results/data/gdsc/dose_response.parquet"
            out["gdsc_cell_lines"] = "results/data/gdsc/cell_lines.parquet"
        return out

    return inputs


def repr_candidates(representation):
    """Hyperparameter candidates of one representation, each with its wildcard id."""
    spec = config["repr_transfer"]
    if representation != "vae":
        return [{"candidate": f"r{d}", "dim": int(d)} for d in spec["dims"]]
    vae = spec["vae"]
    return [
        {
            "candidate": f"r{d}_lr{fmt_number(lr)}_h{h}_w{w}",
            "dim": int(d),
            "learning_rate": float(lr),
            "hidden_layers": int(h),
            "width_multiplier": int(w),
        }
        for d in vae["dims"]
        for lr in vae["learning_rates"]
        for h in vae["hidden_layers"]
        for w in vae["width_multipliers"]
    ]


def repr_candidate_spec(representation, candidate):
    for spec in repr_candidates(representation):
        if spec["candidate"] == candidate:
            return spec
    raise ValueError(f"unknown {representation} candidate {candidate!r}")


def repr_candidate_paths():
    return [
        f"results/repr_transfer/candidates/{r}/{c['candidate']}.csv"
        for r in config["repr_transfer"]["representations"]
        for c in repr_candidates(r)
    ]


def repr_vae_options(representation):
    """VAE training options; empty for the other representations (no spurious reruns)."""
    if representation != "vae":
        return {}
    vae = config["repr_transfer"]["vae"]
    keys = ("batch_size", "max_epochs", "patience", "validation_fraction", "device")
    return {key: vae[key] for key in keys}


def repr_methods():
    spec = config["repr_transfer"]
    return list(spec["representations"]) + list(spec["baselines"])


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
        "representations": [
            f"results/repr_transfer/representations/{r}.parquet"
            for r in spec["representations"]
        ],
    }
    if spec["baselines"]:
        out["public_expression"] = f"{data}/public_expression.parquet"
        out["private_expression"] = f"{data}/private_expression.parquet"
    return out


def repr_clipping_paths():
    drug = config["repr_transfer"]["drug"]
    epsilons = sorted({float(e) for e in drug["epsilons"]} | {float(drug["epsilon"])})
    return [
        f"results/repr_transfer/experiments/clipping_eps{fmt_number(e)}.csv"
        for e in epsilons
    ]


def repr_drug_paths():
    chunks = config["repr_transfer"]["drug"]["chunks"]
    return [
        f"results/repr_transfer/experiments/drug_chunk{c}.parquet"
        for c in range(chunks)
    ]
