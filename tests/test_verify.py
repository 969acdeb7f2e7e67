"""dprepro.runtime.verify on a hand-made results folder: what it reports and how."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from dprepro.runtime.verify import verify_run

ROOT = Path(__file__).resolve().parents[1]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _made(run: Path, output: str, inputs: dict[str, str]) -> None:
    """A sidecar as a step writes it (no script, so only files and inputs are checked)."""
    path = run / output
    record = {"output": output, "output_sha256": _sha(path),
              "script": {"path": "scripts/rrr_plot.py",
                         "sha256": _sha(ROOT / "scripts" / "rrr_plot.py")},
              "inputs": {k: {"path": v, "sha256": _sha(run / v)} for k, v in inputs.items()}}
    Path(f"{path}.prov.json").write_text(json.dumps(record))


def _run(tmp_path) -> Path:
    run = tmp_path / "run"
    (run / "results" / "tables").mkdir(parents=True)
    (run / "results" / "data").mkdir()
    (run / "results" / "data" / "cohort.csv").write_text("id\n1\n")
    (run / "results" / "tables" / "a.csv").write_text("a\n1\n")
    (run / "results" / "tables" / "b.csv").write_text("b\n2\n")
    (run / "results" / "tables" / "c.csv").write_text("c\n3\n")
    _made(run, "results/data/cohort.csv", {})
    _made(run, "results/tables/a.csv", {"cohort": "results/data/cohort.csv"})
    _made(run, "results/tables/b.csv", {"a": "results/tables/a.csv"})
    _made(run, "results/tables/c.csv", {"b": "results/tables/b.csv"})
    return run


def test_a_complete_folder_verifies(tmp_path):
    run = _run(tmp_path)
    report = verify_run(run, workflow_root=ROOT, expected=["results/tables/c.csv"])
    assert report.ok, report.lines()
    assert len(report.files) == 4


def test_files_drawn_from_a_failing_file_are_stale_with_it(tmp_path):
    run = _run(tmp_path)
    (run / "results" / "tables" / "a.csv").write_text("a\n9\n")
    report = verify_run(run, workflow_root=ROOT)
    found = {(m.file, m.what) for m in report.mismatches}
    assert ("results/tables/a.csv", "output") in found
    # b read a (and its recorded checksum no longer matches), c read b: stale downstream
    assert ("results/tables/b.csv", "input") in found
    assert ("results/tables/c.csv", "upstream") in found


def test_absent_raw_data_is_unchecked_not_a_mismatch(tmp_path):
    run = _run(tmp_path)
    for name in ("cohort.csv", "cohort.csv.prov.json"):  # raw data not handed over
        (run / "results" / "data" / name).unlink()
    report = verify_run(run, workflow_root=ROOT)
    assert report.ok and report.unchecked == ["results/tables/a.csv: cohort "
                                              "(results/data/cohort.csv)"]
    assert any(line.startswith("unchecked: 1 inputs under results/data/")
               for line in report.lines())


def test_missing_targets_and_stray_files_are_named(tmp_path):
    run = _run(tmp_path)
    for name in ("c.csv", "c.csv.prov.json"):
        (run / "results" / "tables" / name).unlink()
    (run / "results" / "tables" / "stray.csv").write_text("x\n")
    report = verify_run(run, workflow_root=ROOT, expected=["results/tables/c.csv"])
    found = {(m.file, m.what, m.detail.split(":")[0]) for m in report.mismatches}
    assert ("results/tables/c.csv", "output",
            "expected by the workflow's targets, absent with its sidecar") in found
    assert ("results/tables/stray.csv", "sidecar", "none") in found
    assert not report.ok


def _with_run_config(run: Path, output: str, rule: str, wildcards: dict, run_config: dict):
    sidecar = run / f"{output}.prov.json"
    record = json.loads(sidecar.read_text())
    record.update(rule=rule, wildcards=wildcards, run_config=run_config)
    sidecar.write_text(json.dumps(record))


def test_a_cohort_file_stays_valid_when_the_run_adds_another_cohort(tmp_path):
    from dprepro.runtime.run_config import run_config_subset

    quick = {"seed": 1, "rrr_survival": {"datasets": ["ipssr", "kidney"], "epsilons": [1]},
             "datasets": {"ipssr": {"path": "a.csv"}, "kidney": {"path": "k.csv"}}}
    full = {"seed": 1, "rrr_survival": {"datasets": ["ipssr", "kidney", "gbsg2"],
                                        "epsilons": [1]},
            "datasets": {**quick["datasets"], "gbsg2": {"path": "g.csv"}}}
    run = _run(tmp_path)
    at = {"dataset": "ipssr"}
    _with_run_config(run, "results/data/cohort.csv", "rrr_cohort", at,
                     run_config_subset(quick, "rrr_cohort", at))
    # a release of that cohort, recorded as an earlier version did (every cohort listed)
    _with_run_config(run, "results/tables/a.csv", "rrr_private_releases", at,
                     run_config_subset(quick, "rrr_private_releases"))
    report = verify_run(run, workflow_root=ROOT, config=full)
    assert report.ok, report.lines()
    # the cohort's own entry still counts, for the cohort and what was made from it
    moved = {**full, "datasets": {**full["datasets"], "ipssr": {"path": "b.csv"}}}
    report = verify_run(run, workflow_root=ROOT, config=moved)
    found = {(m.file, m.what, m.detail.split(" ")[0]) for m in report.mismatches}
    assert ("results/data/cohort.csv", "config", "datasets.ipssr.path") in found
    assert ("results/tables/a.csv", "config", "datasets.ipssr.path") in found
    # a setting of the releases still counts for the releases, not for the cohort
    eps = {**full, "rrr_survival": {**full["rrr_survival"], "epsilons": [1, 2]}}
    files = {m.file for m in verify_run(run, workflow_root=ROOT, config=eps).mismatches
             if m.what == "config"}
    assert files == {"results/tables/a.csv"}


def _manifest(run: Path, configuration: dict) -> None:
    (run / "results" / "run_manifest.json").write_text(
        json.dumps({"run_name": "", "configuration": configuration}))
    _made(run, "results/run_manifest.json", {})


def _config_line(report) -> str:
    (line,) = [x for x in report.lines() if x.startswith("configuration keys that differ")]
    return line


def test_the_left_out_configfile_hint_follows_the_runs_manifest(tmp_path):
    """A file made under another configuration: the hint says a --configfile was left out
    only when the configuration at hand differs from the last complete run's (its manifest),
    naming the keys; when it is the run's own, the file is older than the run."""
    from dprepro.runtime.run_config import run_config_subset

    made = {"seed": 1, "rrr_survival": {"datasets": ["ipssr"], "epsilons": [1]},
            "datasets": {"ipssr": {"path": "a.csv"}}}
    now = {**made, "rrr_survival": {"datasets": ["ipssr"], "epsilons": [1, 2]}}
    run = _run(tmp_path)
    _with_run_config(run, "results/tables/a.csv", "rrr_private_releases", {"dataset": "ipssr"},
                     run_config_subset(made, "rrr_private_releases", {"dataset": "ipssr"}))
    # no manifest: no guess either way
    line = _config_line(verify_run(run, workflow_root=ROOT, config=now))
    assert "rrr_survival.epsilons (1)" in line and "left out" not in line
    # the last complete run had the configuration at hand: the file is older than that run
    _manifest(run, now)
    line = _config_line(verify_run(run, workflow_root=ROOT, config=now))
    assert "is the last complete run's" in line and "left out" not in line
    # the run had another configuration: verify was given the wrong one
    _manifest(run, made)
    line = _config_line(verify_run(run, workflow_root=ROOT, config=now))
    assert "left out" in line and "in rrr_survival.epsilons:" in line


