"""The report a reader uses: captions in words (no Python lists), tables as tables, figures
filed by study and dataset with their format beside them."""

import functools
import html
import json
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pandas as pd
import pytest
import yaml

from dprepro.config.schema import fill_defaults, load_schema
from dprepro.figures.html_table import format_cell, html_table
from dprepro.figures.report_introduction import (
    VERDICTS,
    DataSource,
    RunDescription,
    introduction_blocks,
    paper_place,
    to_html,
    to_rst,
    verdict_counts,
)
from dprepro.figures.report_layout import ALL_COHORTS, INTRODUCTION, report_sections
from dprepro.figures.report_tables import (
    REPORT_COLUMNS,
    REPORT_TABLES,
    page_parameters,
    report_page_flags,
    report_pages,
    report_table_path,
    report_tables,
)
from dprepro.studies.repr_transfer.privacy import figure_privacy_text
from dprepro.studies.rrr_survival.plan import release_words, report_labels

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")
CAPTIONS = sorted((ROOT / "workflow" / "report").glob("*.rst"))
#: A Python list printed into text: "[1, 2]", "['a', 'b']", "[]".
PYTHON_LIST = re.compile(r"\[\s*\]|\[\s*'[^\]]*\]|\[\s*-?\d[\d.]*\s*(,\s*-?\d[\d.]*\s*)*\]")
WILDCARDS = [
    {"figure": figure, "pipeline": pipeline}
    for figure in ("figure1", "mse_vs_alpha", "mse_vs_n", "nelson_aalen", "bias_variance",
                   "cancer_type_accuracy", "cancer_type_vs_epsilon", "drug_prediction",
                   "drug_vs_epsilon")
    for pipeline in ("corrected", "as_published")
]


@functools.cache
def shipped_config(configfile: str) -> dict:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    if configfile != "config.yaml":
        overlay = yaml.safe_load((ROOT / "config" / configfile).read_text())
        for key, value in overlay.items():
            config[key] = ({**config[key], **value} if isinstance(value, dict)
                           and isinstance(config.get(key), dict) else value)
    return fill_defaults(config, SCHEMA)


class Wildcards(SimpleNamespace):
    """Snakemake's wildcards: attributes, and ``get`` as on its Namedlist."""

    def get(self, name, default=None):
        return getattr(self, name, default)


def rendered(caption: Path, configfile: str, wildcards: dict) -> str:
    config = shipped_config(configfile)
    # a cohort's figure is rendered with its cohort (the first configured, unless given)
    wildcards = {"dataset": config["rrr_survival"]["datasets"][0], **wildcards}
    kind = "drug" if wildcards["figure"].startswith("drug") else "cancer_type"
    snakemake = SimpleNamespace(
        wildcards=Wildcards(**wildcards), config=config,
        params=SimpleNamespace(privacy=figure_privacy_text(kind, wildcards["pipeline"],
                                                           variant="paper")))
    return jinja2.Template(caption.read_text()).render(snakemake=snakemake)


@pytest.mark.parametrize("configfile", ["config.yaml", "full.yaml", "paper.yaml"])
@pytest.mark.parametrize("caption", CAPTIONS, ids=lambda p: p.name)
def test_captions_print_values_not_python_lists(caption, configfile):
    for wildcards in WILDCARDS:
        text = rendered(caption, configfile, wildcards)
        assert not PYTHON_LIST.search(text), (caption.name, PYTHON_LIST.search(text).group())


def test_the_list_pattern_catches_what_it_should():
    assert PYTHON_LIST.search("ε ∈ [1, 2, 3]") and PYTHON_LIST.search("for ['ipssr', 'kidney']")
    assert not PYTHON_LIST.search("ε ∈ {1, 2, 3}")


