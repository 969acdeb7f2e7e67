"""The studies' job plans (``dprepro.studies.<study>.jobs``): the files the rules name, the
plan each job reads, and the short params a rule carries instead (``plan_sha256``)."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest

from dprepro.config.schema import load_schema
from dprepro.runtime.job_plan import JobParams, merged_params, plan_digest, plan_of_job
from dprepro.studies.ldp_indicators import jobs as ldp_jobs
from dprepro.studies.repr_transfer import jobs as repr_jobs
from dprepro.studies.rrr_survival import jobs as rrr_jobs
from helpers.shipped import shipped_config

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")


_config = shipped_config


@pytest.fixture(scope="module")
def config():
    return _config()


def _wc(**values):
    """Wildcards as Snakemake hands them to a params function (``.items()``, attributes)."""
    return SimpleNamespace(items=lambda: values.items(), **values)


# ------------------------------------------------------------------ digests and params
def test_the_plan_digest_ignores_key_order_and_tuples_but_not_values():
    plan = {"releases": [{"dataset": "a", "epsilon": 1.0}], "draws": 3}
    same = {"draws": 3, "releases": ({"epsilon": 1.0, "dataset": "a"},)}
    assert plan_digest(plan) == plan_digest(same)
    assert len(plan_digest(plan)) == 16
    assert plan_digest(plan) != plan_digest({**plan, "draws": 4})
    assert plan_digest(plan) != plan_digest(
        {"releases": [{"dataset": "a", "epsilon": 2.0}], "draws": 3})


def test_a_step_gets_the_plan_the_rule_digested_and_refuses_another(config):
    wildcards = {"dataset": config["rrr_survival"]["datasets"][0]}
    plan = plan_of_job(config, "rrr_original", wildcards)
    params = {"plan_sha256": plan_digest(plan), "library_code": "abc"}
    merged = merged_params(params, config, "rrr_original", wildcards)
    assert isinstance(merged, JobParams)
    assert merged.releases == plan["releases"] and merged.library_code == "abc"
    assert dict(merged.items())["plan_sha256"] == params["plan_sha256"]
    changed = copy.deepcopy(config)
    changed["rrr_survival"]["draws"] += 1
    with pytest.raises(RuntimeError, match="rrr_original.*plan_sha256"):
        merged_params(params, changed, "rrr_original", wildcards)
    # a rule without a plan keeps its params as they are
    assert dict(merged_params({"dpi": 100}, config, "claims_figure").items()) == {"dpi": 100}
    with pytest.raises(AttributeError, match="no parameter 'dpi'"):
        merged.dpi  # noqa: B018


def test_rule_params_hold_only_short_values(config):
    """No release list or configuration section in any planned rule's params."""
    plans = [(rrr_jobs.StudyPlan(config), rule) for rule in (
        "rrr_original", "rrr_private_releases", "rrr_median_table", "rrr_claims_table",
        "rrr_figure2", "rrr_cox", "rrr_cox_table")]
    plans += [(ldp_jobs.StudyPlan(config), rule) for rule in ("ldp_claims", "ldp_mse_table")]
    plans += [(repr_jobs.StudyPlan(config), rule) for rule in ("repr_drug", "repr_fit")]
    dataset = config["rrr_survival"]["datasets"][0]
    for plan, rule in plans:
        params = plan.job_params(rule, figure="figure2")
        assert set(params) == {"plan_sha256", "figure"}
        digest = params["plan_sha256"](_wc(dataset=dataset, pipeline="corrected",
                                           chunk="0", representation="pca"))
        assert isinstance(digest, str) and len(digest) == 16


# ------------------------------------------------------------------ rrr_survival
def _two_cohorts(config) -> dict:
    config = copy.deepcopy(config)
    assert len(config["rrr_survival"]["datasets"]) >= 2, "the default names two cohorts"
    return config


