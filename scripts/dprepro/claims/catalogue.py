"""``docs/claims.md``: every declared claim, with where it comes from, as a page.

The page is generated from the declarations (:data:`dprepro.claims.registry.CLAIMS`),
not from a run: per study, each claim's id pattern, the axes it expands over, its
statement, origin (the paper's, or the project's own), source, statistic, criterion
(and the tolerance of ours behind it), the independent units its interval resamples
and how that interval is obtained. A test keeps the page equal to the declarations;
regenerate it after adding or changing a claim::

    PYTHONPATH=scripts python -m dprepro.claims.catalogue > docs/claims.md

With a run's table (``--claims results/claims.csv``) it also counts that run's rows and
verdicts per declaration.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from dprepro.claims.registry import CLAIMS, ClaimDeclaration, ClaimRegistry
from dprepro.runtime.study_registry import registered_studies

__all__ = ["declared_claims", "declaring_modules", "render_catalogue", "verdict_counts"]

REGENERATE = "PYTHONPATH=scripts python -m dprepro.claims.catalogue > docs/claims.md"


def declaring_modules() -> tuple[str, ...]:
    """The modules whose import declares every claim: each study's ``claims_modules``
    (its manifest, :class:`dprepro.runtime.study_registry.StudySpec`; the audit's are the
    papers' privacy statements)."""
    return tuple(dict.fromkeys(m for spec in registered_studies() for m in spec.claims_modules))


def declared_claims() -> ClaimRegistry:
    """The shared registry with every study's declarations imported."""
    for module in declaring_modules():
        importlib.import_module(module)
    return CLAIMS


def _cell(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^a-z0-9_ -]", "", heading.lower()).replace(" ", "-")


def _axes(declaration: ClaimDeclaration) -> str:
    if callable(declaration.over):
        doc = (declaration.over.__doc__ or "").strip().splitlines()
        return doc[0].rstrip(".") if doc else "the configured data's rows"
    return ", ".join(declaration.over) or "one row"


def verdict_counts(claims: pd.DataFrame, registry: ClaimRegistry) -> dict[str, Counter]:
    """Per declaration id: the verdicts of ``claims``'s rows it declares."""
    counts: dict[str, Counter] = {}
    for claim_id, verdict in zip(claims["claim_id"], claims["verdict"], strict=True):
        counts.setdefault(registry.match(claim_id).id, Counter())[verdict] += 1
    return counts


def render_catalogue(registry: ClaimRegistry, *, counts: dict[str, Counter] | None = None,
                     run: str = "") -> str:
    """The markdown page of ``registry``'s declarations (one section per study)."""
    declarations = registry.declarations()
    if not declarations:
        raise ValueError("no claims are declared; import the declaring modules first")
    lines = [
        "# Claims",
        "",
        f"Every claim the workflow can test: {len(declarations)} declarations, each a "
        "statement that one or more rows of `results/claims.csv` test (one per value of "
        "its axes). Generated from the declarations, do not edit: `" + REGENERATE + "`. "
        "*paper*: a statement the paper makes, at the section, figure or table in "
        "*source*; *beyond*: the project's own (a mechanism, a control or a reading the "
        "paper does not have); a row may apply a paper's statement beyond the paper's "
        "setting (a cohort or ε it did not test), and then says so in its own source. "
        "What verdicts mean and how to add a claim: "
        "[design.md §9](design.md#9-claims-table).",
        "",
    ]
    if counts is not None:
        lines += [f"Rows and verdicts are those of {run or 'a run'}.", ""]
    # the registered studies by name, then any other a declaration names
    studies = list(dict.fromkeys([*(s.name for s in registered_studies()),
                                  *(d.study for d in declarations)]))
    for study in studies:
        # the study's own claims, then those other jobs compute (the privacy statements):
        # independent of which module was imported first
        mine = sorted((d for d in declarations if d.study == study), key=lambda d: d.group)
        if not mine:
            continue
        origins = Counter(d.origin for d in mine)
        lines += [f"## {study}", "",
                  f"{len(mine)} claims: {origins['paper']} of the paper, "
                  f"{origins['beyond']} beyond it.", "",
                  "| claim | origin | source |", "|---|---|---|"]
        lines += [f"| [`{_cell(d.id)}`](#{_anchor(d.id)}) | {d.origin} | {_cell(d.source)} |"
                  for d in mine]
        lines.append("")
        for d in mine:
            lines += [f"### `{d.id}`", "",
                      f"{_cell(d.statement)}", "",
                      "| | |", "|---|---|",
                      f"| origin | {d.origin} |",
                      f"| source | {_cell(d.source)} |",
                      f"| one row per | {_cell(_axes(d))} |",
                      f"| statistic | {_cell(d.statistic)} |",
                      f"| criterion | {_cell(d.criterion)} |"]
            if d.tolerance:
                lines.append(f"| tolerance (ours) | {_cell(d.tolerance)} |")
            lines += [f"| units | {_cell(d.units)} |",
                      f"| interval | {_cell(d.ci_method)} |"]
            if d.untestable:
                lines.append(f"| untestable | {_cell(d.untestable)} |")
            if d.group:
                lines.append(f"| computed by | the {d.group} claims job |")
            if counts is not None:
                tally = counts.get(d.id, Counter())
                text = ", ".join(f"{v} {k}" for k, v in sorted(tally.items())) or "no row"
                lines.append(f"| rows in the run | {text} |")
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dprepro.claims.catalogue",
                                     description="Render docs/claims.md from the declarations.")
    parser.add_argument("--claims", type=Path,
                        help="a run's results/claims.csv: count its rows per declaration")
    parser.add_argument("--run", default="", help="which run the --claims table is from")
    args = parser.parse_args(argv)
    registry = declared_claims()
    counts = None
    if args.claims is not None:
        counts = verdict_counts(pd.read_csv(args.claims), registry)
    sys.stdout.write(render_catalogue(registry, counts=counts, run=args.run))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
