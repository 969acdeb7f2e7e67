"""The ldp_indicators study's plan: designs, table settings, replicate paths and job params.

What the rules of ``workflow/rules/ldp_indicators.smk`` ask of the configuration,
as plain functions of ``config["ldp_indicators"]`` (no Snakemake import), so the
workflow's plan is tested like the estimators.

A *design* is one set of replicates run on the same samples: ``main`` (Figure 1
and the α grid), ``convergence`` (n varies) and the variants ``x<value>`` (another
x), ``noise_scale`` (rescaled mechanisms) and ``phat_at_x`` (p̂ evaluated at
(x, Y_i)). A *setting* is one row group of a table: (design, mechanism,
censoring, n, α).
"""

from __future__ import annotations

from collections.abc import Mapping

from dprepro.runtime.params import canonical, number_text
from dprepro.runtime.provenance import sidecar_path

__all__ = ["RESULTS", "LdpPlan", "replicate_path", "simulate_minutes"]

RESULTS = "results/ldp_indicators"


def replicate_path(design: str, mechanism: str, censoring: str, n: int) -> str:
    """The replicate file of one (design, mechanism, censoring, n): every α of the design."""
    return f"{RESULTS}/replicates/{design}/{mechanism}/cens{censoring}_n{n}.parquet"


def simulate_minutes(n: int) -> int:
    """SLURM minutes of one (censoring, n) setting (the presmoothing is O(n²))."""
    return 5 + int(n) ** 2 // 400_000


