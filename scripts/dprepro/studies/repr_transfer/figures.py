"""repr_transfer figures (cancer-type accuracy, drug prediction, each against ε) from
the aggregated tables; each carries a footer naming its data origin and pipeline."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dprepro.figures.style import footer
from dprepro.studies.repr_transfer.privacy import (
    cancer_variant_text,
    drug_privacy_text,
)
from dprepro.studies.repr_transfer.tables import with_pipeline

__all__ = ["FIGURES", "draw_figure"]


_REPR_LABELS = {"pca": "PCA", "random_projection": "random projection", "vae": "VAE",
                "supervised_vae": "VAE + lineage (joint)",
                "pca_vae_dim": "PCA at the VAE's r",
                "vae_svae_dim": "VAE at the joint model's r, λ = 0", "fixed_genes": "fixed genes",
                "dp_feature_selection": "DP feature selection"}
_REPR_COLORS = {"pca": "#1f77b4", "random_projection": "#ff7f0e", "vae": "#2ca02c",
                "supervised_vae": "#d62728", "pca_vae_dim": "#8c564b", "vae_svae_dim": "#17becf",
                "fixed_genes": "#7f7f7f",
                "dp_feature_selection": "#9467bd"}
#: The equal-dimension controls are drawn with squares, so they are not read as their models.
_REPR_MARKERS = {"pca_vae_dim": "s", "vae_svae_dim": "s"}
#: Methods whose r the legends state (each one's own search picks it).
_WITH_R = ("pca", "random_projection", "vae", "supervised_vae", "pca_vae_dim", "vae_svae_dim")
_VALUE_COLUMNS = ("accuracy_mean", "accuracy_se", "spearman_mean", "spearman_se",
                  "pc_index_mean", "pc_index_se")
_SAME_AS_PCA = "PCA at the VAE's r is PCA itself here (the two searches picked the same r)"


def _repr_origin_text(origin: str) -> str:
    return {"synthetic": "SYNTHETIC stand-in (not GDSC/DepMap data)",
            "real": "real data (GDSC private lines, DepMap public)"}.get(origin, origin)


def _repr_methods(frame: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(frame["representation"]))
    return [m for m in _REPR_LABELS if m in present] + [m for m in present
                                                        if m not in _REPR_LABELS]


def _method_label(method: str, frame: pd.DataFrame) -> str:
    """The method's name, with its r for a representation (``dim`` of the summary)."""
    label = _REPR_LABELS.get(method, method)
    if method in _WITH_R and "dim" in frame.columns:
        dims = frame.loc[frame["representation"] == method, "dim"].dropna().unique()
        if len(dims) == 1:
            return f"{label} (r = {int(dims[0])})"
    return label


