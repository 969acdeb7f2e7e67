"""dprepro.runtime.verify on a hand-made results folder: what it reports and how."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from dprepro.runtime.verify import job_key, recorded_jobs, verify_run

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


def _with_params(run: Path, output: str, rule: str, wildcards: dict, params: dict,
                 plan: dict | None = None) -> None:
    """The rule, wildcards and params (and plan) a step records in its sidecar."""
    sidecar = run / f"{output}.prov.json"
    record = json.loads(sidecar.read_text())
    record.update(rule=rule, wildcards=wildcards, params=params,
                  **({"plan": plan} if plan is not None else {}))
    sidecar.write_text(json.dumps(record))


def _params_run(tmp_path) -> tuple[Path, dict]:
    """The hand-made folder with params in two sidecars, and the params the rules give now."""
    run = _run(tmp_path)
    _with_params(run, "results/data/cohort.csv", "rrr_cohort", {"dataset": "ipssr"},
                 {"library_code": "aa", "plan_sha256": "p1"})
    _with_params(run, "results/tables/a.csv", "rrr_figure2", {"dataset": "ipssr"},
                 {"library_code": "aa", "dpi": 50, "figure": "figure2", "plan_sha256": "p2"},
                 plan={"epsilons": [1], "groups": ["a", "b"]})
    now = {job_key("rrr_cohort", {"dataset": "ipssr"}): {"library_code": "aa",
                                                         "plan_sha256": "p1"},
           job_key("rrr_figure2", {"dataset": "ipssr"}): {
               "library_code": "aa", "dpi": 50, "figure": "figure2", "plan_sha256": "p2"}}
    return run, now


def test_params_as_the_rules_give_them_now_verify_and_a_changed_one_is_named(tmp_path):
    run, now = _params_run(tmp_path)
    assert recorded_jobs(run) == set(now)
    assert verify_run(run, workflow_root=ROOT, params_now=now).ok
    # a changed param: the file and what was drawn from it (b read a, c read b)
    figure = job_key("rrr_figure2", {"dataset": "ipssr"})
    changed = {**now, figure: {**now[figure], "dpi": 60}}
    report = verify_run(run, workflow_root=ROOT, params_now=changed)
    assert [str(m) for m in report.mismatches if m.what == "params"] == [
        "results/tables/a.csv: params: dpi = 50 when made; 60 now"]
    assert {(m.file, m.what) for m in report.mismatches} == {
        ("results/tables/a.csv", "params"), ("results/tables/b.csv", "upstream"),
        ("results/tables/c.csv", "upstream")}
    assert "parameters that differ (files): dpi (1)" in "\n".join(report.lines())
    # a param added or dropped by the rules
    added = {**now, figure: {**now[figure], "width": 3}}
    assert [m.detail for m in verify_run(run, workflow_root=ROOT, params_now=added).mismatches
            if m.what == "params"] == ["width not set when made; 3 now"]
    # library_code is left to its own check (which names the modules that differ)
    relinked = {**now, figure: {**now[figure], "library_code": "bb"}}
    assert verify_run(run, workflow_root=ROOT, params_now=relinked).ok
    # without the rules' params there is no params check
    assert verify_run(run, workflow_root=ROOT).ok


def test_the_params_now_are_each_recorded_jobs_rules_at_its_wildcards(tmp_path):
    from dprepro.runtime.verify import current_params

    run, _ = _params_run(tmp_path)
    rules = {"rrr_figure2": [("library_code", "aa"), ("dpi", 50),
                             ("figure", lambda wc: f"figure2_{wc.dataset}"),
                             ("plan_sha256", lambda wildcards: "p2")]}
    now = current_params(run, rules.get)
    assert now == {job_key("rrr_cohort", {"dataset": "ipssr"}): None,
                   job_key("rrr_figure2", {"dataset": "ipssr"}): {
                       "library_code": "aa", "dpi": 50, "figure": "figure2_ipssr",
                       "plan_sha256": "p2"}}
    found = {(m.file, m.what, m.detail) for m in verify_run(
        run, workflow_root=ROOT, params_now=now).mismatches}
    assert found == {
        ("results/data/cohort.csv", "rule", "this workflow has no rule rrr_cohort"),
        ("results/tables/a.csv", "params", "figure = 'figure2' when made; 'figure2_ipssr' now"),
        ("results/tables/b.csv", "upstream",
         "its input results/tables/a.csv fails a check (this file is stale with it)"),
        ("results/tables/c.csv", "upstream",
         "its input results/tables/b.csv fails a check (this file is stale with it)")}


def test_a_changed_plan_names_its_keys_when_the_configuration_is_at_hand(tmp_path,
                                                                         monkeypatch):
    import dprepro.runtime.verify as verify

    run, now = _params_run(tmp_path)
    figure = job_key("rrr_figure2", {"dataset": "ipssr"})
    replanned = {**now, figure: {**now[figure], "plan_sha256": "p3"}}
    # no configuration: the digests are all there is to compare
    details = [m.detail for m in verify_run(run, workflow_root=ROOT,
                                            params_now=replanned).mismatches
               if m.what == "params"]
    assert details == ["plan_sha256 = 'p2' when made; 'p3' now"]
    # with it, the plan is rebuilt and its keys that differ are named
    rebuilt = []
    monkeypatch.setattr(verify, "plan_of_job", lambda config, rule, wildcards: rebuilt.append(
        (rule, wildcards)) or {"epsilons": [1, 2], "groups": ("a", "b")})
    details = [m.detail for m in verify_run(run, workflow_root=ROOT, config={"seed": 1},
                                            params_now=replanned).mismatches
               if m.what == "params"]
    assert details == ["plan.epsilons = [1] when made; [1, 2] now"]
    assert rebuilt == [("rrr_figure2", {"dataset": "ipssr"})]


def test_a_file_of_a_rule_gone_or_of_an_earlier_version_is_flagged(tmp_path):
    run, now = _params_run(tmp_path)
    cohort = job_key("rrr_cohort", {"dataset": "ipssr"})
    report = verify_run(run, workflow_root=ROOT, params_now={**now, cohort: None})
    assert "results/data/cohort.csv: rule: this workflow has no rule rrr_cohort" in {
        str(m) for m in report.mismatches}
    sidecar = run / "results/tables/a.csv.prov.json"
    record = json.loads(sidecar.read_text())
    del record["params"]
    sidecar.write_text(json.dumps(record))
    report = verify_run(run, workflow_root=ROOT, params_now=now)
    assert [str(m) for m in report.mismatches if m.what == "params"] == [
        "results/tables/a.csv: params: none recorded (made by an earlier version of dprepro): "
        "rerun the workflow"]
    assert not any(line.startswith("parameters that differ") for line in report.lines())


def _manifest(run: Path, configuration: dict) -> None:
    (run / "results" / "run_manifest.json").write_text(
        json.dumps({"run_name": "", "configuration": configuration}))
    _made(run, "results/run_manifest.json", {})


def _params_line(report) -> str:
    (line,) = [x for x in report.lines() if x.startswith("parameters that differ")]
    return line


def test_the_left_out_configfile_hint_follows_the_runs_manifest(tmp_path):
    """A file made with other params: the hint says a --configfile was left out only when
    the configuration at hand differs from the last complete run's (its manifest), naming
    the keys; when it is the run's own, the file is older than the run."""
    made = {"seed": 1, "rrr_survival": {"datasets": ["ipssr"], "epsilons": [1]}}
    now = {**made, "rrr_survival": {"datasets": ["ipssr"], "epsilons": [1, 2]}}
    run = _run(tmp_path)
    _with_params(run, "results/tables/a.csv", "rrr_median_table", {}, {"epsilons": [1]})
    params_now = {job_key("rrr_median_table", {}): {"epsilons": [1, 2]}}

    def line():
        return _params_line(verify_run(run, workflow_root=ROOT, config=now,
                                       params_now=params_now))

    # no manifest: no guess either way
    assert "epsilons (1)" in line() and "left out" not in line()
    # the last complete run had the configuration at hand: the file is older than that run
    _manifest(run, now)
    assert "is the last complete run's" in line() and "left out" not in line()
    # the run had another configuration: verify was given the wrong one
    _manifest(run, made)
    assert "left out" in line() and "in rrr_survival.epsilons:" in line()


def test_a_rules_params_are_evaluated_at_the_jobs_wildcards_as_recorded():
    from dprepro.runtime.params import evaluated_params

    items = [("dpi", 50), ("title", lambda wc: f"cohort {wc.dataset}"),
             ("pages", lambda wildcards: {"b": (1, 2), "a": dict(wildcards.items())}),
             ("path", ROOT)]
    assert evaluated_params(items, {"dataset": "kidney"}) == {
        "dpi": 50, "title": "cohort kidney",
        "pages": {"a": {"dataset": "kidney"}, "b": [1, 2]}, "path": str(ROOT)}
    # a function of Snakemake's job (its outputs) cannot be evaluated from the rules alone
    with pytest.raises(TypeError, match=r"rule r: params.folder is a function of "
                                        r"\['wildcards', 'output'\]"):
        evaluated_params([("folder", lambda wildcards, output: output[0])], {}, rule="r")
