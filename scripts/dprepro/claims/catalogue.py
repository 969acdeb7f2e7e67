"""``docs/claims.md``: every claim of a run, with where it comes from, as a page.

The page is generated from a claims table (``results/claims.csv`` of the quick default),
so it lists exactly what the workflow tests: per study, each claim's id, statement,
origin (the paper's, or the project's own), source, data origin, criterion, and how
its interval is obtained. Regenerate it after adding or changing a claim::

    PYTHONPATH=scripts python -m dprepro.claims.catalogue results/claims.csv > docs/claims.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

__all__ = ["render_catalogue"]

REGENERATE = ("PYTHONPATH=scripts python -m dprepro.claims.catalogue results/claims.csv "
              "> docs/claims.md")
_COLUMNS = ["claim_id", "claim", "claim_origin", "source", "data_origin", "criterion",
            "ci_method"]


def _cell(value) -> str:
    text = "" if pd.isna(value) else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def render_catalogue(claims: pd.DataFrame, *, run: str = "the quick default") -> str:
    """The markdown page of ``claims`` (one table per study, in the table's order)."""
    missing = [c for c in _COLUMNS + ["study", "verdict"] if c not in claims.columns]
    if missing:
        raise ValueError(f"the claims table lacks columns {missing}")
    lines = [
        "# Claims",
        "",
        f"Every claim the workflow tests, as {run} run lists them ({len(claims)} rows; "
        "generated, do not edit: `" + REGENERATE + "`). *paper*: a statement the paper "
        "makes, at the section, figure or table in *source*; *beyond*: the project's own "
        "(a mechanism, a control or a reading the paper does not have). Verdicts of a run "
        "are in `results/claims.csv`; what they mean: [design.md §9](design.md#9-claims-table).",
        "",
    ]
    for study, rows in claims.groupby("study", sort=False):
        counts = rows["claim_origin"].value_counts()
        lines += [f"## {study}", "",
                  f"{len(rows)} claims: {int(counts.get('paper', 0))} of the paper, "
                  f"{int(counts.get('beyond', 0))} beyond it.", "",
                  "| id | claim | origin | source | data | criterion | interval |",
                  "|---|---|---|---|---|---|---|"]
        for row in rows.itertuples(index=False):
            lines.append("| " + " | ".join(_cell(getattr(row, c)) for c in _COLUMNS) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dprepro.claims.catalogue",
                                     description="Render docs/claims.md from a claims table.")
    parser.add_argument("claims", type=Path, help="results/claims.csv of a run")
    parser.add_argument("--run", default="the quick default",
                        help="which configuration's run the table is from")
    args = parser.parse_args(argv)
    sys.stdout.write(render_catalogue(pd.read_csv(args.claims), run=args.run))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
