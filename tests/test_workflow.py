"""The workflow end to end: quality gates, dry runs, determinism, provenance, reruns, report."""

import csv
import hashlib
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dprepro.config.schema import fill_defaults, load_schema
from dprepro.runtime.study_registry import privacy_boundary
from helpers import background, snakerun
from helpers.dryruns import SHIPPED_CONFIGS
from helpers.recipes import planned_jobs as job_counts
from helpers.smallruns import FIGURE_RULES, SMALL

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.workflow


def snakemake(*args, cwd=None, timeout=1500, check=True):
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), *args]
    if cwd is not None:
        cmd += ["--directory", str(cwd)]
    if PLANNING & set(args):  # no job runs: a fork of tests/helpers/snakerun.py's server
        proc = snakerun.run(cmd[3:], cwd=ROOT, timeout=timeout)
    else:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


#: options with which Snakemake runs no job (plans, or checks the rules)
PLANNING = {"-n", "--dry-run", "--lint"}


# full.yaml and paper.yaml are read over config/config.yaml (the Snakefile's configfile; in
# another --directory, as these dry runs are, common.smk puts it underneath); their dry runs
# are tests/helpers/dryruns.py's background runs


def shipped_config(configfile: str) -> dict:
    """The configuration Snakemake runs with ``--configfile configfile``: the file merged
    key by key over the embedded default, as Snakemake merges them, defaults filled in."""
    from snakemake.utils import update_config

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    update_config(config, yaml.safe_load((ROOT / configfile).read_text()))
    return fill_defaults(config, load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml"))


# lint reads the rules, which full.yaml (sizes and cohorts only) does not change
LINTED_CONFIGS = ["config/config.yaml", "config/paper.yaml"]
for _configfile in LINTED_CONFIGS:
    background.register(f"lint:{_configfile}")(
        lambda folder, configfile=_configfile: snakemake("--lint", "--configfile", configfile))


@pytest.mark.parametrize("configfile", [
    pytest.param(name, marks=pytest.mark.background(f"lint:{name}")) for name in LINTED_CONFIGS])
def test_lint_passes(configfile, tmp_path):
    proc = background.result(f"lint:{configfile}", tmp_path)
    assert "Congratulations" in proc.stdout + proc.stderr


@pytest.mark.parametrize("configfile", [
    pytest.param(name, marks=pytest.mark.background(f"dry-run:{name}"))
    for name in SHIPPED_CONFIGS])
def test_full_dag_dry_run(configfile, tmp_path):
    proc = background.result(f"dry-run:{configfile}", tmp_path)
    counts = job_counts(proc.stdout + proc.stderr)
    assert counts.get("all") == 1
    config = shipped_config(configfile)
    ldp = config["ldp_indicators"]
    spec = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    spec = spec["properties"]["ldp_indicators"]["properties"]
    variants = spec["variants"]["properties"]
    variants = {k: ldp.get("variants", {}).get(k, variants[k]["default"]) for k in variants}
    conv_mechanisms = ldp["convergence"].get(
        "mechanisms", spec["convergence"]["properties"]["mechanisms"]["default"])
    # one replicate job per (design, mechanism) for every censoring (every α on the same
    # samples), and one per convergence mechanism for every n
    variant_jobs = (sum(float(x) != float(ldp["x"]) for x in variants["x_values"])
                    + sum(float(c) != 1 for c in variants["noise_scales"])
                    + bool(variants["phat_at_x"]))
    assert counts["ldp_simulate"] == len(ldp["mechanisms"]) + variant_jobs
    assert counts["ldp_simulate_convergence"] == len(conv_mechanisms)
    assert counts["ldp_variant_table"] == 3 and counts["ldp_claims"] == 1
    assert counts["ldp_figure"] == 5
    rrr = config["rrr_survival"]
    # one job per cohort for all its private releases (mechanisms × ε), one for its
    # non-private references, one per figure
    for rule in ("rrr_private_releases", "rrr_original", "rrr_figure2", "rrr_km_bands"):
        assert counts[rule] == len(rrr["datasets"]), rule
    # the Cox-only cohorts (simulated, known hazard ratios) are built too
    cox_only = [d for d in rrr.get("cox", {}).get("extra_datasets", [])
                if d not in rrr["datasets"]]
    assert counts["rrr_cohort"] == len(rrr["datasets"]) + len(cox_only)
    assert counts["rrr_cox"] == len(rrr["datasets"]) + len(cox_only)
    assert counts["run_manifest"] == 1 and counts["report_tables"] == 1
    assert counts["report_introduction"] == 1
    studies = config.get("studies", ["ldp_indicators", "rrr_survival", "repr_transfer", "audit"])
    assert counts.get("audit_claims_table", 0) == ("audit" in studies)
    assert counts.get("cbioportal_download", 0) == (config["datasets"]["ipssr"]["source"]
                                                    == "cbioportal")
    rt = config["repr_transfer"]
    # one search job per representation runs every pipeline's search; the VAE models' jobs
    # are rules of their own (a cluster profile sends them to GPUs)
    vae_models = {"vae", "supervised_vae"}
    assert counts.get("repr_search_vae", 0) == len(vae_models & set(rt["representations"]))
    assert counts["repr_search"] + counts.get("repr_search_vae", 0) == len(
        rt["representations"])
    pipelines = len(rt.get("pipelines", ["as_published", "corrected"]))
    # PCA at the VAE's r and the VAE at the joint model's settings: one more fit each where
    # both of its pair are configured; one fit job per representation fits every pipeline's
    # candidate
    configured = set(rt["representations"])
    control = rt.get("equal_dim_control", True) * (
        ({"pca", "vae"} <= configured) + ({"vae", "supervised_vae"} <= configured))
    assert counts["repr_fit"] + counts.get("repr_fit_vae", 0) == len(
        rt["representations"]) + control
    vae_control = rt.get("equal_dim_control", True) * (vae_models <= configured)
    assert counts.get("repr_fit_vae", 0) == len(vae_models & configured) + vae_control
    assert counts["repr_drug"] == rt["drug"]["chunks"] * pipelines
    assert counts["repr_cancer_type"] == pipelines
    # one clipping-weight job for every pipeline and drug-task ε
    assert counts["repr_clipping_weights"] == 1
    for rule in ("repr_hyperparameter_table", "repr_cancer_type_table", "repr_claims_table",
                 "repr_drug_table", "repr_public_data", "repr_private_data"):
        assert counts[rule] == 1, rule
    assert counts["repr_figure"] == 4 * pipelines
    real = config["datasets"]["gdsc"]["source"] == "download"
    tcga = rt.get("public_source", "depmap") == "tcga"
    assert counts.get("gdsc_download", 0) == 3 * real
    assert counts.get("gdsc_preprocess", 0) == real
    # the public set: DepMap (expression, models) or TCGA (matrix, probemap, phenotype)
    assert counts.get("depmap_download", 0) == 2 * real * (not tcga)
    assert counts.get("depmap_preprocess", 0) == real * (not tcga)
    assert counts.get("tcga_download", 0) == 3 * real * tcga
    assert counts.get("tcga_preprocess", 0) == real * tcga


def planned_jobs(text: str) -> list[tuple[str, list[str]]]:
    """``(rule, outputs)`` of every job a dry run's log ``text`` plans."""
    jobs, rule = [], None
    for line in text.splitlines():
        match = re.match(r"^(?:local)?rule (\w+):$", line.strip())
        if match:
            rule = match.group(1)
        elif line.strip().startswith("output:") and rule:
            jobs.append((rule, [p.strip() for p in line.split(":", 1)[1].split(",")]))
            rule = None
    return jobs


@pytest.mark.parametrize("configfile", [
    pytest.param(name, marks=pytest.mark.background(f"dry-run:{name}"))
    for name in SHIPPED_CONFIGS])
def test_no_job_writes_the_files_of_two_cohorts(configfile, tmp_path):
    """Snakemake deletes every output of a failed job: a job writing several cohorts' files
    let a fault in one cohort delete the others'. Each file naming a cohort comes from a job
    of that cohort alone (the aggregated tables name none)."""
    proc = background.result(f"dry-run:{configfile}", tmp_path)
    rrr = shipped_config(configfile)["rrr_survival"]
    cohorts = {*rrr["datasets"], *rrr.get("cox", {}).get("extra_datasets", [])}
    jobs = planned_jobs(proc.stdout + proc.stderr)
    per_cohort = {rule for rule, _ in jobs if rule.startswith("rrr_")}
    assert {"rrr_original", "rrr_figure2", "rrr_km_bands", "rrr_cox"} <= per_cohort
    for rule, outputs in jobs:
        named = {c for c in cohorts for path in outputs
                 if re.search(rf"(?<![A-Za-z0-9]){re.escape(c)}(?![A-Za-z0-9])", path)}
        assert len(named) <= 1, (rule, sorted(named))


def planned_outputs(configfile, tmp_path) -> set[str]:
    """Every file the dry run of ``configfile`` plans (its jobs' ``output:`` lines)."""
    proc = background.result(f"dry-run:{configfile}", tmp_path)
    return {path.strip() for line in (proc.stdout + proc.stderr).splitlines()
            if line.strip().startswith("output:")
            for path in line.split(":", 1)[1].split(",")}


@pytest.mark.background("dry-run:config/config.yaml")
@pytest.mark.background("dry-run:config/full.yaml")
def test_the_quick_default_builds_every_table_and_figure_of_the_full_run(tmp_path):
    """The embedded default cuts Monte Carlo sizes, not outputs: every table and figure of
    the full run (config/full.yaml, dry-run alone in another directory, so laid over the
    embedded default by the workflow) is in it, but for the cohorts only the full run adds."""
    quick = planned_outputs("config/config.yaml", tmp_path)
    full = planned_outputs("config/full.yaml", tmp_path)
    def cohorts(name):
        rrr = shipped_config(name)["rrr_survival"]
        return set(rrr["datasets"]) | set(rrr.get("cox", {}).get("extra_datasets", []))

    extra = cohorts("config/full.yaml") - cohorts("config/config.yaml")
    assert extra  # the full run does add cohorts

    def released(paths):
        return {p for p in paths if re.search(r"/(tables|figures)/", p)
                and not any(re.search(rf"(^|[/_]){name}([._/]|$)", p) for name in extra)}

    assert released(full) == released(quick)
    assert len({p for p in released(quick) if not p.endswith(".prov.json")}) > 80
    assert any(name in p for p in full - quick for name in extra)
    # the quick default adds nothing of its own either
    assert quick <= full


@pytest.mark.parametrize(("configfile", "measure"), [
    pytest.param("config/config.yaml", "verify_files_quick",
                 marks=pytest.mark.background("dry-run:config/config.yaml")),
    pytest.param("config/full.yaml", "verify_files_full",
                 marks=pytest.mark.background("dry-run:config/full.yaml"))])
def test_the_verify_counts_the_docs_quote_are_what_the_workflow_plans(configfile, measure,
                                                                      tmp_path):
    """`snakemake verify` checks one file per sidecar, and every output with a sidecar is a
    planned output. benchmarks/everyday.csv records the count verify printed, which README.md
    and docs/ quote (tests/test_docs_numbers.py): a change of the outputs needs a new
    measurement (python benchmarks/bench_everyday.py, then --docs)."""
    sidecars = {p for p in planned_outputs(configfile, tmp_path) if p.endswith(".prov.json")}
    with (ROOT / "benchmarks" / "everyday.csv").open(newline="") as fh:
        recorded = {row["measure"]: row["value"] for row in csv.DictReader(fh)}
    assert int(recorded[measure]) == len(sidecars), (
        f"benchmarks/everyday.csv has {measure} = {recorded[measure]}, but {configfile} plans "
        f"{len(sidecars)} outputs with a sidecar: rerun python benchmarks/bench_everyday.py "
        "and then python benchmarks/bench_everyday.py --docs")


def test_snakefmt_check():
    proc = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile",
                           "workflow/rules"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_ruff_check():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "."], capture_output=True,
                          text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout


@pytest.fixture(scope="module")
def runs(small_run):
    """``runs["2"]``: the small configuration run from nothing with --cores 2
    (conftest.small_run)."""
    return {"2": small_run}


def tables(work: Path):
    return sorted((work / "results").rglob("tables/*.csv"))


def test_tables_are_byte_identical_across_runs_and_cores(runs, killed_run):
    """The --cores 1 run (conftest.killed_run: killed once and resumed, as
    tests/test_faults.py checks) has the --cores 2 run's tables, byte for byte. The
    small configuration's VAE fits use vae.threads = 2 in both runs, where the --cores 1
    run's job has one core: a VAE's numbers depend on its threads, not on --cores."""
    cores1, _ = killed_run
    for work in (runs["2"], cores1):
        for name in ("repr_search/vae.log", "repr_fit/vae.log"):
            log = (work / "results" / "logs" / name).read_text()
            assert "VAE fits on cpu with 2 torch CPU thread(s) (vae.threads)" in log, (work, name)
            assert ("vae.threads = 2 on 1 core(s)" in log) == (work == cores1), (work, name)
    a, b = tables(runs["2"]), tables(cores1)
    assert [p.relative_to(runs["2"]) for p in a] == [p.relative_to(cores1) for p in b]
    assert len(a) >= 5
    assert {"hyperparameters.csv", "cancer_type_accuracy.csv", "drug_sensitivity.csv"} <= {
        p.name for p in a if p.parent.parent.name == "repr_transfer"}
    for left, right in zip(a, b, strict=True):
        assert left.read_bytes() == right.read_bytes(), left.name