def test_a_rule_file_added_for_another_study_leaves_the_files_verified(tmp_path):
    """The rules digest a sidecar records is its rule's files (and its study's plan module):
    a new study's .smk changes no other rule's digest; an edit of the rule's own file does."""
    from dprepro.runtime.code_version import rule_files, rules_digest
    from helpers.recipes import checkout_copy

    work = checkout_copy(tmp_path / "checkout")
    run = _run(tmp_path)
    rules = {"results/tables/a.csv": "rrr_cox", "results/tables/b.csv": "ldp_figure",
             "results/tables/c.csv": "repr_fit", "results/data/cohort.csv": "rrr_cohort"}
    for name, rule in rules.items():
        sidecar = run / f"{name}.prov.json"
        record = json.loads(sidecar.read_text())
        record.update(rule=rule, rules_sha256=rules_digest(work, rule))
        sidecar.write_text(json.dumps(record))
    assert verify_run(run, workflow_root=work).ok
    assert [p.name for p in rule_files(work, "rrr_cox")] == ["common.smk", "rrr_survival.smk"]
    # a new study's rules (and its include in the Snakefile)
    rules_dir = work / "workflow" / "rules"
    (rules_dir / "new_study.smk").write_text(
        'from dprepro.runtime.params import canonical  # noqa: E402\n\n'
        'NEW_DIR = "results/new_study"\n\n\nrule new_table:\n    output:\n'
        '        f"{NEW_DIR}/t.csv",\n    params:\n        x=canonical({}),\n')
    snakefile = work / "Snakefile"
    snakefile.write_text(snakefile.read_text() + '\ninclude: "workflow/rules/new_study.smk"\n')
    report = verify_run(run, workflow_root=work)
    assert report.ok, report.lines()
    # an edit of the ldp rules flags the ldp file only (and what was drawn from it)
    ldp = rules_dir / "ldp_indicators.smk"
    ldp.write_text(ldp.read_text() + "\n# an edit\n")
    found = {(m.file, m.what) for m in verify_run(run, workflow_root=work).mismatches}
    assert found == {("results/tables/b.csv", "rules"), ("results/tables/c.csv", "upstream")}
    # the rrr study's plan module is part of its rules' digest
    jobs = work / "scripts" / "dprepro" / "studies" / "rrr_survival" / "jobs.py"
    jobs.write_text(jobs.read_text() + "\n# an edit\n")
    assert rules_digest(work, "rrr_cox") != json.loads(
        (run / "results/tables/a.csv.prov.json").read_text())["rules_sha256"]
    assert rules_digest(work, "ldp_figure") == rules_digest(work, "ldp_figure")


