"""Claims as declarations (dprepro.claims.registry): one entry per claim, rows from evidence."""

import math

import pytest

from dprepro.claims.registry import ClaimRegistry, Evidence
from dprepro.claims.table import Tolerance


def _declare(registry, id="ldp.ratio.c{censoring}.a{alpha:g}", *, over=("censoring", "alpha"),
             compute=None, **texts):
    full = over == ("censoring", "alpha")
    defaults = dict(study="ldp_indicators",
                    statement="the ratio is below one ({censoring}% censoring, α = {alpha:g})"
                    if full else "the ratio is below one",
                    origin="paper", source="paper §5",
                    statistic="IMSE ratio at α = {alpha:g}" if full else "IMSE ratio",
                    criterion="< 1", units="simulated samples", ci_method="percentile bootstrap")
    defaults.update(texts)
    registry.declare(id, over=over, **defaults)(
        compute or (lambda ctx, censoring, alpha: Evidence(*ctx[(censoring, alpha)])))


def test_a_declaration_gives_one_row_per_binding_with_its_texts_and_verdict():
    registry = ClaimRegistry()
    _declare(registry)
    data = {("25", 0.5): (0.8, 0.7, 0.9), ("25", 1.0): (1.2, 1.1, 1.3),
            ("50", 0.5): (0.95, 0.9, 1.05), ("50", 1.0): (0.5, 0.4, 0.6)}
    rows = registry.evaluate(data, study="ldp_indicators", privacy_unit="individual",
                             axes={"censoring": ["25", "50"], "alpha": [0.5, 1.0]},
                             data_origin="simulation")
    assert [r["claim_id"] for r in rows] == ["ldp.ratio.c25.a0.5", "ldp.ratio.c25.a1",
                                             "ldp.ratio.c50.a0.5", "ldp.ratio.c50.a1"]
    assert [r["verdict"] for r in rows] == ["holds", "fails", "inconclusive", "holds"]
    assert rows[1]["claim"] == "the ratio is below one (25% censoring, α = 1)"
    assert rows[1]["statistic"] == "IMSE ratio at α = 1"
    assert {r["source"] for r in rows} == {"paper §5"}
    assert {r["claim_origin"] for r in rows} == {"paper"}
    assert {r["data_origin"] for r in rows} == {"simulation"}


def test_no_evidence_means_no_row_and_outer_axes_loop_outside_the_declarations():
    registry = ClaimRegistry()
    _declare(registry, "ldp.first.c{censoring}", over=("censoring",),
             compute=lambda ctx, censoring: Evidence(0.5, 0.4, 0.6))
    _declare(registry, "ldp.second.c{censoring}", over=("censoring",),
             compute=lambda ctx, censoring: None if censoring == "50" else
             Evidence(0.5, 0.4, 0.6))
    _declare(registry, "ldp.pooled", over=(),
             compute=lambda ctx: Evidence(0.5, 0.4, 0.6))
    axes = {"censoring": ["25", "50"]}
    flat = registry.evaluate(None, study="ldp_indicators", axes=axes, privacy_unit="x")
    # every declaration here comes from this module; none from another
    assert {d.module for d in registry.declarations()} == {__name__}
    assert registry.evaluate(None, study="ldp_indicators", axes=axes, privacy_unit="x",
                             module=__name__) == flat
    with pytest.raises(ValueError, match="no claims declared"):
        registry.evaluate(None, study="ldp_indicators", axes=axes, privacy_unit="x",
                          module="elsewhere")
    assert [r["claim_id"] for r in flat] == ["ldp.first.c25", "ldp.first.c50",
                                             "ldp.second.c25", "ldp.pooled"]
    nested = registry.evaluate(None, study="ldp_indicators", axes=axes, outer=("censoring",),
                               privacy_unit="x")
    assert [r["claim_id"] for r in nested] == ["ldp.first.c25", "ldp.second.c25",
                                               "ldp.first.c50", "ldp.pooled"]


