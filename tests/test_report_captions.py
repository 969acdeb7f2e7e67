"""Report captions say what the figures and tables say about privacy.

The repr_transfer caption (workflow/report/repr_figure.rst) is rendered as Snakemake
renders it (jinja2, with the job's params, wildcards and the configuration) for every
figure, pipeline and objective-perturbation variant, with the params the rule passes.
"""

from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
import yaml

from dprepro.config.schema import fill_defaults, load_schema
from dprepro.studies.repr_transfer.privacy import figure_privacy_text

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")
CAPTION = (ROOT / "workflow" / "report" / "repr_figure.rst").read_text()
KINDS = {"cancer_type_accuracy": "cancer_type", "cancer_type_vs_epsilon": "cancer_type",
         "drug_prediction": "drug", "drug_vs_epsilon": "drug"}


def render(figure, pipeline, *, variant="paper", configfile="config/config.yaml", **changes):
    config = fill_defaults(yaml.safe_load((ROOT / configfile).read_text()), SCHEMA)
    config["repr_transfer"]["cancer_type"]["variant"] = variant
    config["repr_transfer"].update(changes)
    snakemake = SimpleNamespace(
        wildcards=SimpleNamespace(figure=figure, pipeline=pipeline), config=config,
        params=SimpleNamespace(privacy=figure_privacy_text(KINDS[figure], pipeline,
                                                           variant=variant)))
    return jinja2.Template(CAPTION).render(snakemake=snakemake)


@pytest.mark.parametrize("variant", ["paper", "cms11"])
@pytest.mark.parametrize("figure", list(KINDS))
def test_corrected_captions_state_a_finite_epsilon_and_nothing_else(figure, variant):
    text = render(figure, "corrected", variant=variant)
    assert "finite ε per released model, given its training lines" in text
    # the corrected pipeline centres with public data and always runs CMS11
    assert "private training lines" not in text
    assert "paper variant" not in text and "no finite ε" not in text
    if KINDS[figure] == "cancer_type":
        assert "CMS11 variant: pure ε-DP" in text


@pytest.mark.parametrize("variant", ["paper", "cms11"])
@pytest.mark.parametrize("figure", list(KINDS))
def test_as_published_captions_claim_no_finite_epsilon(figure, variant):
    text = render(figure, "as_published", variant=variant)
    assert "no finite ε" in text
    assert "pure ε-DP" not in text and "finite ε per released model" not in text


def test_captions_name_the_configured_public_set():
    tcga = render("cancer_type_accuracy", "corrected", configfile="config/paper.yaml",
                  public_source="tcga")
    depmap = render("cancer_type_accuracy", "corrected", configfile="config/paper.yaml",
                    public_source="depmap")
    assert "TCGA" in tcga and "DepMap" not in tcga
    assert "DepMap" in depmap and "TCGA" not in depmap
    assert "synthetic stand-in" in render("cancer_type_accuracy", "corrected")
