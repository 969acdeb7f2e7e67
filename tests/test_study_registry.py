"""The studies' manifests (dprepro.runtime.study_registry): one per study, read by every registry.

The shared places that kept their own list of studies (the configuration sections a sidecar
records, the claims catalogue, the configuration reference's privacy keys, the report's
tables, the privacy boundary, the schema's ``studies`` list) read the manifests; a minimal
study laid over a scratch copy of the checkout (``tests/fixtures/toy_study``) with the two
edits of docs/development.md's "Add a study" is seen by each of them, changes the code digest
of no other step, and a run builds and verifies it.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dprepro.config.schema import ConfigError, check_studies_registered, load_schema
from dprepro.runtime.run_config import run_config_subset
from dprepro.runtime.study_registry import (
    BOUNDARY_CLASSES,
    ReportTable,
    StudySpec,
    _check,
    privacy_boundary,
    registered_studies,
    study_of_rule,
    study_spec,
)
from helpers import background
from helpers.recipes import checkout_copy, run

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_PATH = ROOT / "workflow" / "schemas" / "config.schema.yaml"
BOUNDARY_FILE = ROOT / "workflow" / "privacy_boundary.yaml"
FIXTURE = ROOT / "tests" / "fixtures" / "toy_study"


def test_every_study_package_declares_a_manifest_that_the_schema_lists():
    schema = load_schema(SCHEMA_PATH)
    names = [spec.name for spec in registered_studies()]
    assert names == sorted(names) and len(names) == len(set(names))
    studies = schema["properties"]["studies"]
    assert set(names) == set(studies["items"]["enum"]) == set(studies["default"])
    folders = sorted(p.parent.name for p in (ROOT / "scripts" / "dprepro" / "studies").glob(
        "*/__init__.py"))
    assert names == folders
    for spec in registered_studies():
        assert spec.config_key in schema["properties"], spec.name
        assert study_spec(spec.name) is spec
    check_studies_registered(schema)


def test_the_schema_check_names_a_study_missing_on_either_side():
    schema = copy.deepcopy(load_schema(SCHEMA_PATH))
    enum = schema["properties"]["studies"]["items"]["enum"]
    enum.remove("audit")
    enum.append("nonesuch")
    with pytest.raises(ConfigError) as caught:
        check_studies_registered(schema)
    text = str(caught.value)
    assert "'audit'" in text and "add it to the schema's `studies` list" in text
    assert "'nonesuch'" in text and "dprepro/studies/nonesuch/__init__.py" in text


def test_an_unknown_study_is_refused_naming_the_known_ones():
    with pytest.raises(KeyError, match=r"no study 'nonesuch'.*'ldp_indicators'"):
        study_spec("nonesuch")


def _spec(**changes) -> StudySpec:
    fields = dict(name="toy", config_key="toy", rule_prefixes=("toy_",))
    return StudySpec(**{**fields, **changes})


@pytest.mark.parametrize(("changes", "message"), [
    ({"name": "toy-study"}, "a Python identifier"),
    ({"rule_prefixes": ()}, "rule_prefixes names none"),
    ({"rule_prefixes": "toy_"}, "tuple of non-empty strings"),
    ({"rule_prefixes": ("claims_toy",)}, "clash with the workflow's own rules"),
    ({"privacy_keys": {"other.epsilon": ("Laplace", "ε-DP")}}, "not keys of its section"),
    ({"privacy_boundary": {"secret": ("toy_a",)}}, r"classes \['secret'\]"),
    ({"privacy_boundary": {"public": ("toy_a",), "simulation": ("toy_a",)}},
     "more than one privacy boundary class"),
    ({"datasets_key": "datasets", "fixed_datasets": ("gdsc",)}, "not both"),
    ({"report_tables": {"t": ReportTable("a.csv", "other", "T", "C")}},
     "ReportTable entries of study 'toy'"),
    ({"claim_prefix": "toy"}, "claims_modules to declare its claims"),
])
def test_a_manifest_refuses_what_would_break_a_registry(changes, message):
    with pytest.raises((TypeError, ValueError), match=message):
        _spec(**changes)


def test_two_studies_whose_rules_overlap_are_refused():
    toy = _spec(privacy_boundary={"simulation": ("toy_a",)})
    with pytest.raises(ValueError, match=r"overlapping rule prefixes \[\('toy_', 'to'\)\]"):
        _check([toy, _spec(name="other", config_key="other", rule_prefixes=("to",))])
    with pytest.raises(ValueError, match="share the configuration section 'toy'"):
        _check([toy, _spec(name="other", rule_prefixes=("other_",))])
    with pytest.raises(ValueError, match=r"both classify rules \['toy_a'\]"):
        _check([toy, _spec(name="other", config_key="other", rule_prefixes=("other_",),
                           privacy_boundary={"public": ("toy_a",)})])


def test_a_rule_routes_to_the_study_whose_prefix_it_has():
    assert study_of_rule("rrr_original").name == "rrr_survival"
    assert study_of_rule("cbioportal_download").name == "rrr_survival"
    assert study_of_rule("tcga_preprocess").name == "repr_transfer"
    assert study_of_rule("privacy_audit_table").name == "audit"
    assert study_of_rule("ldp_figure").name == "ldp_indicators"
    assert study_of_rule("claims_table") is None and study_of_rule("run_manifest") is None


def _legacy_run_config_subset(config, rule, wildcards=None):
    """The per-study rules the manifests replaced (dprepro.runtime.run_config before them),
    kept as the oracle: the manifests must route every rule as they did."""
    rule = rule or ""
    out = {"seed": config.get("seed")}
    datasets = config.get("datasets") or {}
    dataset = (wildcards or {}).get("dataset")
    if rule.startswith("ldp_"):
        out["ldp_indicators"] = config.get("ldp_indicators")
    elif rule.startswith(("rrr_", "cbioportal_", "cohort_")):
        study = config.get("rrr_survival") or {}
        own = {k: v for k, v in study.items() if k != "datasets"} if dataset else study
        if rule in ("rrr_cohort", "cohort_download", "cbioportal_download"):
            pass
        elif rule in ("rrr_original",):
            out["rrr_survival"] = {k: v for k, v in own.items()
                                   if k not in ("epsilons", "calibration", "extra_calibrations")}
        else:
            out["rrr_survival"] = own
        names = [*study.get("datasets", []), *(study.get("cox") or {}).get("extra_datasets", [])]
        if dataset:
            names = [dataset]
        out["datasets"] = {name: datasets.get(name) for name in dict.fromkeys(names)}
    elif rule.startswith(("repr_", "gdsc_", "depmap_", "tcga_")):
        out["repr_transfer"] = config.get("repr_transfer")
        out["datasets"] = {name: datasets.get(name) for name in ("gdsc", "depmap", "tcga")
                           if name in datasets}
    elif rule.startswith("privacy_audit"):
        out["audit"] = config.get("audit")
    elif rule.startswith("claims"):
        out["studies"] = config.get("studies")
    if rule.endswith(("figure", "figure2", "km_bands", "utility")) or "plot" in rule:
        out["figures"] = config.get("figures")
    return out


def _shipped(*overlays: str) -> dict:
    from dprepro.config.reference import overlay
    from dprepro.config.schema import fill_defaults

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    for name in overlays:
        config = overlay(config, yaml.safe_load((ROOT / "config" / name).read_text()))
    return fill_defaults(config, load_schema(SCHEMA_PATH))


@pytest.mark.parametrize("overlays", [(), ("full.yaml",), ("paper.yaml",)])
def test_every_rule_records_the_sections_it_recorded_before_the_manifests(overlays):
    config = _shipped(*overlays)
    boundary = privacy_boundary(BOUNDARY_FILE)
    rules = sorted({r for rules in boundary.values() for r in rules} | {"unknown_rule", ""})
    cohorts = [*config["rrr_survival"]["datasets"], "nonesuch"]
    checked = 0
    for rule in rules:
        for wildcards in [None, {}, *({"dataset": name} for name in cohorts)]:
            got = run_config_subset(config, rule, wildcards)
            assert got == _legacy_run_config_subset(config, rule, wildcards), (rule, wildcards)
            # the same bytes in a sidecar: the sections come in the same order
            assert list(got) == list(_legacy_run_config_subset(config, rule, wildcards))
            checked += 1
    assert checked > 300
    # a cohort's job records its own entry and no other cohort's
    one = run_config_subset(config, "rrr_private_releases", {"dataset": "kidney"})
    assert list(one["datasets"]) == ["kidney"] and "datasets" not in one["rrr_survival"]


def test_the_privacy_boundary_is_the_files_rules_and_the_manifests(tmp_path):
    boundary = privacy_boundary(BOUNDARY_FILE)
    assert list(boundary) == list(BOUNDARY_CLASSES)
    assert "rrr_private_releases" in boundary["privatization"]
    assert "claims_table" in boundary["reference"] and "all" in boundary["target"]
    for spec in registered_studies():
        assert spec.name in boundary["target"], "a study's target rule is classified"
        for cls, rules in spec.privacy_boundary.items():
            assert set(rules) <= set(boundary[cls])
    twice = tmp_path / "boundary.yaml"
    twice.write_text("reference: [claims_table, rrr_original]\n")
    with pytest.raises(ValueError, match="'rrr_original' is classified twice"):
        privacy_boundary(twice)
    twice.write_text("secret: [x]\n")
    with pytest.raises(ValueError, match=r"unknown privacy boundary classes \['secret'\]"):
        privacy_boundary(twice)


def test_the_registries_read_every_studys_manifest():
    from dprepro.claims.catalogue import declaring_modules
    from dprepro.config.reference import PRIVACY_KEYS, RELATED_PRIVACY_KEYS
    from dprepro.figures.report_tables import REPORT_TABLES, report_tables

    specs = registered_studies()
    assert set(declaring_modules()) == {m for s in specs for m in s.claims_modules}
    assert "dprepro.audit.claims" in declaring_modules()
    assert PRIVACY_KEYS == {k: v for s in specs for k, v in s.privacy_keys.items()}
    assert RELATED_PRIVACY_KEYS == {k: v for s in specs
                                    for k, v in s.related_privacy_keys.items()}
    assert len(PRIVACY_KEYS) == 9
    for spec in specs:
        assert {k: REPORT_TABLES[k] for k in spec.report_tables} == dict(spec.report_tables)
    # the merged claims first, then the configured studies' tables in the configured order
    chosen = list(report_tables(["repr_transfer", "ldp_indicators"]))
    assert chosen == ["claims", "repr_claims", "repr_cancer_type", "repr_drug", "ldp_claims",
                      "ldp_imse_alpha"]


# ---- a new study from a fixture folder: its files and the two edits ----

TOY = "toy_study"
#: The edits docs/development.md's "Add a study" asks of files that exist.
SNAKEFILE_INCLUDE = 'include: "workflow/rules/toy_study.smk"\n'
STUDIES_LINE = "      enum: [ldp_indicators, rrr_survival, repr_transfer, audit]\n"


def _digests(work: Path) -> dict[str, str]:
    from dprepro.runtime.code_version import script_library_digest

    return {s.name: script_library_digest(s, work / "scripts" / "dprepro")
            for s in sorted((work / "scripts").glob("*.py"))}


def _add_toy_files(work: Path) -> None:
    """The study's own files: its package, scripts, rules and schema section."""
    for path in FIXTURE.rglob("*"):
        relative = path.relative_to(FIXTURE)
        if path.is_file() and relative.parts[0] in ("scripts", "workflow"):
            (work / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, work / relative)
    schema = work / "workflow" / "schemas" / "config.schema.yaml"
    text = schema.read_text(encoding="utf-8")
    section = (FIXTURE / "schema_section.yaml").read_text(encoding="utf-8")
    schema.write_text(text.replace("  downloads:\n", section + "  downloads:\n", 1),
                      encoding="utf-8")