def test_html_table_sorts_numbers_as_numbers_and_escapes_text():
    frame = pd.DataFrame({"claim_id": ["a<b", "c"], "value": [0.123456789, 12.0],
                          "n": [3, 10], "verdict": ["holds", "untestable"],
                          "note": [None, "x & y"]})
    page = html_table(frame, title="T", caption="C")
    assert "<td>a&lt;b</td>" in page and "x &amp; y" in page
    assert 'data-v="0.123456789"' in page and ">0.1235<" in page
    assert 'class="n" data-v="10"' in page
    assert '<td class="holds">holds</td>' in page and '<td class="untestable">' in page
    assert page == html_table(frame, title="T", caption="C")  # same table, same bytes
    assert "http" not in page  # nothing fetched from a network


def test_html_table_offers_a_choice_for_columns_with_few_values():
    frame = pd.DataFrame({"study": ["ldp", "rrr", "rrr"], "x": [0.1, 0.2, 0.3],
                          "id": ["a", "b", "c"]})
    page = html_table(frame, title="T")
    assert '<select data-col="0">' in page and '<option value="rrr">' in page
    assert 'data-col="1"' not in page  # floats are sorted, not chosen
    with pytest.raises(ValueError, match=r"\['missing'\]"):
        html_table(frame, title="T", columns=["study", "missing"])


def test_format_cell():
    assert format_cell(float("nan")) == ("", None)
    assert format_cell(float("inf"))[0] == "∞"
    assert format_cell(True) == ("True", None)
    assert format_cell("x") == ("x", None)


def test_report_tables_follow_the_configured_studies():
    assert set(report_tables(["rrr_survival"])) == {
        "claims", *(n for n, t in REPORT_TABLES.items() if t.study == "rrr_survival")}
    assert "audit" in report_tables(["audit"])
    for name, table in REPORT_TABLES.items():
        assert table.csv.startswith("results/") and table.csv.endswith(".csv")
        assert report_table_path(name).endswith(f"/{name}.html")
        assert table.category in ("claims", "ldp_indicators", "rrr_survival", "repr_transfer",
                                  "audit")


@pytest.mark.parametrize(("name", "words"), [
    ("rrr_eps1", "RRR, ε = 1"), ("rrr_exact_eps0.5", "RRR (exact calibration), ε = 0.5"),
    ("rrr_debiased_eps3", "Debiased RRR, ε = 3"), ("lnte_grid_eps2", "Grid LNTE, ε = 2"),
    ("lnte_eps1", "LNTE, ε = 1"), ("original", "Original"),
])
def test_release_names_in_words(name, words):
    assert release_words(name) == words


def test_report_labels_name_figure_panel_and_format():
    assert report_labels("results/rrr_survival/figures/figure2_kidney_rrr_eps1.png",
                         "kidney") == {"figure": "Figure 2", "panel": "RRR, ε = 1",
                                       "format": "PNG"}
    assert report_labels("x/km_bands_toy.pdf", "toy") == {
        "figure": "KM bands over draws", "panel": "all panels", "format": "PDF"}
    assert report_labels("x/utility.png")["figure"] == "utility against ε"


# ---- the report's structure: an introduction, numbered sections, a part per cohort ----

def cohorts(config: dict) -> list[str]:
    rrr = config["rrr_survival"]
    return list(dict.fromkeys([*rrr["datasets"], *rrr["cox"]["extra_datasets"]]))


def title(config: dict, name: str) -> str:
    return config["datasets"][name]["title"] or name


@pytest.mark.parametrize("caption", ["rrr_figure2.rst", "rrr_km_bands.rst", "rrr_cox.rst"])
def test_a_cohorts_caption_speaks_of_its_own_data_only(caption):
    """Each cohort's Figure 2 (bands, Cox forest) caption listed every cohort's data origin:
    rendered for cohort A it now names A and its origin, and no other cohort's title."""
    config = shipped_config("full.yaml")
    names = cohorts(config)
    study = config["rrr_survival"]["datasets"]
    assert len(names) >= 4  # the full run has several cohorts to tell apart
    path = ROOT / "workflow" / "report" / caption
    for name in study if caption != "rrr_cox.rst" else names:
        text = rendered(path, "full.yaml", {"figure": "x", "pipeline": "corrected",
                                            "dataset": name})
        assert title(config, name) in text, (caption, name)
        others = [title(config, o) for o in names if o != name]
        assert not [o for o in others if o in text], (caption, name)
        spec = config["datasets"][name]
        if spec["source"] == "synthetic":
            assert "synthetic stand-in" in text
        if spec["source"] in ("bundled", "package", "cbioportal"):
            assert "synthetic" not in text.split("**Data:**")[-1]


