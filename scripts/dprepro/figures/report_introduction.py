"""The report's introduction: what was run, on which data, the headline verdicts and how to
rebuild a figure or the whole run.

Snakemake's report opens on the workflow's global description (``report:`` in the
Snakefile) beside the rule graph; that text is rendered with the configuration only, and
the verdicts are in the run's claims table. So the rule ``report_introduction`` writes this
page from the merged claims and the run's description (:class:`RunDescription`), twice: as
reStructuredText, which the Snakefile shows on the landing page once it exists, and as an
HTML page, filed as the report's first section. Both come from the same blocks
(:func:`introduction_blocks`), so they say the same.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

__all__ = ["STUDY_WORDS", "VERDICTS", "DataSource", "RunDescription", "introduction_blocks",
           "paper_place", "paper_verdicts", "to_html", "to_rst", "verdict_counts"]

#: The verdicts of a claim, in the order the tables show them.
VERDICTS = ("holds", "fails", "inconclusive", "untestable")
#: A configuration file's name → the mode it selects (README.md, docs/modes.md).
MODES = {"paper.yaml": "paper mode (real data where available)",
         "full.yaml": "full run (the quick default's studies at full size, more cohorts)",
         "config.yaml": "quick default (embedded configuration, runs offline)"}


#: What each study of the workflow reproduces, in a line (a study not listed: its name only).
STUDY_WORDS = {
    "ldp_indicators": "Laplace-privatised failure indicators in conditional (Beran) survival "
                      "estimation: Figure 1 and beyond, a simulation study",
    "rrr_survival": "Revised Randomized Response against LNTE on Kaplan–Meier curves, medians "
                    "and log-rank tests (Figure 2, Tables 1 and 2), and Cox regression on the "
                    "released group",
    "repr_transfer": "DP cancer-type and drug-sensitivity prediction on representations "
                     "learned from public data, as published and corrected",
    "audit": "empirical lower bounds on the privacy loss of every mechanism",
}
#: Where a paper states a claim, in short: a table or figure, else a section.
_ITEM = re.compile(r"(Table|Figure) \d+")
_SECTION = re.compile(r"§\s?\d+|Section \d+")


def paper_place(source: str) -> str:
    """``"De Faveri et al. (SEBD 2024), §5, Table 2 and its discussion"`` → ``"Table 2"``:
    the first table or figure a claim's ``source`` names, else its first section (``§5``),
    else ``"elsewhere"``; so the papers' claims can be counted by where they are stated."""
    found = _ITEM.search(str(source)) or _SECTION.search(str(source))
    if found is None:
        return "elsewhere"
    return re.sub(r"^(§\s?|Section )", "§", found.group(0))


@dataclass(frozen=True)
class DataSource:
    """One data set of the run: ``name`` (its configuration key), ``title``, ``origin``
    (real, synthetic stand-in, simulation...), ``source`` (where it comes from) and
    ``used_by`` (the studies or analyses reading it)."""

    name: str
    title: str
    origin: str
    source: str
    used_by: str


@dataclass(frozen=True)
class RunDescription:
    """What was run: the studies (in order, with their report sections), the configuration
    files, the base seed, the PNGs' resolution, the run's name and its data sets."""

    studies: Sequence[str]
    sections: Mapping[str, str]
    configfiles: Sequence[str]
    seed: int
    dpi: int
    run_name: str
    data: Sequence[DataSource]
    example_target: str = ""

    @property
    def mode(self) -> str:
        """The mode the configuration files select (the last shipped one named wins)."""
        names = [f.replace("\\", "/").rsplit("/", 1)[-1] for f in self.configfiles]
        for name in reversed(names):
            if name in MODES:
                extra = len(names) - 1 - names.index(name)
                return MODES[name] + (" with further configuration files" if extra else "")
        return "a custom configuration"


