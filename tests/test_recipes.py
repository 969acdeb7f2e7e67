"""The recipes of the README and docs/development.md, run as written.

Each recipe that changes configuration or code is read from its page when the test runs
(``tests/helpers/recipes.py``) and run on a scratch folder or a scratch copy of the
checkout: its shell lines as written, its ``snakemake`` lines as written with the small
test configuration laid under the recipe's own overlay and only the targets the recipe
affects. The tests then check that the outputs changed as the recipe says. The runs are
background runs (tests/helpers/background.py), so they share the cores with the other
workflow tests instead of queueing behind them.

Covered here: change ε or α, add my own cohort in a named run, add a mechanism, add a
claim, rebuild one figure or table. Handing a run over and verifying it is
``tests/test_handover.py``'s archive test, which runs the README's commands too.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from helpers import background
from helpers.recipes import (
    ROOT,
    checkout_copy,
    code_blocks,
    inline_commands,
    paragraph,
    planned_jobs,
    run,
    run_shell_block,
    section,
    snakemake_command,
)
from helpers.smallruns import SMALL

pytestmark = pytest.mark.workflow

README = "README.md"
DEVELOPMENT = "docs/development.md"
LDP = "results/ldp_indicators/tables"
RRR = "results/rrr_survival/tables"
REPR = "results/repr_transfer/tables"


def _appended_to(text: str) -> str:
    """The file a recipe appends its Python block to (``appended to `path```)."""
    match = re.search(r"appended to\s+`([^`]+\.py)`", text)
    assert match, f"the recipe does not say which file its code is appended to:\n{text}"
    return match.group(1)


def _append(work: Path, text: str) -> str:
    """Append the recipe's one Python block to the file it names; that file's path."""
    (block,) = code_blocks(text, "python")
    path = _appended_to(text)
    target = work / path
    target.write_text(target.read_text().rstrip("\n") + "\n\n\n" + block)
    return path


#: A config-only recipe runs in a folder of its own (its relative paths are the user's)
#: with the checkout's Snakefile, as every workflow test that runs in another --directory:
#: the small configuration then stands in for config/config.yaml, which Snakemake does not
#: read there (dprepro.config.overlays), and the recipe's overlay lies over it as over the
#: embedded default. (The small configuration is not made to lie over config.yaml: its
#: synthetic expression data lack the lineages config.yaml's repr cases name.)


def _trims(folder: Path, values: dict) -> Path:
    """A test-only configuration laid between the small one and the recipe's overlay:
    fewer cohorts or representations where the recipe does not name them."""
    path = folder / "trims.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def _table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


# --------------------------------------------------------------------- change ε or α

#: what the ε recipe's targets need from each study, trimmed where its overlay is silent
PRIVACY_TRIMS = {"ldp_indicators": {"mechanisms": ["laplace"]},
                 "rrr_survival": {"datasets": ["toy"]},
                 "repr_transfer": {"representations": ["pca"], "pipelines": ["corrected"]}}
PRIVACY_TARGETS = [f"{LDP}/mse.csv", f"{RRR}/median_survival.csv",
                   f"{REPR}/cancer_type_accuracy.csv", f"{REPR}/drug_sensitivity.csv"]


@background.register("recipe:privacy")
def _privacy_run(folder: Path) -> Path:
    (block,) = code_blocks(section(README, "change ε or α?"), "bash")
    run_shell_block(block, folder, under=[SMALL, _trims(folder, PRIVACY_TRIMS)],
                    targets=PRIVACY_TARGETS, snakefile=ROOT / "Snakefile")
    return folder


@pytest.mark.background("recipe:privacy", early=True)
def test_the_change_epsilon_recipe_reaches_every_study(tmp_path):
    work = background.result("recipe:privacy", tmp_path)
    overlay = yaml.safe_load((work / "my_privacy.yaml").read_text())
    levels = {"ldp": overlay["ldp_indicators"]["alphas"],
              "rrr": overlay["rrr_survival"]["epsilons"],
              "cancer": overlay["repr_transfer"]["cancer_type"]["epsilons"],
              "drug": overlay["repr_transfer"]["drug"]["epsilons"]}
    small = yaml.safe_load(SMALL.read_text())
    # the overlay's levels are new to the small configuration, so the tables show them
    assert set(levels["ldp"]) != set(small["ldp_indicators"]["alphas"])
    assert set(levels["rrr"]) != set(small["rrr_survival"]["epsilons"])

    def stated(table: pd.DataFrame, column: str) -> set[float]:
        values = pd.to_numeric(table[column], errors="coerce")
        return set(values[values.notna() & (values != float("inf"))])

    mse = _table(work / LDP / "mse.csv")
    assert stated(mse, "alpha") == set(map(float, levels["ldp"]))
    medians = _table(work / RRR / "median_survival.csv")
    assert stated(medians, "epsilon") == set(map(float, levels["rrr"]))
    cancer = _table(work / REPR / "cancer_type_accuracy.csv")
    assert stated(cancer, "epsilon") == set(map(float, levels["cancer"]))
    drug = _table(work / REPR / "drug_sensitivity.csv")
    assert stated(drug, "epsilon") == set(map(float, levels["drug"]))
    # each row's privacy columns state the level it was released at
    private = medians[medians["mechanism"] == "rrr"]
    exact = private[private["calibration"] == "exact"]
    assert len(exact) and (exact["true_epsilon"].astype(float)
                           == exact["epsilon"].astype(float)).all()


# ------------------------------------------------------- own cohort, in a named run

def _user_cohort(work: Path, spec: dict) -> None:
    """The CSV the cohort recipe expects, as a user brings it: tests/data/toy_cohort.csv
    under the recipe's column names, status values and groups (arm A is the control)."""
    toy = pd.read_csv(ROOT / "tests" / "data" / "toy_cohort.csv")
    columns = spec["columns"]
    control, treatment = spec["groups"]
    statuses = {"dead": spec["event_values"][0], "alive": spec["censored_values"][0]}
    cohort = pd.DataFrame({
        columns["id"]: toy["id"], columns["time"]: toy["time"],
        columns["status"]: toy["status"].map(statuses),
        columns["group"]: toy["group"].map(lambda g: control if g == "arm A" else treatment)})
    path = work / spec["path"]
    path.parent.mkdir(parents=True, exist_ok=True)
    cohort.to_csv(path, index=False)


