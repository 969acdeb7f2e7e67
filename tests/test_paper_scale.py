"""The paper-mode rules declare SLURM resources that cover the paper-scale measurements.

benchmarks/paper_scale.csv (written by benchmarks/bench_paper_scale.py) records each
step's peak memory and time on inputs of the real sizes. Every job of the rule, as a dry
run of config/paper.yaml evaluates its resources, must declare mem_mb >= MEM_MARGIN x that
peak and, where the row's time is the whole step's (``covers`` = mem+runtime), runtime
(minutes) >= TIME_MARGIN x its CPU time x ``repeats`` (how often the rule runs the step).
CPU time, not wall time: the benchmark runs on a shared machine, where wall time measures
the other users; a SLURM job has its CPU to itself, and its steps run on one thread (the
benchmark limits BLAS to one thread, as the rules declare).
"""

import csv
import re
from pathlib import Path

import pytest

from helpers import background, dryruns

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "benchmarks" / "paper_scale.csv"
MEM_MARGIN, TIME_MARGIN = 1.5, 2.0
PAPER_DRY_RUN = dryruns.name("config/paper.yaml")
pytestmark = [pytest.mark.workflow, pytest.mark.background(PAPER_DRY_RUN)]


def declared_resources(output: str) -> dict[str, list[dict]]:
    """Per rule, the resources (and wildcards) of each of its jobs in a dry run's listing."""
    jobs: dict[str, list[dict]] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        match = re.match(r"(?:local)?rule (\w+):", block)
        found = re.search(r"^\s+resources: (.*)$", block, re.M)
        if not match or not found:
            continue
        values = dict(item.split("=", 1) for item in found.group(1).split(", ") if "=" in item)
        job = {key: float(values[key]) for key in ("mem_mb", "runtime") if key in values}
        threads = re.search(r"^\s+threads: (\d+)$", block, re.M)
        job["threads"] = int(threads.group(1)) if threads else 1
        wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.M)
        job["wildcards"] = set(wildcards.group(1).split(", ")) if wildcards else set()
        jobs.setdefault(match.group(1), []).append(job)
    return jobs


@pytest.fixture(scope="module")
def paper_jobs(tmp_path_factory):
    """The jobs of config/paper.yaml's dry run (tests/helpers/dryruns.py: the one that
    tests/test_workflow.py checks too)."""
    proc = background.result(PAPER_DRY_RUN, tmp_path_factory.mktemp("paper_dry"))
    return declared_resources(proc.stdout + proc.stderr)


def rows():
    with TABLE.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_table_covers_the_heavy_paper_rules():
    rules = {row["rule"] for row in rows()}
    assert {"gdsc_preprocess", "tcga_preprocess", "repr_fit", "repr_fit_vae",
            "repr_cancer_type", "repr_drug"} <= rules
    for row in rows():
        assert float(row["peak_rss_mb"]) > 0 and float(row["cpu_s"]) > 0, row
        assert row["covers"] in ("mem", "mem+runtime"), row


def test_declared_resources_cover_the_measured_peaks(paper_jobs):
    checked = 0
    for row in rows():
        jobs = paper_jobs.get(row["rule"])
        if jobs is None:  # e.g. depmap_preprocess when paper.yaml takes TCGA as public set
            continue
        # a row may be about some of the rule's jobs only (wildcards: representation=pca)
        wanted = set(filter(None, row["wildcards"].split(";")))
        matching = [j for j in jobs if wanted <= j["wildcards"]]
        # a row no job matches (a rule renamed, a wildcard value gone) would check nothing
        assert matching, (row["rule"], row["wildcards"], row["step"])
        for job in matching:
            need = MEM_MARGIN * float(row["peak_rss_mb"])
            assert job["mem_mb"] >= need, (
                f"{row['rule']} declares mem_mb={job['mem_mb']:.0f}, but {row['step']} peaks "
                f"at {row['peak_rss_mb']} MB (x{MEM_MARGIN} = {need:.0f})")
            if row["covers"] == "mem+runtime":
                minutes = TIME_MARGIN * float(row["cpu_s"]) * int(row["repeats"]) / 60
                assert job["runtime"] >= minutes, (
                    f"{row['rule']} declares runtime={job['runtime']:.0f} min, but "
                    f"{row['step']} takes {row['cpu_s']} s CPU x {row['repeats']} "
                    f"(x{TIME_MARGIN} = {minutes:.1f} min)")
            checked += 1
    assert checked >= 5