def verdict_counts(claims: pd.DataFrame, origin: str | None = None) -> pd.DataFrame:
    """Claims per study (rows, in the table's order) and verdict (columns
    :data:`VERDICTS`), with a ``total`` column; ``origin``: only the claims of that
    ``claim_origin`` (``paper``, ``beyond``)."""
    if origin is not None:
        claims = claims[claims["claim_origin"] == origin]
    studies = list(dict.fromkeys(claims["study"]))
    counts = (claims.groupby("study")["verdict"].value_counts().unstack(fill_value=0)
              .reindex(index=studies, columns=list(VERDICTS), fill_value=0).astype(int))
    unknown = sorted(set(claims["verdict"]) - set(VERDICTS))
    if unknown:
        raise ValueError(f"claims table: unknown verdicts {unknown} (known: {VERDICTS})")
    return counts.assign(total=counts.sum(axis=1))


def paper_verdicts(claims: pd.DataFrame) -> pd.DataFrame:
    """The papers' own claims by study and where the paper states them (``source``: the
    first table, figure or section it names, :func:`paper_place`): one row each, a column
    per verdict."""
    paper = claims[claims["claim_origin"] == "paper"]
    paper = paper.assign(source=paper["source"].fillna("").map(paper_place))
    if paper.empty:
        return pd.DataFrame(columns=["study", "source", *VERDICTS])
    counts = (paper.groupby(["study", "source"], sort=False)["verdict"].value_counts()
              .unstack(fill_value=0).reindex(columns=list(VERDICTS), fill_value=0))
    return counts.astype(int).reset_index()


def _counts_row(label: Sequence[str], row: Mapping) -> list[str]:
    return [*label, *(str(int(row[v])) for v in VERDICTS)]


def introduction_blocks(run: RunDescription, claims: pd.DataFrame) -> list[tuple]:
    """The page as blocks: ``("h1"|"h2", text)``, ``("p", text)``, ``("ul", [items])``,
    ``("table", header, rows)`` and ``("code", [lines])``."""
    where = f" (named run ``{run.run_name}``, under runs/{run.run_name}/)" if run.run_name else ""
    files = ", ".join(f"``{f}``" for f in run.configfiles) or "no shipped file"
    blocks: list[tuple] = [
        ("h1", "Supplement: the papers rebuilt"),
        ("p", f"This report is one run of the workflow{where}: the {run.mode}, "
              f"shipped configuration {files} (with any files of your own the run was given:"
              " Snakemake's menu lists every configuration file), "
              f"base seed {run.seed} (every random stream derives "
              "from it: the same configuration gives byte-identical tables). Every figure is "
              f"a PDF with a PNG at {run.dpi} dpi beside it, with a caption saying what it "
              "shows, on which data and at which privacy level."),
        ("h2", "What was run"),
        ("ul", [f"**{run.sections[s]}**" + (f": {STUDY_WORDS[s]}" if s in STUDY_WORDS else "")
                for s in run.studies]
         + [f"**{run.sections['claims']}**: every tested statement, with its interval and "
            "verdict"]),
        ("p", "In a study's section, each cohort (rrr_survival) or pipeline (repr_transfer) "
              "has a part holding all its figures and tables; the part first in the list "
              "compares them."),
        ("h2", "On which data"),
        ("table", ["data set", "origin", "source", "used by"],
         [[d.title if d.name in d.title else f"{d.title} ({d.name})", d.origin, d.source,
           d.used_by] for d in run.data]),
    ]
    counts = verdict_counts(claims)
    paper = verdict_counts(claims, "paper")
    blocks += [
        ("h2", "Headline verdicts"),
        ("p", "A claim **holds** when its whole interval meets its criterion, **fails** when "
              "none of it does, is **inconclusive** when the interval straddles it (or is "
              "unreliable) and **untestable** when the configured data cannot decide it. "
              f"{int(counts['total'].sum())} claims in all "
              f"({int(paper['total'].sum())} stated by the papers); each is in the section "
              f"{run.sections['claims']} and in results/claims.csv."),
        ("table", ["study", "claims", *VERDICTS, "total"],
         [_counts_row([study, "all"], row) + [str(int(row["total"]))]
          for study, row in counts.iterrows()]
         + [_counts_row([study, "the paper's"], row) + [str(int(row["total"]))]
            for study, row in paper.iterrows()]),
        ("p", "The papers' claims by where the paper states them (the first table or "
              "figure the claim's ``source`` names, else its section):"),
        ("table", ["study", "stated in", *VERDICTS],
         [_counts_row([row["study"], str(row["source"])], row)
          for _, row in paper_verdicts(claims).iterrows()]),
        ("h2", "How to rebuild"),
        ("p", "From the project's folder, with the configuration files of this run (add "
              "yours after the shipped ones). One "
              "figure or table (and what it needs), the whole run, this report, and the "
              "check of every output against its provenance sidecar:"),
        ("code", [f"snakemake --cores all {_configs(run)}{run.example_target}".rstrip(),
                  f"snakemake --cores all {_configs(run)}".rstrip(),
                  f"snakemake --report results/report.html {_configs(run)}".rstrip(),
                  f"snakemake verify --cores 1 {_configs(run)}".rstrip()]),
    ]
    return blocks


