"""Figure style shared by every study: layout, footers and atomic saving.

Its public names load their module on first use (:mod:`dprepro.runtime.exports`). The functions
``html_table`` and ``report_tables`` share their modules' names and stay there.
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "html_table": ["format_cell"],
    "report_tables": ["REPORT_TABLES", "ReportTable", "report_table_path"],
    "style": ["MECHANISM_NAMES", "Part", "footer", "layout_with_footer", "legend_and_footer",
              "mechanism_name", "save_figure", "wrapped_footer"],
})
