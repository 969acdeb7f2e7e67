"""The rrr_survival study's jobs: which files each rule reads and writes, and each job's plan.

``workflow/rules/rrr_survival.smk`` holds the rules and one-line calls of
:class:`StudyPlan` (``RRR = StudyPlan(config)``; ``RRR.private_files``;
``params: **RRR.job_params("rrr_cox")``). A job's long parameters (its releases, its
cohorts' groups) are its *plan*, :meth:`StudyPlan.params`: the rule's ``params`` carry
only its digest (and a few short values), and the step rebuilds the plan from the run's
configuration (:mod:`dprepro.runtime.job_plan`). A job of one cohort (wildcard
``dataset``) plans from that cohort only, so adding or changing another cohort leaves
its plan, and its files, alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cached_property

from dprepro.runtime.job_plan import JobPlans
from dprepro.studies.rrr_survival import plan as rrr_plan

__all__ = ["RELEASE", "RRR_DIR", "TABLES", "StudyPlan", "cohort_problems"]

RRR_DIR = "results/rrr_survival"
#: One cohort's release folder (wildcard ``dataset``).
RELEASE = f"{rrr_plan.RELEASE_ROOT}/{{dataset}}"
#: The study's aggregated tables, by name.
TABLES = {name: f"{RRR_DIR}/tables/{name}.csv" for name in (
    "median_survival", "pairwise_logrank", "logrank_rejection_rate", "utility", "km_bands",
    "km_curves")}
#: The table each table rule builds (``rrr_tables.py``'s builder).
TABLE_RULES = {"rrr_median_table": "median_survival", "rrr_logrank_table": "pairwise_logrank",
               "rrr_rejection_table": "logrank_rejection_rate",
               "rrr_utility_table": "utility", "rrr_bands_table": "km_bands",
               "rrr_curves_table": "km_curves"}


def cohort_problems(config: Mapping, workflow_dir, working_dir) -> tuple[list[str], list[str]]:
    """What stops the study before any job runs, and what it only warns of.

    Parameters
    ----------
    config : mapping
        The run's configuration.
    workflow_dir, working_dir : path-like
        The checkout and the directory snakemake was launched in (bundled and local
        tables are found from them).

    Returns
    -------
    problems, warnings : list of str
        ``problems`` first lists incomplete cohort entries (then no table is read), else
        the cohort tables already on disk that hold no usable data.
    """
    from dprepro.data.cohort_checks import check_cohort_tables
    from dprepro.data.cohort_spec import cohort_config_problems

    problems = cohort_config_problems(config)
    if problems:
        return ["invalid configuration:\n  - " + "\n  - ".join(problems)], []
    check = check_cohort_tables(config, workflow_dir=workflow_dir, working_dir=working_dir)
    if check.problems:
        return (["cohort data not usable (nothing was run):\n  - "
                 + "\n  - ".join(check.problems)], list(check.warnings))
    return [], list(check.warnings)


def _names(releases) -> list[str]:
    """Release folder names, each once, in order (the same for every cohort)."""
    return list(dict.fromkeys(rrr_plan.release_name(r) for r in releases))


class StudyPlan(JobPlans):
    """The study's files and job plans under one configuration.

    Parameters
    ----------
    config : mapping
        The run's configuration (schema defaults filled in).
    """

    def __init__(self, config: Mapping):
        self.config = config
        self.section = config["rrr_survival"]

    # read when first asked: a cohort's loading rule (data.smk) plans before the study's
    # cohort check (cohort_problems), which names every incomplete entry at once
    @cached_property
    def cohorts(self) -> dict:
        """The study's cohorts (:func:`dprepro.studies.rrr_survival.plan.cohort_specs`)."""
        return rrr_plan.cohort_specs(self.config)

    @cached_property
    def cox_cohorts(self) -> dict:
        """The Cox analysis' cohorts: the study's, then ``cox.extra_datasets``."""
        return rrr_plan.cox_specs(self.config)

    # ------------------------------------------------------------------ releases
    @cached_property
    def releases(self) -> dict[str, list[dict]]:
        """Release lists by use: ``all``; ``logrank`` (original, RRR); ``reference`` (the
        non-private ones, rule rrr_original); ``private`` (every other, drawn many times);
        ``original``; ``curve_claims`` (the curves the claims on groups read: RRR with the
        first calibration only)."""
        config, first = self.config, self.section["calibration"]
        out = {"all": rrr_plan.releases(config),
               "logrank": rrr_plan.releases(config, ("original", "rrr")),
               "reference": rrr_plan.releases(config, list(rrr_plan.NO_EPSILON)),
               "private": rrr_plan.releases(config, [m for m in rrr_plan.MECHANISMS
                                                     if m not in rrr_plan.NO_EPSILON]),
               "curve_claims": [r for r in rrr_plan.releases(config, ("original", "rrr", "lnte"))
                                if r["mechanism"] != "rrr" or r["calibration"] == first]}
        out["original"] = [r for r in out["all"] if r["mechanism"] == "original"]
        return out

    def release_files(self, which: str, name: str) -> list[str]:
        """The files ``name`` (``medians.csv``) of every release of list ``which``."""
        return rrr_plan.release_files(self.releases[which], name)

    @cached_property
    def reference_names(self) -> list[str]:
        """The non-private references' folders (``original``, the noise-free grid)."""
        return list(rrr_plan.NO_EPSILON)

    @cached_property
    def private_names(self) -> list[str]:
        return _names(self.releases["private"])

    @cached_property
    def logrank_names(self) -> list[str]:
        """The private releases that are tested with the log-rank test."""
        return _names(r for r in self.releases["logrank"] if r["mechanism"] != "original")

    @cached_property
    def figure_names(self) -> list[str]:
        """Figure 2's panels after the original: RRR with the first calibration only."""
        first = self.section["calibration"]
        return _names(r for r in self.releases["private"]
                      if r["mechanism"] not in ("rrr", "rrr_debiased")
                      or r["calibration"] == first)

    def outputs(self, names: list[str], file: str) -> list[str]:
        """``file`` of each release folder in ``names`` of one cohort (pattern)."""
        return [f"{RELEASE}/{name}/{file}" for name in names]

    @property
    def private_files(self) -> list[str]:
        """Every file of a cohort's private releases (rule rrr_private_releases)."""
        return [*(f for name in self.private_names for f in self.outputs(
                    [name], "medians.csv") + self.outputs([name], "curves.parquet")),
                *self.outputs(self.logrank_names, "logrank.csv")]

    @property
    def reference_files(self) -> list[str]:
        """Every file of a cohort's non-private references (rule rrr_original)."""
        return [*(f for name in self.reference_names for f in self.outputs(
                    [name], "medians.csv") + self.outputs([name], "curves.parquet")),
                *self.outputs(["original"], "logrank.csv"),
                *self.outputs(["original"], "logrank_permuted.csv")]

    # ------------------------------------------------------------------ figures and targets
    @property
    def figure2_files(self) -> list[str]:
        """One cohort's Figure 2: the composite (PDF, PNG), each panel as PNG only (a PDF
        of every panel cost about a quarter of the job's CPU)."""
        return [*(f"{RRR_DIR}/figures/figure2_{{dataset}}.{ext}" for ext in ("pdf", "png")),
                *(f"{RRR_DIR}/figures/figure2_{{dataset}}_{name}.png"
                  for name in ["original", *self.figure_names])]

    @property
    def bands_files(self) -> list[str]:
        return [f"{RRR_DIR}/figures/km_bands_{{dataset}}.{ext}" for ext in ("pdf", "png")]

    utility_files = [f"{RRR_DIR}/figures/utility.{ext}" for ext in ("pdf", "png")]
    claims = f"{RRR_DIR}/tables/claims.csv"
    #: per release, draw and group: the sup-distances behind utility.csv (the claims read them)
    distances = f"{RRR_DIR}/scores/sup_distances.parquet"
    cox_fits = f"{RRR_DIR}/cox/{{dataset}}/fits.parquet"
    cox_table = f"{RRR_DIR}/tables/cox.csv"
    cox_draws = f"{RRR_DIR}/tables/cox_draws.parquet"
    cox_forest = f"{RRR_DIR}/figures/cox_forest_{{dataset}}.{{ext}}"
    cox_bias = [f"{RRR_DIR}/figures/cox_bias_coverage.{ext}" for ext in ("pdf", "png")]
    tables = TABLES

    def cox_forest_files(self, dataset: str = "{dataset}") -> list[str]:
        return [self.cox_forest.format(dataset=dataset, ext=ext) for ext in ("pdf", "png")]

    @property
    def targets(self) -> list[str]:
        """Every file the study's target makes, in the order the rule ``all`` names them."""
        datasets = self.section["datasets"]
        return [*TABLES.values(), self.claims,
                *(p.format(dataset=d) for d in datasets for p in self.figure2_files),
                *(p.format(dataset=d) for d in datasets for p in self.bands_files),
                *self.utility_files, self.cox_table, self.cox_draws,
                *(p for d in self.cox_cohorts for p in self.cox_forest_files(d)),
                *self.cox_bias]

    # ------------------------------------------------------------------ job plans
    def _plan(self, rule: str, wildcards: dict) -> dict:
        planner = self._planners().get(rule)
        if planner is None:
            raise KeyError(f"rule {rule!r} of rrr_survival has no job plan")
        return planner(wildcards)

    def _planners(self) -> dict[str, Callable[[dict], dict]]:
        table = {rule: (lambda wc, rule=rule: self._table(rule)) for rule in TABLE_RULES}
        return {"rrr_original": lambda wc: self._releases_job("reference", wc["dataset"]),
                "rrr_private_releases": lambda wc: self._releases_job("private",
                                                                      wc["dataset"]),
                **table, "rrr_claims_table": lambda wc: self._claims(),
                "rrr_figure2": lambda wc: self._cohort_figure(wc["dataset"]),
                "rrr_km_bands": lambda wc: {**self._cohort_figure(wc["dataset"]),
                                            "draws": self.section["draws"]},
                "rrr_utility": lambda wc: self._utility_figure(),
                "rrr_cox": lambda wc: self._cox(wc["dataset"]),
                "rrr_cox_table": lambda wc: self._cox_table(),
                "rrr_cox_forest_figure": lambda wc: self._cox_figure(),
                "rrr_cox_bias_coverage_figure": lambda wc: self._cox_figure(),
                "rrr_cohort": lambda wc: self._cohort(wc["dataset"])}

    def _releases_job(self, which: str, dataset: str) -> dict:
        """rrr_original / rrr_private_releases: one cohort's releases of list ``which``."""
        spec = self.cohorts[dataset]
        return {"datasets": [dataset],
                "releases": [r for r in self.releases[which] if r["dataset"] == dataset],
                # the original is analysed once; draws = the permuted-label reference's draws
                "draws": self.section["draws"], "seed": self.config["seed"],
                "groups": {dataset: list(spec.groups)},
                "privacy_unit": {dataset: spec.privacy_unit}}

    def _table(self, rule: str) -> dict:
        """A table rule's builder options (``rrr_tables.py``)."""
        name, rrr = TABLE_RULES[rule], self.section
        options: dict = {"releases": self.releases["all"]}
        if name in ("pairwise_logrank", "logrank_rejection_rate"):
            options["logrank_releases"] = self.releases["logrank"]
        if name == "logrank_rejection_rate":
            options["significance"] = rrr["significance"]
        if name == "km_bands":
            # quantiles over this many draws of the private releases: a reference
            options = {"releases": self.releases["private"], "band_level": rrr["band_level"],
                       "draws": rrr["draws"]}
        return {"options": options}

    def _claims(self) -> dict:
        return {"releases": self.releases["all"], "logrank_releases": self.releases["logrank"],
                "significance": self.section["significance"], "seed": self.config["seed"],
                "clustered": [d for d, s in self.cohorts.items() if s.rows_per_person > 1],
                "curve_releases": self.releases["curve_claims"]}

    def _cohort_figure(self, dataset: str) -> dict:
        """Figure 2 / the bands of one cohort: that cohort's settings only."""
        spec = self.cohorts[dataset]
        return {"datasets": [dataset], "epsilons": self.section["epsilons"],
                "cohorts": {dataset: rrr_plan.cohort_params(spec)},
                "dpi": self.config["figures"]["dpi"], "data_origin": spec.origin}

    def _utility_figure(self) -> dict:
        return {"epsilons": self.section["epsilons"],
                "cohorts": {d: rrr_plan.cohort_params(s) for d, s in self.cohorts.items()},
                "dpi": self.config["figures"]["dpi"], "datasets": self.section["datasets"],
                "data_origin": ",".join(sorted({s.origin for s in self.cohorts.values()}))}

    def _cox(self, dataset: str) -> dict:
        """One cohort's Cox fits: its groups and covariates, every RRR release's ε."""
        spec, cox = self.cox_cohorts[dataset], self.section["cox"]
        return {"groups": list(spec.groups), "covariates": list(spec.covariates),
                "releases": rrr_plan.cox_releases(self.config), "draws": self.section["draws"],
                "seed": self.config["seed"], "estimators": cox["estimators"],
                "simex_replicates": cox["simex_replicates"], "lambdas": cox["lambdas"],
                "tau_at_risk": cox["tau_at_risk"], "clustered": spec.rows_per_person > 1,
                "privacy_unit": spec.privacy_unit, "data_origin": spec.origin}

    def _cox_cohorts(self) -> dict:
        specs = self.cox_cohorts
        return {"groups": {d: list(s.groups) for d, s in specs.items()},
                "privacy_unit": {d: s.privacy_unit for d, s in specs.items()},
                "data_origin": {d: s.origin for d, s in specs.items()}}

    def _cox_table(self) -> dict:
        """The Cox table: every Cox cohort, with the true log hazard ratios of simulations."""
        return {**self._cox_cohorts(),
                "true_log_hr": {d: {f"{g} vs {s.groups[0]}": v
                                    for g, v in s.true_log_hazard_ratios.items()}
                                for d, s in self.cox_cohorts.items()
                                if s.true_log_hazard_ratios}}

    def _cox_figure(self) -> dict:
        return {**self._cox_cohorts(), "calibration": self.section["calibration"],
                "titles": {d: s.display_title for d, s in self.cox_cohorts.items()},
                "dpi": self.config["figures"]["dpi"]}

    # ------------------------------------------------------------------ cohorts (data.smk)
    def cohort_inputs(self, workflow_dir, launch_dir) -> Callable:
        """rrr_cohort's input function: what a cohort is built from (its source).

        The run's directory is read when the job is planned (``os.getcwd()`` then): a
        named run has moved into ``runs/<run_name>/`` by that time.
        """

        def inputs(wildcards) -> dict[str, str]:
            return rrr_plan.cohort_inputs(self.config, wildcards.dataset, workflow_dir,
                                          os.getcwd(), launch_dir)

        return inputs

    def cohort_priority(self, base: int) -> Callable:
        """rrr_cohort's priority function: ``base`` + 1 for a generated or downloaded cohort."""
        return lambda wildcards: base + rrr_plan.cohort_priority(self.config, wildcards.dataset)

    def dataset_entry(self, key: str) -> Callable:
        """A params function: ``datasets.<dataset>.<key>`` of the job's cohort (short
        values: a download's URL and checksum)."""
        return lambda wildcards: self.config["datasets"][wildcards.dataset][key]

    def cbioportal_params(self) -> dict:
        """cbioportal_download's params: the study's base URL and the cohorts read from it."""
        return {"base": lambda wc: rrr_plan.cbioportal_base(self.config, wc.study),
                "datasets": lambda wc: rrr_plan.cbioportal_studies(self.config)[wc.study]}

    def _cohort(self, dataset: str) -> dict:
        """A cohort's loading job: its ``datasets`` entry (keys sorted) and the root seed."""
        from dprepro.runtime.params import canonical

        return {"spec": canonical(self.config["datasets"][dataset]),
                "seed": self.config["seed"]}
