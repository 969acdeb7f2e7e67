"""The tables the report shows as tables: the claims and each study's headline tables.

Each entry (:class:`dprepro.runtime.study_registry.ReportTable`) names the CSV a rule writes,
its study and the sentence above it. The merged claims table is the workflow's; each study
lists its own in its manifest (``StudySpec.report_tables``). :func:`report_tables` picks
those of the configured studies; :func:`report_pages` makes the report's pages of them: a
table with a row per cohort (or pipeline) is split into a page per cohort (pipeline), filed
beside that cohort's figures, and each page shows the columns of :data:`REPORT_COLUMNS`
(the whole CSV is a download on the page). The rule ``report_tables`` renders each page as
a sortable, filterable HTML page (:func:`dprepro.figures.html_table.html_table`), the form
Snakemake's report shows inline.

The columns and splits are kept here, not in the studies' manifests: every job imports the
registry module (its code digest would change, and every job rerun, for a choice only the
report's pages depend on), while only the report's job imports this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from dprepro.figures.report_layout import ALL_COHORTS, BOTH_PIPELINES, report_sections
from dprepro.runtime.study_registry import ReportTable, registered_studies, study_spec

__all__ = ["CLAIMS_TABLE", "REPORT_COLUMNS", "REPORT_SPLITS", "REPORT_TABLES", "ReportPage",
           "page_parameters", "report_page_flags", "report_pages", "report_tables",
           "report_table_path"]

#: The merged claims table of the configured studies, shown whatever they are.
CLAIMS_TABLE = ReportTable(
    "results/claims.csv", "claims", "Claims of the configured studies",
    "One row per tested statement: the statistic, its interval, the criterion and the "
    "verdict (results/claims.csv).")

#: Every table the report can show, by name: the claims, then each study's (by study name).
REPORT_TABLES = {"claims": CLAIMS_TABLE,
                 **{name: table for spec in registered_studies()
                    for name, table in spec.report_tables.items()}}


def report_table_path(name: str) -> str:
    """Where the HTML page of table ``name`` is written."""
    return f"results/report_tables/{name}.html"


def report_tables(studies: Iterable[str]) -> dict[str, ReportTable]:
    """The report's tables: the merged claims, then each of ``studies``'s (in that order)."""
    return {"claims": CLAIMS_TABLE,
            **{name: table for study in dict.fromkeys(studies)
               for name, table in study_spec(study).report_tables.items()}}


_CLAIM_COLUMNS = ("claim_id", "verdict", "claim", "reproduced_value", "ci_lower", "ci_upper",
                  "criterion", "data_origin")
_RRR_RELEASE = ("mechanism", "epsilon", "calibration", "true_epsilon")

#: The columns each page shows, at most 9 and the verdict (or the headline number) among the
#: first, so that the page fits the report's frame without scrolling sideways; the CSV keeps
#: every column (a download on the page). A table not listed shows every column.
REPORT_COLUMNS: dict[str, tuple[str, ...]] = {
    "claims": ("study", *_CLAIM_COLUMNS[:-1]),
    "ldp_claims": _CLAIM_COLUMNS,
    "rrr_claims": _CLAIM_COLUMNS,
    "repr_claims": _CLAIM_COLUMNS,
    "ldp_imse_alpha": ("censoring", "alpha", "mechanism", "estimator", "imse", "imse_se",
                       "ibias2", "ivariance"),
    "rrr_median_survival": (*_RRR_RELEASE, "group", "median", "ci_lower", "ci_upper",
                            "median_status"),
    "rrr_logrank_rejection": (*_RRR_RELEASE, "group_a", "group_b", "rejection_rate",
                              "agreement_with_original", "original_rejects"),
    "rrr_utility": (*_RRR_RELEASE, "group", "sup_distance_mean", "sup_distance_q90",
                    "undefined_share_mean"),
    "repr_cancer_type": ("case", "representation", "mechanism", "epsilon", "true_epsilon",
                         "accuracy_mean", "accuracy_se", "majority_accuracy"),
    "repr_drug": ("representation", "mechanism", "epsilon", "true_epsilon", "spearman_mean",
                  "spearman_se", "pc_index_mean", "pc_index_se"),
    "audit": ("mechanism", "variant", "role", "claimed_epsilon", "true_epsilon",
              "empirical_epsilon_lower_bound", "verdict"),
}

#: The column that splits a table into a page per cohort (``dataset``) or pipeline: each
#: page sits with that cohort's (pipeline's) figures.
REPORT_SPLITS: dict[str, str] = {
    "rrr_median_survival": "dataset", "rrr_logrank_rejection": "dataset",
    "rrr_utility": "dataset", "repr_cancer_type": "pipeline", "repr_drug": "pipeline"}

#: The part of its study's section where a whole (unsplit) table sits.
_WHOLE_TABLE_PART = {"claims": "all claims", "rrr_survival": ALL_COHORTS,
                     "repr_transfer": BOTH_PIPELINES, "audit": "privacy audit"}


@dataclass(frozen=True)
class ReportPage:
    """One HTML page of the report: a table's rows of one cohort or pipeline, or all rows.

    Parameters
    ----------
    name : str
        The page's name (its file ``results/report_tables/<name>.html``).
    table : str
        The table's name (:data:`REPORT_TABLES`).
    spec : ReportTable
        The table.
    split, value : str
        The column splitting the table and this page's value of it (``""``: all rows).
    """

    name: str
    table: str
    spec: ReportTable
    split: str = ""
    value: str = ""

    @property
    def path(self) -> str:
        return report_table_path(self.name)

    @property
    def columns(self) -> tuple[str, ...]:
        return REPORT_COLUMNS.get(self.table, ())

    @property
    def title(self) -> str:
        return f"{self.spec.title} ({self.split} {self.value})" if self.split else self.spec.title


def report_pages(studies: Iterable[str], parts: Mapping[str, Sequence[str]]
                 ) -> dict[str, ReportPage]:
    """The report's table pages: each table of :func:`report_tables`, split by
    :data:`REPORT_SPLITS` into a page per value of ``parts[<column>]`` (the configured
    cohorts, pipelines); a table without a split, or whose column has no values in
    ``parts``, is one page."""
    pages = {}
    for name, table in report_tables(studies).items():
        column = REPORT_SPLITS.get(name, "")
        values = list(parts.get(column, ())) if column else []
        if not values:
            pages[name] = ReportPage(name, name, table)
        for value in values:
            pages[f"{name}_{value}"] = ReportPage(f"{name}_{value}", name, table, column,
                                                   str(value))
    return pages


def report_page_flags(page: ReportPage, studies: Iterable[str],
                      part_titles: Mapping[str, Mapping[str, str]]) -> dict:
    """The ``category``, ``subcategory`` and ``labels`` of a page for Snakemake's
    ``report()``: its study's numbered section; the part of its cohort or pipeline
    (``part_titles[<column>][<value>]``, the part its figures are in), else the part of the
    study's whole tables; labels with the keys of the figures beside it (rrr_survival's
    have a ``panel``: Snakemake shows a part's labels only when all its files have them)."""
    study = page.spec.study
    wildcard = re.fullmatch(r"\{(\w+)\}", page.value)
    if wildcard:  # a page pattern of a job per cohort: its part is the job's cohort's
        part = lambda wildcards: part_titles[page.split][getattr(wildcards, wildcard[1])]  # noqa: E731
    elif page.split:
        part = part_titles[page.split][page.value]
    else:
        part = _WHOLE_TABLE_PART.get(study, "tables")
    name = page.spec.title.split(": ", 1)[-1]
    labels = {"figure": f"table: {name}", "format": "HTML table"}
    if study == "rrr_survival":
        labels = {"figure": labels["figure"], "panel": "the cohort's rows" if page.split
                  else "all rows", "format": "HTML table"}
    return {"category": report_sections(studies)[study], "subcategory": part,
            "labels": labels}


def page_parameters(page: ReportPage, value: str | None = None) -> dict:
    """What the rule passes its script of one page (its params: a change reruns the job):
    the table, the split and value (``value`` replaces a pattern's, e.g. a job's cohort),
    the columns, title and caption."""
    if value is not None:
        page = replace(page, value=value)
    return {"table": page.table, "split": page.split, "value": page.value,
            "columns": list(page.columns), "title": page.title,
            "caption": f"{page.spec.caption} CSV: {page.spec.csv}"}
