r"""Privacy statements of the ``repr_transfer`` study, built from the mechanism objects.

Every result row of the cancer-type and drug experiments carries the
:class:`dprepro.runtime.privacy_record.PrivacyRecord` of the fit that produced it, built by
:func:`cancer_privacy` / :func:`drug_privacy` from the *same* objects that ran
the mechanism: the :class:`dprepro.runtime.privacy_record.BudgetSplit` of the total ε (DP
feature selection takes half, :func:`dprepro.runtime.privacy_record.budget_split`) and the DP
learner (:class:`dprepro.learners.logistic_regression.DPLogisticRegression` with its variant and
penalty, :class:`dprepro.learners.linear_regression.SSPLinearRegression`). The learners are
built by :func:`cancer_learner` / :func:`drug_learner`, the one place that
turns a split into a learner. :func:`table_records` (which recomputes the
records of a finished table, in every table and figure job) reads the same
parameters from :func:`cancer_learner_terms` / :func:`drug_learner_terms`
instead, without building scikit-learn estimators (importing scikit-learn
costs a job about a second); a test checks that the terms equal the learners'
attributes for every pipeline, so the two cannot disagree.

``true_epsilon`` is the level the computation as run guarantees per cell line
under replacement (bounded) neighbours (:data:`NEIGHBOURS`: one line's record,
id included, replaced by another line's, the number of lines fixed), the one
relation every row and note uses; ``epsilon_scope`` says it is per released
model (:data:`MODEL_SCOPE`). It is ``inf``
where no finite ε is proven (see the notes),
``nan`` for the non-private references (ε = inf).

The result tables are not themselves DP releases: accuracy and Spearman's ρ are
measured on private test lines. The records therefore carry
``release = False`` and state the guarantee of the learner that was fitted.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from dprepro.learners.accounting import (
    objective_perturbation_epsilon,
    selection_epsilon,
    ssp_epsilon,
)
from dprepro.runtime.privacy_record import BudgetSplit, PrivacyRecord, budget_split, non_private

__all__ = [
    "AUTOMATIC_CASES_NOTE",
    "CANCER_PRIVACY_COLUMNS",
    "CORRECTED_DRUG_NOTE",
    "DRUG_LIST_NOTE",
    "DRUG_NOTE",
    "DRUG_PRIVACY_COLUMNS",
    "GLOBAL_MAPPING_NOTE",
    "MAPPINGS",
    "MODEL_SCOPE",
    "NEIGHBOURS",
    "INTERMEDIATES",
    "LOGISTIC_LOSS_C",
    "LearnerTerms",
    "PIPELINES",
    "PRIVACY_UNIT",
    "SCOPE_NOTE",
    "SELECTION_PARTS_NOTE",
    "Pipeline",
    "automatic_cases",
    "automatic_drugs",
    "cancer_learner",
    "cancer_learner_terms",
    "cancer_privacy",
    "columns_frame",
    "distinct",
    "drug_learner",
    "drug_learner_terms",
    "drug_privacy",
    "epsilon_grid",
    "experiment_epsilons",
    "method_split",
    "pipeline",
    "table_records",
    "uses_feature_selection",
]

#: Bound on |l''| of the logistic loss (CMS11's c), as in dprepro.learners.logistic_regression.
LOGISTIC_LOSS_C = 0.25
PRIVACY_UNIT = "cell line"

#: Privacy columns of a cancer-type row, in table order.
CANCER_PRIVACY_COLUMNS = ("mechanism", "epsilon", "variant", "selection_epsilon",
                          "learner_epsilon", "true_epsilon", "epsilon_scope",
                          "epsilon_if_bias_penalised", "privacy_note")
#: Privacy columns of a drug-sensitivity row, in table order.
DRUG_PRIVACY_COLUMNS = ("mechanism", "epsilon", "variant", "selection_epsilon",
                        "learner_epsilon", "true_epsilon", "epsilon_scope", "privacy_note")

NON_PRIVATE_NOTE = "non-private reference (epsilon = inf)"

DRUG_NOTE = ("epsilon is meant to cover the perturbed X'X (Wishart) and X'y (Laplace), but the "
             "Wishart noise is supported on positive-definite matrices only, so a released X'X + W "
             "can have zero density under a neighbouring data set (no finite epsilon even for "
             "X'X); the centring means and the clipping scales sd(X), sd(y) are moreover taken "
             "from the private training lines without noise, as in the paper's code, so no "
             "finite epsilon holds for the whole computation")
GLOBAL_MAPPING_NOTE = ("private lines quantile-mapped by their joint ranks (as in the paper's "
                       "code): one line's record moves every other line's features, so no "
                       "finite epsilon holds per cell line whatever the learner; ")
AUTOMATIC_CASES_NOTE = ("NOT DIFFERENTIALLY PRIVATE: the cases (lineage pairs) were chosen "
                        "from the private lineage counts (every pair of the most frequent "
                        "private lineages, repr_transfer.cancer_type.cases empty), a choice "
                        "read off the private data that no epsilon covers; list the pairs in "
                        "repr_transfer.cancer_type.cases; ")
DRUG_LIST_NOTE = ("NOT DIFFERENTIALLY PRIVATE: the drugs are every drug of the private "
                  "dose-response table (repr_transfer.drug.drugs empty on real data), so which "
                  "models exist depends on the private responses, which no epsilon covers; "
                  "list the drugs in repr_transfer.drug.drugs; ")
MAPPINGS = ("global", "line_local")
SELECTION_PARTS_NOTE = ("feature selection as the paper's code: training line i goes to part "
                        "i mod k, k = isqrt(n), Lasso alpha = sparsity/n; replacing one line in "
                        "its place changes one part (2m/k holds), but k, alpha and every line's "
                        "part are functions of n and of the lines' order, so a replacement that "
                        "moves the line in the order, or a removed line or response (drug lines "
                        "without a response are dropped first, so n is data-dependent), moves "
                        "lines across all parts and no finite epsilon is proven; ")
SELECTION_PUBLIC_NOTE = ("feature selection with k = feature_selection.n_parts or, unset, "
                         "isqrt(N) of the fit's nominal training size N (the split's or fold's "
                         "training lines, counted before lines without a response are "
                         "dropped): N counts private lines (drug: lines with a response; "
                         "cancer type: lines of the case's lineages), is the same on every "
                         "neighbour of the fit's training lines under the replacement "
                         "relation below, and is released implicitly through k (n_parts), "
                         "not covered by epsilon; "
                         "alpha = sparsity/k^2 and parts hashed from the line id: replacing a "
                         "line by one with another id changes {c} part(s), so the Laplace "
                         "scale is {s}m/(k eps_sel); ")
#: The study's one neighbour relation: replacement (bounded) neighbours.
NEIGHBOURS = ("one cell line's record (id, expression, lineage and responses) replaced by "
              "another line's, the number of lines fixed")
#: What a finite epsilon of a released model covers (replacement neighbours).
SCOPE_NOTE = (f"per released model given its training lines (neighbours: {NEIGHBOURS}); "
              "nothing composes across models (cases, drugs, folds, seeds, the epsilon sweep)")
#: ``epsilon_scope`` of a row, by task: each row is one released model's ε.
MODEL_SCOPE = {
    "cancer_type": ("per released model (one per fold), given its training lines and its "
                    "case (a lineage pair, configured or picked from the private lineage "
                    "counts: ε does not cover how the pairs were chosen); the row pools the "
                    "folds' models, which nothing composes"),
    "drug": ("per released model (one per split), given its training lines; the row averages "
             "the splits' models, which nothing composes")}
NON_PRIVATE_SCOPE = "non-private reference"
CORRECTED_DRUG_NOTE = ("X centred and clipped with public-data means and scales, y at a-priori "
                       "bounds, the clipping weights chosen on synthetic data at the split's "
                       "nominal training size n (its training lines, counted before lines "
                       "without this drug's response are dropped: a count of private lines "
                       "with a response, the same on every neighbour of the split's training "
                       "lines under the replacement relation below, released implicitly and "
                       "not covered by epsilon); Laplace noise on the upper triangle of X'X "
                       "(L1 sensitivity d^2 Bx^2, positive-semidefinite repair) and on X'y "
                       "(2 d Bx By): pure "
                       f"epsilon-DP {SCOPE_NOTE}")


@dataclasses.dataclass(frozen=True)
class Pipeline:
    """How the study runs: the paper's pipeline or the DP-correct one.

    Attributes
    ----------
    name : str
    mapping : {"global", "line_local"}
        Quantile mapping of the private expression onto the public
        distribution (:func:`dprepro.representations.quantile.quantile_map`).
    cancer_variant : str or None
        Objective-perturbation variant; ``None`` takes the configured one.
    xx_noise : {"wishart", "laplace"}
        Noise on XᵀX of the SSP learner.
    public_centring : bool
        Centre and clip the drug task's features with public-data statistics
        (and the responses at a-priori bounds) instead of private ones; a
        constant design column then learns the remaining offset
        (``intercept_column`` of :class:`dprepro.learners.linear_regression.SSPLinearRegression`).
    public_selection : bool
        DP feature selection with the number of parts, the Lasso penalty and
        each line's part fixed for every neighbour of a fit's training lines
        (:class:`dprepro.studies.repr_transfer.baselines.FeatureSelection` ``hashed``: k =
        ``n_parts``, or ⌊√N⌋ of the nominal training size N, a count of private lines
        that replacement neighbours keep) instead of the authors' ⌊√n⌋ interleaved
        parts of the lines with a response.
    """

    name: str
    mapping: str
    cancer_variant: str | None
    xx_noise: str
    public_centring: bool
    public_selection: bool = False

    @property
    def extra_dim(self) -> int:
        """Columns the SSP learner adds to the features (the intercept column)."""
        return 1 if self.public_centring else 0

    @property
    def private_set(self) -> str:
        """The ``set`` label of this pipeline's private rows in a representation frame."""
        return "private" if self.mapping == "global" else f"private_{self.mapping}"


