"""Cluster execution on a real single-node SLURM through workflow/profiles/slurm.

SLURM and the test runs through the profile are started in the background after
collection (tests/helpers/slurmruns.py says how and why); the module's fixture waits for
them and always stops SLURM after the module's tests, also when a test fails. Packages
that tests/helpers/slurm/local-up installed are purged again (installed but stopped,
SLURM slows every later `snakemake` start by ~10 s). Without root, when local-up fails,
or while another session holds the machine's SLURM, the SLURM tests skip.
"""

import re
import shlex
from pathlib import Path

import pytest
import yaml

from helpers import background, recipes, slurmruns, snakerun
from helpers.slurmruns import FAIL_TIMEOUT, profile

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.workflow


# --- checks of the profile that need no cluster -------------------------------------------

def test_profile_settings():
    settings = profile()
    assert settings["executor"] == "slurm"
    assert settings["slurm-status-command"] == "squeue"
    assert settings["retries"] >= 1
    assert {"slurm_partition", "slurm_account", "mem_mb", "runtime"} <= set(
        settings["default-resources"])


def rule_blocks():
    sources = [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
    for source in sources:
        for block in re.split(r"\n(?=rule |checkpoint )", source.read_text()):
            match = re.match(r"(?:rule|checkpoint) (\w+):", block)
            if match:
                yield match.group(1), block


def test_profile_groups_name_existing_rules():
    """Snakemake silently ignores a group for a rule name that does not exist."""
    rules = {name for name, _ in rule_blocks()}
    settings = profile()
    groups = settings.get("groups", {})
    assert set(groups) <= rules, sorted(set(groups) - rules)
    assert set(settings.get("group-components", {})) <= set(groups.values())


def test_every_cluster_rule_declares_threads_mem_and_runtime():
    checked = 0
    for name, block in rule_blocks():
        if re.search(r"^\s+localrule: True", block, re.M):
            continue
        checked += 1
        for needed in (r"^\s+threads:", r"^\s+mem_mb=", r"^\s+runtime="):
            assert re.search(needed, block, re.M), f"rule {name} lacks {needed.split('+')[-1]}"
    assert checked >= 5


# Every shipped profile planned against every shipped configuration: the SLURM profile's
# groups must stay convex in the DAG (a rule added between two grouped rules breaks the
# plan: "depends on rule(s) ... from outside the group"), which only planning the whole
# DAG shows; a dry run needs no cluster. `--profile` adds the SLURM profile on top of the
# workflow's default profile (profiles/default), `--workflow-profile` replaces it: both are
# documented ways to submit.
SHIPPED_CONFIGS = ["config/config.yaml", "config/full.yaml", "config/paper.yaml"]
PROFILE_PLANS = [("--profile", configfile) for configfile in SHIPPED_CONFIGS] + [
    ("--workflow-profile", "config/config.yaml")]


def _plan_name(option: str, configfile: str) -> str:
    return f"slurm-plan:{option}:{configfile}"


for _option, _configfile in PROFILE_PLANS:
    background.register(_plan_name(_option, _configfile))(
        lambda folder, option=_option, configfile=_configfile: snakerun.run(
            slurmruns.snakemake_cmd("-n", option, str(slurmruns.PROFILE),
                                    "--configfile", str(ROOT / configfile),
                                    "--directory", str(folder))[3:],
            cwd=ROOT, timeout=600))


@pytest.mark.parametrize("option,configfile", [
    pytest.param(option, configfile, marks=pytest.mark.background(_plan_name(option, configfile)),
                 id=f"{option.lstrip('-')}-{Path(configfile).stem}")
    for option, configfile in PROFILE_PLANS])
def test_profile_plans_every_shipped_configuration(option, configfile, tmp_path):
    proc = background.result(_plan_name(option, configfile), tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{option} {slurmruns.PROFILE} {configfile}:\n{output[-4000:]}"
    # every group of the profile is formed (a group whose rules left the DAG is dead text)
    formed = set(re.findall(r"Group job (\w+) \(", output))
    assert set(profile()["groups"].values()) <= formed, sorted(
        set(profile()["groups"].values()) - formed)
    assert "This was a dry-run" in output
    # the VAE jobs ask SLURM for vae.threads CPUs (their fits use that many), although the
    # profile's cores caps their threads; the other jobs of those rules for one
    vae_threads = yaml.safe_load((ROOT / configfile).read_text() or "{}").get(
        "repr_transfer", {}).get("vae", {}).get("threads", 1)
    asked = {}
    for block in re.split(r"\n(?=rule \w+:)", output):
        rule = re.match(r"rule (repr_search|repr_fit)(?:_vae)?:", block)
        representation = re.search(r"^\s+wildcards: representation=(\w+)", block, re.M)
        resources = re.search(r"^\s+resources: (.*)$", block, re.M)
        if rule and representation and resources:
            cpus = re.search(r"cpus_per_task=(\d+)", resources.group(1))
            asked[rule.group(1), representation.group(1)] = int(cpus.group(1))
    vae = ("vae", "supervised_vae", "vae_svae_dim")
    assert {key for key in asked if key[1] in vae} and {key for key in asked
                                                          if key[1] not in vae}, asked
    assert asked == {key: vae_threads if key[1] in vae else 1 for key in asked}, asked


# docs/cluster.md's command that sends paper mode's VAE jobs to GPU nodes, planned as written
# (plus -n and a scratch --directory): the VAE jobs, and only they, carry its resources
GPU_RECIPE = "slurm-plan:gpu-recipe"


def _gpu_section() -> str:
    return recipes.section("docs/cluster.md", "Paper mode's VAE jobs on GPU nodes")


def gpu_overlay() -> dict:
    """The recipe's overlay (its YAML block)."""
    (block,) = recipes.code_blocks(_gpu_section(), "yaml")
    return yaml.safe_load(block)


def gpu_recipe(overlay: Path | None = None) -> list[str]:
    """The arguments of the recipe's snakemake command, paths in the checkout made absolute
    and the overlay's name (gpu.yaml) replaced by ``overlay``."""
    (command,) = [block for block in recipes.code_blocks(_gpu_section(), "bash")
                  if block.lstrip().startswith("snakemake ")]
    words = shlex.split(command.replace("\\\n", " "))
    assert words[0] == "snakemake", command
    assert "gpu.yaml" in words, command
    return [str(overlay) if overlay is not None and w == "gpu.yaml"
            else str(ROOT / w) if (ROOT / w).exists() and not w.startswith("-") else w
            for w in words[1:]]


def gpu_recipe_resources() -> dict[str, dict[str, str]]:
    """What the recipe's ``--set-resources`` asks of each rule (``rule:resource=value``)."""
    asked: dict[str, dict[str, str]] = {}
    words = gpu_recipe()
    for word in words[words.index("--set-resources") + 1:]:
        if word.startswith("-"):
            break
        rule, setting = word.split(":", 1)
        key, value = setting.split("=", 1)
        asked.setdefault(rule, {})[key] = value
    return asked


@background.register(GPU_RECIPE)
def _plan_gpu_recipe(folder: Path):
    overlay = folder.parent / f"{folder.name}-gpu.yaml"
    overlay.write_text(yaml.safe_dump(gpu_overlay()))
    return snakerun.run([*gpu_recipe(overlay), "-n", "--directory", str(folder)], cwd=ROOT,
                        timeout=600)


def planned_resources(output: str) -> list[tuple[str, str, dict]]:
    """(rule, representation or "", resources) of each job of a dry run's listing."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        found = re.search(r"^\s+resources: (.*)$", block, re.M)
        if rule and found:
            representation = re.search(r"^\s+wildcards: .*representation=(\w+)", block, re.M)
            values = dict(item.split("=", 1) for item in found.group(1).split(", ")
                          if "=" in item)
            jobs.append((rule.group(1), representation.group(1) if representation else "",
                         values))
    return jobs


@pytest.mark.background(GPU_RECIPE)
def test_the_gpu_recipe_sends_the_vae_jobs_and_only_them_to_gpus(tmp_path):
    proc = background.result(GPU_RECIPE, tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert "This was a dry-run" in output
    # the overlay (planned with the command: the schema accepted it) makes a node without a
    # GPU fail the VAE jobs instead of training on its CPU
    assert gpu_overlay() == {"repr_transfer": {"vae": {"device": "cuda"}}}
    asked = gpu_recipe_resources()
    assert set(asked) == {"repr_search_vae", "repr_fit_vae"}
    assert all({"gpu", "slurm_partition", "runtime"} <= set(v) for v in asked.values())
    default = profile()["default-resources"]["slurm_partition"]
    seen = {}
    for rule, representation, resources in planned_resources(output):
        if rule in asked:
            assert {k: resources.get(k) for k in asked[rule]} == asked[rule], (rule, resources)
        else:
            assert "gpu" not in resources, (rule, representation, resources)
            assert resources.get("slurm_partition") == default, (rule, resources)
        if rule.startswith(("repr_search", "repr_fit")):
            seen.setdefault(rule, set()).add(representation)
    # the VAE models (and their control) are the _vae rules' jobs; PCA and the random
    # projection (and PCA's control) stay on the CPU rules
    assert seen == {"repr_search_vae": {"vae", "supervised_vae"},
                    "repr_fit_vae": {"vae", "supervised_vae", "vae_svae_dim"},
                    "repr_search": {"pca", "random_projection"},
                    "repr_fit": {"pca", "random_projection", "pca_vae_dim"}}, seen


def test_the_slurm_plugin_asks_sbatch_for_what_the_gpu_recipe_sets():
    """What docs/cluster.md says the plugin does with a VAE job's resources under the recipe:
    `gpu=1` becomes `--gpus=1`, the runtime `-t`, and the job keeps its CPUs and memory
    (the plugin's sbatch string, from its own functions; the partition comes from the
    executor's `-p`, which needs a cluster)."""
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    asked = {rule: {k: int(v) if v.isdigit() else v for k, v in settings.items()}
             for rule, settings in gpu_recipe_resources().items()}

    class Resources(dict):
        __getattr__ = dict.__getitem__

    class Job:
        threads = 8
        resources = Resources(mem_mb=8506, cpus_per_task=8, **asked["repr_fit_vae"])

    params = {"run_uuid": "u", "slurm_logfile": "log", "comment_str": "c", "account": "",
              "partition": "", "workdir": "/w"}
    call = (get_submit_command(Job(), params) + set_gres_string(Job())).split()
    assert f"--gpus={asked['repr_fit_vae']['gpu']}" in call, call
    assert call[call.index("-t") + 1] == str(asked["repr_fit_vae"]["runtime"]), call
    assert "--cpus-per-task=8" in call and call[call.index("--mem") + 1] == "8506", call
    # a job without the recipe's resources asks for no GPU
    Job.resources = Resources(mem_mb=2000, runtime=30)
    call = (get_submit_command(Job(), params) + set_gres_string(Job())).split()
    assert not any(word.startswith("--gpus") for word in call), call


# --- a real SLURM ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def slurm_runs(tmp_path_factory):
    """The two runs through SLURM (started in the background); SLURM down afterwards."""
    try:
        base = None if slurmruns.started() else tmp_path_factory.mktemp("slurm")
        result = slurmruns.wait(base)
        if isinstance(result, str):
            pytest.skip(result)
        print(f"\n{result['timing']}")
        yield result
    finally:
        slurmruns.stop()


def tables(work: Path) -> list[Path]:
    return sorted((work / "results").rglob("tables/*.csv"))


def test_small_config_runs_through_slurm(slurm_runs):
    run = slurm_runs["slurm"]
    assert not run.timed_out and run.returncode == 0, run.describe()
    ids = run.job_ids()
    assert ids, run.describe()
    slurm_logs = slurm_runs["dirs"]["slurm"] / ".snakemake" / "slurm_logs"
    logs = {path.stem for path in slurm_logs.rglob("*.log")}
    assert set(ids) <= logs, (ids, logs)
    # squeue, polled while the run went on, last saw every job as COMPLETED
    states = slurm_runs["states"]
    assert states["slurm"] == dict.fromkeys(ids, "COMPLETED"), states
    # groups from the profile: fewer SLURM jobs than jobs
    if profile().get("groups"):
        assert "Group job" in run.output


def test_a_vae_job_gets_its_threads_cpus_and_the_local_numbers(slurm_runs, small_run):
    """The VAE search job asks SLURM for vae.threads (2) CPUs although the profile caps
    threads at 1: inside its SLURM job Snakemake gives it 2 cores (no oversubscription
    warning), torch runs 2 threads, and its candidates are the local run's to the byte."""
    run_dir = slurm_runs["dirs"]["slurm"]
    log = (run_dir / "results" / "logs" / "repr_search" / "vae.log").read_text()
    assert "VAE fits on cpu with 2 torch CPU thread(s) (vae.threads)" in log, log[-2000:]
    assert "oversubscribed" not in log, log[-2000:]
    assert ((run_dir / slurmruns.VAE_SEARCH).read_bytes()
            == (small_run / slurmruns.VAE_SEARCH).read_bytes())


def test_slurm_tables_are_byte_identical_to_local(slurm_runs, small_run):
    assert slurm_runs["slurm"].returncode == 0, slurm_runs["slurm"].describe()
    local, cluster = small_run, slurm_runs["dirs"]["slurm"]
    audit = sorted((cluster / "results" / "audit").glob("*.csv"))
    made = [p.relative_to(cluster) for p in [*tables(cluster), *audit]]
    # TARGETS' tables: those of two studies and the audit's
    assert {p.parts[1] for p in made} >= {"ldp_indicators", "rrr_survival", "audit"}, made
    for path in made:
        assert (local / path).is_file(), f"{path}: made by SLURM, not by the local run"
        assert (cluster / path).read_bytes() == (local / path).read_bytes(), path


def test_failing_rule_is_retried_then_reported(slurm_runs):
    run = slurm_runs["fail"]
    assert not run.timed_out, f"no answer within {FAIL_TIMEOUT} s: {run.describe()}"
    assert run.returncode != 0, run.describe()
    assert "Error in rule always_fails" in run.output, run.describe()
    attempts = (slurm_runs["dirs"]["fail"] / "attempts.txt").read_text().split()
    ids = run.job_ids()
    assert len(attempts) == profile()["retries"] + 1, (attempts, run.describe())
    # every attempt ran as its own SLURM job and left its SLURM log
    assert attempts == ids, (attempts, ids)
    states = slurm_runs["states"]
    assert states["fail"] == dict.fromkeys(ids, "FAILED"), states
    logs = slurm_runs["dirs"]["fail"] / ".snakemake" / "slurm_logs" / "rule_always_fails"
    assert sorted(p.stem for p in logs.glob("*.log")) == sorted(ids)