def _make_the_two_edits(work: Path) -> None:
    snakefile = work / "Snakefile"
    text = snakefile.read_text(encoding="utf-8")
    claims = 'include: "workflow/rules/claims.smk"\n'
    assert claims in text
    snakefile.write_text(text.replace(claims, SNAKEFILE_INCLUDE + claims), encoding="utf-8")
    schema = work / "workflow" / "schemas" / "config.schema.yaml"
    text = schema.read_text(encoding="utf-8")
    assert text.count(STUDIES_LINE) == 1, "the schema's studies list moved: update the test"
    schema.write_text(text.replace(STUDIES_LINE, STUDIES_LINE.replace("]", ", toy_study]")),
                      encoding="utf-8")


#: What the registries say of the checkout at hand (run in the scratch copy).
_PROBE = """
import json, yaml
from pathlib import Path
from dprepro.runtime.study_registry import registered_studies, privacy_boundary
from dprepro.runtime.run_config import run_config_subset
from dprepro.claims.catalogue import declared_claims, render_catalogue
from dprepro.config.reference import PRIVACY_KEYS, load_inputs, render_config_readme
from dprepro.config.schema import check_studies_registered, load_schema, fill_defaults
from dprepro.figures.report_tables import report_tables
schema = load_schema("workflow/schemas/config.schema.yaml")
out = {"studies": [s.name for s in registered_studies()]}
try:
    check_studies_registered(schema)
    out["schema_check"] = "ok"
except Exception as error:
    out["schema_check"] = str(error)
    schema["properties"]["studies"]["items"]["enum"].append("toy_study")
config = fill_defaults({"studies": ["toy_study"]}, schema)
out["run_config"] = run_config_subset(config, "toy_table")
registry = declared_claims()
out["claims"] = sorted(d.id for d in registry.declarations(study="toy_study"))
out["catalogue_section"] = "## toy_study" in render_catalogue(registry)
out["boundary"] = {c: [r for r in rules if r.startswith("toy")]
                   for c, rules in privacy_boundary("workflow/privacy_boundary.yaml").items()}
out["privacy_keys"] = sorted(k for k in PRIVACY_KEYS if k.startswith("toy"))
out["readme_privacy_row"] = "`toy_study.epsilon`" in render_config_readme(*load_inputs())
out["report_tables"] = list(report_tables(["toy_study"]))
print(json.dumps(out))
"""


