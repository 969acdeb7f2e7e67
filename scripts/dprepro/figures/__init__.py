"""Figure style shared by every study: layout, footers and atomic saving.

Its public names load their module on first use (:mod:`dprepro.runtime.exports`). The functions
``html_table`` and ``report_tables`` share their modules' names and stay there.
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "html_table": ["format_cell"],
    "report_introduction": ["DataSource", "RunDescription", "STUDY_WORDS", "VERDICTS",
                            "introduction_blocks", "paper_place", "paper_verdicts", "to_html",
                            "to_rst", "verdict_counts"],
    "report_layout": ["ALL_COHORTS", "BOTH_PIPELINES", "INTRODUCTION", "report_sections",
                      "section"],
    "report_tables": ["CLAIMS_TABLE", "REPORT_COLUMNS", "REPORT_SPLITS", "REPORT_TABLES",
                      "ReportPage", "page_parameters", "report_page_flags", "report_pages",
                      "report_table_path"],
    "style": ["Part", "footer", "layout_with_footer", "legend_and_footer", "save_figure",
              "wrapped_footer"],
})
