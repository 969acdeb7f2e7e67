"""The report a reader uses: captions in words (no Python lists), tables as tables, figures
filed by study and dataset with their format beside them."""

import functools
import re
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pandas as pd
import pytest
import yaml

from dprepro.config.schema import fill_defaults, load_schema
from dprepro.figures.html_table import format_cell, html_table
from dprepro.figures.report_tables import REPORT_TABLES, report_table_path, report_tables
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