def test_declared_resources_parser():
    output = ("rule a:\n    output: x\n    resources: tmpdir=/tmp, runtime=5, mem_mb=725, "
              "mem=725 MB\n\nlocalrule b:\n    output: y\n")
    assert declared_resources(output) == {
        "a": [{"mem_mb": 725.0, "runtime": 5.0, "threads": 1, "wildcards": set()}]}
    output = ("rule f:\n    wildcards: representation=pca, seed=1\n"
              "    resources: tmpdir=/tmp, runtime=7, mem_mb=10")
    assert declared_resources(output)["f"][0]["wildcards"] == {"representation=pca", "seed=1"}
    output = ("rule g:\n    wildcards: representation=vae\n    threads: 8\n"
              "    resources: tmpdir=/tmp, runtime=7, mem_mb=10")
    assert declared_resources(output)["g"][0]["threads"] == 8


def test_vae_jobs_use_the_configured_threads_the_others_one(paper_jobs):
    """Paper mode gives the VAE models' search and fit jobs (rules of their own)
    vae.threads (their fits use a node's cores where no GPU is), the other representations'
    jobs one thread."""
    threads = _paper_config()["vae"]["threads"]
    assert threads > 1
    seen = set()
    for rule in ("repr_search", "repr_fit", "repr_search_vae", "repr_fit_vae"):
        for job in paper_jobs[rule]:
            (wildcard,) = (w for w in job["wildcards"] if w.startswith("representation="))
            seen.add((rule, wildcard.split("=", 1)[1]))
            assert job["threads"] == (threads if rule.endswith("_vae") else 1), (rule, job)
    assert {r for rule, r in seen if rule.endswith("_vae")} == {
        "vae", "supervised_vae", "vae_svae_dim"}, seen
    assert {r for rule, r in seen if not rule.endswith("_vae")} == {
        "pca", "random_projection", "pca_vae_dim"}, seen


def _paper_config() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())["repr_transfer"]


def _row(rule: str, wildcards: str) -> dict:
    (row,) = [r for r in rows() if r["rule"] == rule and r["wildcards"] == wildcards]
    return row


def _job(paper_jobs, rule: str, representation: str) -> dict:
    """The job of ``rule`` for ``representation`` with the smallest declared runtime."""
    jobs = [j for j in paper_jobs[rule] if f"representation={representation}" in j["wildcards"]]
    assert jobs, (rule, representation)
    return min(jobs, key=lambda j: j["runtime"])


def _trial_seconds(variant: str) -> float:
    (row,) = [r for r in rows() if r["rule"] == "repr_search" and f"variant {variant}" in
              r["step"]]
    return float(row["per_fit_s"])


def test_search_runtimes_cover_the_measured_fits(paper_jobs):
    """repr_search at paper scale: PCA is nested (one randomized fit at r_max per pair fold,
    the measured fit's CPU time x TIME_MARGIN each) and, like the random projection, scores
    at most dim_range's distinct r per pipeline at the measured time of a trial's score
    (x TIME_MARGIN); each VAE trial stops at its wall-clock budget (selection.trial_minutes),
    so the job declares at least searches x trials x it; repr_fit's VAE may run
    vae.max_epochs epochs of the measured epoch time per seed, and one repr_fit job fits
    every pipeline's candidate."""
    spec = _paper_config()
    selection, searches = spec["selection"], len(spec["pipelines"])
    low, high = selection["dim_range"]
    scored = min(selection["trials"], high - low + 1)
    # as_published scores with the paper's variant of objective perturbation, corrected cms11
    score = scored * sum(_trial_seconds(v) for v in ("paper", "cms11")[:searches])
    pca = _job(paper_jobs, "repr_search", "pca")
    fit = _row("repr_fit", "representation=pca")
    assert pca["mem_mb"] >= MEM_MARGIN * float(fit["peak_rss_mb"]), pca
    fit_minutes = TIME_MARGIN * float(fit["cpu_s"]) / 60
    score_minutes = TIME_MARGIN * score / 60
    assert pca["runtime"] >= selection["pair_folds"] * fit_minutes + score_minutes, pca
    projection = _job(paper_jobs, "repr_search", "random_projection")
    assert projection["runtime"] >= score_minutes, projection
    # the equal-dimension control (PCA at the VAE's r) is a PCA fit too
    control = _job(paper_jobs, "repr_fit", "pca_vae_dim")
    assert control["mem_mb"] >= MEM_MARGIN * float(fit["peak_rss_mb"]), control
    assert control["runtime"] >= searches * fit_minutes, control
    vae = _job(paper_jobs, "repr_search_vae", "vae")
    assert selection["trial_minutes"] > 0
    assert vae["runtime"] >= searches * selection["vae_trials"] * selection["trial_minutes"]
    epoch_s = float(_row("repr_fit_vae", "representation=vae")["per_fit_s"])
    fit_vae = _job(paper_jobs, "repr_fit_vae", "vae")
    need = TIME_MARGIN * spec["vae"]["max_epochs"] * epoch_s / 60
    assert fit_vae["runtime"] >= searches * spec["seeds"] * need, (fit_vae, need)


