"""docs/tutorial.md, run as a user runs it: its code, outside the repository, against the
package as pip installs it; what it prints and publishes, against lifelines."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lifelines import CoxPHFitter, KaplanMeierFitter
from lifelines.statistics import pairwise_logrank_test

from helpers.install import install_copy

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
GROUPS = ["squamous", "smallcell", "adeno", "large"]

#: Appended to the tutorial's code: what it computed, and which dprepro it ran.
EPILOGUE = """
import importlib.metadata, json
import dprepro
json.dump({"file": dprepro.__file__, "version": dprepro.__version__,
           "installed": importlib.metadata.version("dprepro"),
           "tests": tests.to_dict("list"), "fit": fit.to_frame().to_dict("list")},
          open("results.json", "w"))
"""


def _code() -> str:
    return "\n".join(re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(), re.S))


#: The tutorial draws its release from fresh entropy (a published seed would let anyone
#: undo the noise); the test fixes the draw so that its checks cannot fail by chance.
UNSEEDED = "np.random.default_rng()"
SEEDED = "np.random.default_rng(20240611)"


def _test_code() -> str:
    code = _code()
    assert code.count(UNSEEDED) == 1, "the tutorial no longer draws its release as expected"
    return code.replace(UNSEEDED, SEEDED)


@pytest.fixture(scope="module")
def tutorial_run(tmp_path_factory):
    """Install the package from a copy of its sources, then run the tutorial in a folder of
    its own with only that install on the path."""
    base = tmp_path_factory.mktemp("tutorial")
    site = install_copy(base)
    work = base / "work"
    work.mkdir()
    shutil.copy(ROOT / "resources" / "r-survival" / "veteran.csv", work / "veteran.csv")
    (work / "tutorial.py").write_text(_test_code() + EPILOGUE)
    env = {**os.environ, "PYTHONPATH": str(site), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "tutorial.py"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return work, site, done.stdout, json.loads((work / "results.json").read_text())


def test_the_tutorial_is_about_twenty_lines_of_code():
    lines = [line for line in _code().splitlines() if line.strip() and not line.startswith("#")]
    assert 15 <= len(lines) <= 26, len(lines)


def test_it_runs_the_installed_package_outside_the_repository(tutorial_run):
    work, site, _, results = tutorial_run
    assert Path(results["file"]).resolve().is_relative_to(site.resolve())
    assert not work.resolve().is_relative_to(ROOT)
    assert results["installed"] == results["version"]


def test_it_prints_the_privacy_statement_of_the_release(tutorial_run):
    """Exact calibration: p = (e^ε - 1) / (e^ε + k - 1) makes ln(1 + kp/(1-p)) = ε."""
    _, _, stdout, _ = tutorial_run
    p = (math.exp(2) - 1) / (math.exp(2) + 3)
    assert stdout.splitlines()[0] == (
        f"rrr: stated ε = 2, true ε = 2 per patient (RRR on the group label, keep probability "
        f"p = {p:.4f}, k = 4; true LDP level ln(1 + kp/(1-p)) = 2.000)")
    shown = re.search(r"```text\n(.*?)\n```", TUTORIAL.read_text(), re.S).group(1)
    assert shown == stdout.splitlines()[0]


def test_the_release_keeps_times_and_statuses_and_randomises_groups(tutorial_run):
    work, _, _, _ = tutorial_run
    cohort = pd.read_csv(work / "veteran.csv")
    release = pd.read_csv(work / "release.csv")
    assert list(release.columns) == ["time", "status", "group"]
    assert release["time"].tolist() == cohort["time"].tolist()
    assert release["status"].tolist() == cohort["status"].tolist()
    assert set(release["group"]) <= set(GROUPS)
    # each group is replaced with probability (1 - p)(k - 1)/k ≈ 0.29: P(none of 137) < 1e-19
    assert (release["group"] != cohort["celltype"]).any()


def test_its_curves_and_tests_are_lifelines_on_the_release(tutorial_run):
    work, _, stdout, results = tutorial_run
    release = pd.read_csv(work / "release.csv")
    medians = dict(re.findall(r"^(\w+): median survival (\S+) days$", stdout, re.M))
    assert list(medians) == GROUPS
    for group in GROUPS:
        rows = release[release["group"] == group]
        oracle = KaplanMeierFitter().fit(rows["time"], rows["status"]).median_survival_time_
        assert float(medians[group]) == pytest.approx(oracle, rel=1e-5), group
    oracle = pairwise_logrank_test(release["time"], release["group"], release["status"])
    ours = pd.DataFrame(results["tests"]).set_index(["group_a", "group_b"])
    for (a, b), row in oracle.summary.iterrows():
        mine = ours.loc[(a, b)] if (a, b) in ours.index else ours.loc[(b, a)]
        assert mine["statistic"] == pytest.approx(row["test_statistic"], rel=1e-8)
        assert mine["p_value"] == pytest.approx(row["p"], rel=1e-6)
    assert (work / "km.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_its_cox_model_starts_from_lifelines_naive_fit_and_corrects_it(tutorial_run):
    """The ``naive`` column is the Cox fit on the released groups (lifelines, Efron ties,
    squamous the reference); MC-SIMEX gives a finite estimate and interval for each term."""
    work, _, _, results = tutorial_run
    release = pd.read_csv(work / "release.csv")
    design = pd.get_dummies(release["group"]).reindex(columns=GROUPS[1:]).astype(float)
    # lifelines stops at |step| < 1e-7 by default; tight settings make it converge fully
    oracle = CoxPHFitter().fit(pd.concat([release[["time", "status"]], design], axis=1),
                               duration_col="time", event_col="status",
                               fit_options={"precision": 1e-13, "r_precision": 1e-15,
                                            "max_steps": 200})
    fit = pd.DataFrame(results["fit"])
    assert fit["term"].tolist() == ["group1", "group2", "group3"]
    np.testing.assert_allclose(fit["naive"], oracle.params_[GROUPS[1:]], rtol=0, atol=1e-8)
    np.testing.assert_allclose(fit["naive_se"], oracle.standard_errors_[GROUPS[1:]], rtol=1e-5)
    assert np.isfinite(fit[["estimate", "se", "lower", "upper"]].to_numpy()).all()
    assert (fit["lower"] < fit["estimate"]).all() and (fit["estimate"] < fit["upper"]).all()
