"""Claims: rows with an interval, a criterion and a verdict; the merged table and its figure.

Its public names load their module on first use (:mod:`dprepro.runtime.exports`).
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "catalogue": ["declared_claims", "declaring_modules", "render_catalogue", "verdict_counts"],
    "figure": ["FONT", "PAGE", "VERDICT_ORDER", "claims_figure", "claims_pages",
               "claims_summary_figure"],
    "registry": ["CLAIMS", "ClaimDeclaration", "ClaimRegistry", "Evidence"],
    "table": ["BEYOND", "CLAIMS_PRIVACY", "CLAIM_COLUMNS", "CLAIM_ORIGINS", "Criterion",
              "DATA_ORIGINS", "FAMILY", "Tolerance", "VERDICTS", "bootstrap_counts",
              "bootstrap_interval", "claim_row", "claims_frame", "family_note", "merge_claims",
              "newcombe_difference", "percentile_interval", "verdict"],
})