class LdpPlan:
    """The plan of one configuration of the study.

    Parameters
    ----------
    study : mapping
        ``config["ldp_indicators"]`` with the schema's defaults filled in.
    seed : int
        The workflow's root seed (``config["seed"]``).
    """

    def __init__(self, study: Mapping, *, seed: int):
        self.study = study
        self.seed = seed
        self.designs = self._designs()

    def _designs(self) -> dict[str, dict]:
        """Every replicate design: its α (all run on the same samples), x, N and p̂ point."""
        study = self.study
        base = {
            "x": float(study["x"]),
            "replicates": study["replicates"],
            "noise_draws": study["noise_draws"],
            "phat_at_x": False,
        }
        alphas = sorted({float(a) for a in study["alphas"]})
        convergence = study["convergence"]
        designs = {
            "main": base | {"alphas": sorted({float(a) for a in
                                              study["alphas"] + study["alpha_grid"]})},
            "convergence": base | {
                "alphas": sorted({float(a) for a in convergence["alphas"]}),
                "replicates": convergence["replicates"],
                "noise_draws": convergence["noise_draws"],
            },
        }
        variants = study["variants"]
        for x in variants["x_values"]:
            if float(x) != float(study["x"]):
                designs[f"x{number_text(x)}"] = base | {"alphas": alphas, "x": float(x)}
        if any(float(c) != 1.0 for c in variants["noise_scales"]):
            designs["noise_scale"] = base | {"alphas": alphas}
        if variants["phat_at_x"]:
            designs["phat_at_x"] = base | {"alphas": alphas, "phat_at_x": True}
        return designs

    def censoring(self, label: str) -> Mapping:
        """The configured censoring setting named ``label`` (its rates)."""
        for setting in self.study["censoring"]:
            if setting["label"] == label:
                return setting
        raise ValueError(f"unknown censoring label {label!r}; configured: "
                         f"{[s['label'] for s in self.study['censoring']]}")

    def t_grid(self) -> list[float]:
        """The evaluation times t of ``t_grid`` (``num`` points from ``start`` to ``stop``)."""
        grid = self.study["t_grid"]
        step = (grid["stop"] - grid["start"]) / (grid["num"] - 1)
        return [grid["start"] + i * step for i in range(grid["num"])]

    def settings(self, design: str, censorings, sample_sizes, alphas, mechanisms=None,
                 **extra) -> list[dict]:
        """One table setting per (mechanism, censoring, n, α) of a design (+ ``extra`` keys)."""
        mechanisms = self.study["mechanisms"] if mechanisms is None else mechanisms
        return [
            {
                "design": design,
                "mechanism": m,
                "censoring": c,
                "n": int(n),
                "alpha": float(a),
                "lambda_t": self.censoring(c)["lambda_t"],
                "lambda_c": self.censoring(c)["lambda_c"],
                "noise_draws": self.designs[design]["noise_draws"],
                **extra,
            }
            for m in mechanisms
            for c in censorings
            for n in sample_sizes
            for a in alphas
        ]

    def variant_settings(self, variant: str) -> list[dict]:
        """Settings of one variant table (``x``, ``noise_scale`` or ``phat``), each with the
        variant's column and, off the main design, a claims tag."""
        spec, labels = self.study["variants"], [s["label"] for s in self.study["censoring"]]
        m, main_x = spec["mechanism"], float(self.study["x"])

        def settings(design, mechanism, **extra):
            return self.settings(design, labels, [self.study["n"]], self.study["alphas"],
                                 [mechanism], **extra)

        out = []
        if variant == "x":
            for x in spec["x_values"]:
                if float(x) == main_x:
                    out += settings("main", m, x=main_x)
                else:
                    tag = f"@x{number_text(x)}"
                    out += settings(f"x{number_text(x)}", m, x=float(x), tag=tag)
        elif variant == "noise_scale":
            for c in spec["noise_scales"]:
                if float(c) == 1.0:
                    out += settings("main", m, noise_scale=1.0)
                else:
                    out += settings("noise_scale", f"{m}_scale{float(c):g}",
                                    noise_scale=float(c))
        elif variant == "phat":
            out += settings("main", m, phat_at="X_i")
            if spec["phat_at_x"]:
                out += settings("phat_at_x", m, phat_at="x", tag="@phat_x")
        else:
            raise ValueError(f"unknown variant {variant!r}; known: x, noise_scale, phat")
        return out

    @staticmethod
    def estimate_paths(settings) -> list[str]:
        """Replicate file of each setting (one file holds every α of its design)."""
        return [replicate_path(s["design"], s["mechanism"], s["censoring"], s["n"])
                for s in settings]

    @staticmethod
    def replicate_outputs(design: str, mechanism: str, censorings, sample_sizes) -> dict:
        """Named outputs of one simulation job: a replicate file (and its sidecar) per
        (censoring, n), keyed ``cens<label>_n<n>`` as in :meth:`replicate_settings`."""
        out = {}
        for c in censorings:
            for n in sample_sizes:
                path = replicate_path(design, mechanism, c, int(n))
                out[f"cens{c}_n{int(n)}"] = path
                out[f"prov_cens{c}_n{int(n)}"] = sidecar_path(path)
        return out

    def replicate_settings(self, censorings, sample_sizes) -> list[dict]:
        """What a simulation job runs, output by output: censoring label, its rates, n."""
        return [
            {"output": f"cens{c}_n{int(n)}", "censoring": c, "n": int(n),
             "setting": canonical(dict(self.censoring(c)))}
            for c in censorings
            for n in sample_sizes
        ]

    def simulate_params(self, design: str | None, censorings, sample_sizes) -> dict:
        """Params of a simulation job of ``design`` for every (censoring, n) it runs.

        ``design=None``: the job's ``{design}`` wildcard; the design's own values are then
        functions of the wildcards, as Snakemake takes them.
        """
        def of_design(key):
            if design is None:
                return lambda wildcards: self.designs[wildcards.design][key]
            return self.designs[design][key]

        study = self.study
        return {
            "design": (lambda wildcards: wildcards.design) if design is None else design,
            "seed": self.seed,
            "alphas": of_design("alphas"),
            "phat_at_x": of_design("phat_at_x"),
            "settings": self.replicate_settings(censorings, sample_sizes),
            "replicates": of_design("replicates"),
            "noise_draws": of_design("noise_draws"),
            "x": of_design("x"),
            "bandwidth_multiplier": study["bandwidth_multiplier"],
            "clip_phat": study["clip_phat"],
            # p̂(x, t) and the unclipped F̂_n only at the α of Figure 1 (claims, clip table)
            "extra_alphas": study["alphas"],
            "t": self.t_grid(),
        }