COHORT_TARGETS = [f"{RRR}/median_survival.csv", f"{RRR}/pairwise_logrank.csv"]


@background.register("recipe:cohort")
def _cohort_run(folder: Path):
    (block,) = code_blocks(section(README, "add my own cohort?"), "yaml")
    name = re.match(r"#\s*(\S+\.yaml)", block).group(1)
    (folder / name).write_text(block)
    config = yaml.safe_load(block)
    (cohort,) = [key for key in config["datasets"]]
    _user_cohort(folder, config["datasets"][cohort])
    # the named-run recipe runs the cohort recipe's overlay under a name of its own
    (named,) = [c for c in inline_commands(section(README, "keep runs of two configurations"))
                if "run_name=" in c]
    proc = run(snakemake_command(named, under=[SMALL], targets=COHORT_TARGETS,
                                 snakefile=ROOT / "Snakefile"), folder)
    return folder, cohort, config, named, proc.stdout + proc.stderr


@pytest.mark.background("recipe:cohort", early=True)
def test_the_own_cohort_recipe_runs_in_a_named_run(tmp_path):
    work, cohort, config, named, log = background.result("recipe:cohort", tmp_path)
    run_name = re.search(r"run_name=(\S+)", named).group(1)
    folder = work / "runs" / run_name
    # the named run keeps its results, logs and records apart; the cohort path still
    # means the directory it started in
    assert f"outputs are under runs/{run_name}/results/" in log
    assert not (work / "results").exists() and (folder / ".snakemake").is_dir()
    assert any((folder / "results" / "logs" / "rrr_private_releases").glob(f"{cohort}*"))
    spec = config["datasets"][cohort]
    medians = _table(folder / RRR / "median_survival.csv")
    assert list(dict.fromkeys(medians["dataset"])) == config["rrr_survival"]["datasets"]
    mine = medians[medians["dataset"] == cohort]
    # every configured group, in the configured order, for every release of the study
    assert list(dict.fromkeys(mine["group"])) == spec["groups"]
    assert set(mine["mechanism"]) == set(medians["mechanism"])
    assert set(mine["epsilon"]) == set(medians["epsilon"])
    assert (mine["data_origin"] == spec["data_origin"]).all()
    # the non-private reference's medians are the user's data's (lifelines, the oracle)
    from lifelines import KaplanMeierFitter

    data = pd.read_csv(work / spec["path"])
    original = mine[mine["mechanism"] == "original"].set_index("group")
    for group in spec["groups"]:
        rows = data[data[spec["columns"]["group"]] == group]
        fit = KaplanMeierFitter().fit(rows[spec["columns"]["time"]],
                                      rows[spec["columns"]["status"]].isin(spec["event_values"]))
        assert float(original.loc[group, "median"]) == pytest.approx(fit.median_survival_time_)
    logrank = _table(folder / RRR / "pairwise_logrank.csv")
    assert cohort in set(logrank["dataset"])