def test_the_figure_free_run_leaves_out_exactly_the_rules_that_draw_figures(runs, killed_run):
    """helpers.smallruns.FIGURE_RULES (what the --cores 1 run omits) are the rules of the
    --cores 2 run's PNG and PDF files, read from their sidecars; the --cores 1 run drew none."""
    drawn = {json.loads(sidecar.read_text())["rule"]
             for suffix in ("png", "pdf")
             for sidecar in (runs["2"] / "results").rglob(f"*.{suffix}.prov.json")}
    assert drawn == set(FIGURE_RULES)
    cores1, _ = killed_run
    assert not [p for suffix in ("png", "pdf") for p in (cores1 / "results").rglob(f"*.{suffix}")]


def test_merged_claims_table_states_every_interval_and_how_it_was_obtained(runs):
    """results/claims.csv: the contract's columns, every study's rows, and for each row an
    interval (ci_lower <= ci_upper), its method and the privacy unit (referee 5: they were in
    the notes only)."""
    from dprepro.claims.table import CLAIM_COLUMNS

    claims = pd.read_csv(runs["2"] / "results" / "claims.csv", keep_default_na=False)
    assert list(claims.columns) == CLAIM_COLUMNS
    assert {c.split(".")[0] for c in claims["claim_id"]} == {"ldp", "rrr", "repr"}
    # an untestable statement may carry no number; every other row has its interval
    decided = claims[claims["verdict"] != "untestable"]
    assert (decided["ci_lower"].astype(float) <= decided["ci_upper"].astype(float)).all()
    assert set(claims["verdict"]) <= {"holds", "fails", "inconclusive", "untestable"}
    assert set(claims["claim_origin"]) == {"paper", "beyond"}
    assert (claims["data_origin"] != "").all()
    beyond = claims[claims["claim_origin"] == "beyond"]
    assert beyond["source"].str.startswith("beyond the paper").all()
    methods = claims["ci_method"].str.strip()
    assert (methods != "").all()
    assert {"bootstrap", "Clopper-Pearson"} <= {word for method in methods
                                                for word in method.split()
                                                if word in ("bootstrap", "Clopper-Pearson")}
    # whom each claim's privacy statements protect, as the privacy records of the study's
    # own tables say (their sidecars)
    units = claims.groupby("study")["privacy_unit"].unique().map(set).to_dict()

    def recorded(node):
        if isinstance(node, dict):
            for key, value in node.items():
                yield from [value] if key == "privacy_unit" else recorded(value)
        elif isinstance(node, list):
            for value in node:
                yield from recorded(value)

    tables = {"ldp_indicators": "ldp_indicators/tables/mse.csv",
              "rrr_survival": "rrr_survival/tables/median_survival.csv",
              "repr_transfer": "repr_transfer/tables/drug_sensitivity.csv"}
    for study, table in tables.items():
        sidecar = json.loads((runs["2"] / "results" / f"{table}.prov.json").read_text())
        assert units[study] == set(recorded(sidecar["privacy"])), study


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_table_and_figure_has_provenance(runs):
    work = runs["2"]
    outputs = [*tables(work), *(work / "results").rglob("figures/*.p[dn][fg]")]
    assert any(p.suffix == ".pdf" for p in outputs) and any(p.suffix == ".png" for p in outputs)
    for output in outputs:
        record = json.loads(Path(f"{output}.prov.json").read_text())
        # the script as the workflow names it (no producer's directory), hashed
        assert record["script"]["path"].startswith("scripts/"), output
        script = ROOT / record["script"]["path"]
        assert sha256(script) == record["script"]["sha256"]
        assert len(record["library_code"]) == 64, output  # the library code it ran
        assert record["dprepro"]["version"]
        assert record["packages"]["numpy"] and record["packages"]["pandas"]
        assert record["config"], output
        # what it was computed from: input files, or (synthetic data) the seeds that drew it
        assert record["inputs"] or record["seeds"], output
        for item in record["inputs"].values():
            assert sha256(work / item["path"]) == item["sha256"]
        assert set(record["data_origin"].split(",")) <= {"simulation", "synthetic", "real"}
        assert record["privacy"] is not None


def test_a_vae_fits_sidecar_records_the_device_its_fits_ran_on(runs):
    """The plan may say `device: auto`; the VAE models' fit sidecars say where the fits ran
    (on a cluster's GPU nodes: whether torch saw the GPU); the other representations' none."""
    folder = runs["2"] / "results" / "repr_transfer" / "representations"
    seen = {}
    for sidecar in sorted(folder.rglob("*.parquet.prov.json")):
        record = json.loads(sidecar.read_text())
        seen[record["wildcards"]["representation"]] = record.get("device")
        planned = (record["config"].get("vae") or {}).get("device")
        if planned is not None:
            assert record["device"] in ("cpu", "cuda"), sidecar
            assert planned == "auto" or record["device"] == planned.split(":")[0], sidecar
    vae_models = {"vae", "supervised_vae", "vae_svae_dim"}
    assert {rep for rep, device in seen.items() if device} == vae_models & set(seen), seen
    assert "vae" in seen and "pca" in seen, seen


def test_replicate_provenance_records_seeds(runs):
    sidecar = next((runs["2"] / "results" / "ldp_indicators" / "replicates").rglob("*.prov.json"))
    seeds = json.loads(sidecar.read_text())["seeds"]
    # one noise stream per α of the job, keyed by α as in file names
    assert seeds["data"]["base_seed"] == 7 and seeds["noise"]
    assert all(s["step"].startswith("privatize/") for s in seeds["noise"].values())


def test_logs_and_benchmarks_are_written(runs):
    logs = runs["2"] / "results" / "logs"
    for rule in ("ldp_simulate", "ldp_mse_table", "ldp_figure", "ldp_claims", "rrr_cohort",
                 "rrr_private_releases", "rrr_figure2", "repr_search", "repr_fit",
                 "repr_cancer_type", "repr_drug", "repr_figure"):
        assert any((logs / rule).rglob("*.log")), rule
    assert any((runs["2"] / "results" / "benchmarks" / "ldp_simulate").glob("*.tsv"))
    assert any((runs["2"] / "results" / "benchmarks" / "repr_fit").rglob("*.tsv"))


def test_unchanged_configuration_reruns_nothing(runs):
    """The baseline of the next test: with the configuration unchanged no job reruns, so the
    jobs counted there are those the change itself triggers."""
    unchanged = snakemake("-n", "--configfile", str(SMALL), cwd=runs["2"])
    assert "Nothing to be done" in unchanged.stdout + unchanged.stderr