#: The two pipelines: as the paper ran it, and with every step covered by ε.
PIPELINES = {
    "as_published": Pipeline("as_published", mapping="global", cancer_variant=None,
                             xx_noise="wishart", public_centring=False),
    "corrected": Pipeline("corrected", mapping="line_local", cancer_variant="cms11",
                          xx_noise="laplace", public_centring=True, public_selection=True),
}


def automatic_cases(settings: Mapping) -> bool:
    """Whether the cancer-type cases are chosen from the private lineage counts.

    ``settings`` is the ``repr_transfer.cancer_type`` section: with ``cases`` empty the
    study classifies every pair of the ``lineages`` most frequent *private* lineages
    (:func:`dprepro.studies.repr_transfer.cancer_type.cancer_type_cases`), a choice read
    off the private data, so no row of those cases has a finite ε
    (:func:`cancer_privacy`).
    """
    if "cases" not in settings:
        raise KeyError("the cancer_type settings lack 'cases' (repr_transfer.cancer_type.cases): "
                       "whether the cases were listed decides every row's true_epsilon")
    return not settings["cases"]


def automatic_drugs(settings: Mapping) -> bool:
    """Whether the drug list is read off the private dose-response table.

    ``settings`` are a drug table's privacy settings
    (:meth:`dprepro.studies.repr_transfer.plan.ReprPlan.privacy_settings`), whose
    ``drugs_from_data`` is true on real data without a configured
    ``repr_transfer.drug.drugs``
    (:meth:`dprepro.studies.repr_transfer.plan.ReprPlan.drugs_from_data`): then no row
    has a finite ε (:func:`drug_privacy`).
    """
    if "drugs_from_data" not in settings:
        raise KeyError("the drug settings lack 'drugs_from_data' (repr_transfer.drug.drugs "
                       "and the data origin): whether the drugs were listed decides every "
                       "row's true_epsilon")
    return bool(settings["drugs_from_data"])