# ------------------------------------------------------ add a mechanism, add a claim

MECHANISM_TARGETS = [f"{LDP}/mse.csv", f"{LDP}/variance_floor.csv", f"{LDP}/claims.csv",
                     "results/ldp_indicators/figures/figure1.png", "results/audit/claims.csv"]
#: The session's small run (conftest.small_run), which the mechanism's tables are compared
#: with, runs in another --directory, where the embedded default is not read under the
#: small configuration (dprepro.config.overlays): its learners' audits then take the
#: draws_scale, not the default's learner_draws_scale of 1. The same here (and 20 times
#: fewer draws).
SMALL_RUN_AUDIT = {"audit": {"learner_draws_scale": None}}
#: the tables the new mechanism joins, and that keep every row of the other mechanisms
EXTENDED = [f"{LDP}/mse.csv", f"{LDP}/variance_floor.csv", f"{LDP}/claims.csv",
            "results/audit/privacy_audit.csv", "results/audit/claims.csv"]


@background.register("recipe:mechanism")
def _code_recipes(folder: Path) -> dict:
    """Add the README's mechanism, then docs/development.md's claim, in one scratch copy."""
    work = checkout_copy(folder / "checkout")
    found = {}
    text = section(README, "add a mechanism?")
    found["registry"] = _append(work, text)
    found["lint"] = subprocess.run([sys.executable, "-m", "ruff", "check", found["registry"]],
                                   cwd=work, capture_output=True, text=True)
    (block,) = code_blocks(text, "bash")
    under = [SMALL, _trims(folder, SMALL_RUN_AUDIT)]
    run_shell_block(block, work, under=under, targets=MECHANISM_TARGETS)
    overlay = re.search(r"^snakemake .*--configfile (\S+)", block, re.M).group(1)
    found["mechanism"] = {path: _table(work / path) for path in EXTENDED}
    found["figure1_sidecar"] = json.loads(
        (work / "results/ldp_indicators/figures/figure1.png.prov.json").read_text())
    found["catalogue_after_mechanism"] = (work / "docs" / "claims.md").read_text()

    text = paragraph(DEVELOPMENT, "**Add a claim.**")
    found["claims_module"] = _append(work, text)
    (block,) = code_blocks(text, "bash")
    # with the configuration of the mechanism's run (its overlay stays): only the code
    # changes
    under.append(work / overlay)
    (log,) = [p.stdout + p.stderr for p in run_shell_block(block, work, under=under)
              if "Job stats" in p.stdout + p.stderr]
    found["claim_jobs"] = planned_jobs(log)
    found["claim_table"] = _table(work / LDP / "claims.csv")
    found["catalogue_after_claim"] = (work / "docs" / "claims.md").read_text()
    found["claim_block"] = code_blocks(text, "python")[0]
    return found