def test_reordering_configuration_keys_reruns_nothing(runs, tmp_path):
    """Params copied from the configuration are compared in canonical key order: a cohort
    spec written in another order is the same configuration."""
    def reversed_keys(value):
        if isinstance(value, dict):
            return {key: reversed_keys(value[key]) for key in reversed(list(value))}
        return value

    config = yaml.safe_load(SMALL.read_text())
    config["datasets"] = reversed_keys(config["datasets"])
    reordered = tmp_path / "reordered.yaml"
    reordered.write_text(yaml.safe_dump(config, sort_keys=False))
    assert list(config["datasets"]["toy"])[0] != list(
        yaml.safe_load(SMALL.read_text())["datasets"]["toy"])[0]
    proc = snakemake("-n", "--configfile", str(reordered), cwd=runs["2"])
    assert "Nothing to be done" in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        # every change reruns run_manifest (the configuration's record) and the report's
        # introduction (which describes the configuration), and every change of a claims
        # table the report's tables (report_tables)
        ({"ldp_indicators": {"log_scale": True}}, {"ldp_figure": 2, "run_manifest": 1,
          "report_introduction": 1}),
        ({"figures": {"dpi": 61}}, {"ldp_figure": 5, "claims_figure": 1,
                                    "rrr_figure2": 3, "rrr_km_bands": 3, "rrr_utility": 1,
                                    "rrr_cox_forest_figure": 3,
                                    "rrr_cox_bias_coverage_figure": 1,
                                    "repr_figure": 8, "privacy_audit_figure": 1,
                                    "run_manifest": 1,
          "report_introduction": 1}),
        ({"rrr_survival": {"significance": 0.01}},
         {"rrr_rejection_table": 1, "rrr_claims_table": 1, "claims_table": 1,
          "claims_figure": 1, "report_tables": 1, "report_cohort_tables": 3,
          "run_manifest": 1,
          "report_introduction": 1}),
        ({"rrr_survival": {"draws": 6}},
         {"rrr_private_releases": 3, "rrr_original": 3, "rrr_median_table": 1,
          "rrr_logrank_table": 1,
          "rrr_rejection_table": 1, "rrr_utility_table": 1, "rrr_bands_table": 1,
          "rrr_curves_table": 1, "rrr_claims_table": 1, "rrr_figure2": 3, "rrr_km_bands": 3,
          "rrr_utility": 1, "rrr_cox": 3, "rrr_cox_table": 1, "rrr_cox_forest_figure": 3,
          "rrr_cox_bias_coverage_figure": 1, "claims_table": 1, "claims_figure": 1,
          "report_tables": 1, "report_cohort_tables": 3, "run_manifest": 1,
          "report_introduction": 1}),
        ({"ldp_indicators": {"convergence": {"replicates": 7}}},
         {"ldp_simulate_convergence": 1, "ldp_convergence_table": 1, "ldp_figure": 1,
          "run_manifest": 1,
          "report_introduction": 1}),
        ({"repr_transfer": {"drug": {"splits": 3}}},
         {"repr_drug": 2, "repr_drug_table": 1, "repr_figure": 4, "repr_claims_table": 1,
          "claims_table": 1, "claims_figure": 1, "report_tables": 1, "run_manifest": 1,
          "report_introduction": 1}),
    ],
)
def test_changing_a_parameter_reruns_exactly_the_dependent_jobs(runs, tmp_path, override,
                                                                expected):
    config = yaml.safe_load(SMALL.read_text())
    for section, values in override.items():
        if isinstance(values, dict):
            for key, value in values.items():
                if isinstance(value, dict):
                    config[section].setdefault(key, {}).update(value)
                else:
                    config[section][key] = value
        else:
            config[section] = values
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    proc = snakemake("-n", "--configfile", str(changed), cwd=runs["2"])
    counts = job_counts(proc.stdout + proc.stderr)
    counts.pop("all", None)
    assert counts == expected


def test_report_builds_with_captions(runs):
    work = runs["2"]
    snakemake("--report", "results/report.html", "--configfile", str(SMALL), cwd=work)
    html = (work / "results" / "report.html").read_text(errors="replace")
    assert "figure1.pdf" in html
    assert "simulation, no real data" in html
    assert "synthetic stand-in" in html and "figure2_ipssr" in html
    assert "drug_prediction_corrected.pdf" in html
    assert "cancer_type_accuracy_as_published.pdf" in html and "pipeline: corrected" in html
    # one category per study, subcategories per dataset or pipeline, PNG beside PDF, and
    # the claims and headline tables as tables
    for name in ("ldp_indicators", "rrr_survival", "repr_transfer", "audit", "claims",
                 "Toy trial", "corrected pipeline", "pipeline as published", "all claims"):
        assert name in html, name
    assert "figure1.png" in html and "claims.png" in html and "privacy_audit.png" in html
    # the tables' pages: one per cohort (rrr) or pipeline (repr), and the introduction
    assert "claims.html" in html and "introduction.html" in html
    for page in ("rrr_median_survival_ipssr.html", "rrr_median_survival_toy.html",
                 "repr_cancer_type_corrected.html", "repr_cancer_type_as_published.html"):
        assert page in html, page
    assert "rrr_median_survival.html" not in html
    assert "RRR, \\u03b5 = 1" in html and "Figure 2" in html


def test_paper_mode_cohort_from_a_cbioportal_server(tmp_path):
    """datasets.ipssr.source = cbioportal through a real HTTP server serving API fixtures."""
    from helpers.httpserver import serve

    fixtures = ROOT / "tests" / "fixtures" / "cbioportal"
    base = "/api/studies/mds_iwg_2022/clinical-data"
    routes = {
        f"{base}?clinicalDataType=PATIENT&projection=DETAILED":
            (fixtures / "mds_iwg_2022_patient.json").read_bytes(),
        f"{base}?clinicalDataType=SAMPLE&projection=DETAILED":
            (fixtures / "mds_iwg_2022_sample.json").read_bytes(),
    }
    with serve(routes) as server:
        config = yaml.safe_load(SMALL.read_text())
        config["datasets"] |= {"ipssr": {"source": "cbioportal",
                                        "cbioportal_url": server.base_url}}
        configfile = tmp_path / "paper_small.yaml"
        configfile.write_text(yaml.safe_dump(config))
        snakemake("results/data/cohorts/ipssr.parquet", "--cores", "1", "--configfile",
                  str(configfile), cwd=tmp_path)
    raw = tmp_path / "results" / "data" / "raw" / "cbioportal"
    manifest = json.loads((raw / "mds_iwg_2022_manifest.json").read_text())
    assert "mds_iwg_2022_patient" in json.dumps(manifest)
    assert sha256(raw / "mds_iwg_2022_patient.json") in json.dumps(manifest)
    cohort = pd.read_parquet(tmp_path / "results" / "data" / "cohorts" / "ipssr.parquet")
    assert set(cohort["group"]) <= {"Very Low", "Low", "Intermediate", "High", "Very High"}
    assert set(cohort["event"]) <= {0, 1} and (cohort["data_origin"] == "real").all()
    assert len(cohort) == 11  # 12 fixture patients, one without an IPSS-R category