def _without_identical_control(summary: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The summary without the equal-dimension control where it is PCA row for row.

    Where the VAE's r is PCA's own the control's rows repeat PCA's, and drawn over
    them they would hide PCA; the footer says so instead.
    """
    control = summary[summary["representation"] == "pca_vae_dim"]
    pca = summary[summary["representation"] == "pca"]
    columns = [c for c in _VALUE_COLUMNS if c in summary.columns]
    if "dim" in summary.columns and not (
            control["dim"].nunique() == 1 and set(control["dim"]) == set(pca["dim"])):
        return summary, ""  # another r: the control is drawn whatever its values
    if control.empty or len(control) != len(pca) or not np.array_equal(
            control[columns].to_numpy(float), pca[columns].to_numpy(float), equal_nan=True):
        return summary, ""
    return summary[summary["representation"] != "pca_vae_dim"], f" {_SAME_AS_PCA}."


def _nonprivate(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["mechanism"] == "non_private"]


def _at_epsilon(rows: pd.DataFrame, epsilon: float) -> pd.DataFrame:
    rows = rows[rows["mechanism"] != "non_private"]
    return rows[np.isclose(rows["epsilon"].astype(float), float(epsilon))]


def _se(values) -> np.ndarray:
    return np.nan_to_num(np.asarray(values, dtype=float))


def _finish(fig, note: str, *, suptitle: str | None = None) -> None:
    """Footer ``note`` wrapped to the figure's width, and the layout around it.

    The room at the bottom is the wrapped footer's height (a one-line footer as
    long as the caption widened the saved PNG to 2,500 px); the top keeps a
    strip for the pipeline header that :func:`dprepro.studies.repr_transfer.figures.draw_figure`
    writes at the top left, above the figure title ``suptitle``, if any.
    """
    width = max(60, int(fig.get_figwidth() * 17))
    text = textwrap.fill(note, width)
    footer(fig, text)
    lines = text.count("\n") + 1
    bottom = (lines * 7 * 1.3 + 6) / (fig.get_figheight() * 72)
    top = 1 - 14 / (fig.get_figheight() * 72)
    if suptitle:
        fig.suptitle(suptitle, fontsize=9, y=top)
        top -= 16 / (fig.get_figheight() * 72)
    fig.tight_layout(rect=(0, bottom, 1, top))


def _pca_seeds(summary: pd.DataFrame) -> str:
    """PCA is exact and fitted once: its seeds differ only in the DP learner's noise."""
    which = ("PCA (also at the VAE's r)" if "pca_vae_dim" in set(summary["representation"])
             else "PCA")
    return f"{which} is deterministic: its SE is the DP noise's only"


