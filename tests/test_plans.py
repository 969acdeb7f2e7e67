"""The studies' plans (what the rules ask of the configuration), tested as library code."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest

from dprepro.config.schema import ConfigError, load_schema
from dprepro.studies.ldp_indicators.plan import LdpPlan, replicate_path, simulate_minutes
from dprepro.studies.repr_transfer import common as repr_common
from dprepro.studies.repr_transfer import plan as repr_plan
from helpers.shipped import shipped_config

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")


_config = shipped_config


@pytest.fixture(scope="module")
def config():
    return _config()


# ---------------------------------------------------------------------------- ldp_indicators
def _ldp(config, **changes) -> LdpPlan:
    """The default study with ``key=value`` or ``outer__inner=value`` changes."""
    study = copy.deepcopy(config["ldp_indicators"])
    for key, value in changes.items():
        if "__" in key:
            outer, inner = key.split("__")
            study[outer][inner] = value
        else:
            study[key] = value
    return LdpPlan(study, seed=config["seed"])


def test_main_design_runs_figure_one_and_the_alpha_grid_on_the_same_samples(config):
    plan = _ldp(config, alphas=[5, 0.5], alpha_grid=[1, 0.5, 100])
    assert plan.designs["main"]["alphas"] == [0.5, 1.0, 5.0, 100.0]
    assert plan.designs["convergence"]["alphas"] == sorted(
        float(a) for a in set(config["ldp_indicators"]["convergence"]["alphas"]))


def test_variant_designs_exist_only_when_they_differ_from_main(config):
    x = float(config["ldp_indicators"]["x"])
    plan = _ldp(config, variants__x_values=[x, 0.25], variants__noise_scales=[1.0],
                variants__phat_at_x=False)
    assert "x0.25" in plan.designs and plan.designs["x0.25"]["x"] == 0.25
    assert "noise_scale" not in plan.designs and "phat_at_x" not in plan.designs
    plan = _ldp(config, variants__x_values=[x], variants__noise_scales=[1.0, 2.0],
                variants__phat_at_x=True)
    assert not any(d.startswith("x") for d in plan.designs)
    assert plan.designs["phat_at_x"]["phat_at_x"] is True and "noise_scale" in plan.designs


def test_settings_are_the_product_of_mechanisms_censorings_sizes_and_alphas(config):
    plan = _ldp(config)
    labels = [s["label"] for s in config["ldp_indicators"]["censoring"]]
    rows = plan.settings("main", labels, [100, 200], [0.5, 1], ["a", "b", "c"], tag="t")
    assert len(rows) == 3 * len(labels) * 2 * 2
    first = rows[0]
    assert (first["mechanism"], first["censoring"], first["n"], first["alpha"]) == \
        ("a", labels[0], 100, 0.5)
    assert first["lambda_t"] == config["ldp_indicators"]["censoring"][0]["lambda_t"]
    assert first["tag"] == "t"


def test_unknown_censoring_and_variant_are_named(config):
    plan = _ldp(config)
    with pytest.raises(ValueError, match="unknown censoring label '99'.*configured"):
        plan.censoring("99")
    with pytest.raises(ValueError, match="unknown variant 'size'"):
        plan.variant_settings("size")


def test_noise_scale_variant_renames_the_mechanism_off_scale_one(config):
    plan = _ldp(config, variants__noise_scales=[1.0, 0.5])
    mechanisms = {(s["mechanism"], s["noise_scale"], s["design"])
                  for s in plan.variant_settings("noise_scale")}
    m = config["ldp_indicators"]["variants"]["mechanism"]
    assert mechanisms == {(m, 1.0, "main"), (f"{m}_scale0.5", 0.5, "noise_scale")}


def test_replicate_outputs_pair_each_file_with_its_sidecar(config):
    out = LdpPlan.replicate_outputs("main", "laplace", ["25", "50"], [400])
    assert out["cens25_n400"] == replicate_path("main", "laplace", "25", 400)
    assert out["prov_cens50_n400"] == out["cens50_n400"] + ".prov.json"
    assert len(out) == 4


def test_simulate_params_read_the_design_from_the_wildcard(config):
    plan = _ldp(config)
    params = plan.simulate_params(None, ["25"], [400])
    wildcards = SimpleNamespace(design="convergence")
    assert params["design"](wildcards) == "convergence"
    assert params["alphas"](wildcards) == plan.designs["convergence"]["alphas"]
    fixed = plan.simulate_params("main", ["25"], [400])
    assert fixed["alphas"] == plan.designs["main"]["alphas"]
    grid = config["ldp_indicators"]["t_grid"]
    assert fixed["t"][0] == grid["start"] and fixed["t"][-1] == pytest.approx(grid["stop"])
    assert len(fixed["t"]) == grid["num"]
    assert list(fixed["settings"][0]["setting"]) == sorted(fixed["settings"][0]["setting"])


def test_simulation_minutes_grow_with_n_squared():
    assert simulate_minutes(100) == 5
    assert simulate_minutes(4000) == 5 + 40


# ---------------------------------------------------------------------------- repr_transfer
def test_raw_suffix_comes_from_the_url():
    assert repr_plan.raw_suffix("https://x/y/Cell_line_RMA.txt.zip?dl=1", ".zip") == ".txt.zip"
    assert repr_plan.raw_suffix("https://x/download/12345", ".csv") == ".csv"


def test_default_plan_is_synthetic_with_the_equal_dimension_control(config):
    plan = repr_plan.ReprPlan(config)
    assert plan.origin == "synthetic"
    methods = plan.representation_methods()
    study = config["repr_transfer"]
    assert methods[: len(study["representations"])] == list(study["representations"])
    assert ("pca_vae_dim" in methods) == bool(
        study["equal_dim_control"] and {"pca", "vae"} <= set(study["representations"]))
    assert plan.vae_options("pca") == {} and "max_epochs" in plan.vae_options("vae")
    assert plan.data_inputs("private")(None) == {}
    assert len(plan.search_paths()) == len(plan.pipelines) * len(study["representations"])
    outputs = plan.pipeline_outputs(lambda p: f"x/{p}.csv")
    assert set(outputs) == {*plan.pipelines, *(f"prov_{p}" for p in plan.pipelines)}


def test_pca_options_reach_pca_and_its_control_only(config):
    from dprepro.representations.pca import PCA_DEFAULTS

    plan = repr_plan.ReprPlan(config)
    # one seed per configuration, from the SeedSequence stream pca/randomized
    seed = repr_common.stream_int(config["seed"], "pca/randomized")
    assert plan.pca_options("pca") == {**PCA_DEFAULTS, "random_state": seed}
    assert PCA_DEFAULTS == {"svd_solver": "auto", "oversamples": 40, "power_iterations": 10}
    other = copy.deepcopy(config)
    other["seed"] += 1
    assert repr_plan.ReprPlan(other).pca_options("pca")["random_state"] != seed
    assert plan.pca_options("pca_vae_dim") == plan.pca_options("pca")
    assert plan.pca_options("vae") == {} and plan.pca_options("random_projection") == {}
    # the embedded runs keep their SLURM limits; paper mode's follow its measurements
    assert (plan.cancer_type_runtime(), plan.drug_runtime(), plan.clipping_runtime()) == (
        60, 120, 30)


def test_mixed_real_and_synthetic_expression_is_refused_naming_the_key(config):
    mixed = copy.deepcopy(config)
    mixed["datasets"]["gdsc"]["source"] = "download"
    with pytest.raises(ConfigError, match="datasets.depmap.source"):
        repr_plan.ReprPlan(mixed)


def test_paper_mode_reads_the_caches_and_sizes_jobs_for_paper_scale():
    paper = _config("paper.yaml")
    plan = repr_plan.ReprPlan(paper)
    assert plan.origin == "real"
    inputs = plan.data_inputs("private")(None)
    assert inputs["gdsc_dose_response"] == repr_plan.GDSC_CACHE["dose_response"]
    if plan.public_source() == "tcga":
        assert inputs["tcga_expression"] == repr_plan.TCGA_CACHE["expression"]
        assert plan.data_settings()["holdout"] == sorted(plan.data_settings()["holdout"])
    assert plan.fit_mem_mb(SimpleNamespace(representation="pca")) == \
        repr_plan.FIT_PCA_PAPER["mem_mb"]
    assert plan.fit_mem_mb(SimpleNamespace(representation="vae")) >= plan.mem_mb["learn"]
    assert plan.search_runtime("pca") > repr_plan.ReprPlan(_config()).search_runtime("pca")
    raw = plan.raw("gdsc", "dose_response")
    assert raw.startswith("results/data/raw/gdsc/dose_response")


def test_tcga_public_set_needs_tcga_labels_and_cases():
    paper = _config("paper.yaml")
    paper["repr_transfer"]["public_source"] = "tcga"
    paper["datasets"]["gdsc"]["lineage_column"] = "site"
    with pytest.raises(ConfigError, match="datasets.gdsc.lineage_column"):
        repr_plan.ReprPlan(paper).tcga_holdout()
    paper["datasets"]["gdsc"]["lineage_column"] = "TCGA_LABEL"
    paper["repr_transfer"]["cancer_type"]["cases"] = []
    with pytest.raises(ConfigError, match="repr_transfer.cancer_type.cases"):
        repr_plan.ReprPlan(paper).tcga_holdout()


def test_a_cohorts_figure_is_filed_under_its_title_in_the_report():
    from types import SimpleNamespace

    from dprepro.data.cohort_spec import CohortSpec
    from dprepro.studies.rrr_survival.plan import cohort_report_flags

    cohorts = {"kidney": CohortSpec(name="kidney", source="bundled", title="Kidney (PKD)"),
               "toy": CohortSpec(name="toy", source="file")}
    flags = cohort_report_flags("results/figures/figure2_{dataset}_rrr_eps1.png", cohorts)
    assert flags["category"] == "rrr_survival"
    job = SimpleNamespace(dataset="kidney")
    assert flags["subcategory"](job) == "Kidney (PKD)"
    assert flags["subcategory"](SimpleNamespace(dataset="toy")) == "toy"
    assert flags["labels"](job) == {"figure": "Figure 2", "panel": "RRR, ε = 1",
                                    "format": "PNG"}
    # a pattern with more wildcards than the cohort (the Cox forest's {ext}), in the
    # study's numbered report section
    forest = cohort_report_flags("x/cox_forest_{dataset}.{ext}", cohorts, "2 rrr_survival")
    assert forest["category"] == "2 rrr_survival"
    assert forest["labels"](SimpleNamespace(dataset="toy", ext="pdf")) == {
        "figure": "Cox forest plot", "panel": "all panels", "format": "PDF"}


def test_vae_threads_are_the_vae_jobs_threads_and_a_parameter_only_when_not_one(config):
    """``repr_transfer.vae.threads``: the VAE models' search and fit jobs (the VAE, the joint
    model, the VAE control) declare it and pass it to their fits; the others keep one thread;
    at 1 (the embedded default) the VAE jobs' parameters stay what they were."""
    jobs = ["vae", "supervised_vae", "vae_svae_dim", "pca", "pca_vae_dim",
            "random_projection"]
    plan = repr_plan.ReprPlan(config)
    assert config["repr_transfer"]["vae"]["threads"] == 1
    assert {r: plan.job_threads(SimpleNamespace(representation=r)) for r in jobs} == dict.fromkeys(
        jobs, 1)
    assert "threads" not in plan.vae_options("vae")
    four = copy.deepcopy(config)
    four["repr_transfer"]["vae"]["threads"] = 4
    plan = repr_plan.ReprPlan(four)
    assert {r: plan.job_threads(SimpleNamespace(representation=r)) for r in jobs} == {
        "vae": 4, "supervised_vae": 4, "vae_svae_dim": 4, "pca": 1, "pca_vae_dim": 1,
        "random_projection": 1}
    assert plan.vae_options("vae")["threads"] == plan.vae_options("vae_svae_dim")["threads"] == 4
    assert "threads" not in plan.vae_options("pca_vae_dim")