def test_paper_mode_offline_fails_with_a_hint(tmp_path):
    config = yaml.safe_load(SMALL.read_text())
    config["datasets"] |= {"ipssr": {"source": "cbioportal",
                                    "cbioportal_url": "http://127.0.0.1:9"}}
    config["downloads"] = {"retries": 1, "backoff_seconds": 0.05}
    configfile = tmp_path / "offline.yaml"
    configfile.write_text(yaml.safe_dump(config))
    proc = snakemake("results/data/cohorts/ipssr.parquet", "--cores", "1", "--configfile",
                     str(configfile), cwd=tmp_path, check=False)
    assert proc.returncode != 0
    log = (tmp_path / "results" / "logs" / "cbioportal_download" / "mds_iwg_2022.log").read_text()
    assert "embedded default" in log + proc.stderr
    assert not (tmp_path / "results" / "data" / "raw" / "cbioportal" /
                "mds_iwg_2022_patient.json").exists()


def test_provenance_release_flags_agree_with_the_privacy_boundary(runs):
    boundary = privacy_boundary(ROOT / "workflow" / "privacy_boundary.yaml")
    checked = 0
    for sidecar in (runs["2"] / "results").rglob("*.prov.json"):
        record = json.loads(sidecar.read_text())
        rule, release = record.get("rule"), (record.get("privacy") or {}).get("release")
        if rule in boundary["release"] or rule in boundary["privatization"]:
            # a privatised output without a finite ε (grid LNTE on a cohort without a
            # public horizon, issue 39) says so and is not marked a release
            honest = (record["privacy"].get("true_epsilon") == "inf"
                      and release is False)
            assert release is True or honest, f"{sidecar.name} ({rule}) should be marked a release"
            checked += 1
        elif rule in boundary["reference"] or rule in boundary["sensitive"]:
            assert release is not True, f"{sidecar.name} ({rule}) is marked a release"
            checked += 1
    assert checked > 10


def test_ldp_privacy_columns_and_sidecars_come_from_the_mechanism_objects(runs):
    """Every released ldp table: its (mechanism, α) columns and its sidecar's privacy records
    are recomputed here from the registered mechanism objects of the configuration."""
    from dprepro.mechanisms.registry import REFERENCE, draw_records, get_mechanism, joint_records
    from dprepro.runtime.privacy_record import provenance_of

    ldp = yaml.safe_load(SMALL.read_text())["ldp_indicators"]
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    spec = schema["properties"]["ldp_indicators"]["properties"]
    names = ldp.get("mechanisms", spec["mechanisms"]["default"])
    conv_names = ldp["convergence"].get(
        "mechanisms", spec["convergence"]["properties"]["mechanisms"]["default"])
    conv = ldp["convergence"]["alphas"]
    draws = ldp["noise_draws"]
    conv_draws = ldp["convergence"].get("noise_draws", 1)
    assert draws > 1 and conv_draws == 1  # the small config exercises both
    expected = {"mse.csv": (names, ldp["alphas"], draws),
                "hazard_mse.csv": (names, ldp["alphas"], draws),
                "mse_alpha_grid.csv": (names, ldp["alpha_grid"], draws),
                "mse_vs_n.csv": (conv_names, conv, conv_draws),
                "convergence_rates.csv": (conv_names, conv, conv_draws)}
    directory = runs["2"] / "results" / "ldp_indicators" / "tables"
    for name, (mechanisms, alphas, m) in expected.items():
        records = [get_mechanism(m).privacy_record(a) for m in mechanisms for a in alphas]
        table = pd.read_csv(directory / name)
        private = table[table["mechanism"] != "none"]
        assert set(zip(private["mechanism"], private["alpha"], strict=True)) == {
            (r.mechanism, r.stated) for r in records}, name
        assert table.loc[table["mechanism"] == "none", "alpha"].isna().all(), name
        sidecar = json.loads((directory / f"{name}.prov.json").read_text())
        # several α of one noise stream: the joint record (ε = ∞) follows the per-α ones
        joint = joint_records([(get_mechanism(m), a) for m in mechanisms for a in alphas])
        # a joint record exactly when the file holds several α of one stream
        assert bool(joint) == (len(set(alphas)) > 1), name
        assert all(math.isinf(r.true_epsilon) for r in joint), name
        # M independent draws of one δ: jointly Mα-LDP, after the per-α records
        joint += draw_records([(get_mechanism(m_), a) for m_ in mechanisms for a in alphas],
                              noise_draws=m)
        if "noise_draws" in table:
            assert set(table.loc[table["mechanism"] != "none", "noise_draws"]) == {m}, name
        want = json.loads(json.dumps(provenance_of([*records, *joint, REFERENCE])))
        assert sidecar["privacy"] == want, name


def test_repr_privacy_columns_are_rebuilt_from_the_mechanism_objects(runs):
    """Every released repr_transfer table: privacy columns and sidecar from the learners."""
    from snakemake.utils import validate

    from dprepro.runtime.privacy_record import provenance_of
    from dprepro.studies.repr_transfer import privacy as repr_privacy

    config = yaml.safe_load(SMALL.read_text())
    validate(config, str(ROOT / "workflow" / "schemas" / "config.schema.yaml"))
    tables_dir = runs["2"] / "results" / "repr_transfer" / "tables"
    for name, kind, columns in (
            ("cancer_type_accuracy", "cancer_type", repr_privacy.CANCER_PRIVACY_COLUMNS),
            ("drug_sensitivity", "drug", repr_privacy.DRUG_PRIVACY_COLUMNS)):
        path = tables_dir / f"{name}.csv"
        table = pd.read_csv(path, keep_default_na=False, na_values=[""])
        # the small configuration's synthetic drugs are the generator's (not from the data)
        settings = {**config["repr_transfer"][kind], "drugs_from_data": False}
        records = repr_privacy.table_records(table, kind=kind, settings=settings)
        expected = repr_privacy.columns_frame(records, columns)
        got = table[list(columns)].reset_index(drop=True)
        got["variant"] = got["variant"].astype(object).where(got["variant"].notna(), "")
        pd.testing.assert_frame_equal(expected, got, check_dtype=False)
        sidecar = json.loads(path.with_name(path.name + ".prov.json").read_text())
        assert sidecar["privacy"] == provenance_of(repr_privacy.distinct(records))
        if kind == "cancer_type":
            # the small configuration leaves cancer_type.cases empty: the cases are read off
            # the private lineage counts, so no private row has a finite ε (issue 39)
            assert not config["repr_transfer"]["cancer_type"]["cases"]
            private = table["epsilon"].notna()
            assert private.any() and np.isinf(table.loc[private, "true_epsilon"]).all()
            assert all(r["true_epsilon"] == "inf" for r in sidecar["privacy"]["records"]
                       if r["epsilon"] is not None)