def pipeline(name: str) -> Pipeline:
    """The :class:`Pipeline` called ``name`` (ValueError naming the known ones)."""
    try:
        return PIPELINES[name]
    except KeyError:
        raise ValueError(f"unknown pipeline {name!r}; expected one of {list(PIPELINES)}") from None


# --------------------------------------------------------------------------- #
# what a figure and its report caption say about privacy (one text for both)
# --------------------------------------------------------------------------- #
def pipeline_header(name: str, *, automatic_cases: bool = False,
                    automatic_drugs: bool = False) -> str:
    """The one-line privacy statement heading every figure of pipeline ``name``.

    ``automatic_cases``: the figure shows cancer-type cases chosen from the private
    lineage counts (:func:`automatic_cases`); ``automatic_drugs``: drugs read off the
    private dose-response table (:func:`automatic_drugs`); no ε covers either, in
    either pipeline.
    """
    if pipeline(name).name == "as_published":
        return "pipeline: as published (no finite ε: global quantile mapping; see true_epsilon)"
    if automatic_cases or automatic_drugs:
        chosen = ("the cases were chosen from the private lineage counts" if automatic_cases
                  else "the drugs were read off the private dose-response table")
        return f"pipeline: corrected (no finite ε here: {chosen}; see true_epsilon)"
    return ("pipeline: corrected (finite ε per released model, given its training lines; "
            "replacement neighbours; nothing composes across models)")


