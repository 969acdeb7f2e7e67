"""The privacy boundary, read from the workflow's own rule graph."""

import re
from pathlib import Path

import pytest

from dprepro.runtime.study_registry import privacy_boundary
from helpers import snakerun

ROOT = Path(__file__).resolve().parents[1]
# the workflow's own rules (the file) and every study's (its manifest)
BOUNDARY = privacy_boundary(ROOT / "workflow" / "privacy_boundary.yaml")
CLASSES = [
    "sensitive", "privatization", "release", "reference", "public", "simulation", "target",
]


def rule_graph(configfile: str, tmp_path) -> tuple[set[str], set[tuple[str, str]]]:
    """Rules and (upstream, downstream) edges of ``snakemake --rulegraph``."""
    proc = snakerun.run(["--rulegraph", "--snakefile", str(ROOT / "Snakefile"),
                         "--configfile", str(ROOT / configfile), "--directory", str(tmp_path)],
                        cwd=Path.cwd(), timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    names = dict(re.findall(r'^\s*(\d+)\[label = "([^"]+)"', proc.stdout, re.M))
    edges = {(names[a], names[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", proc.stdout, re.M)}
    return set(names.values()), edges


def reachable_avoiding(edges, sources, blocked):
    """Rules reachable from ``sources`` along edges that do not pass through ``blocked``."""
    children = {}
    for a, b in edges:
        children.setdefault(a, set()).add(b)
    seen, stack = set(), [s for s in sources]
    while stack:
        node = stack.pop()
        for child in children.get(node, ()):
            if child not in seen and child not in blocked:
                seen.add(child)
                stack.append(child)
    return seen


def test_classes_are_disjoint():
    seen = {}
    for cls in CLASSES:
        for rule in BOUNDARY.get(cls, []):
            assert rule not in seen, f"{rule} is both {seen[rule]} and {cls}"
            seen[rule] = cls
    assert set(BOUNDARY) <= set(CLASSES)


@pytest.mark.parametrize("configfile", ["config/config.yaml", "config/paper.yaml"])
def test_every_rule_is_classified_and_releases_only_see_privatised_data(configfile, tmp_path):
    rules, edges = rule_graph(configfile, tmp_path)
    classified = {rule for cls in CLASSES for rule in BOUNDARY.get(cls, [])}
    assert rules - classified == set(), "classify these rules in workflow/privacy_boundary.yaml"
    leaked = reachable_avoiding(edges, set(BOUNDARY["sensitive"]) & rules,
                                set(BOUNDARY["privatization"]))
    offenders = leaked & set(BOUNDARY["release"])
    assert not offenders, f"releases reading raw sensitive data directly: {sorted(offenders)}"
    # the graph really has a boundary to check: sensitive data flow into privatisation
    assert any(a in BOUNDARY["sensitive"] and b in BOUNDARY["privatization"] for a, b in edges)


def test_the_check_catches_a_release_that_bypasses_privatisation():
    edges = {("rrr_cohort", "rrr_release"), ("rrr_release", "rrr_bands_table"),
             ("rrr_cohort", "rrr_bands_table")}
    leaked = reachable_avoiding(edges, {"rrr_cohort"}, {"rrr_release"})
    assert "rrr_bands_table" in leaked
    leaked = reachable_avoiding(edges - {("rrr_cohort", "rrr_bands_table")}, {"rrr_cohort"},
                                {"rrr_release"})
    assert "rrr_bands_table" not in leaked


def test_summaries_over_many_draws_are_references_not_releases():
    # km_bands.csv takes quantiles over N independent draws of each mechanism: N·ε if
    # published, so it must not be classed as a (single-draw) release
    assert "rrr_bands_table" in BOUNDARY["reference"]
    assert "rrr_bands_table" not in (BOUNDARY.get("release") or [])
