"""Where a file sits in the report ``snakemake --report`` builds, read like a paper's
supplement: an introduction, then one numbered section per configured study, the privacy
audit and the claims.

Snakemake calls a section a *category* and a part of it a *subcategory*, and lists both
alphabetically (``localeCompare``). So sections are numbered in reading order ("0
introduction", "1 ldp_indicators", ...), and the part of a study that compares its cohorts
or pipelines is named so that it sorts before them ("all cohorts", "both pipelines": a
lower-case "a"/"b" before a cohort's or pipeline's title). No name has a colon: Snakemake
makes each section a link target of the captions' reStructuredText, where a colon ends a
target's name.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["ALL_COHORTS", "BOTH_PIPELINES", "INTRODUCTION", "report_sections", "section"]

#: The report's first section: what was run, on which data, the verdicts, how to rebuild.
INTRODUCTION = "0 introduction"
#: rrr_survival's part comparing its cohorts (the utility figure, Cox bias and coverage,
#: the claims); each cohort has a part of its own, named by its title.
ALL_COHORTS = "all cohorts"
#: repr_transfer's part holding what belongs to both pipelines (its claims).
BOTH_PIPELINES = "both pipelines"
#: A section's title beside its study's name, where the name alone says little.
_TITLES = {"audit": "privacy audit", "claims": "claims"}


def report_sections(studies: Iterable[str]) -> dict[str, str]:
    """The numbered section of each configured study, then of the audit and the claims.

    The studies keep their configured order (the privacy audit, which reads every
    study's mechanisms, comes after them), then the merged claims.

    >>> report_sections(["rrr_survival", "audit", "ldp_indicators"])
    {'rrr_survival': '1 rrr_survival', 'ldp_indicators': '2 ldp_indicators', \
'audit': '3 privacy audit', 'claims': '4 claims'}
    """
    studies = list(dict.fromkeys(studies))
    order = [s for s in studies if s != "audit"] + [s for s in studies if s == "audit"]
    order.append("claims")
    return {study: f"{number} {_TITLES.get(study, study)}"
            for number, study in enumerate(order, start=1)}


def section(study: str, studies: Iterable[str]) -> str:
    """The report section of ``study`` (or ``"claims"``) in a run of ``studies``."""
    sections = report_sections(studies)
    if study not in sections:
        raise KeyError(f"study {study!r} is not configured (studies: {list(studies)})")
    return sections[study]
