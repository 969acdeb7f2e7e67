"""The repr_transfer study's job plans: what each rule's step reads besides its short params.

``workflow/rules/repr_transfer.smk`` writes ``params: **REPR_PLAN.job_params("repr_fit")``:
the rule's params carry the digest of each job's plan (:meth:`StudyPlan.params`), and the
step rebuilds the plan from the run's configuration (:mod:`dprepro.runtime.job_plan`), so
no configuration section or settings dict is printed with every job. :class:`StudyPlan`
is the study's :class:`~dprepro.studies.repr_transfer.plan.ReprPlan` (paths, job sizes)
with the plans, the report's names and the rules' functions of wildcards added.
"""

from __future__ import annotations

from collections.abc import Callable

from dprepro.runtime.job_plan import JobPlans
from dprepro.runtime.params import canonical
from dprepro.studies.repr_transfer.plan import FIGURE_KIND, RESULTS, SUMMARY, ReprPlan
from dprepro.studies.repr_transfer.privacy import epsilon_grid

__all__ = ["FIGURE_TITLES", "PIPELINE_TITLES", "StudyPlan"]

#: The report's name of each pipeline (the figures' subcategory).
PIPELINE_TITLES = {"as_published": "pipeline as published", "corrected": "corrected pipeline"}
#: The report's name of each figure.
FIGURE_TITLES = {"cancer_type_accuracy": "cancer-type pairs",
                 "cancer_type_vs_epsilon": "cancer type against ε",
                 "drug_prediction": "drug sensitivity",
                 "drug_vs_epsilon": "drug sensitivity against ε"}


