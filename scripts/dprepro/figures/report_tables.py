"""The tables the report shows as tables: the claims and each study's headline tables.

Each entry names the CSV a rule writes, where the report files it (category: the
study; subcategory: "tables", the claims under their own category) and the sentence
above it. :func:`report_tables` picks those of the configured studies; the rule
``report_tables`` renders each as a sortable, filterable HTML page
(:func:`dprepro.figures.html_table.html_table`), the form Snakemake's report shows
inline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ReportTable", "REPORT_TABLES", "report_tables", "report_table_path"]


@dataclass(frozen=True)
class ReportTable:
    """One table of the report."""

    csv: str
    study: str
    title: str
    caption: str

    @property
    def category(self) -> str:
        return "claims" if self.study == "claims" else self.study

    @property
    def subcategory(self) -> str:
        return "all claims" if self.study == "claims" else "tables"


_ROW = "One row per"
REPORT_TABLES = {
    "claims": ReportTable(
        "results/claims.csv", "claims", "Claims of the configured studies",
        f"{_ROW} tested statement: the statistic, its interval, the criterion and the verdict "
        "(results/claims.csv)."),
    "ldp_claims": ReportTable(
        "results/ldp_indicators/tables/claims.csv", "ldp_indicators",
        "ldp_indicators: claims",
        f"{_ROW} claim of the ldp paper or beyond it, with its interval and verdict."),
    "ldp_imse_alpha": ReportTable(
        "results/ldp_indicators/tables/mse_alpha_grid.csv", "ldp_indicators",
        "ldp_indicators: integrated MSE against α",
        f"{_ROW} estimator, censoring level and α (simulation, no real data)."),
    "rrr_claims": ReportTable(
        "results/rrr_survival/tables/claims.csv", "rrr_survival", "rrr_survival: claims",
        f"{_ROW} claim of the rrr paper or beyond it, with its interval and verdict."),
    "rrr_median_survival": ReportTable(
        "results/rrr_survival/tables/median_survival.csv", "rrr_survival",
        "rrr_survival: median survival (Table 2)",
        f"{_ROW} cohort, release, ε and group: the median and its interval, with the "
        "release's privacy columns."),
    "rrr_logrank_rejection": ReportTable(
        "results/rrr_survival/tables/logrank_rejection_rate.csv", "rrr_survival",
        "rrr_survival: log-rank rejection rates (Table 1)",
        f"{_ROW} cohort, release, ε and pair of groups: the share of draws whose "
        "log-rank test rejects."),
    "rrr_utility": ReportTable(
        "results/rrr_survival/tables/utility.csv", "rrr_survival",
        "rrr_survival: utility against ε",
        f"{_ROW} cohort, release and ε: the mean sup-distance to the original KM curve."),
    "repr_claims": ReportTable(
        "results/repr_transfer/tables/claims.csv", "repr_transfer", "repr_transfer: claims",
        f"{_ROW} claim of the repr paper or beyond it, with its interval and verdict."),
    "repr_cancer_type": ReportTable(
        "results/repr_transfer/tables/cancer_type_summary.csv", "repr_transfer",
        "repr_transfer: cancer-type pairs",
        f"{_ROW} pipeline, method, ε and lineage pair: the mean CV accuracy and its SE."),
    "repr_drug": ReportTable(
        "results/repr_transfer/tables/drug_summary.csv", "repr_transfer",
        "repr_transfer: drug sensitivity",
        f"{_ROW} pipeline, method and ε: Spearman's ρ and the PC-index, mean and SE."),
    "audit": ReportTable(
        "results/audit/privacy_audit.csv", "audit", "Privacy audit",
        f"{_ROW} mechanism and stated ε or α: the empirical lower bound on ε beside the "
        "claimed and the true ε."),
}


def report_table_path(name: str) -> str:
    """Where the HTML page of table ``name`` is written."""
    return f"results/report_tables/{name}.html"


def report_tables(studies: Iterable[str]) -> dict[str, ReportTable]:
    """The report's tables for the configured studies (the merged claims always)."""
    chosen = set(studies) | {"claims"}
    return {name: table for name, table in REPORT_TABLES.items() if table.study in chosen}
