"""The tables the report shows as tables: the claims and each study's headline tables.

Each entry (:class:`dprepro.runtime.study_registry.ReportTable`) names the CSV a rule writes,
where the report files it (category: the study; subcategory: "tables", the claims under
their own category) and the sentence above it. The merged claims table is the workflow's;
each study lists its own in its manifest (``StudySpec.report_tables``).
:func:`report_tables` picks those of the configured studies; the rule ``report_tables``
renders each as a sortable, filterable HTML page
(:func:`dprepro.figures.html_table.html_table`), the form Snakemake's report shows inline.
"""

from __future__ import annotations

from collections.abc import Iterable

from dprepro.runtime.study_registry import ReportTable, registered_studies, study_spec

__all__ = ["CLAIMS_TABLE", "REPORT_TABLES", "report_tables", "report_table_path"]

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