def test_a_rule_made_by_use_rule_has_its_own_and_its_sources_rule_files(tmp_path):
    """``use rule base as derived with:`` (the VAE models' repr_search_vae, repr_fit_vae):
    derived's parameters come from its file and base's, not from every rule file."""
    from dprepro.runtime.code_version import rule_files

    rules_dir = tmp_path / "workflow" / "rules"
    rules_dir.mkdir(parents=True)
    (tmp_path / "Snakefile").write_text('include: "workflow/rules/common.smk"\n')
    (rules_dir / "common.smk").write_text("X = 1\n")
    (rules_dir / "base.smk").write_text('rule base:\n    output:\n        "{x}.txt"\n')
    (rules_dir / "derived.smk").write_text(
        'use rule base as derived with:\n    wildcard_constraints:\n        x="a"\n')
    (rules_dir / "other.smk").write_text('rule other:\n    output:\n        "o.txt"\n')
    names = [p.name for p in rule_files(tmp_path, "derived")]
    assert names == ["base.smk", "common.smk", "derived.smk"]
    # a chain: the rule made from a made rule reads all three files
    (rules_dir / "again.smk").write_text(
        'use rule derived as derived_again with:\n    wildcard_constraints:\n        x="b"\n')
    assert [p.name for p in rule_files(tmp_path, "derived_again")] == [
        "again.smk", "base.smk", "common.smk", "derived.smk"]
    (rules_dir / "loop.smk").write_text("use rule loop as loop with:\n    threads: 2\n")
    assert [p.name for p in rule_files(tmp_path, "loop")] == ["common.smk", "loop.smk"]
    assert [p.name for p in rule_files(tmp_path, "base")] == ["base.smk", "common.smk"]
    # the workflow's own: the VAE jobs' rules read what repr_search and repr_fit read
    assert rule_files(ROOT, "repr_search_vae") == rule_files(ROOT, "repr_search")
    assert rule_files(ROOT, "repr_fit_vae") == rule_files(ROOT, "repr_fit")
    assert ROOT / "Snakefile" not in rule_files(ROOT, "repr_fit_vae")