def test_evidence_applies_a_paper_statement_beyond_the_papers_setting():
    registry = ClaimRegistry()
    _declare(registry, "ldp.one", over=(), compute=lambda ctx: Evidence(
        0.5, 0.4, 0.6, source="beyond the paper (a cohort it did not analyse)",
        claim_origin="beyond"))
    row, = registry.evaluate(None, study="ldp_indicators", privacy_unit="x")
    assert row["claim_origin"] == "beyond"
    assert row["source"] == "beyond the paper (a cohort it did not analyse)"
    assert registry["ldp.one"].origin == "paper"  # the declaration stays the paper's


def test_a_tolerance_of_ours_and_untestable_claims_follow_the_claims_contract():
    registry = ClaimRegistry()
    _declare(registry, "ldp.near", over=(), criterion="<= t (bias_tolerance)",
             tolerance="claims.bias_tolerance",
             compute=lambda ctx: Evidence(0.012, 0.007, 0.018,
                                          criterion=Tolerance(lambda t: f"<= {t:g}", 0.01)))
    _declare(registry, "ldp.never", over=(), untestable="true by construction",
             compute=lambda ctx: Evidence(math.nan, math.nan, math.nan))
    near, never = registry.evaluate(None, study="ldp_indicators", privacy_unit="x")
    assert (near["criterion"], near["verdict"]) == ("<= 0.01", "inconclusive")
    assert (near["verdict_half_tolerance"], near["verdict_double_tolerance"]) == (
        "fails", "holds")
    assert never["verdict"] == "untestable"
    assert never["note"].startswith("untestable: true by construction")


@pytest.mark.parametrize(("change", "message"), [
    ({"origin": "beyond"}, "starting with 'beyond the paper'"),
    ({"source": "beyond the paper"}, "starting with 'beyond the paper'"),
    ({"origin": "ours"}, "origin must be one of"),
    ({"statistic": ""}, "statistic must be a non-empty string"),
    ({"study": "rrr_survival"}, "prefix 'rrr.'"),
])
def test_a_malformed_declaration_is_refused_when_declared(change, message):
    with pytest.raises(ValueError, match=message):
        _declare(ClaimRegistry(), **change)


def test_a_claim_is_declared_once_and_a_missing_template_value_is_named():
    registry = ClaimRegistry()
    _declare(registry, "ldp.x.{name}", over=(), compute=lambda ctx: Evidence(1, 1, 1))
    with pytest.raises(ValueError, match="declared twice"):
        _declare(registry, "ldp.x.{name}", over=())
    with pytest.raises(ValueError, match=r"'ldp.x.\{name\}'.*needs 'name'"):
        registry.evaluate(None, study="ldp_indicators", privacy_unit="x")
    with pytest.raises(KeyError, match="does not provide"):
        _declare(registry, "ldp.y.{alpha}", over=("alpha",))
        registry.evaluate(None, study="ldp_indicators", privacy_unit="x",
                          only=["ldp.y.{alpha}"])


def test_a_row_id_maps_back_to_the_most_specific_declaration():
    registry = ClaimRegistry()
    _declare(registry, "ldp.ratio.c{censoring}.a{alpha:g}")
    _declare(registry, "ldp.ratio.raw.c{censoring}.a{alpha:g}")
    assert registry.match("ldp.ratio.c25.a0.5").id == "ldp.ratio.c{censoring}.a{alpha:g}"
    assert registry.match("ldp.ratio.raw.c25.a1").id == "ldp.ratio.raw.c{censoring}.a{alpha:g}"
    with pytest.raises(KeyError, match="matches no declared"):
        registry.match("ldp.other")
    registry.check_declared(["ldp.ratio.c25.a0.5", "ldp.ratio.raw.c50.a1"])
    with pytest.raises(ValueError, match=r"1 claims rows match no declaration.*'ldp.other'"):
        registry.check_declared(["ldp.ratio.c25.a0.5", "ldp.other"])