def test_the_cox_bias_caption_without_a_cohort_lists_every_cox_cohort():
    config = shipped_config("full.yaml")
    text = jinja2.Template((ROOT / "workflow" / "report" / "rrr_cox.rst").read_text()).render(
        snakemake=SimpleNamespace(wildcards=Wildcards(), config=config))
    assert all(title(config, name) in text for name in cohorts(config))


def test_report_sections_are_numbered_in_reading_order():
    sections = report_sections(["repr_transfer", "audit", "ldp_indicators"])
    assert list(sections.values()) == ["1 repr_transfer", "2 ldp_indicators",
                                       "3 privacy audit", "4 claims"]
    # Snakemake sorts the sections by name: the order above, the introduction first
    assert sorted([INTRODUCTION, *sections.values()]) == [INTRODUCTION, *sections.values()]
    assert not any(":" in name for name in sections.values())


@functools.cache
def report_flags(configfile: str) -> list[dict]:
    """Where the workflow files each report file (tests/helpers/report_flags.py)."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        proc = subprocess.run(
            [sys.executable, str(ROOT / "tests" / "helpers" / "report_flags.py"), str(ROOT),
             str(ROOT / "config" / configfile), work],
            capture_output=True, text=True, timeout=600, check=True)
    line = next(li for li in proc.stdout.splitlines() if li.startswith("REPORT-FLAGS "))
    return json.loads(line.removeprefix("REPORT-FLAGS "))


@pytest.mark.parametrize("configfile", ["config.yaml", "full.yaml"])
def test_each_cohort_has_one_part_with_all_its_figures_and_tables(configfile):
    """A cohort appeared in two parts ("IPSS-R cohort" for Figure 2, "ipssr" for Cox): every
    figure and table page of a cohort now sits in one part of the rrr_survival section,
    titled by the cohort, and the figures comparing the cohorts in "all cohorts"."""
    config = shipped_config(configfile)
    records = report_flags(configfile)
    sections = report_sections(config["studies"])
    rrr = [r for r in records if r["category"] == sections["rrr_survival"]]
    assert rrr and all(r["rule"].startswith(("rrr_", "report_")) for r in rrr)
    # a cohort's table pages come from a job of that cohort alone, as its figures do
    assert {r["rule"] for r in rrr if r["path"].endswith(".html") and r["wildcards"]} == {
        "report_cohort_tables"}
    study = config["rrr_survival"]["datasets"]
    for name in cohorts(config):
        own = [r for r in records if r["wildcards"].get("dataset") == name
               or re.search(rf"_{re.escape(name)}\.html$", r["path"])]
        assert {r["category"] for r in own} == {sections["rrr_survival"]}, name
        assert {r["subcategory"] for r in own} == {title(config, name)}, name
        kinds = {r["labels"]["figure"] for r in own}
        expected = {"Cox forest plot"}
        if name in study:
            expected |= {"Figure 2", "KM bands over draws", "table: median survival (Table 2)",
                         "table: log-rank rejection rates (Table 1)",
                         "table: utility against ε"}
        assert kinds == expected, name
        # and nothing of another cohort in its part
        part = [r for r in rrr if r["subcategory"] == title(config, name)]
        assert part == own
    everything = {r["labels"]["figure"] for r in rrr if r["subcategory"] == ALL_COHORTS}
    assert everything == {"utility against ε", "Cox bias and coverage", "table: claims"}
    # a part's labels have the same keys on every file (else Snakemake shows none)
    for part in {r["subcategory"] for r in rrr}:
        assert len({tuple(r["labels"]) for r in rrr if r["subcategory"] == part}) == 1, part


def test_sections_hold_their_study_and_repr_has_a_part_per_pipeline():
    config = shipped_config("config.yaml")
    records = report_flags("config.yaml")
    sections = report_sections(config["studies"])
    by_section = {}
    for r in records:
        by_section.setdefault(r["category"], []).append(r)
    assert set(by_section) == {INTRODUCTION, *sections.values()}
    assert [r["path"] for r in by_section[INTRODUCTION]] == ["results/report/introduction.html"]
    repr_parts = {r["subcategory"] for r in by_section[sections["repr_transfer"]]}
    assert repr_parts == {"corrected pipeline", "pipeline as published", "both pipelines"}
    for r in by_section[sections["repr_transfer"]]:
        pipeline = r["wildcards"].get("pipeline") or next(
            (p for p in ("as_published", "corrected") if r["path"].endswith(f"_{p}.html")),
            None)
        if pipeline:
            assert r["subcategory"] == {"corrected": "corrected pipeline",
                                        "as_published": "pipeline as published"}[pipeline]
    assert {r["rule"] for r in by_section[sections["audit"]]} == {"privacy_audit_figure",
                                                                   "report_tables"}


# ---- the report's table pages fit the page ----

CLAIMS = pd.DataFrame({
    "study": ["ldp_indicators", "ldp_indicators", "rrr_survival", "rrr_survival",
              "rrr_survival", "repr_transfer"],
    "claim_id": ["ldp.a", "ldp.b", "rrr.privacy.rrr.calibration_paper_k_5.eps1", "rrr.c",
                 "rrr.d", "repr.e"],
    "claim": ["A holds", "B fails", "RRR is 1-LDP as stated", "C", "D", "E"],
    "claim_origin": ["paper", "beyond", "paper", "paper", "beyond", "paper"],
    "source": ["Figure 1", None, "Section 3", "Table 2", None, "Figure 3"],
    "verdict": ["holds", "fails", "fails", "inconclusive", "untestable", "holds"],
})


def test_every_table_page_shows_at_most_nine_columns_with_the_verdict_first_of_all():
    for name in REPORT_TABLES:
        columns = REPORT_COLUMNS[name]
        assert 4 <= len(columns) <= 9, name
        if "claims" in name or name == "audit":
            assert "verdict" in columns and columns.index("verdict") <= 6, name


def test_a_table_page_links_the_whole_csv_and_says_what_it_shows():
    import base64

    frame = CLAIMS.assign(note="long text " * 20, statistic="x")
    data = frame.to_csv(index=False).encode()
    page = html_table(frame, title="T", columns=["claim_id", "verdict", "claim"],
                      download=("claims.csv", data))
    uri = re.search(r'href="data:text/csv;charset=utf-8;base64,([^"]+)"', page).group(1)
    assert base64.b64decode(uri) == data
    assert "shows 3 of its 8 columns" in page
    assert "<th>note</th>" not in page and "<th>verdict</th>" in page
    # an identifier breaks at its dots and underscores instead of widening the table
    assert "rrr.<wbr>privacy.<wbr>" in page
    assert "width: 100%" in page


def test_report_pages_split_the_cohort_tables_and_keep_the_others_whole():
    pages = report_pages(["rrr_survival", "repr_transfer", "audit"],
                         {"dataset": ["a", "b"], "pipeline": ["corrected"]})
    assert {"rrr_median_survival_a", "rrr_median_survival_b", "rrr_utility_b",
            "repr_drug_corrected", "rrr_claims", "repr_claims", "claims", "audit"} <= set(pages)
    assert "rrr_median_survival" not in pages and "repr_drug" not in pages
    page = pages["rrr_logrank_rejection_b"]
    assert (page.split, page.value, page.path) == (
        "dataset", "b", "results/report_tables/rrr_logrank_rejection_b.html")
    flags = report_page_flags(page, ["rrr_survival", "repr_transfer", "audit"],
                              {"dataset": {"b": "cohort B"}})
    assert flags["category"] == "1 rrr_survival" and flags["subcategory"] == "cohort B"
    # the pattern of a job per cohort: its part is the job's cohort's, its params its rows
    pattern = report_pages(["rrr_survival"], {"dataset": ["{dataset}"]})[
        "rrr_utility_{dataset}"]
    assert pattern.path == "results/report_tables/rrr_utility_{dataset}.html"
    flags = report_page_flags(pattern, ["rrr_survival"], {"dataset": {"b": "cohort B"}})
    assert flags["subcategory"](SimpleNamespace(dataset="b")) == "cohort B"
    params = page_parameters(pattern, "b")
    assert (params["split"], params["value"]) == ("dataset", "b")
    assert "{" not in params["title"] and params["title"].endswith("(dataset b)")


# ---- the introduction ----

def test_verdict_counts_are_the_claims_tables():
    counts = verdict_counts(CLAIMS)
    for study, group in CLAIMS.groupby("study"):
        for verdict in VERDICTS:
            assert counts.loc[study, verdict] == (group["verdict"] == verdict).sum()
        assert counts.loc[study, "total"] == len(group)
    assert list(counts.index) == ["ldp_indicators", "rrr_survival", "repr_transfer"]
    paper = verdict_counts(CLAIMS, "paper")
    assert paper.loc["rrr_survival"].to_dict() == {"holds": 0, "fails": 1, "inconclusive": 1,
                                                   "untestable": 0, "total": 2}
    with pytest.raises(ValueError, match="unknown verdicts"):
        verdict_counts(CLAIMS.assign(verdict="maybe"))


def _run(configfile: str = "full.yaml") -> RunDescription:
    config = shipped_config(configfile)
    data = [DataSource(n, title(config, n), "real", "bundled", "rrr_survival")
            for n in cohorts(config)]
    return RunDescription(studies=config["studies"],
                          sections=report_sections(config["studies"]),
                          configfiles=["config/config.yaml", f"config/{configfile}"],
                          seed=config["seed"], dpi=config["figures"]["dpi"], run_name="",
                          data=data, example_target="results/x.pdf")


def test_the_introduction_says_what_was_run_on_which_data_and_the_verdicts():
    run = _run()
    blocks = introduction_blocks(run, CLAIMS)
    rst, page = to_rst(blocks), to_html(blocks)
    assert rst.startswith("{% raw %}") and rst.rstrip().endswith("{% endraw %}")
    for text in (rst, page):
        assert "full run" in text and str(run.seed) in text and f"{run.dpi} dpi" in text
        for source in run.data:
            assert source.title in text or html.escape(source.title) in text
        for section in run.sections.values():
            assert section in text
        assert "snakemake --cores all --configfile config/config.yaml --configfile " \
               "config/full.yaml results/x.pdf" in text
    # the verdict table: one row per study, the counts of the claims table
    rows = re.findall(r"<tr><td>([a-z_]+)</td><td>all</td>((?:<td>\d+</td>){5})</tr>", page)
    assert [study for study, _ in rows] == ["ldp_indicators", "rrr_survival",
                                           "repr_transfer"]
    for study, cells in rows:
        numbers = [int(n) for n in re.findall(r"\d+", cells)]
        group = CLAIMS[CLAIMS["study"] == study]
        assert numbers == [*(int((group["verdict"] == v).sum()) for v in VERDICTS),
                           len(group)]
    # the paper's claims by where the paper states them
    assert "<td>rrr_survival</td><td>§3</td><td>0</td><td>1</td>" in page


@pytest.mark.parametrize(("source", "place"), [
    ("De Faveri et al. (SEBD 2024), §5, Table 2 and its discussion", "Table 2"),
    ("paper §4 (unbiasedness)", "§4"),
    ("paper Figure 1, its caption", "Figure 1"),
    ("Niinimäki et al. (2019), Section 3 (DP logistic regression)", "§3"),
    ("Results and Discussion", "elsewhere"), ("", "elsewhere")])
def test_a_paper_claim_is_counted_where_the_paper_states_it(source, place):
    assert paper_place(source) == place


def test_the_mode_comes_from_the_configuration_files():
    assert "quick default" in replace(_run(), configfiles=["config/config.yaml"]).mode
    assert "paper mode" in replace(_run(), configfiles=["config/config.yaml",
                                                         "config/paper.yaml"]).mode
    assert replace(_run(), configfiles=["my.yaml"]).mode == "a custom configuration"
