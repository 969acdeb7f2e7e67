"""The ldp_indicators study's jobs: each rule's files and each job's plan.

``workflow/rules/ldp_indicators.smk`` holds the rules and one-line calls of
:class:`StudyPlan` (``LDP = StudyPlan(config)``; ``LDP.tables["mse"]``;
``params: **LDP.job_params("ldp_claims")``). The rules' params carry the digest of each
job's plan (:meth:`StudyPlan.params`: its settings lists, the study's claim and variant
options) and the step rebuilds the plan from the configuration
(:mod:`dprepro.runtime.job_plan`), so no settings list is printed with every job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property

from dprepro.runtime.job_plan import JobPlans
from dprepro.runtime.params import canonical
from dprepro.studies.ldp_indicators.plan import LdpPlan, simulate_minutes

__all__ = ["FIGURE_TITLES", "LDP_DIR", "StudyPlan"]

LDP_DIR = "results/ldp_indicators"
#: Each variant table's variant column.
VARIANT_COLUMNS = {"x": "x", "noise_scale": "noise_scale", "phat": "phat_at"}
#: The report's name of each figure.
FIGURE_TITLES = {"figure1": "Figure 1: MSE against t",
                 "mse_vs_alpha": "integrated MSE against α", "mse_vs_n": "convergence in n",
                 "nelson_aalen": "cumulative hazard", "bias_variance": "bias and variance"}
#: The tables' paths, by name.
TABLES = {name: f"{LDP_DIR}/tables/{file}.csv" for name, file in (
    ("mse", "mse"), ("alpha_grid", "mse_alpha_grid"), ("mse_vs_n", "mse_vs_n"),
    ("rates", "convergence_rates"), ("hazard", "hazard_mse"), ("floor", "variance_floor"),
    ("clip", "mse_clip"))}
#: The table rules reading replicates (ldp_release_table.py) and the settings each reads.
RELEASE_TABLE_SETTINGS = {"ldp_mse_table": "main", "ldp_alpha_grid_table": "grid",
                          "ldp_convergence_table": "convergence",
                          "ldp_hazard_table": "main", "ldp_clip_table": "main"}


class StudyPlan(JobPlans):
    """The study's files and job plans under one configuration.

    Parameters
    ----------
    config : mapping
        The run's configuration (schema defaults filled in).
    """

    def __init__(self, config: Mapping):
        self.config = config
        self.study = config["ldp_indicators"]
        self.plan = LdpPlan(self.study, seed=config["seed"])
        self.labels = [s["label"] for s in self.study["censoring"]]
        self.tables = TABLES
        self.figure_titles = FIGURE_TITLES

    # ------------------------------------------------------------------ settings
    @cached_property
    def settings(self) -> dict[str, list[dict]]:
        """Replicate settings by use: ``main`` (Figure 1's α), ``grid`` (the α grid),
        ``convergence``, and ``claims`` (Figure 1's α, the grid's largest α -- "F̂ and F̌
        coincide as α → ∞" reads the same files -- and every variant's own)."""
        study, plan, conv = self.study, self.plan, self.study["convergence"]
        return {
            "main": plan.settings("main", self.labels, [study["n"]], study["alphas"]),
            "grid": plan.settings("main", self.labels, [study["n"]], study["alpha_grid"]),
            "convergence": plan.settings("convergence", [conv["censoring"]],
                                         conv["sample_sizes"], conv["alphas"],
                                         conv["mechanisms"]),
            "claims": plan.settings(
                "main", self.labels, [study["n"]],
                sorted({float(a) for a in study["alphas"] + [max(study["alpha_grid"])]}))
            + [s for name in self.variants for s in self.variants[name]
               if s["design"] != "main"]}

    @cached_property
    def variants(self) -> dict[str, list[dict]]:
        """Each variant table's settings (x, noise_scale, phat)."""
        return {name: self.plan.variant_settings(name) for name in VARIANT_COLUMNS}

    def estimates(self, which: str) -> list[str]:
        """The replicate files of the settings ``which`` (:attr:`settings`)."""
        return self.plan.estimate_paths(self.settings[which])

    def variant_inputs(self, wildcards) -> list[str]:
        """ldp_variant_table's input function: the replicates of ``{variant}``."""
        return self.plan.estimate_paths(self.variants[wildcards.variant])

    # ------------------------------------------------------------------ wildcards, jobs
    def design_pattern(self, *, convergence: bool = True) -> str:
        """The ``{design}`` wildcard's pattern (without the convergence design if asked)."""
        return "|".join(re.escape(d) for d in self.plan.designs
                        if convergence or d != "convergence")

    def simulate_outputs(self) -> dict:
        """ldp_simulate's outputs: every censoring at the study's n of one design, mechanism."""
        return self.plan.replicate_outputs("{design}", "{mechanism}", self.labels,
                                           [self.study["n"]])

    def convergence_outputs(self) -> dict:
        """ldp_simulate_convergence's outputs: every n of the convergence study."""
        conv = self.study["convergence"]
        return self.plan.replicate_outputs("convergence", "{mechanism}", [conv["censoring"]],
                                           conv["sample_sizes"])

    @property
    def simulate_resources(self) -> dict:
        """mem_mb and runtime (minutes) of a simulation job at the study's n."""
        n = self.study["n"]
        return {"mem_mb": 600 + n // 4, "runtime": len(self.labels) * simulate_minutes(n)}

    @property
    def convergence_resources(self) -> dict:
        """mem_mb and runtime of the convergence simulation (every n in one job)."""
        sizes = self.study["convergence"]["sample_sizes"]
        return {"mem_mb": 600 + max(sizes) // 4,
                "runtime": sum(simulate_minutes(n) for n in sizes)}

    # ------------------------------------------------------------------ figures, targets
    @property
    def figure_inputs(self) -> dict[str, dict[str, str]]:
        """Each figure's tables, by its drawing function's argument names."""
        t = TABLES
        return {"figure1": {"mse": t["mse"]}, "mse_vs_alpha": {"imse": t["alpha_grid"]},
                "mse_vs_n": {"imse": t["mse_vs_n"], "rates": t["rates"]},
                "nelson_aalen": {"mse": t["hazard"]}, "bias_variance": {"mse": t["mse"]}}

    def figure_input(self, wildcards) -> dict[str, str]:
        """ldp_figure's input function (``unpack``): the tables of ``{figure}``."""
        return self.figure_inputs[wildcards.figure]

    def figure_files(self, name: str) -> list[str]:
        return [f"{LDP_DIR}/figures/{name}.pdf", f"{LDP_DIR}/figures/{name}.png"]

    @property
    def claims(self) -> str:
        return f"{LDP_DIR}/tables/claims.csv"

    @property
    def convergence_targets(self) -> list[str]:
        """The convergence study (n up to 4000, the slowest part): its own target."""
        return [TABLES["mse_vs_n"], TABLES["rates"], *self.figure_files("mse_vs_n")]

    @property
    def core_targets(self) -> list[str]:
        """Every other file of the study (target ``ldp_indicators``)."""
        t = TABLES
        return [t["mse"], self.claims, t["alpha_grid"], t["hazard"], t["floor"],
                # the unclipped F̂_n exists only when the release clips p̂
                *([t["clip"]] if self.study["clip_phat"] else []),
                *(f"{LDP_DIR}/tables/mse_{name}.csv" for name in self.variants),
                *(p for name in self.figure_inputs if name != "mse_vs_n"
                  for p in self.figure_files(name))]

    # ------------------------------------------------------------------ job plans
    def _plan(self, rule: str, wc: dict) -> dict:
        study, conv = self.study, self.study["convergence"]
        if rule == "ldp_simulate":
            return self.plan.simulate_params(wc["design"], self.labels, [study["n"]])
        if rule == "ldp_simulate_convergence":
            return self.plan.simulate_params("convergence", [conv["censoring"]],
                                             conv["sample_sizes"])
        if rule in RELEASE_TABLE_SETTINGS:
            return {"settings": self.settings[RELEASE_TABLE_SETTINGS[rule]], "x": study["x"]}
        if rule == "ldp_variant_table":
            return {"settings": self.variants[wc["variant"]],
                    "column": VARIANT_COLUMNS[wc["variant"]], "x": study["x"]}
        if rule == "ldp_floor_table":
            return {"censoring": study["censoring"]}
        if rule == "ldp_figure":
            return {"options": self._figure_options(wc["figure"]),
                    "dpi": self.config["figures"]["dpi"]}
        if rule == "ldp_claims":
            return {"seed": self.config["seed"], "settings": self.settings["claims"],
                    "n": study["n"], "x": study["x"], "censorings": self.labels,
                    "alphas": study["alphas"], "grid_alphas": [max(study["alpha_grid"])],
                    "mechanisms": study["mechanisms"], "claims": canonical(study["claims"]),
                    "variants": canonical(study["variants"]),
                    "noise_draws": study["noise_draws"]}
        raise KeyError(f"rule {rule!r} of ldp_indicators has no job plan")

    def _figure_options(self, figure: str) -> dict:
        """A figure's drawing options (:mod:`dprepro.studies.ldp_indicators.figures`)."""
        study = self.study
        with_alphas = {"alphas": study["alphas"], "log_scale": study["log_scale"]}
        return {"figure1": with_alphas, "mse_vs_alpha": {}, "mse_vs_n": {},
                "nelson_aalen": with_alphas,
                "bias_variance": {"alphas": study["alphas"]}}[figure]