def cancer_variant_text(variant: str, pipeline_name: str, *,
                        automatic_cases: bool = False) -> str:
    """What ε the cancer-type task's objective perturbation delivers in a pipeline.

    ``automatic_cases``: the cases were chosen from the private lineage counts
    (:func:`automatic_cases`): no finite ε, whatever the pipeline and variant.
    """
    if automatic_cases:
        return (f"{variant} variant; no finite ε: the cases were chosen from the private "
                "lineage counts (list them in repr_transfer.cancer_type.cases), see "
                "true_epsilon")
    if pipeline(pipeline_name).name == "as_published":
        # the global quantile mapping voids any finite ε, whatever the learner
        return (f"{variant} variant; no finite ε for this pipeline (global quantile mapping), "
                "see true_epsilon")
    return ("paper variant: no proven finite ε, see true_epsilon" if variant == "paper"
            else "CMS11 variant: pure ε-DP per released model given its training lines")


def drug_privacy_text(pipeline_name: str, *, automatic_drugs: bool = False) -> str:
    """What ε the drug task's SSP regression delivers in a pipeline (``automatic_drugs``:
    none, the drugs were read off the private responses, :func:`automatic_drugs`)."""
    if automatic_drugs:
        return ("no finite ε: the drugs were read off the private dose-response table (list "
                "them in repr_transfer.drug.drugs), see true_epsilon")
    if pipeline(pipeline_name).name == "as_published":
        return ("no finite ε: the Wishart noise on X'X has a data-dependent support, and the "
                "centring, clipping and quantile mapping use the private lines "
                "(see true_epsilon)")
    return ("ε per released model given its training lines covers the whole fit (DP feature "
            "selection's share included; centring and clipping from public data)")


def figure_privacy_text(kind: str, pipeline_name: str, *, variant: str,
                        automatic_cases: bool = False, automatic_drugs: bool = False) -> str:
    """The privacy sentence of a ``kind`` ("cancer_type" or "drug") figure's caption.

    ``variant`` is the configured objective-perturbation variant; a pipeline that
    fixes its own (corrected: CMS11) uses that one, as the experiments do.
    ``automatic_cases`` (:func:`automatic_cases`) concerns the cancer-type figures only,
    ``automatic_drugs`` (:func:`automatic_drugs`) the drug figures only.
    """
    spec = pipeline(pipeline_name)
    automatic = automatic_cases and kind == "cancer_type"
    drugs = automatic_drugs and kind == "drug"
    header = pipeline_header(spec.name, automatic_cases=automatic, automatic_drugs=drugs)
    if kind == "cancer_type":
        learner = cancer_variant_text(spec.cancer_variant or variant, spec.name,
                                      automatic_cases=automatic)
        return f"{header}; DP logistic regression by objective perturbation ({learner})"
    if kind == "drug":
        text = drug_privacy_text(spec.name, automatic_drugs=drugs)
        return f"{header}; SSP linear regression: {text}"
    raise ValueError(f"unknown figure kind {kind!r}; expected 'cancer_type' or 'drug'")


#: Records of the study's non-release outputs, by what they hold.
INTERMEDIATES = {
    "public_data": non_private("public data: no privacy needed", mechanism="none"),
    "public_set": non_private("size of the public set after exclusion (with DepMap: of GDSC's "
                              "public catalogue of lines) beside the private set's size (not a "
                              "DP release)", mechanism="none", privacy_unit=PRIVACY_UNIT),
    "private_data": non_private("raw private data (sensitive): private expression, lineages "
                                "and drug responses", mechanism="none",
                                privacy_unit=PRIVACY_UNIT),
    "gdsc": non_private("raw private data (GDSC; sensitive, never released)", mechanism="none",
                        privacy_unit=PRIVACY_UNIT),
    "depmap": non_private("public data (DepMap, CC BY 4.0)", mechanism="none"),
    "candidate": non_private("public data only (DP accuracy on held-out public lineage "
                             "pairs)", mechanism="none"),
    "selection": non_private("chosen on public data only (held-out public lineage pairs)",
                             mechanism="none"),
    "clipping": non_private("chosen on synthetic data; uses only the number of private "
                            "training lines", mechanism="none"),
    "representation": non_private("private lines mapped through a representation learned on "
                                  "public data (sensitive)", mechanism="none",
                                  privacy_unit=PRIVACY_UNIT),
}