def test_clipping_runtime_covers_every_setting(paper_jobs):
    """repr_clipping_weights: at most methods x ε settings per pipeline, each at the slower
    of the two measured noise laws (x TIME_MARGIN)."""
    spec = _paper_config()
    per_setting = max(float(r["per_fit_s"]) for r in rows()
                      if r["rule"] == "repr_clipping_weights")
    methods = (len(spec["representations"]) + 2 + len(spec["baselines"]))  # + 2 controls
    settings = len(spec["pipelines"]) * methods * len(spec["drug"]["epsilons"])
    (job,) = paper_jobs["repr_clipping_weights"]
    assert job["runtime"] >= TIME_MARGIN * settings * per_setting / 60, job


def test_vae_jobs_declare_the_memory_of_the_widest_allowed_candidate(paper_jobs):
    """Paper mode caps the VAE's width (the authors' 10,000 x r would need terabytes), and
    the VAE jobs declare MEM_MARGIN x the widest allowed candidate's training memory: the
    measured fit's rest (its peak less its weights) plus 16 bytes a weight of that width."""
    from dprepro.representations.vae_size import vae_hidden_width, vae_training_mb

    spec = _paper_config()
    cap = spec["vae"]["max_hidden_width"]
    assert cap is not None
    measured = _row("repr_fit_vae", "representation=vae")
    n_features = int(measured["input"].split(" x ")[1].replace(",", ""))
    base = float(measured["peak_rss_mb"]) - vae_training_mb(n_features, 1280, 1, base_mb=0)
    width = vae_hidden_width(max(spec["selection"]["dim_range"]),
                             max(spec["vae"]["width_multipliers"]), cap)
    need = MEM_MARGIN * vae_training_mb(n_features, width, max(spec["vae"]["hidden_layers"]),
                                        base_mb=base)
    uncapped = vae_training_mb(n_features, vae_hidden_width(
        max(spec["selection"]["dim_range"]), max(spec["vae"]["width_multipliers"])),
        max(spec["vae"]["hidden_layers"]), base_mb=base)
    assert uncapped > 1e6  # MB: why the cap
    for rule in ("repr_search_vae", "repr_fit_vae"):
        job = _job(paper_jobs, rule, "vae")
        assert job["mem_mb"] >= need, (rule, job, need)


def test_the_gpu_epoch_recipe_times_an_epoch_on_the_device_it_names():
    """docs/cluster.md's first step (`bench_paper_scale.py --vae-device cuda`) as written, on
    the CPU (no GPU here) at a fiftieth of the size: it fits on the device named and prints
    the epoch."""
    import shlex
    import subprocess
    import sys

    from helpers import recipes

    text = recipes.section("docs/cluster.md", "Paper mode's VAE jobs on GPU nodes")
    (command,) = [block for block in recipes.code_blocks(text, "bash")
                  if "bench_paper_scale.py" in block]
    words = shlex.split(command)
    assert words[:2] == ["python", "benchmarks/bench_paper_scale.py"], command
    assert words[words.index("--vae-device") + 1] == "cuda", command
    args = ["cpu" if w == "cuda" else w for w in words[2:]]
    proc = subprocess.run([sys.executable, str(ROOT / words[1]), *args, "--scale", "0.02"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = proc.stdout.strip().splitlines()[-1]
    match = re.fullmatch(r"VAE epoch over (\d+) x (\d+), r = 20, 1 hidden layer of 1280, "
                         r"on cpu \(1 run\): ([0-9.e-]+) s", line)
    assert match, line
    assert (int(match.group(1)), int(match.group(2))) == (210, 354)
    assert 0 < float(match.group(3)) < 60