def repr_cancer_type_cases(summary: pd.DataFrame, *, epsilon: float, variant: str,
                           data_origin: str, pipeline: str, automatic_cases: bool = False):
    """Accuracy per cancer-type case and method at one ε (filled) and non-private (open).

    ``automatic_cases``: the cases were chosen from the private lineage counts (the
    footer then says no finite ε holds).
    """
    summary, same = _without_identical_control(summary)
    rows = summary[summary["case"] != "all"]
    cases = list(dict.fromkeys(rows["case"]))
    methods = _repr_methods(rows)
    fig, ax = plt.subplots(figsize=(max(5.5, 1.3 * len(cases) + 2.5), 4.0))
    width = 0.8 / max(1, len(methods))
    x0 = np.arange(len(cases))
    for i, method in enumerate(methods):
        x = x0 + (i - (len(methods) - 1) / 2) * width
        color = _REPR_COLORS.get(method, "k")
        for part, style in ((_at_epsilon(rows, epsilon), {"mfc": color}),
                            (_nonprivate(rows), {"mfc": "white"})):
            part = part[part["representation"] == method].set_index("case").reindex(cases)
            ax.errorbar(x, part["accuracy_mean"], yerr=_se(part["accuracy_se"]),
                        fmt=_REPR_MARKERS.get(method, "o"),
                        color=color, ms=5, capsize=2, lw=1, **style,
                        label=_method_label(method, rows) if style["mfc"] != "white"
                        else None)
    ax.axhline(0.5, color="0.6", lw=0.8, ls=":")
    if "majority_accuracy" in rows.columns:
        # the majority-class baseline of each (unbalanced) pair
        majority = rows.groupby("case")["majority_accuracy"].first().reindex(cases)
        ax.hlines(majority, x0 - 0.45, x0 + 0.45, color="k", lw=1.0, ls="--",
                  label="majority class")
    ax.set_xticks(x0, cases, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("stratified CV accuracy")
    ax.set_ylim(0.3, 1.02)
    ax.grid(alpha=0.3, axis="y")
    # beside the axes: inside, with a series per method and r in the labels, it covered
    # points and error bars
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    n = int(rows["n_seeds"].max())
    ax.set_title(f"Cancer-type pairs: filled ε = {float(epsilon):g}, open non-private",
                 fontsize=9)
    _finish(fig, f"Data: {_repr_origin_text(data_origin)}. DP logistic regression "
                 f"(objective perturbation, "
                 f"{cancer_variant_text(variant, pipeline, automatic_cases=automatic_cases)}); "
                 f"mean ± SE over {n} representation seeds ({_pca_seeds(summary)}).{same}")
    return fig


def _against_epsilon(ax, rows, column, se_column):
    for method in _repr_methods(rows):
        color = _REPR_COLORS.get(method, "k")
        part = rows[(rows["representation"] == method) & (rows["mechanism"] != "non_private")]
        part = part.sort_values("epsilon")
        ax.errorbar(part["epsilon"], part[column], yerr=_se(part[se_column]),
                    marker=_REPR_MARKERS.get(method, "o"),
                    ms=4, capsize=2, lw=1.2, color=color, label=_method_label(method, rows))
        ref = _nonprivate(rows[rows["representation"] == method])
        if len(ref):
            ax.axhline(float(ref[column].iloc[0]), color=color, lw=0.9, ls="--")
    ax.set_xlabel("ε")
    ax.grid(alpha=0.3)


def repr_cancer_type_vs_epsilon(summary: pd.DataFrame, *, variant: str, data_origin: str,
                                pipeline: str, automatic_cases: bool = False):
    """Accuracy averaged over cases against ε; dashed lines are the non-private fits.

    ``automatic_cases`` as in :func:`repr_cancer_type_cases`.
    """
    summary, same = _without_identical_control(summary)
    rows = summary[summary["case"] == "all"]
    # as wide as the corrected pipeline's one-line header
    fig, ax = plt.subplots(figsize=(7.0, 3.9))
    _against_epsilon(ax, rows, "accuracy_mean", "accuracy_se")
    ax.set_ylabel("CV accuracy, mean over cases")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    n = int(rows["n_seeds"].max())
    _finish(fig, f"Data: {_repr_origin_text(data_origin)}. Dashed: non-private (ε = ∞). "
                 f"{cancer_variant_text(variant, pipeline, automatic_cases=automatic_cases)}; "
                 f"mean ± SE over {n} seeds "
                 f"({_pca_seeds(summary)}).{same}")
    return fig


def repr_drug_prediction(summary: pd.DataFrame, *, epsilon: float, data_origin: str,
                         pipeline: str, automatic_drugs: bool = False):
    """Spearman's ρ and PC-index per method at one ε (filled) and non-private (open).

    ``automatic_drugs``: the drugs were read off the private dose-response table (the
    footer then says no finite ε holds).
    """
    summary, same = _without_identical_control(summary)
    methods = _repr_methods(summary)
    fig, axes = plt.subplots(1, 2, figsize=(max(7.0, 1.3 * len(methods) + 4), 3.9))
    x0 = np.arange(len(methods))
    for ax, (column, label, base) in zip(axes, (("spearman", "Spearman's ρ", 0.0),
                                                ("pc_index", "PC-index", 0.5)), strict=True):
        for part, offset, fill in ((_at_epsilon(summary, epsilon), -0.12, True),
                                   (_nonprivate(summary), 0.12, False)):
            part = part.set_index("representation").reindex(methods)
            for i, method in enumerate(methods):
                color = _REPR_COLORS.get(method, "k")
                ax.errorbar(x0[i] + offset, part.loc[method, f"{column}_mean"],
                            yerr=_se([part.loc[method, f"{column}_se"]]),
                            fmt=_REPR_MARKERS.get(method, "o"),
                            color=color, mfc=color if fill else "white", ms=6, capsize=2)
        ax.axhline(base, color="0.6", lw=0.8, ls=":")
        ax.set_xticks(x0, [_method_label(m, summary) for m in methods], rotation=20,
                      ha="right", fontsize=8)
        ax.set_ylabel(f"{label}, mean over drugs")
        ax.grid(alpha=0.3, axis="y")
    n = int(summary["n_seeds"].max())
    _finish(fig, f"Data: {_repr_origin_text(data_origin)}. SSP linear regression per drug, "
                 f"mean over splits and drugs, ± SE over {n} seeds ({_pca_seeds(summary)}); "
                 f"{drug_privacy_text(pipeline, automatic_drugs=automatic_drugs)}.{same}",
            suptitle=f"Drug sensitivity: filled ε = {float(epsilon):g}, open non-private")
    return fig


def repr_drug_vs_epsilon(summary: pd.DataFrame, *, data_origin: str):
    """Spearman's ρ and PC-index against ε (beyond the paper); dashed = non-private."""
    summary, same = _without_identical_control(summary)
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.8))
    for ax, (column, label) in zip(axes, (("spearman", "Spearman's ρ"),
                                          ("pc_index", "PC-index")), strict=True):
        _against_epsilon(ax, summary, f"{column}_mean", f"{column}_se")
        ax.set_ylabel(f"{label}, mean over drugs")
    axes[0].legend(fontsize=7)
    n = int(summary["n_seeds"].max())
    _finish(fig, f"Data: {_repr_origin_text(data_origin)}. Dashed: non-private (ε = ∞); "
                 f"mean ± SE over {n} seeds ({_pca_seeds(summary)}).{same}")
    return fig