@background.register("xena_public_data")
def _xena_public_data_run(tmp_path: Path) -> tuple[Path, list[str], str]:
    """The run of test_paper_mode_public_data_from_tcga_on_a_xena_server: its data folder,
    the GDSC symbols and the served expression file's sha256."""
    from helpers.httpserver import serve
    from helpers.xena import write_xena

    fix = ROOT / "tests" / "fixtures" / "expression"
    gdsc_zip = fix / "Cell_line_RMA_proc_basalExp.txt.zip"
    import zipfile

    with zipfile.ZipFile(gdsc_zip) as zf:
        text = zf.read(zf.namelist()[0]).decode("latin-1")
    symbols = sorted({line.split("\t")[0] for line in text.splitlines()[1:]} - {""})
    xena = write_xena(tmp_path / "xena", symbols)
    routes = {
        "/Cell_line_RMA_proc_basalExp.txt.zip": gdsc_zip.read_bytes(),
        "/GDSC2_fitted_dose_response.csv": (fix / "GDSC2_fitted_dose_response.csv").read_bytes(),
        "/Cell_Lines_Details.csv": (fix / "Cell_Lines_Details.csv").read_bytes(),
        "/tcga_RSEM_gene_tpm.gz": xena["expression"].read_bytes(),
        "/gencode.v23.annotation.gene.probemap": xena["probemap"].read_bytes(),
        "/TCGA_phenotype_denseDataOnlyDownload.tsv.gz": xena["phenotype"].read_bytes(),
    }
    with serve(routes) as server:
        url = server.base_url.rstrip("/")
        config = yaml.safe_load(SMALL.read_text())
        config["datasets"] |= {
            "gdsc": {"source": "download",
                     "expression_url": f"{url}/Cell_line_RMA_proc_basalExp.txt.zip",
                     "dose_response_url": f"{url}/GDSC2_fitted_dose_response.csv",
                     "cell_lines_url": f"{url}/Cell_Lines_Details.csv"},
            "tcga": {"expression_url": f"{url}/tcga_RSEM_gene_tpm.gz",
                     "expression_sha256": sha256(xena["expression"]),
                     "probemap_url": f"{url}/gencode.v23.annotation.gene.probemap",
                     "phenotype_url": f"{url}/TCGA_phenotype_denseDataOnlyDownload.tsv.gz"},
        }
        config["repr_transfer"].update(public_source="tcga", min_shared_genes=10)
        config["repr_transfer"]["cancer_type"]["cases"] = [["BRCA", "COREAD"]]
        configfile = tmp_path / "paper_tcga.yaml"
        configfile.write_text(yaml.safe_dump(config))
        snakemake("results/data/repr_transfer/public_expression.parquet", "--cores", "1",
                  "--configfile", str(configfile), cwd=tmp_path)
    return tmp_path / "results" / "data", symbols, sha256(xena["expression"])


@pytest.mark.background("xena_public_data")
def test_paper_mode_public_data_from_tcga_on_a_xena_server(tmp_path):
    """repr_transfer.public_source = tcga: GDSC and Xena files served over loopback HTTP."""
    data, symbols, served_sha256 = background.result("xena_public_data", tmp_path)
    record = json.loads((data / "raw" / "tcga" / "expression.gz.download.json").read_text())
    assert record["sha256"] == served_sha256 == record["expected_sha256"]
    public = pd.read_parquet(data / "repr_transfer" / "public_expression.parquet")
    lineage = pd.read_parquet(data / "repr_transfer" / "public_lineage.parquet")["lineage"]
    # BRCA and COREAD's TCGA studies (COAD, READ) are held out; LUAD and SKCM stay
    assert sorted(set(lineage)) == ["LUAD", "SKCM"] and len(public) == 8
    upper = {s.upper() for s in symbols}  # symbols are matched upper-case
    assert set(public.columns) <= upper and public.shape[1] >= 10
    cache = pd.read_parquet(data / "tcga" / "expression.parquet")
    assert len(cache) == 20 and set(cache.columns) == upper


TCGA_PER_TYPE = 12


@background.register("tcga_tables")
def _paper_mode_with_tcga_run(tmp_path: Path) -> Path:
    """The run of test_paper_mode_with_tcga_runs_to_the_tables: its tables folder."""
    from helpers.gdsc import fixtures, write_gdsc
    from helpers.httpserver import serve
    from helpers.xena import write_xena

    per_type = TCGA_PER_TYPE
    symbols = [g for g, _ in fixtures.GENES]
    diseases = {"BRCA": "breast invasive carcinoma", "LUAD": "lung adenocarcinoma",
                "SKCM": "skin cutaneous melanoma", "COAD": "colon adenocarcinoma",
                "READ": "rectum adenocarcinoma", "PAAD": "pancreatic adenocarcinoma",
                "PRAD": "prostate adenocarcinoma"}
    xena = write_xena(tmp_path / "xena", symbols, per_type=per_type, diseases=diseases)
    gdsc = write_gdsc(tmp_path / "gdsc", symbols, ["LUAD", "SKCM", "BRCA"], per_type=per_type)
    routes = {"/expression.zip": gdsc["expression"].read_bytes(),
              "/dose_response.csv": gdsc["dose_response"].read_bytes(),
              "/cell_lines.csv": gdsc["cell_lines"].read_bytes(),
              "/tpm.gz": xena["expression"].read_bytes(),
              "/probemap": xena["probemap"].read_bytes(),
              "/phenotype.tsv.gz": xena["phenotype"].read_bytes()}
    pairs = [["BRCA", "PRAD"], ["COAD", "PAAD"]]
    with serve(routes) as server:
        url = server.base_url.rstrip("/")
        config = yaml.safe_load(SMALL.read_text())
        config["studies"] = ["repr_transfer"]
        config["datasets"] |= {
            "gdsc": {"source": "download", "expression_url": f"{url}/expression.zip",
                     "dose_response_url": f"{url}/dose_response.csv",
                     "cell_lines_url": f"{url}/cell_lines.csv"},
            "tcga": {"expression_url": f"{url}/tpm.gz",
                     "expression_sha256": sha256(xena["expression"]),
                     "probemap_url": f"{url}/probemap", "phenotype_url": f"{url}/phenotype.tsv.gz"},
        }
        rt = config["repr_transfer"]
        rt.update(public_source="tcga", min_shared_genes=10,
                  representations=["pca", "random_projection"], fixed_genes=symbols[:3])
        rt["selection"].update(pair_list=pairs, pair_folds=2)
        rt["cancer_type"]["cases"] = [["LUAD", "SKCM"]]
        configfile = tmp_path / "paper_tcga.yaml"
        configfile.write_text(yaml.safe_dump(config))
        tables = ["hyperparameters", "public_set", "cancer_type_accuracy", "drug_sensitivity",
                  "claims"]
        snakemake(*[f"results/repr_transfer/tables/{t}.csv" for t in tables], "--cores", "2",
                  "--configfile", str(configfile), cwd=tmp_path)
    return tmp_path / "results" / "repr_transfer" / "tables"