def _without(table: pd.DataFrame, word: str) -> pd.DataFrame:
    """The rows of ``table`` in which no cell mentions ``word``."""
    mentions = table.apply(lambda column: column.str.contains(word, regex=False)).any(axis=1)
    return table[~mentions].reset_index(drop=True)


#: the one text of a claims row that counts the table's rows ("across the 88 claims")
_COUNT = re.compile(r"across the \d+ claims of this table")


def _assert_same_rows(got: pd.DataFrame, expected: pd.DataFrame, label: str) -> None:
    """``got`` equals ``expected`` cell for cell, the count of claims in a note aside;
    the first difference is named (not the whole table)."""
    got, expected = (t.replace(_COUNT, "across the N claims of this table", regex=True)
                     for t in (got, expected))
    assert list(got.columns) == list(expected.columns), label
    assert len(got) == len(expected), f"{label}: {len(got)} rows, expected {len(expected)}"
    differ = got.ne(expected)
    if differ.any(axis=None):
        row, column = next((r, c) for r, c in zip(*differ.to_numpy().nonzero(), strict=True))
        name = got.columns[column]
        raise AssertionError(f"{label}: row {row} ({got.iloc[row, 0]}), column {name}: "
                             f"{got.iloc[row, column]!r} != {expected.iloc[row, column]!r}")


@pytest.mark.background("recipe:mechanism", early=True)
def test_the_add_a_mechanism_recipe_reaches_tables_audit_and_claims(small_run, tmp_path):
    found = background.result("recipe:mechanism", tmp_path)
    name = re.search(r'@indicator_mechanism\("(\w+)"',
                     code_blocks(section(README, "add a mechanism?"), "python")[0]).group(1)
    assert found["lint"].returncode == 0, found["lint"].stdout
    tables = found["mechanism"]
    for path in EXTENDED:
        table = tables[path]
        mine = table.apply(lambda column: column.str.contains(name, regex=False)).any(axis=1)
        assert mine.any(), f"{path} has no row of {name}"
        # adding a mechanism leaves every row of the others as it was, byte for byte
        got, expected = _without(table, name), _table(small_run / path)
        _assert_same_rows(got, expected, path)
    mse = tables[f"{LDP}/mse.csv"]
    alphas = set(yaml.safe_load(SMALL.read_text())["ldp_indicators"]["alphas"])
    assert set(mse.loc[mse["mechanism"] == name, "alpha"].astype(float)) == alphas
    # the privacy audit audits it as run, and its control (claimed 0.3, run where the
    # mechanism is truly 0.6-LDP) is caught
    audit = tables["results/audit/privacy_audit.csv"]
    audit = audit[audit["mechanism"] == name]
    published = audit[audit["role"] == "published"]
    assert len(published) == 3 and (published["true_epsilon"].astype(float)
                                     == published["claimed_epsilon"].astype(float) / 2).all()
    control = audit[audit["role"] == "control"]
    assert (control["empirical_epsilon_lower_bound"].astype(float)
            > control["claimed_epsilon"].astype(float)).all()
    # its privacy statement is a claim: the project's own, and it holds (true ε = α/2)
    claims = tables["results/audit/claims.csv"]
    rows = claims[claims["claim_id"].str.startswith(f"ldp.privacy.{name}.")]
    assert len(rows) == 3 and (rows["verdict"] == "holds").all()
    assert (rows["claim_origin"] == "beyond").all()
    assert (rows["privacy_unit"] == "individual").all()
    assert f"`ldp.privacy.{name}." in found["catalogue_after_mechanism"]
    # the study's claims test the paper's statements on it too
    ldp = tables[f"{LDP}/claims.csv"]
    assert ldp["claim_id"].str.startswith(f"ldp.{name}.").any()
    # Figure 1 draws it: its privacy statement is among the figure's records
    records = found["figure1_sidecar"]["privacy"]["records"]
    mine = {r["alpha"]: r["true_epsilon"] for r in records
            if r["mechanism"] == name and "joint_over" not in r and "noise_draws" not in r}
    assert mine == {alpha: alpha / 2 for alpha in alphas}