#: Each figure: the summary table it is drawn from and the experiment it shows.
FIGURES = {
    "cancer_type_accuracy": {"table": "cancer_type_summary", "kind": "cancer_type"},
    "cancer_type_vs_epsilon": {"table": "cancer_type_summary", "kind": "cancer_type"},
    "drug_prediction": {"table": "drug_summary", "kind": "drug"},
    "drug_vs_epsilon": {"table": "drug_summary", "kind": "drug"},
}


def draw_figure(name: str, summary: pd.DataFrame, *, settings: Mapping, data_origin: str,
                pipeline: str = "as_published"):
    """Draw figure ``name`` of :data:`FIGURES` for one pipeline from its summary table.

    ``settings`` is the experiment's configuration block (``epsilon`` of the
    single-ε panels, ``variant`` and ``cases`` of the cancer-type task: cases chosen
    from the private lineage counts make the privacy texts say no finite ε holds; so
    does the drug task's ``drugs_from_data``).
    """
    from dprepro.studies.repr_transfer import figures
    from dprepro.studies.repr_transfer.privacy import (
        automatic_cases,
        automatic_drugs,
        pipeline_header,
    )
    from dprepro.studies.repr_transfer.privacy import pipeline as pipeline_spec

    spec = pipeline_spec(pipeline)
    summary = with_pipeline(summary)
    summary = summary[summary["pipeline"] == spec.name]
    if not len(summary):
        raise ValueError(f"the summary has no rows of pipeline {spec.name!r}")
    settings = {**settings, "variant": spec.cancer_variant or settings.get("variant")}
    # cases chosen from the private lineage counts: no finite ε on a cancer-type figure
    automatic = name in FIGURES and FIGURES[name]["kind"] == "cancer_type" and automatic_cases(
        settings)
    # drugs read off the private dose-response table: no finite ε on a drug figure
    drugs = name in FIGURES and FIGURES[name]["kind"] == "drug" and automatic_drugs(settings)

    draw = {
        "cancer_type_accuracy": lambda: figures.repr_cancer_type_cases(
            summary, epsilon=settings["epsilon"], variant=settings["variant"],
            data_origin=data_origin, pipeline=spec.name, automatic_cases=automatic),
        "cancer_type_vs_epsilon": lambda: figures.repr_cancer_type_vs_epsilon(
            summary, variant=settings["variant"], data_origin=data_origin,
            pipeline=spec.name, automatic_cases=automatic),
        "drug_prediction": lambda: figures.repr_drug_prediction(
            summary, epsilon=settings["epsilon"], data_origin=data_origin,
            pipeline=spec.name, automatic_drugs=drugs),
        "drug_vs_epsilon": lambda: figures.repr_drug_vs_epsilon(summary, data_origin=data_origin),
    }
    if name not in draw:
        raise ValueError(f"unknown repr_transfer figure {name!r}; expected one of {list(draw)}")
    fig = draw[name]()
    fig.text(0.01, 0.995, pipeline_header(spec.name, automatic_cases=automatic,
                                          automatic_drugs=drugs), ha="left",
             va="top", fontsize=7, color="0.3")
    return fig