@pytest.mark.background("tcga_tables", early=True)
def test_paper_mode_with_tcga_runs_to_the_tables(tmp_path):
    """Paper mode on generated TCGA-like and GDSC-like files (loopback server): the search on
    the listed public pairs after the cases' types are held out, the experiments and the
    tables of both pipelines."""
    per_type = TCGA_PER_TYPE
    out = background.result("tcga_tables", tmp_path)
    hyper = pd.read_csv(out / "hyperparameters.csv")
    # the listed pairs, none of them with a held-out type, each scored in its own pair fold
    assert set(hyper["validation_pairs"]) == {"BRCA vs PRAD; COAD vs PAAD"}
    assert (hyper["n_pairs"] == 2).all() and (hyper["pair_folds"] == 2).all()
    assert hyper.groupby(["pipeline", "representation"])["selected"].sum().eq(1).all()
    public_set = pd.read_csv(out / "public_set.csv").iloc[0]
    assert public_set["source"] == "tcga" and not public_set["smaller_than_private"]
    # LUAD and SKCM (the case's private types) held out of the 7 generated types
    assert public_set["source_lines"] == 7 * per_type
    assert public_set["held_out_cancer_types"] == 2 * per_type
    assert public_set["public_lines"] == 5 * per_type
    cancer = pd.read_csv(out / "cancer_type_accuracy.csv")
    assert set(cancer["case"]) == {"LUAD vs SKCM"} and (cancer["n_lines"] == 2 * per_type).all()
    assert set(cancer["pipeline"]) == {"as_published", "corrected"}
    assert set(cancer["representation"]) == {"pca", "random_projection", "fixed_genes",
                                             "dp_feature_selection"}
    assert (cancer["data_origin"] == "real").all()
    # the generated lineage signal sits on the fixed genes: the non-private fit finds it
    # (misaligned lines or labels would leave it near the majority share, 0.5)
    fixed = cancer[(cancer["representation"] == "fixed_genes") & cancer["epsilon"].isna()]
    assert len(fixed) and (fixed["majority_accuracy"] == 0.5).all()
    assert (fixed["accuracy"] >= 0.8).all()
    private = cancer[cancer["epsilon"].notna()]
    published = private["pipeline"] == "as_published"
    assert np.isinf(private.loc[published, "true_epsilon"]).all()
    corrected_pca = private[~published & (private["representation"] == "pca")]
    assert len(corrected_pca) and (corrected_pca["true_epsilon"] == corrected_pca["epsilon"]).all()
    drug = pd.read_csv(out / "drug_sensitivity.csv")
    assert drug["drug"].nunique() == 3 and (drug["n_test"] <= 10).all()
    assert (drug["data_origin"] == "real").all() and drug["spearman"].notna().all()
    claims = pd.read_csv(out / "claims.csv")
    assert {c.split(".")[1] for c in claims["claim_id"]} == {"as_published", "corrected"}
    # one case is two lineages, below the 5 independent units a verdict needs
    cancer_claims = claims[claims["claim_id"].str.contains(".cancer.", regex=False)]
    assert len(cancer_claims) and (cancer_claims["verdict"] == "untestable").all()


@pytest.mark.parametrize("change, message", [
    ({"cases": []}, r"'repr_transfer.cancer_type.cases': empty, but repr_transfer.public_source"),
    ({"lineage_column": "GDSC_TISSUE_1"},
     r"'datasets.gdsc.lineage_column': got 'GDSC_TISSUE_1'.*use TCGA_LABEL"),
], ids=["no-cases", "not-tcga-labels"])
def test_tcga_public_source_needs_cases_named_by_tcga_study(tmp_path, change, message):
    config = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())
    assert config["repr_transfer"]["public_source"] == "tcga"
    if "cases" in change:
        config["repr_transfer"]["cancer_type"]["cases"] = change["cases"]
    else:
        config["datasets"]["gdsc"]["lineage_column"] = change["lineage_column"]
    configfile = tmp_path / "bad.yaml"
    configfile.write_text(yaml.safe_dump(config))
    proc = snakemake("-n", "--configfile", str(configfile), cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert re.search(message, proc.stdout + proc.stderr)


def test_repr_figures_state_each_pipelines_privacy_as_delivered(runs):
    """Headers and footers per pipeline: corrected = a finite ε per released model given its
    training lines (but none for cancer-type cases chosen from private counts);
    as_published = no finite ε (no 'pure ε-DP' or 'DP end to end' there)."""
    import matplotlib.pyplot as plt

    from dprepro.runtime.io import read_table
    from dprepro.studies.repr_transfer import figures as repr_figures

    figures = runs["2"] / "results" / "repr_transfer" / "figures"
    tables_dir = runs["2"] / "results" / "repr_transfer" / "tables"
    checked = 0
    for name, spec in repr_figures.FIGURES.items():
        summary = read_table(tables_dir / f"{spec['table']}.csv")
        for pipeline in ("as_published", "corrected"):
            sidecar = json.loads((figures / f"{name}_{pipeline}.pdf.prov.json").read_text())
            fig = repr_figures.draw_figure(name, summary, settings=sidecar["config"]["settings"],
                                         data_origin=sidecar["data_origin"], pipeline=pipeline)
            # footers are wrapped: compare words, not line breaks
            text = " ".join(" ".join(t.get_text().split()) for t in fig.findobj(plt.Text))
            plt.close(fig)
            assert "DP end to end" not in text and "X'X and X'y only" not in text, name
            if pipeline == "corrected" and spec["table"] == "cancer_type_summary":
                # the small configuration leaves cancer_type.cases empty: the cases are
                # chosen from the private lineage counts, so no finite ε holds there
                assert "no finite ε" in text and "private lineage counts" in text, (name, text)
                assert "per released model" not in text, (name, text)
            elif pipeline == "corrected":
                assert "per released model" in text, (name, text)
            else:
                assert "no finite ε" in text and "pure ε-DP" not in text, (name, text)
            checked += 1
    assert checked == 8


_TIMER_PROBE = """
import runpy, sys, threading
from pathlib import Path
sys.argv = ["snakemake", *sys.argv[1:]]
try:
    runpy.run_module("snakemake", run_name="__main__")
except SystemExit as stop:
    code = stop.code
pending = [t for t in threading.enumerate() if isinstance(t, threading.Timer)
           and t.is_alive() and not t.finished.is_set()
           and Path(t.function.__code__.co_filename).name == "job_scheduler.py"]
print("PENDING", len(pending), "EXIT", code, flush=True)
"""


@background.register("rate_limiter_timers")
def _timer_probe_run(tmp_path: Path) -> subprocess.CompletedProcess:
    """The run of test_run_leaves_no_rate_limiter_timer_behind."""
    (tmp_path / "tiny.yaml").write_text(
        "ldp_indicators:\n  replicates: 3\n  n: 60\n  noise_draws: 1\n"
        "  t_grid: {start: 0.05, stop: 1.2, num: 5}\n")
    return subprocess.run(
        [sys.executable, "-c", _TIMER_PROBE, "ldp_mse_table", "--cores", "1",
         "--snakefile", str(ROOT / "Snakefile"), "--configfile", str(tmp_path / "tiny.yaml"),
         "--directory", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT)


@pytest.mark.background("rate_limiter_timers")
def test_run_leaves_no_rate_limiter_timer_behind(tmp_path):
    """profiles/default's long job-rate timespan never holds a finished run open.

    Snakemake re-schedules from a timer of one timespan after each pass that leaves jobs
    waiting; with --cores 1 and four simulations ready, passes leave jobs waiting, so
    without the workflow's onsuccess handler timers of 10 s would still be pending when
    Snakemake returns (and the process would wait for them).
    """
    profile = yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())
    count, span = profile["max-jobs-per-timespan"].split("/")
    assert int(count) >= 1000 and span == "10s"
    proc = background.result("rate_limiter_timers", tmp_path)
    assert "PENDING 0 EXIT 0" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
    work = background.folder("rate_limiter_timers")
    assert (work / "results" / "ldp_indicators" / "tables" / "mse.csv").exists()


def test_verify_flags_exactly_the_files_snakemake_would_remake(runs, tmp_path):
    """One verdict on staleness: `snakemake verify` passes on a complete run of every study;
    after a change of the configuration, a literal param's edit and a comment in a rule
    file it flags exactly the files of the jobs a dry run plans, and once the run is redone
    it passes again. (It
    compared whole configuration sections and the rule files' bytes: one key of the rrr
    section flagged every rrr file, and any edit of a rule file every file of its rules,
    while Snakemake remade none of them.)"""
    checkout, work = _checkout_and_run_copies(tmp_path, runs["2"], beside=True)
    snakefile = ["--snakefile", str(checkout / "Snakefile"), "--directory", str(work)]

    def verify(configfile: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "snakemake", *snakefile, "verify",
                               "--cores", "1", "--configfile", str(configfile)],
                              capture_output=True, text=True, timeout=600, cwd=checkout)

    # (a job whose params verify could not evaluate, or evaluated otherwise than
    # Snakemake, would be flagged below with no job planned for it)
    config = yaml.safe_load(SMALL.read_text())
    config["rrr_survival"]["band_level"] = 0.8  # read by the KM bands' table only
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    rules = checkout / "workflow" / "rules" / "repr_transfer.smk"
    rules.write_text(rules.read_text() + "\n# an edit that changes no job's params\n")
    claims = checkout / "workflow" / "rules" / "claims.smk"
    assert "rows_per_page=18," in claims.read_text()
    claims.write_text(claims.read_text().replace("rows_per_page=18,", "rows_per_page=20,"))
    # every default trigger but `input`: the checkout's copy moves the bundled cohort files,
    # which that trigger sees as new inputs (verify checks their checksums)
    triggers = ["--rerun-triggers", "mtime", "params", "software-env", "code"]
    dry = snakerun.run([*snakefile, "-n", "--cores", "2", "--configfile", str(changed),
                        *triggers], cwd=checkout, timeout=600)
    assert dry.returncode == 0, dry.stderr[-3000:]
    planned = {path.strip()[: -len(".prov.json")]
               for line in dry.stdout.splitlines() if line.strip().startswith("output:")
               for path in line.split(":", 1)[1].split(",")
               if path.strip().endswith(".prov.json")}
    proc = verify(changed)
    assert proc.returncode != 0
    flagged = set(re.findall(r"^MISMATCH (results/[^:]+):", proc.stdout, re.M))
    assert flagged == planned, (sorted(flagged - planned)[:10], sorted(planned - flagged)[:10])
    assert "results/rrr_survival/tables/km_bands.csv" in flagged
    assert not any(p.startswith("results/repr_transfer/") for p in flagged)
    assert "results/rrr_survival/tables/median_survival.csv" not in flagged
    assert ("km_bands.csv: params: plan.options.band_level = 0.9 when made; 0.8 now"
            in proc.stdout)
    assert "results/claims.pdf: params: rows_per_page = 18 when made; 20 now" in proc.stdout
    rerun = subprocess.run([sys.executable, "-m", "snakemake", *snakefile, "--cores", "2",
                            "--configfile", str(changed), *triggers],
                           capture_output=True, text=True, timeout=900, cwd=checkout)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    proc = verify(changed)
    assert proc.returncode == 0 and ", 0 with mismatches" in proc.stdout, (
        proc.stdout[-3000:] + proc.stderr[-3000:])
    shutil.rmtree(work)