class StudyPlan(JobPlans, ReprPlan):
    """The study's plan (:class:`ReprPlan`) with each job's parameters.

    Parameters
    ----------
    config : mapping
        The whole configuration (schema defaults filled in).
    """

    # ------------------------------------------------------------------ rules' functions
    def raw_spec_param(self, source: str) -> Callable:
        """A download rule's ``spec`` param: what the job of ``{rawfile}`` fetches."""
        return lambda wildcards: self.raw_spec(source, wildcards.rawfile)

    def search_outputs(self) -> dict[str, str]:
        """repr_search's outputs: each pipeline's candidates of ``{representation}``."""
        return self.pipeline_outputs(
            lambda p: f"{RESULTS}/candidates/{p}/{{representation}}.csv")

    def fit_outputs(self) -> dict[str, str]:
        """repr_fit's outputs: each pipeline's fitted ``{representation}``."""
        return self.pipeline_outputs(
            lambda p: f"{RESULTS}/representations/{p}/{{representation}}.parquet")

    def clipping_outputs(self) -> dict[str, str]:
        """repr_clipping_weights' outputs: each pipeline's clipping table."""
        return self.pipeline_outputs(lambda p: f"{RESULTS}/experiments/clipping_{p}.csv")

    def search_runtime_of(self, wildcards) -> int:
        """repr_search's runtime (minutes) for the job's ``{representation}``."""
        return self.search_runtime(wildcards.representation)

    def summary_input(self, wildcards) -> str:
        """repr_figure's input: the summary table of the figure's experiment."""
        return self.tables[SUMMARY[FIGURE_KIND[wildcards.figure]]]

    def caption_privacy_param(self, wildcards) -> str:
        """repr_figure's ``privacy`` param, which its report caption prints."""
        return self.caption_privacy(wildcards.figure, wildcards.pipeline)

    @property
    def similarity_keys(self) -> list[list[str]]:
        """``[pipeline, representation]`` of the learned maps the similarity claims read."""
        return [[p, r] for p in self.pipelines for r in ("pca", "vae")
                if r in self.representation_methods()]

    def similarity_inputs(self) -> list[str]:
        return [f"{RESULTS}/representations/{p}/{r}.parquet" for p, r in self.similarity_keys]

    @property
    def targets(self) -> list[str]:
        """Every table and figure of the study (its target rule's inputs)."""
        return [*self.tables.values(), *(p for paths in self.figures.values() for p in paths)]

    # ------------------------------------------------------------------ job plans
    def _plan(self, rule: str, wildcards: dict) -> dict:
        planner = getattr(self, f"_plan_{rule}", None)
        if planner is None:
            raise KeyError(f"rule {rule!r} of repr_transfer has no job plan")
        return planner(wildcards)

    def _seed_origin(self) -> dict:
        return {"seed": self.config["seed"], "data_origin": self.origin}

    def _plan_repr_public_data(self, wc) -> dict:
        return {"origin": self.origin, "seed": self.config["seed"],
                "settings": self.data_settings()}

    _plan_repr_private_data = _plan_repr_public_data

    def _plan_repr_search(self, wc) -> dict:
        r = wc["representation"]
        return {**self._seed_origin(),
                "pipelines": self.pipelines, "trials": self.trials(r),
                "space": self.search_space(r),
                "objectives": {p: self.search_objective(p) for p in self.pipelines},
                "vae": self.vae_options(r), "pca": self.pca_options(r),
                "trial_seconds": self.trial_seconds(r)}

    def _plan_repr_hyperparameter_table(self, wc) -> dict:
        return {"data_origin": self.origin,
                "representations": self.study["representations"]}

    def _plan_repr_fit(self, wc) -> dict:
        r = wc["representation"]
        return {**self._seed_origin(),
                "pipelines": self.pipelines, "vae": self.vae_options(r),
                "pca": self.pca_options(r),
                # the joint model's final fit: the cases' lineages out of its cross-entropy
                "unlabelled": self.fit_unlabelled(_Wildcards(wc)),
                "seeds": self.study["seeds"]}

    # the VAE models' jobs: the same steps as rules of their own (for a cluster's GPUs)
    _plan_repr_search_vae = _plan_repr_search
    _plan_repr_fit_vae = _plan_repr_fit

    def _plan_repr_cancer_type(self, wc) -> dict:
        return {**self._seed_origin(),
                "methods": self.methods(), "settings": canonical(self.study["cancer_type"]),
                "baselines": self.baseline_params(), "seeds": self.study["seeds"]}

    def _plan_repr_clipping_weights(self, wc) -> dict:
        drug = self.study["drug"]
        return {**self._seed_origin(),
                "methods": self.methods(), "baselines": self.baseline_params(),
                "epsilons": epsilon_grid(drug), "test_size": drug["test_size"],
                "clipping_datasets": drug["clipping_datasets"],
                "clipping_noise_draws": drug["clipping_noise_draws"],
                "pipelines": self.pipelines}

    def _plan_repr_drug(self, wc) -> dict:
        return {**self._seed_origin(),
                "methods": self.methods(), "settings": canonical(self.study["drug"]),
                # whether the drugs are read off the private responses (then no finite ε)
                "privacy_settings": self.privacy_settings("drug"),
                "baselines": self.baseline_params(), "seeds": self.study["seeds"]}

    def _plan_repr_cancer_type_table(self, wc) -> dict:
        return {"data_origin": self.origin,
                "settings": self.privacy_settings("cancer_type")}

    def _plan_repr_drug_table(self, wc) -> dict:
        return {"data_origin": self.origin,
                "settings": self.privacy_settings("drug")}

    def _plan_repr_claims_table(self, wc) -> dict:
        return {**self._seed_origin(),
                "epsilons": {k: self.study[k]["epsilon"] for k in ("cancer_type", "drug")},
                "pipelines": self.pipelines,
                "cancer_settings": self.privacy_settings("cancer_type"),
                "drug_settings": self.privacy_settings("drug"),
                "vae_learning_rates": self.study["vae"]["learning_rate_range"],
                "representation_keys": self.similarity_keys}

    def _plan_repr_figure(self, wc) -> dict:
        return {"data_origin": self.origin,
                "settings": self.figure_settings(wc["figure"]),
                "dpi": self.config["figures"]["dpi"]}


class _Wildcards(dict):
    """A job's wildcards read as attributes too (what :class:`ReprPlan`'s input functions
    take from Snakemake)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None
