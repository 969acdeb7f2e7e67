"""The repr_transfer study's plan: raw and cached data paths, search and fit settings, job sizes.

What the rules of ``workflow/rules/repr_transfer.smk`` (and the download rules of
``data.smk``) ask of the configuration, as methods of :class:`ReprPlan` built from
the whole configuration (no Snakemake import), so the workflow's plan is tested
like the estimators. Values handed to jobs as ``params`` keep their keys sorted
(:func:`dprepro.runtime.params.canonical`): reordering a YAML file reruns nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from dprepro.config.schema import ConfigError
from dprepro.data.tcga import holdout_labels
from dprepro.representations.vae_size import vae_hidden_width, vae_training_mb, vae_weights
from dprepro.runtime.params import canonical
from dprepro.runtime.provenance import sidecar_path
from dprepro.studies.repr_transfer.common import (
    SUPERVISED,
    VAE_MODELS,
    fitted_as,
    stream_int,
)
from dprepro.studies.repr_transfer.privacy import (
    automatic_cases,
    epsilon_grid,
    figure_privacy_text,
)
from dprepro.studies.repr_transfer.privacy import pipeline as pipeline_spec

__all__ = ["DEPMAP_CACHE", "GDSC_CACHE", "RAW_FILE", "RAW_ITEMS", "TCGA_CACHE", "ReprPlan",
           "raw_suffix"]

RESULTS = "results/repr_transfer"
DATA = "results/data/repr_transfer"

#: Raw downloads of each source and the suffix each has when its URL names none.
RAW_ITEMS = {
    "gdsc": {"expression": ".zip", "dose_response": ".xlsx", "cell_lines": ".xlsx"},
    "depmap": {"expression": ".csv", "models": ".csv"},
    "tcga": {"expression": ".gz", "probemap": ".tsv", "phenotype": ".tsv.gz"},
}
RAW_SUFFIXES = (".txt.zip", ".csv.gz", ".tsv.gz", ".zip", ".xlsx", ".csv", ".tsv", ".txt",
                ".gz")
#: The ``{rawfile}`` wildcard of the download rules.
RAW_FILE = (r"(expression|dose_response|cell_lines|models|probemap|phenotype)"
            r"(\.txt\.zip|\.csv\.gz|\.tsv\.gz|\.zip|\.xlsx|\.csv|\.tsv|\.txt|\.gz)")
GDSC_CACHE = {name: f"results/data/gdsc/{name}.parquet"
              for name in ("expression", "dose_response", "cell_lines")}
DEPMAP_CACHE = {name: f"results/data/depmap/{name}.parquet" for name in ("expression", "models")}
TCGA_CACHE = {name: f"results/data/tcga/{name}.parquet" for name in ("expression", "lineage")}

#: Each figure: the experiment (and summary table) it is drawn from.
FIGURE_KIND = {
    "cancer_type_accuracy": "cancer_type",
    "cancer_type_vs_epsilon": "cancer_type",
    "drug_prediction": "drug",
    "drug_vs_epsilon": "drug",
}
SUMMARY = {"cancer_type": "cancer_type_summary", "drug": "drug_summary"}
TABLE_NAMES = ("hyperparameters", "cancer_type_accuracy", "cancer_type_summary",
               "drug_sensitivity", "drug_summary", "claims", "public_set")

# The paper-scale jobs, sized from benchmarks/paper_scale.csv with the margins of
# tests/test_paper_scale.py (1.5x the peak memory, 2x the CPU time; the jobs run on one
# thread). PCA (10,535 TCGA samples x 17,737 genes): one randomized fit (p = 40, q = 10)
# takes ~23 CPU-s, ~29 with the process, its data and the transforms, and peaks at ~3.2 GB
# (the exact SVD: ~800 CPU-s on one thread and 7.2 GB); a job fits one r_max per pair fold
# (repr_search) or one r per pipeline (repr_fit, its mapping serving every seed).
FIT_PCA_PAPER = {"mem_mb": 5000, "minutes_per_fit": 2}
# repr_search's score of one trial: DP logistic regression on 16 pairs x 10 folds x 5 noise
# draws, ~5.8 CPU-s; PCA and the random projection search r alone, so each pipeline scores
# at most dim_range's distinct r (a repeated proposal reuses its score).
SCORE_MINUTES_PAPER = 0.2
# repr_cancer_type (every method of a pipeline: 6 cases x 10 folds x 6 ε x 5 seeds, ~1 CPU
# minute), repr_drug (a chunk: per drug ~11 CPU-s, DP feature selection's votes by the
# homotopy and 8 methods' SSP fits; ~11 s a job's start-up and data), repr_clipping_weights
# (one (d, ε) of 20 x 20 x 20 x 20, ~5.2 CPU-s), and the memory of these jobs (~5.0 GB: the
# public and private expression at the real size, the public gene variances).
LEARN_PAPER = {"mem_mb": 7500, "cancer_type_minutes": 5, "drug_start_s": 15.0,
               "drug_s_per_drug": 11.0, "clipping_s_per_setting": 5.3}
# GDSC2 (release 8.5) has fewer drugs than this; the paper's v17 had 265
GDSC_DRUGS_BOUND = 300
# One VAE epoch at paper scale (benchmarks/paper_scale.csv: r = 20, one hidden layer of
# 1,280, one CPU thread, the fit's set-up excluded): 70-79 s in three runs, the row the
# slowest (two threads, vae.threads: 38-43 s); a fit runs up to vae.max_epochs epochs, so
# the limits are epochs x the slowest one-thread epoch (2x margin), whatever vae.threads
# gains (4 times less than the 307 s timed at load ~15 before; a final fit's limit stays
# above any SLURM MaxTime, the search's is its trial budget); a GPU is far faster. The
# highest peak of the six processes was 3,122 MB, of which the weights (2 x 17,737 x 1,280,
# 16 bytes each with gradient and Adam moments) ~693 MB: the rest, ~2,429 MB, is the data
# and the process.
VAE_PAPER = {"epoch_seconds": 80, "n_features": 17737, "base_mb": 2429}


def raw_suffix(url: str, default: str) -> str:
    """The suffix of the file a URL names (``.txt.zip`` before ``.zip``), else ``default``."""
    name = Path(urlsplit(str(url)).path).name.lower()
    return next((s for s in RAW_SUFFIXES if name.endswith(s)), default)


def _config_error(key: str, message: str) -> ConfigError:
    return ConfigError(f"invalid configuration:\n  - config key '{key}': {message}")


class ReprPlan:
    """The plan of one configuration of the study.

    Parameters
    ----------
    config : mapping
        The whole configuration (schema defaults filled in): the study reads
        ``repr_transfer`` and the ``datasets`` entries ``gdsc``, ``depmap`` and ``tcga``.

    Raises
    ------
    ConfigError
        When GDSC and DepMap are not both synthetic or both downloaded, or the TCGA
        public set cannot hold the cases' cancer types out (names the key).
    """

    def __init__(self, config: Mapping):
        self.config = config
        self.study = config["repr_transfer"]
        self.datasets = config["datasets"]
        self.pipelines = list(self.study["pipelines"])
        self.origin = self.data_origin()
        self.tables = {name: f"{RESULTS}/tables/{name}.csv" for name in TABLE_NAMES}
        self.figures = {
            (name, p): [f"{RESULTS}/figures/{name}_{p}.pdf", f"{RESULTS}/figures/{name}_{p}.png"]
            for name in FIGURE_KIND
            for p in self.pipelines
        }
        self.public = {name: f"{DATA}/public_{name}.parquet" for name in ("expression", "lineage")}
        self.private = {name: f"{DATA}/private_{name}.parquet"
                        for name in ("expression", "expression_line_local", "lineage",
                                     "response")}
        # synthetic sizes need little memory; GDSC x DepMap matrices (~1,000 and ~1,500
        # lines x ~15,000 shared genes) need more
        self.mem_mb = ({"data": 2000, "learn": 2000} if self.origin == "synthetic"
                       else {"data": 8000, "learn": LEARN_PAPER["mem_mb"]})

    # ------------------------------------------------------------------ data
    def raw(self, source: str, item: str) -> str:
        """Local path of one raw download, its suffix taken from the configured URL."""
        url = self.datasets[source][f"{item}_url"]
        return f"results/data/raw/{source}/{item}{raw_suffix(url, RAW_ITEMS[source][item])}"

    def raw_spec(self, source: str, rawfile: str) -> dict:
        """What the download job of ``rawfile`` (a ``{rawfile}`` wildcard) fetches."""
        item = rawfile.split(".", 1)[0]
        spec = self.datasets[source]
        return {"source": source, "item": item, "url": spec[f"{item}_url"],
                "sha256": spec[f"{item}_sha256"]}

    def public_source(self) -> str:
        """``'depmap'`` or ``'tcga'``: the public expression of the real-data mode."""
        return self.study["public_source"]

    def tcga_holdout(self) -> list[str]:
        """TCGA study labels of the cases' private cancer types, held out of the public set."""
        cases = self.study["cancer_type"]["cases"]
        column = self.datasets["gdsc"]["lineage_column"]
        if column != "TCGA_LABEL":
            raise _config_error(
                "datasets.gdsc.lineage_column",
                f"got {column!r}, but repr_transfer.public_source 'tcga' names cancer types by "
                "TCGA study (the cases' types are held out of TCGA); use TCGA_LABEL")
        if not cases:
            raise _config_error(
                "repr_transfer.cancer_type.cases",
                "empty, but repr_transfer.public_source is 'tcga', which holds the private "
                "cancer types of every case out of the public data; list the cases (pairs of "
                "TCGA_LABELs)")
        return holdout_labels(cases)

    def data_origin(self) -> str:
        """``'synthetic'`` or ``'real'``; GDSC and DepMap must both be one or the other."""
        sources = {s: self.datasets[s]["source"] for s in ("gdsc", "depmap")}
        if self.public_source() == "tcga":
            sources.pop("depmap")
        if len(set(sources.values())) != 1:
            raise _config_error(
                "datasets.depmap.source",
                f"got {sources['depmap']!r} but datasets.gdsc.source is {sources['gdsc']!r}; "
                "the public and private expression sets must both be synthetic or both "
                "downloaded")
        return "synthetic" if sources["gdsc"] == "synthetic" else "real"

    def data_inputs(self, kind: str) -> Callable:
        """Inputs of repr_public_data (``kind='public'``) or repr_private_data: none for the
        synthetic pair; the caches of the configured sources otherwise."""
        def inputs(wildcards):
            if self.origin == "synthetic":
                return {}
            out = {"gdsc_expression": GDSC_CACHE["expression"]}
            if self.public_source() == "tcga":
                out.update(tcga_expression=TCGA_CACHE["expression"],
                           tcga_lineage=TCGA_CACHE["lineage"])
            else:
                out.update(depmap_expression=DEPMAP_CACHE["expression"],
                           depmap_models=DEPMAP_CACHE["models"],
                           # the GDSC lines' Sanger model ids, to exclude them from DepMap
                           gdsc_cell_lines=GDSC_CACHE["cell_lines"])
            if kind == "private":
                out["gdsc_dose_response"] = GDSC_CACHE["dose_response"]
                out["gdsc_cell_lines"] = GDSC_CACHE["cell_lines"]
            return out

        return inputs

    def data_settings(self) -> dict:
        """What the public and private tables are built with (synthetic sizes, or the real
        data's gene and line filters)."""
        if self.origin == "synthetic":
            return canonical(self.study["synthetic"])
        settings = {
            "min_shared_genes": self.study["min_shared_genes"],
            "min_public_median": self.study["min_public_median"],
            "lineage_column": self.datasets["gdsc"]["lineage_column"],
            "exclude_private_lines": self.datasets["depmap"]["exclude_private_lines"],
        }
        # only with TCGA, so the DepMap mode's parameters (and jobs) stay as they were
        if self.public_source() == "tcga":
            settings |= {"public_source": "tcga", "holdout": self.tcga_holdout()}
        return settings

    # ------------------------------------------------------------------ search and fits
    def trials(self, representation: str) -> int:
        """Optuna trials of one representation's search (fewer for the slow VAE and the
        joint model)."""
        selection = self.study["selection"]
        key = {"vae": "vae_trials", "supervised_vae": "supervised_vae_trials"}
        return int(selection[key.get(representation, "trials")])

    def search_space(self, representation: str) -> dict:
        """The search space of one representation (VAE keys only for the VAE and the joint
        model, λ only for the joint model: no reruns)."""
        space = {"dim_range": list(self.study["selection"]["dim_range"])}
        if representation in VAE_MODELS:
            vae = self.study["vae"]
            space.update(learning_rate_range=list(vae["learning_rate_range"]),
                         hidden_layers=list(vae["hidden_layers"]),
                         width_multipliers=list(vae["width_multipliers"]))
        if representation in SUPERVISED:
            space["supervised_weight_range"] = list(
                self.study["supervised_vae"]["weight_range"])
        return space

    def search_objective(self, pipeline: str) -> dict:
        """The paper's objective: DP logistic regression on held-out public lineage pairs,
        with the objective-perturbation variant of ``pipeline`` (corrected: cms11)."""
        selection = self.study["selection"]
        variant = (pipeline_spec(pipeline).cancer_variant
                   or self.study["cancer_type"]["variant"])
        return {
            "pairs": selection["pairs"],
            "pair_list": [list(pair) for pair in selection["pair_list"]],
            "pair_folds": selection["pair_folds"],
            "startup_trials": selection["startup_trials"],
            "noise_draws": selection["noise_draws"],
            "folds": selection["folds"],
            "epsilon": selection["epsilon"],
            "variant": variant,
            "l2": self.study["cancer_type"]["l2"],
        }

    def trial_seconds(self, representation: str) -> float | None:
        """The VAE search's budget per trial in seconds (selection.trial_minutes); None: none."""
        minutes = self.study["selection"].get("trial_minutes")
        if representation not in VAE_MODELS or minutes is None:
            return None
        return 60.0 * float(minutes)

    def search_paths(self) -> list[str]:
        """The candidate tables of every (pipeline, representation) search."""
        return [f"{RESULTS}/candidates/{p}/{r}.csv"
                for p in self.pipelines for r in self.study["representations"]]

    def vae_options(self, representation: str) -> dict:
        """VAE training options (the VAE, the joint model and the VAE control); empty for the
        other representations (no spurious reruns)."""
        if fitted_as(representation) not in VAE_MODELS:
            return {}
        vae = self.study["vae"]
        keys = ("batch_size", "max_epochs", "patience", "validation_fraction", "device")
        options = {key: vae[key] for key in keys}
        if vae["max_hidden_width"] is not None:  # only when set: no reruns of uncapped runs
            options["max_hidden_width"] = vae["max_hidden_width"]
        if vae["threads"] != 1:  # the fits' numbers depend on it; 1 reruns nothing
            options["threads"] = vae["threads"]
        return options

    def job_threads(self, wildcards) -> int:
        """Threads of one search or fit job (``wildcards.representation``; the VAE models'
        are the rules ``repr_search_vae`` and ``repr_fit_vae``):
        ``vae.threads`` for the VAE models, whose fits use that many whatever ``--cores``
        allows the job (the numbers depend on it), 1 for the others. Also the job's SLURM
        ``cpus_per_task``, which the profile's ``cores`` (the cap of ``threads``) does not
        limit."""
        if fitted_as(wildcards.representation) in VAE_MODELS:
            return int(self.study["vae"]["threads"])
        return 1

    def pca_options(self, representation: str) -> dict:
        """PCA's solver settings (``repr_transfer.pca``) for PCA and its equal-dimension
        control; empty for the other representations (no spurious reruns).

        ``random_state``, the randomized solver's seed, is one per configuration (stream
        ``pca/randomized`` of the seed): every PCA fit on the same rows at the same r is
        then the same to the bit, as with the exact SVD (the search's candidates, the
        final fits, and ``pca_vae_dim`` at PCA's own r, which is then PCA's release).
        """
        if fitted_as(representation) != "pca":
            return {}
        return {**self.study["pca"],
                "random_state": stream_int(self.config["seed"], "pca/randomized")}

    def representation_methods(self) -> list[str]:
        """The configured representations, then the equal-dimension controls that apply
        (``pca_vae_dim`` with PCA and the VAE, ``vae_svae_dim`` with the VAE and the joint
        model)."""
        methods = list(self.study["representations"])
        if self.study["equal_dim_control"] and {"pca", "vae"} <= set(methods):
            methods.append("pca_vae_dim")
        if self.study["equal_dim_control"] and {"vae", "supervised_vae"} <= set(methods):
            methods.append("vae_svae_dim")
        return methods

    def fit_lineage(self, wildcards) -> list[str]:
        """repr_fit's public lineage input: the joint model's auxiliary target; none for the
        other representations (their jobs keep their inputs)."""
        return [self.public["lineage"]] if wildcards.representation in SUPERVISED else []

    def fit_unlabelled(self, wildcards) -> list[str]:
        """Public lineages the joint model's final fit leaves unlabelled (out of its
        cross-entropy): every lineage the private cancer-type cases evaluate, as the search
        unlabels the lineages it scores on. Empty for the other representations.

        A configuration-only rule, so the fit reads no private value: the listed
        ``cancer_type.cases`` (the automatic cases are the most frequent *private*
        lineages, a choice made from private data, so the joint model needs them listed),
        their TCGA study labels (GDSC's pooled COREAD: COAD and READ), and
        ``supervised_vae.unlabelled_lineages`` -- with ``public_source: depmap`` the public
        lineages (OncotreeLineage) name the cases' types differently, so they must be
        listed there.
        """
        if wildcards.representation not in SUPERVISED:
            return []
        cases = self.study["cancer_type"]["cases"]
        if not cases:
            raise _config_error(
                "repr_transfer.cancer_type.cases",
                "empty, but supervised_vae leaves the lineages the cancer-type cases evaluate "
                "out of its cross-entropy, and the automatic cases are chosen from the private "
                "lineages; list the cases (pairs of lineages)")
        extra = [str(x) for x in self.study["supervised_vae"].get("unlabelled_lineages", [])]
        if (self.origin == "real" and self.public_source() == "depmap" and not extra):
            raise _config_error(
                "repr_transfer.supervised_vae.unlabelled_lineages",
                "empty, but with public_source depmap the public lineages (OncotreeLineage) "
                "name the cases' cancer types differently from the private ones; list the "
                "public lineages of the cases' types (e.g. Lung for LUAD)")
        names = {str(x) for pair in cases for x in pair} | set(holdout_labels(cases))
        return sorted(names | set(extra))

    def methods(self) -> list[str]:
        """Representations (with the control) and baselines, in table order."""
        return self.representation_methods() + list(self.study["baselines"])

    def baseline_params(self) -> dict:
        """What the configured baselines need (fixed genes, feature selection settings)."""
        out = {}
        if "fixed_genes" in self.study["baselines"]:
            out["fixed_genes"] = list(self.study["fixed_genes"])
        if "dp_feature_selection" in self.study["baselines"]:
            out["feature_selection"] = canonical(self.study["feature_selection"])
        return out

    def pipeline_outputs(self, path_of: Callable[[str], str]) -> dict[str, str]:
        """Named outputs of a job that writes one file per pipeline: ``path_of(pipeline)``
        under the pipeline's name, its provenance sidecar under ``prov_<pipeline>``."""
        out = {p: path_of(p) for p in self.pipelines}
        out.update({f"prov_{p}": sidecar_path(path_of(p)) for p in self.pipelines})
        return out

    # ------------------------------------------------------------------ experiments
    def experiment_inputs(self) -> dict:
        """Inputs of the cancer-type and drug experiments (the pipeline's representations
        are a function of the ``{pipeline}`` wildcard)."""
        out = {
            "private_lineage": self.private["lineage"],
            "private_response": self.private["response"],
            # each pipeline's representations are fitted with its own search's choice
            "representations": lambda wildcards: [
                f"{RESULTS}/representations/{wildcards.pipeline}/{r}.parquet"
                for r in self.representation_methods()
            ],
        }
        if self.study["baselines"]:
            out["public_expression"] = self.public["expression"]
            out["private_expression"] = self.private["expression"]
            out["private_expression_line_local"] = self.private["expression_line_local"]
        return out

    def privacy_settings(self, kind: str) -> dict:
        """What the privacy records of a result table are rebuilt from (learner settings;
        for the cancer-type task also the configured ``cases``: empty, they are chosen from
        the private lineage counts and no row has a finite ε,
        :func:`dprepro.studies.repr_transfer.privacy.automatic_cases`; for the drug task
        ``drugs_from_data``, :meth:`drugs_from_data`)."""
        spec = self.study[kind]
        keys = (("variant", "l2") if kind == "cancer_type"
                else ("ridge", "response_center", "response_scale"))
        out = {key: spec[key] for key in keys}
        if kind == "cancer_type":
            out["cases"] = [[str(x) for x in pair] for pair in spec["cases"]]
        else:
            out["drugs_from_data"] = self.drugs_from_data()
        return out

    def drugs_from_data(self) -> bool:
        """Whether the drug list comes from the private data.

        Listed ``drug.drugs`` are configuration. Without a list the drugs are the
        response table's columns: on synthetic data the generator's ``DRUG001`` ...
        (fixed by ``synthetic.n_drugs``), on real data every drug of the private
        dose-response table, which the private responses decide: then every drug row
        prints ``true_epsilon = inf``
        (:func:`dprepro.studies.repr_transfer.privacy.automatic_drugs`).
        """
        return self.origin == "real" and not self.study["drug"]["drugs"]

    def figure_settings(self, figure: str) -> dict:
        """Learner settings plus the single-ε panel's ε of one figure."""
        kind = FIGURE_KIND[figure]
        settings = {**self.privacy_settings(kind), "epsilon": self.study[kind]["epsilon"]}
        if kind == "drug":
            settings.update({k: self.study[kind][k]
                             for k in ("response_center", "response_scale")})
        return settings

    def caption_privacy(self, figure: str, pipeline: str) -> str:
        """The privacy sentence of a figure's report caption, in the figure's own words."""
        return figure_privacy_text(FIGURE_KIND[figure], pipeline,
                                   variant=self.study["cancer_type"]["variant"],
                                   automatic_cases=automatic_cases(self.study["cancer_type"]),
                                   automatic_drugs=self.drugs_from_data())

    def config_warnings(self) -> list[str]:
        """What the configuration check prints before any job runs (the run goes on).

        With ``cancer_type.cases`` empty the cases are every pair of the most frequent
        *private* lineages, a choice read off the private data: every cancer-type row
        then prints ``true_epsilon = inf``
        (:func:`dprepro.studies.repr_transfer.privacy.cancer_privacy`), as a grid LNTE
        without a public horizon does; likewise the drug rows when the drugs are read
        off the private dose-response table (:meth:`drugs_from_data`). Nothing to say
        when the study is not run.
        """
        cancer = self.study["cancer_type"]
        if "repr_transfer" not in self.config.get("studies", []):
            return []
        out = []
        if automatic_cases(cancer):
            out.append(f"repr_transfer.cancer_type.cases: empty, so the cancer-type cases are "
                       f"every pair of the {cancer['lineages']} most frequent private "
                       "lineages, a choice read off the private data: every cancer-type row "
                       "prints true_epsilon = inf (not a DP release); list the pairs, chosen "
                       "from public information, e.g. cases: [[LUAD, LUSC], [BRCA, LUAD]]")
        if self.drugs_from_data():
            out.append("repr_transfer.drug.drugs: empty on real data, so the drugs are every "
                       "drug of the private dose-response table, a choice read off the "
                       "private responses: every drug row prints true_epsilon = inf (not a DP "
                       "release); list the drugs (GDSC DRUG_IDs) from public information, "
                       "e.g. the release's compound annotation: drugs: [1003, 1004]")
        return out

    def drug_paths(self) -> list[str]:
        """The drug experiment's chunk files of every pipeline."""
        chunks = self.study["drug"]["chunks"]
        return [f"{RESULTS}/experiments/drug_{p}_chunk{c}.parquet"
                for p in self.pipelines for c in range(chunks)]

    def cancer_type_paths(self) -> list[str]:
        """The cancer-type experiment file of every pipeline."""
        return [f"{RESULTS}/experiments/cancer_type_{p}.parquet" for p in self.pipelines]

    # ------------------------------------------------------------------ job sizes
    def vae_widest(self) -> tuple[int, int]:
        """(hidden width, layers) of the widest VAE candidate the configuration allows."""
        vae = self.study["vae"]
        width = vae_hidden_width(max(self.study["selection"]["dim_range"]),
                                 max(vae["width_multipliers"]), vae["max_hidden_width"])
        return width, max(vae["hidden_layers"])

    def vae_mem_mb(self) -> int:
        """The VAE jobs' memory at paper scale: 1.5x the widest allowed candidate's training."""
        width, layers = self.vae_widest()
        peak = vae_training_mb(VAE_PAPER["n_features"], width, layers,
                               base_mb=VAE_PAPER["base_mb"])
        return int(1.5 * peak + 1)

    def vae_epoch_seconds(self) -> float:
        """The measured paper-scale epoch, scaled by the widest allowed candidate's weights
        (an epoch's arithmetic grows with them) when it is wider than the measured one."""
        width, layers = self.vae_widest()
        n = VAE_PAPER["n_features"]
        ratio = vae_weights(n, width, layers) / vae_weights(n, 1280, 1)
        return VAE_PAPER["epoch_seconds"] * max(1.0, ratio)

    def search_runtime(self, representation: str) -> int:
        """Minutes of every pipeline's search of one representation (the SLURM limit).

        Paper scale is sized from benchmarks/paper_scale.csv (CPU, one thread): scoring a
        trial takes :data:`SCORE_MINUTES_PAPER` (2x margin), and PCA and the random
        projection, whose only parameter is r, score at most the range's distinct r per
        pipeline; PCA is nested, so one randomized fit at r_max per pair fold
        (:data:`FIT_PCA_PAPER`, 2x margin); the VAE either stops each trial at
        selection.trial_minutes (an overrun is a failed trial) or, without a budget, every
        trial may run vae.max_epochs epochs of the measured epoch time (2x margin) per pair
        fold. The synthetic sizes take seconds.
        """
        selection = self.study["selection"]
        searches = len(self.pipelines)
        trials = self.trials(representation)
        paper = self.origin != "synthetic"
        if paper and representation not in VAE_MODELS:
            low, high = (int(v) for v in selection["dim_range"])
            trials = min(trials, high - low + 1)
        scoring = searches * trials * (SCORE_MINUTES_PAPER if paper else 1)
        # the joint model is the VAE with a head of r x classes weights: the VAE's sizes
        if representation in VAE_MODELS:
            budget = selection.get("trial_minutes")
            if budget is not None:
                return int(10 + scoring + searches * trials * budget + 1)
            epochs = self.study["vae"]["max_epochs"]
            if not paper:
                return 10 + searches * trials * max(2, epochs // 20)
            fit_minutes = 2 * epochs * self.vae_epoch_seconds() / 60
            return int(10 + scoring + searches * trials * selection["pair_folds"] * fit_minutes
                       + 1)
        if paper and representation == "pca":
            return int(math.ceil(10 + scoring
                                 + selection["pair_folds"] * FIT_PCA_PAPER["minutes_per_fit"]))
        return int(math.ceil(10 + scoring))

    def fit_mem_mb(self, wildcards) -> int:
        """Memory (MB) of one search or fit job (``wildcards.representation``);
        the random projection holds and maps the same public matrix as PCA."""
        if self.origin != "synthetic" and fitted_as(wildcards.representation) in (
                "pca", "random_projection"):
            return FIT_PCA_PAPER["mem_mb"]
        if self.origin != "synthetic" and fitted_as(wildcards.representation) in VAE_MODELS:
            return max(self.mem_mb["learn"], self.vae_mem_mb())
        return self.mem_mb["learn"]

    def fit_runtime(self, wildcards) -> int:
        """Minutes for all seeds of one representation, for every pipeline's candidate."""
        pipelines, seeds = len(self.pipelines), self.study["seeds"]
        if fitted_as(wildcards.representation) in VAE_MODELS:
            if self.origin != "synthetic":
                epochs = self.study["vae"]["max_epochs"]
                per_seed = 2 * epochs * self.vae_epoch_seconds() / 60
                return int(per_seed * seeds * pipelines + 1)
            return 60 * seeds * pipelines
        if self.origin != "synthetic" and fitted_as(wildcards.representation) == "pca":
            # one fit per pipeline's selected r; its mapping serves every seed
            return FIT_PCA_PAPER["minutes_per_fit"] * pipelines
        return 10 * pipelines

    def cancer_type_runtime(self) -> int:
        """Minutes of one repr_cancer_type job (every method of a pipeline)."""
        return LEARN_PAPER["cancer_type_minutes"] if self.origin != "synthetic" else 60

    def drug_runtime(self) -> int:
        """Minutes of one repr_drug job: at paper scale 2x its start-up plus its chunk's
        share of :data:`GDSC_DRUGS_BOUND` drugs at the measured time a drug."""
        if self.origin == "synthetic":
            return 120
        per_chunk = -(-GDSC_DRUGS_BOUND // int(self.study["drug"]["chunks"]))
        seconds = LEARN_PAPER["drug_start_s"] + per_chunk * LEARN_PAPER["drug_s_per_drug"]
        return int(math.ceil(2 * seconds / 60))

    def clipping_runtime(self) -> int:
        """Minutes of the repr_clipping_weights job: at paper scale 2x every pipeline's
        (d, ε_learner) settings (at most methods x ε) at the measured time of one."""
        if self.origin == "synthetic":
            return 30
        settings = (len(self.pipelines) * len(self.methods())
                    * len(epsilon_grid(self.study["drug"])))
        return int(math.ceil(2 * settings * LEARN_PAPER["clipping_s_per_setting"] / 60))