# --------------------------------------------------------------------------- #
# the ε grid and the split
# --------------------------------------------------------------------------- #
def epsilon_grid(settings: Mapping) -> list[float]:
    """The finite total ε values of an experiment, sorted: ``epsilons`` ∪ {``epsilon``}.

    ``settings`` is the ``repr_transfer.cancer_type`` or ``repr_transfer.drug``
    configuration block. The clipping-weight job of a pipeline covers every
    value and the experiments run every value, both from this list.
    """
    try:
        values = [*settings["epsilons"], settings["epsilon"]]
    except KeyError as err:
        raise KeyError(f"experiment settings lack {err.args[0]!r}; expected 'epsilons' and "
                       "'epsilon'") from None
    out = sorted({float(e) for e in values})
    bad = [e for e in out if not (math.isfinite(e) and e > 0)]
    if bad:
        raise ValueError(f"experiment epsilons must be finite and > 0, got {bad}")
    return out


def experiment_epsilons(settings: Mapping) -> list[float]:
    """:func:`epsilon_grid` followed by ``inf`` (the non-private reference)."""
    return [*epsilon_grid(settings), math.inf]


def uses_feature_selection(method: str) -> bool:
    """Whether a method spends part of ε on DP feature selection."""
    return method == "dp_feature_selection"


def method_split(method: str, epsilon: float) -> BudgetSplit:
    """The :func:`dprepro.runtime.privacy_record.budget_split` of ``epsilon`` for ``method``."""
    return budget_split(epsilon, feature_selection=uses_feature_selection(method))


# --------------------------------------------------------------------------- #
# learners from a split
# --------------------------------------------------------------------------- #
def cancer_learner(split: BudgetSplit, *, variant: str, l2: float, scale: float = 1.0,
                   rng: np.random.Generator | None = None):
    """The DP logistic regression that spends ``split.learner`` (non-private at ε = inf)."""
    from dprepro.learners.logistic_regression import DPLogisticRegression

    private = math.isfinite(split.total)
    return DPLogisticRegression(split.learner if private else math.inf, l2=l2, scale=scale,
                                variant=variant, rng=rng if private else None)


def drug_learner(split: BudgetSplit, *, ridge: float, clip_x: float = math.inf,
                 clip_y: float = math.inf, rng: np.random.Generator | None = None,
                 xx_noise: str = "wishart", x_center=None, y_center: float | None = None):
    """The SSP linear regression that spends ``split.learner``.

    At ε = inf it fits without noise or clipping (the clipping bounds are
    ignored); the centres are used either way.
    """
    from dprepro.learners.linear_regression import SSPLinearRegression

    # with fixed (public) centres the offset to the private means is learned as a coefficient
    fixed = {"x_center": x_center, "y_center": y_center,
             "intercept_column": x_center is not None and y_center is not None}
    if not math.isfinite(split.total):
        return SSPLinearRegression(np.inf, clip_x=np.inf, clip_y=np.inf, ridge=ridge,
                                   xx_noise=xx_noise, **fixed)
    return SSPLinearRegression(split.learner, clip_x=clip_x, clip_y=clip_y, ridge=ridge, rng=rng,
                               xx_noise=xx_noise, **fixed)


@dataclasses.dataclass(frozen=True)
class LearnerTerms:
    """The parameters of a DP learner that its privacy record reads, without the learner.

    What :func:`cancer_privacy` reads of a
    :class:`~dprepro.learners.logistic_regression.DPLogisticRegression`
    (``epsilon``, ``variant``, ``l2``) and :func:`drug_privacy` of a
    :class:`~dprepro.learners.linear_regression.SSPLinearRegression` (``epsilon``, ``xx_noise``,
    ``public_centring``), under the same names.
    """

    epsilon: float
    variant: str = ""
    l2: float = math.nan
    xx_noise: str = ""
    public_centring: bool = False