def _probe(work: Path) -> dict:
    """:data:`_PROBE` run on the scratch copy's library."""
    env = {**os.environ, "PYTHONPATH": str(work / "scripts")}
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=work, env=env, text=True,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_a_new_study_is_its_folder_and_two_edits_and_reruns_no_other_step(tmp_path):
    """The toy study's files alone make every registry see it, the schema check then asks
    for the one edit it needs; no step of another study gets a new code digest."""
    work = checkout_copy(tmp_path / "checkout")
    before = _digests(work)
    _add_toy_files(work)
    seen = _probe(work)
    assert seen["studies"] == ["audit", "ldp_indicators", "repr_transfer", "rrr_survival", TOY]
    assert "study 'toy_study' has a manifest" in seen["schema_check"]
    assert "add it to the schema's `studies` list" in seen["schema_check"]
    _make_the_two_edits(work)
    seen = _probe(work)
    assert seen["schema_check"] == "ok"
    seed = load_schema(SCHEMA_PATH)["properties"]["seed"]["default"]
    assert seen["run_config"] == {"seed": seed, TOY: {"epsilon": 1.0, "n": 500, "p": 0.3,
                                                      "replicates": 50}}
    assert seen["claims"] == ["toy.mean_near_p"] and seen["catalogue_section"]
    assert seen["boundary"]["simulation"] == ["toy_table", "toy_claims"]
    assert seen["boundary"]["target"] == [TOY]
    assert seen["privacy_keys"] == ["toy_study.epsilon"] and seen["readme_privacy_row"]
    assert seen["report_tables"] == ["claims", "toy_means"]
    # every step of the other studies keeps its code digest: Snakemake plans none again
    after = _digests(work)
    assert {name: after[name] for name in before} == before
    assert set(after) - set(before) == {"toy_table.py", "toy_claims.py"}