def test_a_cohort_job_gets_its_own_releases_only(config):
    plan = rrr_jobs.StudyPlan(_two_cohorts(config))
    first, second = config["rrr_survival"]["datasets"][:2]
    original = plan.params("rrr_original", {"dataset": first})
    assert {r["dataset"] for r in original["releases"]} == {first}
    assert {r["mechanism"] for r in original["releases"]} == set(plan.reference_names)
    private = plan.params("rrr_private_releases", {"dataset": second})
    assert {r["dataset"] for r in private["releases"]} == {second}
    assert all(r["epsilon"] is not None for r in private["releases"])
    assert list(private["groups"]) == [second] == private["datasets"]
    # every configured ε of every private mechanism, once
    epsilons = {float(e) for e in config["rrr_survival"]["epsilons"]}
    lnte = [r for r in private["releases"] if r["mechanism"] == "lnte"]
    assert {r["epsilon"] for r in lnte} == epsilons and len(lnte) == len(epsilons)


def test_another_cohorts_change_leaves_a_cohort_jobs_plan_alone(config):
    first, second = config["rrr_survival"]["datasets"][:2]
    before = rrr_jobs.StudyPlan(_two_cohorts(config))
    changed = _two_cohorts(config)
    changed["datasets"][second]["title"] = "another title"
    after = rrr_jobs.StudyPlan(changed)
    for rule in ("rrr_original", "rrr_private_releases", "rrr_figure2", "rrr_km_bands",
                 "rrr_cox"):
        assert plan_digest(before.params(rule, {"dataset": first})) == \
            plan_digest(after.params(rule, {"dataset": first})), rule
    # the second cohort's own figure, and the study-wide utility figure, do change
    assert before.params("rrr_figure2", {"dataset": second}) != \
        after.params("rrr_figure2", {"dataset": second})
    assert plan_digest(before.params("rrr_utility")) != plan_digest(after.params("rrr_utility"))


def test_release_files_per_cohort_and_use(config):
    plan = rrr_jobs.StudyPlan(config)
    datasets = config["rrr_survival"]["datasets"]
    root = "results/rrr_survival/releases"
    assert plan.release_files("original", "logrank_permuted.csv") == [
        f"{root}/{d}/original/logrank_permuted.csv" for d in datasets]
    private = plan.private_files
    assert all(p.startswith(f"{root}/{{dataset}}/") for p in private)
    assert not any("/original/" in p for p in private)
    assert f"{root}/{{dataset}}/lnte_eps1/curves.parquet" in private
    # the log-rank test runs on RRR (and the original), not on LNTE
    logrank = [p for p in private if p.endswith("logrank.csv")]
    assert logrank and all("/rrr" in p for p in logrank)
    assert plan.reference_files[-2:] == [f"{root}/{{dataset}}/original/logrank.csv",
                                         f"{root}/{{dataset}}/original/logrank_permuted.csv"]


def test_figure_panels_and_curve_claims_take_the_first_calibration_only(config):
    changed = copy.deepcopy(config)
    changed["rrr_survival"]["calibration"] = "paper"
    changed["rrr_survival"]["extra_calibrations"] = ["exact"]
    plan = rrr_jobs.StudyPlan(changed)
    assert any(n.startswith("rrr_exact_eps") for n in plan.private_names)
    assert not any("exact" in n for n in plan.figure_names)
    assert any(n.startswith("rrr_eps") for n in plan.figure_names)
    assert {r["calibration"] for r in plan.releases["curve_claims"]
            if r["mechanism"] == "rrr"} == {"paper"}
    # the tables carry every calibration
    table = plan.params("rrr_median_table")["options"]["releases"]
    assert {r["calibration"] for r in table if r["mechanism"] == "rrr"} == {"paper", "exact"}


def test_table_rules_read_the_options_of_their_table(config):
    plan = rrr_jobs.StudyPlan(config)
    assert set(plan.params("rrr_median_table")["options"]) == {"releases"}
    assert set(plan.params("rrr_rejection_table")["options"]) == {
        "releases", "logrank_releases", "significance"}
    bands = plan.params("rrr_bands_table")["options"]
    assert {r["mechanism"] for r in bands["releases"]}.isdisjoint({"original"})
    assert bands["draws"] == config["rrr_survival"]["draws"]