def cancer_learner_terms(split: BudgetSplit, *, variant: str, l2: float) -> LearnerTerms:
    """The privacy-relevant parameters of ``cancer_learner(split, variant=..., l2=...)``."""
    return LearnerTerms(epsilon=split.learner if math.isfinite(split.total) else math.inf,
                        variant=variant, l2=float(l2))


def drug_learner_terms(split: BudgetSplit, *, xx_noise: str,
                       public_centres: bool) -> LearnerTerms:
    """The privacy-relevant parameters of ``drug_learner(split, xx_noise=..., x_center=...,
    y_center=...)``, both centres given (public) or neither."""
    return LearnerTerms(epsilon=split.learner if math.isfinite(split.total) else math.inf,
                        xx_noise=xx_noise, public_centring=bool(public_centres))


def _check_learner(split: BudgetSplit, learner, kind: str) -> None:
    if math.isfinite(split.total) and float(learner.epsilon) != split.learner:
        raise ValueError(f"{kind} learner spends epsilon {learner.epsilon}, but the budget split "
                         f"gives the learner {split.learner}")


# --------------------------------------------------------------------------- #
# records
# --------------------------------------------------------------------------- #
def _split_columns(split: BudgetSplit) -> dict:
    return {"selection_epsilon": split.selection, "learner_epsilon": split.learner}


def _check_mapping(mapping: str) -> bool:
    """Whether ``mapping`` leaves each line's features independent of the other lines."""
    if mapping not in MAPPINGS:
        raise ValueError(f"mapping must be one of {MAPPINGS}, got {mapping!r}")
    return mapping == "line_local"


def _selection_voids(split: BudgetSplit, selection) -> bool:
    """Whether the DP feature selection of ``split`` has no finite ε (data-dependent parts).

    :func:`dprepro.learners.accounting.selection_epsilon`, the rule the privacy audit
    prints for the selection's row.
    """
    return (not math.isnan(split.selection) and selection is not None
            and math.isinf(selection_epsilon(split.selection,
                                             public_parts=selection.public_parts)))


def _selection_note(split: BudgetSplit, selection) -> str:
    """The note of a feature selection with public parts, from the object that ran it."""
    if math.isnan(split.selection) or selection is None or not selection.public_parts:
        return ""
    c = selection.changed_parts
    return SELECTION_PUBLIC_NOTE.format(c=c, s=2 * c)