def _planned_rules(checkout: Path, work: Path) -> set[str]:
    """Rules of the jobs a dry run plans because their params changed (library_code)."""
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(checkout / "Snakefile"),
           "-n", "--cores", "2", "--configfile", str(SMALL), "--directory", str(work),
           "--rerun-triggers", "params"]
    proc = snakerun.run(cmd[3:], cwd=checkout, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return set(job_counts(proc.stdout)) - {"all"}


def _checkout_and_run_copies(tmp_path: Path, run: Path, *, beside: bool = False
                             ) -> tuple[Path, Path]:
    """A copy of the checkout (to edit) and of a finished run (to rerun) under ``tmp_path``,
    or (``beside``) the run's beside it: its sidecars name bundled inputs relative to the
    run's directory, which a copy at another depth does not find."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in ("Snakefile", "workflow", "scripts", "config", "envs", "profiles"):
        source = ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(
            source, checkout / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                        if source.is_dir() else {}))
    (checkout / "resources").symlink_to(ROOT / "resources")
    work = run.with_name(f"{run.name}-{tmp_path.name}") if beside else tmp_path / "work"
    shutil.copytree(run, work, symlinks=True)
    return checkout, work


def test_reruns_follow_the_library_code_a_rule_runs(runs, tmp_path):
    """After a complete run, an edit in a library module plans exactly the jobs whose scripts
    reach it (and their dependants): the survival kernels rerun ldp and rrr jobs, never a
    repr_transfer job; a repr_transfer module reruns no ldp or rrr job."""
    checkout, work = _checkout_and_run_copies(tmp_path, runs["2"])
    library = checkout / "scripts" / "dprepro"
    assert _planned_rules(checkout, work) == set()

    def edit(module: str) -> set[str]:
        path = library / module
        original = path.read_text()
        path.write_text(original + "\n# an edit\n")
        try:
            return _planned_rules(checkout, work)
        finally:
            path.write_text(original)

    beran = edit("survival/conditional.py")
    assert "ldp_simulate" in beran and "ldp_mse_table" in beran
    assert not any(r.startswith(("repr_", "rrr_")) for r in beran), beran
    km = edit("survival/kaplan_meier.py")
    assert {"rrr_original", "rrr_private_releases"} <= km
    assert not any(r.startswith(("repr_", "ldp_")) for r in km), km
    kernels = edit("survival/__init__.py")
    assert any(r.startswith("ldp_") for r in kernels) and any(r.startswith("rrr_") for r in kernels)
    assert not any(r.startswith("repr_") for r in kernels), kernels
    repr_edit = edit("studies/repr_transfer/drug.py")
    assert "repr_drug" in repr_edit
    assert not any(r.startswith(("ldp_", "rrr_", "privacy_audit")) for r in repr_edit), repr_edit
    # registering or changing a mechanism reruns the audit
    assert "privacy_audit_table" in edit("mechanisms/registry.py")