def test_the_study_targets_name_every_cohorts_figures(config):
    plan = rrr_jobs.StudyPlan(config)
    for dataset in config["rrr_survival"]["datasets"]:
        assert f"results/rrr_survival/figures/figure2_{dataset}.pdf" in plan.targets
        assert f"results/rrr_survival/figures/km_bands_{dataset}.png" in plan.targets
    for dataset in plan.cox_cohorts:
        assert f"results/rrr_survival/figures/cox_forest_{dataset}.pdf" in plan.targets
    assert len(plan.targets) == len(set(plan.targets))


def test_an_incomplete_cohort_is_a_problem_before_any_table_is_read(config, tmp_path):
    changed = copy.deepcopy(config)
    dataset = changed["rrr_survival"]["datasets"][0]
    del changed["datasets"][dataset]["source"]
    problems, warnings = rrr_jobs.cohort_problems(changed, ROOT, tmp_path)
    assert len(problems) == 1 and problems[0].startswith("invalid configuration:\n  - ")
    assert dataset in problems[0] and warnings == []
    assert rrr_jobs.cohort_problems(config, ROOT, ROOT)[0] == []


# ------------------------------------------------------------------ ldp_indicators
def test_ldp_variant_and_figure_plans(config):
    plan = ldp_jobs.StudyPlan(config)
    x = plan.params("ldp_variant_table", {"variant": "phat"})
    assert x["column"] == "phat_at"
    assert x["settings"] == plan.variants["phat"]
    assert plan.params("ldp_figure", {"figure": "mse_vs_n"})["options"] == {}
    assert plan.params("ldp_figure", {"figure": "bias_variance"})["options"] == {
        "alphas": config["ldp_indicators"]["alphas"]}
    conv = plan.params("ldp_convergence_table")["settings"]
    assert {s["n"] for s in conv} == set(config["ldp_indicators"]["convergence"]["sample_sizes"])


def test_ldp_targets_hold_the_clip_table_only_when_p_hat_is_clipped(config):
    clip = "results/ldp_indicators/tables/mse_clip.csv"
    changed = copy.deepcopy(config)
    changed["ldp_indicators"]["clip_phat"] = True
    assert clip in ldp_jobs.StudyPlan(changed).core_targets
    changed["ldp_indicators"]["clip_phat"] = False
    assert clip not in ldp_jobs.StudyPlan(changed).core_targets
    assert not set(ldp_jobs.StudyPlan(changed).core_targets) & set(
        ldp_jobs.StudyPlan(changed).convergence_targets)


def test_ldp_simulation_plan_is_the_designs(config):
    plan = ldp_jobs.StudyPlan(config)
    main = plan.params("ldp_simulate", {"design": "main", "mechanism": "laplace"})
    assert main["design"] == "main" and main["alphas"] == plan.plan.designs["main"]["alphas"]
    conv = plan.params("ldp_simulate_convergence", {"mechanism": "laplace"})
    assert conv["design"] == "convergence"
    assert {s["n"] for s in conv["settings"]} == set(
        config["ldp_indicators"]["convergence"]["sample_sizes"])


# ------------------------------------------------------------------ repr_transfer
def test_repr_plans_and_the_rules_functions(config):
    plan = repr_jobs.StudyPlan(config)
    wc = _wc(figure="drug_vs_epsilon", pipeline="corrected")
    assert plan.summary_input(wc) == "results/repr_transfer/tables/drug_summary.csv"
    assert plan.params("repr_figure", {"figure": "drug_vs_epsilon"})["settings"][
        "epsilon"] == config["repr_transfer"]["drug"]["epsilon"]
    # the data jobs record no data_origin (as before the plans); the learners do
    assert "data_origin" not in plan.params("repr_public_data")
    assert plan.params("repr_drug", {"pipeline": "corrected", "chunk": "0"})[
        "data_origin"] == plan.origin
    for p, r in plan.similarity_keys:
        assert r in plan.representation_methods() and p in plan.pipelines
    assert plan.search_outputs()["corrected"].endswith("candidates/corrected/"
                                                       "{representation}.csv")