def cancer_privacy(split: BudgetSplit, learner, *, mapping: str,
                   selection=None, automatic_cases: bool = False) -> PrivacyRecord:
    r"""Privacy record of a cancer-type fit (DP logistic regression, objective perturbation).

    ``true_epsilon`` is the level the computation as run guarantees: the
    ``cms11`` variant is pure ε-DP (CMS11 Algorithm 2, replacement neighbours);
    the ``paper`` variant (the authors' code) leaves the bias unpenalised and
    skips the ε' correction, so CMS11's proof gives no finite bound (``inf``);
    ``epsilon_if_bias_penalised`` is the bound
    :math:`\epsilon + 2\log(1 + c/\alpha)`, :math:`c = 1/4`, that it would
    have with the bias penalised (docstring of
    :class:`dprepro.learners.logistic_regression.DPLogisticRegression`). With feature selection
    the selection (Laplace, exact) and the learner share ε by sequential
    composition (``split``).

    Parameters
    ----------
    split : BudgetSplit
        The split the experiment used (:func:`method_split`).
    learner : DPLogisticRegression
        The learner that ran (its ``variant`` and ``l2``).
    mapping : {"global", "line_local"}
        How the private expression was quantile-mapped before the
        representation (:class:`Pipeline`). The ``global`` mapping ranks all
        private lines together, so no learner can make the whole computation
        DP: ``true_epsilon`` is ``inf`` and ``epsilon_if_bias_penalised`` is
        ``inf`` too.
    selection : FeatureSelection, optional
        The feature selection that ran
        (:class:`dprepro.studies.repr_transfer.baselines.FeatureSelection`);
        with the authors' data-dependent parts (``public_parts`` false)
        ``true_epsilon`` is ``inf`` (:data:`SELECTION_PARTS_NOTE`), and so is
        ``epsilon_if_bias_penalised``: penalising the bias does not repair the selection.
    automatic_cases : bool, default False
        The case was chosen from the private lineage counts (:func:`automatic_cases`):
        which lineages a model separates is then a function of the private data, so
        ``true_epsilon`` and ``epsilon_if_bias_penalised`` are ``inf`` whatever the
        learner (:data:`AUTOMATIC_CASES_NOTE`), as a grid LNTE horizon read off the data
        voids that release's ε.
    """
    local = _check_mapping(mapping)
    variant, l2 = learner.variant, float(learner.l2)
    if variant not in ("paper", "cms11"):
        raise ValueError(f"variant must be 'paper' or 'cms11', got {variant!r}")
    if not math.isfinite(split.total):
        return non_private(NON_PRIVATE_NOTE, privacy_unit=PRIVACY_UNIT, extra={
            "variant": "", "selection_epsilon": np.nan, "learner_epsilon": np.nan,
            "epsilon_scope": NON_PRIVATE_SCOPE, "epsilon_if_bias_penalised": np.nan})
    _check_learner(split, learner, "cancer-type")
    epsilon = split.total
    # the learner's rule (dprepro.learners.accounting), which the privacy audit prints too
    if math.isfinite(objective_perturbation_epsilon(split.learner, variant=variant)):
        true, bound = epsilon, epsilon
        note = (f"{split.note}objective perturbation as CMS11 Alg. 2: pure epsilon-DP "
                f"{SCOPE_NOTE}")
    else:
        bound = epsilon + 2.0 * math.log1p(LOGISTIC_LOSS_C / l2)
        true = np.inf
        note = (f"{split.note}objective perturbation as the paper's code: bias unpenalised, no "
                f"epsilon' correction, so no finite epsilon is proven; with the bias penalised "
                f"the bound would be eps + 2 log(1 + 1/(4*{l2:g})) = {bound:.3f}")
    if not local:
        true, bound, note = np.inf, np.inf, GLOBAL_MAPPING_NOTE + note
    if _selection_voids(split, selection):
        # the bound with the bias penalised is the learner's; the selection stays void
        true, bound, note = np.inf, np.inf, SELECTION_PARTS_NOTE + note
    note = _selection_note(split, selection) + note
    if automatic_cases:
        true, bound, note = np.inf, np.inf, AUTOMATIC_CASES_NOTE + note
    feature_selection = not math.isnan(split.selection)
    mechanism = ("subsample_and_aggregate+objective_perturbation" if feature_selection
                 else "objective_perturbation")
    return PrivacyRecord(mechanism=mechanism, release=False, stated=epsilon, true_epsilon=true,
                         privacy_unit=PRIVACY_UNIT, note=note,
                         extra={"variant": variant, **_split_columns(split),
                                "epsilon_scope": MODEL_SCOPE["cancer_type"],
                                "epsilon_if_bias_penalised": bound})


def drug_privacy(split: BudgetSplit, learner, *, mapping: str,
                 selection=None, automatic_drugs: bool = False) -> PrivacyRecord:
    """Privacy record of a drug-sensitivity fit (SSP linear regression).

    The paper's learner (Wishart noise, private centring and scales) gets
    ``true_epsilon = inf``, see :data:`DRUG_NOTE`; with Laplace noise on XᵀX
    and public centring (:data:`CORRECTED_DRUG_NOTE`) the fit is pure ε-DP,
    provided the features were mapped line by line (``mapping="line_local"``;
    the ``global`` mapping voids any finite ε, :data:`GLOBAL_MAPPING_NOTE`)
    and the feature selection (``selection``, as in :func:`cancer_privacy`)
    ran with public parts. ``automatic_drugs``: the drug list was read off the
    private dose-response table (:func:`automatic_drugs`), so which models exist is a
    function of the private data: ``true_epsilon`` is ``inf`` whatever the learner
    (:data:`DRUG_LIST_NOTE`).
    """
    local = _check_mapping(mapping)
    if not math.isfinite(split.total):
        return non_private(NON_PRIVATE_NOTE, privacy_unit=PRIVACY_UNIT, extra={
            "variant": "", "selection_epsilon": np.nan, "learner_epsilon": np.nan,
            "epsilon_scope": NON_PRIVATE_SCOPE})
    _check_learner(split, learner, "drug")
    feature_selection = not math.isnan(split.selection)
    # the learner's rule (dprepro.learners.accounting), which the privacy audit prints too
    correct = math.isfinite(ssp_epsilon(split.learner, xx_noise=learner.xx_noise,
                                        public_centring=learner.public_centring))
    voids = _selection_voids(split, selection)
    base = "ssp_laplace" if learner.xx_noise == "laplace" else "ssp"
    finite = correct and local and not voids and not automatic_drugs
    return PrivacyRecord(
        mechanism=f"subsample_and_aggregate+{base}" if feature_selection else base,
        release=False, stated=split.total, true_epsilon=split.total if finite else np.inf,
        privacy_unit=PRIVACY_UNIT,
        note=(DRUG_LIST_NOTE if automatic_drugs else "") + split.note
        + ("" if local else GLOBAL_MAPPING_NOTE)
        + (SELECTION_PARTS_NOTE if voids else _selection_note(split, selection))
        + (CORRECTED_DRUG_NOTE if correct else DRUG_NOTE),
        extra={"variant": "", **_split_columns(split), "epsilon_scope": MODEL_SCOPE["drug"]})