def test_privacy_statements_are_declared_once_per_mechanism_with_the_papers_source():
    import pandas as pd

    from dprepro.audit.claims import privacy_claims
    from dprepro.claims.registry import CLAIMS

    audit = pd.DataFrame({
        "mechanism": ["rrr", "rrr", "rrr", "laplace_indicators"],
        "variant": ["paper calibration", "exact calibration", "mis-scaled", "as published"],
        "role": ["published", "corrected", "control", "published"],
        "claimed_epsilon": [1.0, 1.0, 1.0, 0.5], "true_epsilon": [2.0986, 1.0, 3.0, 0.5],
        "empirical_epsilon_lower_bound": [2.05, 0.9, 2.9, 0.45], "level": [1e-9] * 4,
        "draws": [100000] * 4})
    table = privacy_claims(audit).set_index("claim_id")
    assert set(table.index) == {"rrr.privacy.rrr.paper_calibration.eps1",
                                "rrr.privacy.rrr.exact_calibration.eps1",
                                "ldp.privacy.laplace_indicators.as_published.alpha0.5"}
    published = table.loc["rrr.privacy.rrr.paper_calibration.eps1"]
    assert published["verdict"] == "fails" and published["claim_origin"] == "paper"
    assert published["source"] == CLAIMS.match(published.name).source
    exact = table.loc["rrr.privacy.rrr.exact_calibration.eps1"]
    assert exact["verdict"] == "holds" and exact["claim_origin"] == "beyond"
    assert table.loc["ldp.privacy.laplace_indicators.as_published.alpha0.5",
                     "privacy_unit"] == "individual"


def test_the_claims_page_lists_every_declaration_with_its_origin_source_and_run_counts():
    import pandas as pd

    from dprepro.claims.catalogue import render_catalogue, verdict_counts

    registry = ClaimRegistry()
    _declare(registry, source="paper §5 | Figure 1")
    _declare(registry, "ldp.mine", over=(), origin="beyond", source="beyond the paper: ours",
             compute=lambda ctx: Evidence(1, 1, 1))
    _declare(registry, "rrr.other", over=(), study="rrr_survival", source="Table 2",
             compute=lambda ctx: Evidence(1, 1, 1))
    page = render_catalogue(registry)
    assert "## ldp_indicators" in page and "## rrr_survival" in page
    assert "2 claims: 1 of the paper, 1 beyond it." in page
    assert "### `ldp.ratio.c{censoring}.a{alpha:g}`" in page
    assert "| source | paper §5 \\| Figure 1 |" in page
    assert "| one row per | censoring, alpha |" in page
    assert "| origin | beyond |" in page and "rows in the run" not in page
    run = pd.DataFrame({"claim_id": ["ldp.ratio.c25.a1", "ldp.ratio.c50.a1", "ldp.mine"],
                        "verdict": ["holds", "fails", "holds"]})
    counted = render_catalogue(registry, counts=verdict_counts(run, registry), run="a test")
    assert "| rows in the run | 1 fails, 1 holds |" in counted
    assert counted.count("| rows in the run | no row |") == 1


def test_docs_claims_page_is_the_rendering_of_every_declaration():
    from pathlib import Path

    from dprepro.claims.catalogue import declared_claims, render_catalogue
    from dprepro.runtime.study_registry import registered_studies

    registry = declared_claims()
    page = (Path(__file__).parents[1] / "docs" / "claims.md").read_text(encoding="utf-8")
    assert page == render_catalogue(registry), (
        "docs/claims.md is out of date: PYTHONPATH=scripts python -m dprepro.claims.catalogue "
        "> docs/claims.md")
    # every study with a claim prefix in its manifest declares claims, and only those do
    prefixes = {s.name: s.claim_prefix for s in registered_studies() if s.claim_prefix}
    studies = {d.study for d in registry.declarations()}
    assert studies == set(prefixes) and len(studies) >= 3
    for declaration in registry.declarations():
        assert declaration.id.startswith(prefixes[declaration.study] + "."), declaration.id
        # a paper's statement names where the paper makes it
        if declaration.origin == "paper":
            assert any(word in declaration.source for word in (
                "§", "Section", "Table", "Figure", "Discussion", "Conclusions", "Results")), (
                declaration.id, declaration.source)