@background.register("toy_study")
def _toy_study_run(folder: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """The toy study added to a scratch copy, run alone, then verified."""
    work = checkout_copy(folder / "checkout")
    _add_toy_files(work)
    _make_the_two_edits(work)
    overlay = folder / "toy.yaml"
    overlay.write_text("studies: [toy_study]\n")  # over the embedded default
    snakemake = [sys.executable, "-m", "snakemake"]
    run([*snakemake, "--cores", "2", "--configfile", str(overlay)], work)
    return work, run([*snakemake, "verify", "--cores", "1", "--configfile", str(overlay)], work)


@pytest.mark.workflow
@pytest.mark.background("toy_study")
def test_a_new_study_runs_end_to_end_and_verifies(tmp_path):
    import pandas as pd

    work, verified = background.result("toy_study", tmp_path)
    results = work / "results"
    means = pd.read_csv(results / TOY / "tables" / "means.csv")
    assert len(means) == 50 and set(means["epsilon"]) == {1.0}
    claims = pd.read_csv(results / "claims.csv")
    assert list(claims["claim_id"]) == ["toy.mean_near_p"]
    assert claims.loc[0, "verdict"] == "holds"
    assert (results / "report_tables" / "toy_means.html").is_file()
    sidecar = json.loads((results / TOY / "tables" / "means.csv.prov.json").read_text())
    assert sidecar["run_config"][TOY]["epsilon"] == 1.0
    assert "0 with mismatches" in verified.stdout + verified.stderr


def test_the_manifest_of_docs_development_is_the_fixture_studys():
    """docs/development.md's "Add a study" shows the fixture's manifest, as it is."""
    import runpy

    from helpers.recipes import code_blocks, paragraph

    (block,) = code_blocks(paragraph("docs/development.md", "**Add a study.**"), "python")
    shown = {}
    exec(compile(block, "docs/development.md", "exec"), shown)  # noqa: S102
    fixture = runpy.run_path(str(FIXTURE / "scripts" / "dprepro" / "studies" / TOY
                                 / "__init__.py"))
    assert shown["SPEC"] == fixture["SPEC"]
