"""dprepro.runtime.verify on a hand-made results folder: what it reports and how."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from dprepro.runtime.params import as_recorded, compared_text, evaluated_params
from dprepro.runtime.verify import (
    Unevaluable,
    current_params,
    job_key,
    recorded_jobs,
    verify_run,
)

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
    """The rule, wildcards and params (and plan) a step records in its sidecar
    (dprepro.runtime.step.write_sidecars)."""
    sidecar = run / f"{output}.prov.json"
    record = json.loads(sidecar.read_text())
    record.update(rule=rule, wildcards=wildcards, params=as_recorded(params),
                  params_text={k: compared_text(v) for k, v in params.items()},
                  **({"plan": plan} if plan is not None else {}))
    sidecar.write_text(json.dumps(record))


FIGURE = {"library_code": "aa", "dpi": 50, "figure": "figure2", "plan_sha256": "p2"}


def _params_run(tmp_path) -> tuple[Path, dict]:
    """The hand-made folder with params in two sidecars, and the params the rules give now."""
    run = _run(tmp_path)
    _with_params(run, "results/data/cohort.csv", "rrr_cohort", {"dataset": "ipssr"},
                 {"library_code": "aa", "plan_sha256": "p1"})
    _with_params(run, "results/tables/a.csv", "rrr_figure2", {"dataset": "ipssr"}, FIGURE,
                 plan={"epsilons": [1], "groups": ["a", "b"]})
    now = {job_key("rrr_cohort", {"dataset": "ipssr"}): _now(
               {"library_code": "aa", "plan_sha256": "p1"}),
           job_key("rrr_figure2", {"dataset": "ipssr"}): _now(FIGURE)}
    return run, now


def _now(params: dict, wildcards: dict | None = None):
    return evaluated_params(params.items(), wildcards or {})


FIGURE_JOB = job_key("rrr_figure2", {"dataset": "ipssr"})


def _params_details(run, now, **kwargs) -> list[str]:
    return [m.detail for m in verify_run(run, workflow_root=ROOT, params_now=now,
                                         **kwargs).mismatches if m.what == "params"]


def test_params_as_the_rules_give_them_now_verify_and_a_changed_one_is_named(tmp_path):
    run, now = _params_run(tmp_path)
    assert recorded_jobs(run) == set(now)
    assert verify_run(run, workflow_root=ROOT, params_now=now).ok
    # a changed param: the file and what was drawn from it (b read a, c read b)
    changed = {**now, FIGURE_JOB: _now({**FIGURE, "dpi": 60})}
    report = verify_run(run, workflow_root=ROOT, params_now=changed)
    assert [str(m) for m in report.mismatches if m.what == "params"] == [
        "results/tables/a.csv: params: dpi = 50 when made; 60 now"]
    assert {(m.file, m.what) for m in report.mismatches} == {
        ("results/tables/a.csv", "params"), ("results/tables/b.csv", "upstream"),
        ("results/tables/c.csv", "upstream")}
    assert "parameters that differ (files): dpi (1)" in "\n".join(report.lines())
    # a param added by the rules
    assert _params_details(run, {**now, FIGURE_JOB: _now({**FIGURE, "width": 3})}) == [
        "width not set when made; 3 now"]
    # library_code is left to its own check (which names the modules that differ)
    assert verify_run(run, workflow_root=ROOT,
                      params_now={**now, FIGURE_JOB: _now({**FIGURE, "library_code": "bb"})}).ok
    # without the rules' params there is no params check
    assert verify_run(run, workflow_root=ROOT).ok


def test_the_verdict_is_snakemakes_comparison_of_the_params_texts(tmp_path):
    """Snakemake compares the sorted repr of the params it compares, names aside: 50 and
    50.0 differ (though the sidecar's JSON reads them alike), a renamed param does not, a
    value of a type it does not compare (a Path) and a derived param never count."""
    run, now = _params_run(tmp_path)
    assert _params_details(run, {**now, FIGURE_JOB: _now({**FIGURE, "dpi": 50.0})}) == [
        "dpi = 50 when made; 50.0 now"]
    renamed = {k if k != "dpi" else "resolution": v for k, v in FIGURE.items()}
    assert _params_details(run, {**now, FIGURE_JOB: _now(renamed)}) == []
    with_path = {**FIGURE, "folder": ROOT}
    _with_params(run, "results/tables/a.csv", "rrr_figure2", {"dataset": "ipssr"}, with_path,
                 plan={"epsilons": [1], "groups": ["a", "b"]})
    moved = {**FIGURE, "folder": ROOT / "elsewhere",
             "out": lambda wildcards, output: output[0]}
    assert _params_details(run, {**now, FIGURE_JOB: _now(moved)}) == []


def test_the_params_now_are_each_recorded_jobs_rules_at_its_wildcards(tmp_path):
    run, _ = _params_run(tmp_path)
    rules = {"rrr_figure2": [("library_code", "aa"), ("dpi", 50),
                             ("figure", lambda wc: f"figure2_{wc.dataset}"),
                             ("plan_sha256", lambda wildcards: "p2")]}
    now = current_params(run, rules.get)
    assert now[job_key("rrr_cohort", {"dataset": "ipssr"})] is None
    assert now[FIGURE_JOB].values == {"library_code": "aa", "dpi": 50,
                                      "figure": "figure2_ipssr", "plan_sha256": "p2"}
    found = {(m.file, m.what, m.detail) for m in verify_run(
        run, workflow_root=ROOT, params_now=now).mismatches}
    assert found == {
        ("results/data/cohort.csv", "rule", "this workflow has no rule rrr_cohort"),
        ("results/tables/a.csv", "params", "figure = 'figure2' when made; 'figure2_ipssr' now"),
        ("results/tables/b.csv", "upstream",
         "its input results/tables/a.csv fails a check (this file is stale with it)"),
        ("results/tables/c.csv", "upstream",
         "its input results/tables/b.csv fails a check (this file is stale with it)")}


def test_a_job_whose_params_cannot_be_evaluated_now_is_named_not_a_crash(tmp_path):
    """A file of a cohort the configuration at hand lacks: its rule's params function
    raises; verify reports that file (with the hint about a left-out --configfile)."""
    run, _ = _params_run(tmp_path)
    cohorts = {"kidney": "k.csv"}
    rules = {"rrr_cohort": [("library_code", "aa"),
                            ("plan_sha256", lambda wc: cohorts[wc.dataset])],
             "rrr_figure2": list(FIGURE.items())}
    now = current_params(run, rules.get)
    assert isinstance(now[job_key("rrr_cohort", {"dataset": "ipssr"})], Unevaluable)
    report = verify_run(run, workflow_root=ROOT, params_now=now)
    assert [str(m) for m in report.mismatches if m.what == "params"] == [
        "results/data/cohort.csv: params: cannot be evaluated under the configuration at "
        "hand (KeyError: 'ipssr')"]
    line = _params_line(report)
    assert "(cannot be evaluated) (1)" in line and "--configfile" in line
    # a job recorded after verify gathered the params
    del now[FIGURE_JOB]
    assert "results/tables/a.csv: params: not gathered when verify started (a file written " \
           "since?): run verify again" in {str(m) for m in verify_run(
               run, workflow_root=ROOT, params_now=now).mismatches}


def test_a_changed_plan_names_its_keys_when_the_configuration_is_at_hand(tmp_path,
                                                                         monkeypatch):
    import dprepro.runtime.verify as verify

    run, now = _params_run(tmp_path)
    replanned = {**now, FIGURE_JOB: _now({**FIGURE, "plan_sha256": "p3"})}
    # no configuration: the digests are all there is to compare
    assert _params_details(run, replanned) == ["plan_sha256 = 'p2' when made; 'p3' now"]
    # with it, the plan is rebuilt and its keys that differ are named
    rebuilt = []
    monkeypatch.setattr(verify, "plan_of_job", lambda config, rule, wildcards: rebuilt.append(
        (rule, wildcards)) or {"epsilons": [1, 2], "groups": ("a", "b")})
    assert _params_details(run, replanned, config={"seed": 1}) == [
        "plan.epsilons = [1] when made; [1, 2] now"]
    assert rebuilt == [("rrr_figure2", {"dataset": "ipssr"})]


def test_a_file_of_a_rule_gone_or_of_an_earlier_version_is_flagged(tmp_path):
    run, now = _params_run(tmp_path)
    cohort = job_key("rrr_cohort", {"dataset": "ipssr"})
    report = verify_run(run, workflow_root=ROOT, params_now={**now, cohort: None})
    assert "results/data/cohort.csv: rule: this workflow has no rule rrr_cohort" in {
        str(m) for m in report.mismatches}
    sidecar = run / "results/tables/a.csv.prov.json"
    record = json.loads(sidecar.read_text())
    del record["params"], record["params_text"]
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
    the keys; when it is the run's own, the rules or the file are older than the run."""
    made = {"seed": 1, "rrr_survival": {"datasets": ["ipssr"], "epsilons": [1]}}
    now = {**made, "rrr_survival": {"datasets": ["ipssr"], "epsilons": [1, 2]}}
    run = _run(tmp_path)
    _with_params(run, "results/tables/a.csv", "rrr_median_table", {}, {"epsilons": [1]})
    params_now = {job_key("rrr_median_table", {}): _now({"epsilons": [1, 2]})}

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


def test_a_rules_params_are_evaluated_for_a_job_as_snakemake_evaluates_them():
    items = [("dpi", 50), ("title", lambda wc: f"cohort {wc.dataset}"),
             ("pages", lambda wildcards: {"b": (1, 2), "a": dict(wildcards.items())}),
             ("path", ROOT), ("file", "figures/{dataset}.pdf"),
             ("files", ["{dataset,[a-z]+}.csv", 3]),
             ("folder", lambda wildcards, output: output[0]),
             ("cores", lambda wildcards, threads: threads)]
    got = evaluated_params(items, {"dataset": "kidney"})
    assert got.values == {
        "dpi": 50, "title": "cohort kidney", "pages": {"a": {"dataset": "kidney"}, "b": [1, 2]},
        "path": str(ROOT), "file": "figures/kidney.pdf", "files": ["kidney.csv", 3]}
    assert got.derived == {"folder", "cores"}
    assert got.texts["pages"] == "{'b': (1, 2), 'a': {'dataset': 'kidney'}}"
    assert got.texts["path"] is None  # a type Snakemake does not compare
    assert got.texts["dpi"] == "50" and got.texts["file"] == "'figures/kidney.pdf'"
    with pytest.raises(KeyError):  # a wildcard the job does not have
        evaluated_params([("file", "{cohort}.csv")], {"dataset": "kidney"})