@dataclasses.dataclass(frozen=True)
class _PartsOf:
    """What a record needs of a pipeline's feature selection: whether its parts are public."""

    public_parts: bool

    @property
    def changed_parts(self) -> int:
        """As :attr:`dprepro.studies.repr_transfer.baselines.FeatureSelection.changed_parts` (the
        same rule).
        """
        return 2 if self.public_parts else 1


def table_records(table: pd.DataFrame, *, kind: str, settings: Mapping) -> list[PrivacyRecord]:
    """Recompute the privacy record of every row of a cancer-type or drug table.

    For each row, the split of its (``representation``, ``epsilon``) and the
    learner the experiment builds from it (:func:`cancer_learner` /
    :func:`drug_learner`, with ``variant`` and ``l2`` from ``settings`` for
    the cancer-type task) give the record; ``record.columns(...)`` must equal
    the row's privacy columns (tested on every released table). The cancer-type
    ``settings`` also need ``cases`` (the configured pairs; empty: chosen from the
    private lineage counts, :func:`automatic_cases`, and no row has a finite ε), the
    drug ``settings`` ``drugs_from_data`` (:func:`automatic_drugs`: true, no row has a
    finite ε).

    Returns
    -------
    list of PrivacyRecord, one per row, in row order.
    """
    if kind not in ("cancer_type", "drug"):
        raise ValueError(f"kind must be 'cancer_type' or 'drug', got {kind!r}")
    cache: dict = {}
    out = []
    automatic = (automatic_cases if kind == "cancer_type" else automatic_drugs)(settings)
    parts = {name: _PartsOf(spec.public_selection) for name, spec in PIPELINES.items()}
    pipelines = (table["pipeline"] if "pipeline" in table.columns
                 else pd.Series("as_published", index=table.index))
    for method, eps, name in zip(table["representation"], table["epsilon"], pipelines,
                                 strict=True):
        epsilon = math.inf if pd.isna(eps) else float(eps)
        key = (method, epsilon, name)
        if key not in cache:
            split, spec = method_split(method, epsilon), pipeline(name)
            if kind == "cancer_type":
                learner = cancer_learner_terms(
                    split, variant=spec.cancer_variant or settings["variant"],
                    l2=float(settings["l2"]))
                cache[key] = cancer_privacy(split, learner, mapping=spec.mapping,
                                            selection=parts[name], automatic_cases=automatic)
            else:
                learner = drug_learner_terms(split, xx_noise=spec.xx_noise,
                                             public_centres=spec.public_centring)
                cache[key] = drug_privacy(split, learner, mapping=spec.mapping,
                                          selection=parts[name], automatic_drugs=automatic)
        out.append(cache[key])
    return out


def distinct(records: Iterable[PrivacyRecord]) -> list[PrivacyRecord]:
    """The distinct records, in first-seen order (for a sidecar)."""
    out, seen = [], []
    for record in records:
        # compare the sidecar form: nan fields make dataclass equality fail
        entry = record.provenance()
        if entry not in seen:
            seen.append(entry)
            out.append(record)
    return out


def columns_frame(records: Sequence[PrivacyRecord], order: Sequence[str]) -> pd.DataFrame:
    """The privacy columns of ``records`` as a frame (one row per record)."""
    return pd.DataFrame([r.columns(order) for r in records], columns=list(order))