@pytest.mark.background("recipe:mechanism", early=True)
def test_the_add_a_claim_recipe_adds_its_rows_and_reruns_only_the_claims_job(tmp_path):
    found = background.result("recipe:mechanism", tmp_path)
    pattern = re.search(r'"(ldp\.[^"]+)"', found["claim_block"]).group(1)
    assert found["claims_module"] == "scripts/dprepro/studies/ldp_indicators/claims.py"
    # the edit reruns the study's claims job only (its simulations are up to date)
    assert found["claim_jobs"] == {"ldp_claims": 1}
    table = found["claim_table"]
    new = table[table["claim_id"].str.fullmatch(re.escape(pattern).replace(
        re.escape("{censoring}"), r"\d+"))]
    before = found["mechanism"][f"{LDP}/claims.csv"]
    censorings = sorted(set(before["claim_id"].str.extract(r"\.c(\d+)$")[0].dropna()))
    assert sorted(new["claim_id"].str.extract(r"\.c(\d+)$")[0]) == censorings
    assert set(new["verdict"]) <= {"holds", "fails", "inconclusive"}
    assert (new["claim_origin"] == "beyond").all()
    assert (new["ci_lower"].astype(float) <= new["reproduced_value"].astype(float)).all()
    assert (new["reproduced_value"].astype(float) <= new["ci_upper"].astype(float)).all()
    # its value is the IMSE ratio the MSE table gives (another job, from the same replicates)
    mse = found["mechanism"][f"{LDP}/mse.csv"]
    for row in new.itertuples():
        level = mse[mse["censoring"] == row.claim_id.rsplit(".c", 1)[1]]
        imse = {e: level.loc[level["estimator"] == e, "mse"].astype(float).mean()
                for e in ("beran", "generalized_beran")}
        assert float(row.reproduced_value) == pytest.approx(
            imse["beran"] / imse["generalized_beran"], rel=1e-9)
    # no other row changes: each claim bootstraps with its own stream
    _assert_same_rows(table[~table.index.isin(new.index)].reset_index(drop=True), before,
                      f"{LDP}/claims.csv")
    assert f"`{pattern}`" in found["catalogue_after_claim"]


# ------------------------------------------------------- rebuild one figure or table

def test_the_rebuild_recipe_builds_only_the_output_named(small_run, tmp_path):
    """Both commands of the README's "rebuild one figure or table", in a copy of the
    session's small run with the output removed: only its own job runs."""
    (block,) = code_blocks(section(README, "rebuild one figure or table?"), "bash")
    # beside the run: a run in another --directory names the bundled cohorts by paths
    # relative to it (../../work/...), and a copy at another depth would see the set of
    # kidney's inputs changed and rebuild its chain
    work = small_run.parent / f"{small_run.name}-rebuild-{tmp_path.name}"
    shutil.copytree(small_run, work, symlinks=True)
    try:
        _rebuild_each(block, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _rebuild_each(block: str, work: Path) -> None:
    commands = block.splitlines()
    assert len(commands) == 2
    outputs = {"results/ldp_indicators/figures/figure1.png": "ldp_figure",
               "rrr_median_table": "rrr_median_table"}
    for line, (target, rule) in zip(commands, outputs.items(), strict=True):
        assert target in line.split()
        removed = work / (target if "/" in target else f"{RRR}/median_survival.csv")
        removed.unlink()
        proc = run(snakemake_command(line, under=[SMALL], snakefile=ROOT / "Snakefile")
                   + ["--directory", str(work)], ROOT)
        assert removed.exists()
        log = proc.stdout + proc.stderr
        jobs = planned_jobs(log)
        reasons = [line.strip() for line in log.splitlines() if "reason:" in line]
        assert jobs == {rule: 1}, (jobs, reasons)