def _configs(run: RunDescription) -> str:
    return "".join(f"--configfile {f} " for f in run.configfiles)


def to_rst(blocks: Sequence[tuple]) -> str:
    """The blocks as reStructuredText, inside a raw block of Snakemake's template engine
    (which renders the report's description once more)."""
    out: list[str] = []
    for kind, *rest in blocks:
        if kind in ("h1", "h2"):
            out += [rest[0], ("=" if kind == "h1" else "-") * len(rest[0]), ""]
        elif kind == "p":
            out += [rest[0], ""]
        elif kind == "ul":
            out += [f"* {item}" for item in rest[0]] + [""]
        elif kind == "table":
            header, rows = rest
            out += [".. list-table::", "   :header-rows: 1", ""]
            for row in [header, *rows]:
                out += [f"   * - {row[0]}", *(f"     - {cell}" for cell in row[1:])]
            out.append("")
        elif kind == "code":
            out += ["::", "", *(f"    {line}" for line in rest[0]), ""]
        else:
            raise ValueError(f"unknown block {kind!r}")
    return "{% raw %}\n" + "\n".join(out) + "\n{% endraw %}\n"


def _html_inline(text: str) -> str:
    """Escaped text with the two inline marks the blocks use: ``**bold**`` and
    ````literal````."""
    parts = html.escape(text).split("**")
    text = "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))
    parts = text.split("``")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def to_html(blocks: Sequence[tuple]) -> str:
    """The blocks as one self-contained HTML page (no script, no network)."""
    body: list[str] = []
    for kind, *rest in blocks:
        if kind in ("h1", "h2"):
            body.append(f"<{kind}>{_html_inline(rest[0])}</{kind}>")
        elif kind == "p":
            body.append(f"<p>{_html_inline(rest[0])}</p>")
        elif kind == "ul":
            body.append("<ul>" + "".join(f"<li>{_html_inline(i)}</li>" for i in rest[0])
                        + "</ul>")
        elif kind == "table":
            header, rows = rest
            head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
            cells = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row)
                            + "</tr>" for row in rows)
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>")
        elif kind == "code":
            body.append("<pre>" + html.escape("\n".join(rest[0])) + "</pre>")
        else:
            raise ValueError(f"unknown block {kind!r}")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Introduction"
            "</title><style>body { font-family: sans-serif; font-size: 13px; margin: 1em; }"
            " table { border-collapse: collapse; margin: 0.5em 0; } th, td { border: 1px "
            "solid #ccc; padding: 2px 6px; text-align: left; } pre { background: #f4f4f4;"
            " padding: 0.5em; white-space: pre-wrap; }</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
