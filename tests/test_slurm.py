"""Cluster execution on a real single-node SLURM through workflow/profiles/slurm.

The module starts SLURM with slurm-local-up (Debian packages, needs root) and always stops
it with slurm-local-down, also when a test fails; packages that slurm-local-up installed
are purged again (installed but stopped, SLURM slows every later `snakemake` start by
~10 s). Two runs through the profile: tests/data/slurm_fail (a rule that always fails),
then, once that one's last attempt is submitted, TARGETS of the small configuration, whose
tables are compared byte for byte with the session's local run of the small configuration
(conftest.small_run). TARGETS are few: grouped jobs of the groups ldp_sim, ldp_summary and
rrr (repr_summary's tables would need the whole repr_transfer study) and single jobs of
rules outside any group; every SLURM job costs seconds of submission and status polling
whatever it computes. Options added to
the profile for the test only: status checks start after 2 s instead of 40 s (speed), SLURM
logs of successful jobs are kept (to check them), and mem_mb is capped at the node's memory
(a small test machine). Without root, without slurm-local-up, when it fails, or while
another session holds the machine's SLURM, the SLURM tests skip.
"""

import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "tests" / "data" / "small_config.yaml"
FAIL_SNAKEFILE = ROOT / "tests" / "data" / "slurm_fail" / "Snakefile"
PROFILE = ROOT / "workflow" / "profiles" / "slurm"
TOOL_DIRS = [ROOT.parent / "shared" / "tools", Path("/work/shared/tools")]
TEST_OPTIONS = ["--slurm-init-seconds-before-status-checks", "2", "--slurm-keep-successful-logs"]
RUN_TIMEOUT = 900  # s, the SLURM run
FAIL_TIMEOUT = 420  # s: the failing workflow gives up after about 70 s on an idle machine
SLURM_PACKAGES = ["munge", "slurm-wlm", "slurmctld", "slurmd", "slurm-client"]
# targets of the SLURM run: grouped jobs (ldp_simulate in ldp_sim, ldp_mse_table in
# ldp_summary, the rrr rules in rrr) and jobs outside any group (privacy_audit_table,
# repr_public_data)
TARGETS: list[str] = ["ldp_mse_table", "rrr_logrank_table", "privacy_audit_table",
                      "repr_public_data"]
# one session at a time may use the machine's SLURM: another one's slurm-local-down
# would stop this one's jobs
LOCK = Path("/tmp/dprepro-slurm-test.lock")
LOCK_WAIT = 900  # s
JOB_ID = re.compile(r"submitted with SLURM jobid (\d+)")
pytestmark = pytest.mark.workflow


def profile() -> dict:
    return yaml.safe_load((PROFILE / "config.yaml").read_text())


def snakemake_cmd(*args, snakefile=ROOT / "Snakefile") -> list[str]:
    return [sys.executable, "-m", "snakemake", "--snakefile", str(snakefile), *args]


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


# --- a real SLURM ---------------------------------------------------------------------------

def slurm_tool(name: str) -> Path | None:
    for directory in TOOL_DIRS:
        if (directory / name).is_file():
            return directory / name
    return None


class Run:
    """A command started in its own process group, output to a file."""

    def __init__(self, name, cmd, log_dir: Path, timeout: float):
        self.name, self.cmd, self.timeout = name, cmd, timeout
        self.log = log_dir / f"{name}.log"
        self.started = time.monotonic()
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True,
                                         cwd=ROOT, start_new_session=True)
        self.wall = None
        self.timed_out = False

    def poll(self) -> bool:
        """True once finished; kills the run when its time is up."""
        if self.wall is None:
            if self.proc.poll() is None:
                if time.monotonic() - self.started < self.timeout:
                    return False
                self.timed_out = True
                self.kill()
            self.wall = time.monotonic() - self.started
        return True

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    @property
    def output(self) -> str:
        return self.log.read_text(errors="replace")

    @property
    def returncode(self):
        return self.proc.returncode

    def job_ids(self) -> list[str]:
        return JOB_ID.findall(self.output)

    def describe(self) -> str:
        state = "timed out" if self.timed_out else f"rc {self.returncode}"
        return f"{self.name} ({state}, {self.wall:.0f} s):\n{self.output[-4000:]}"


def installed_packages() -> set[str]:
    """Which of the packages slurm-local-up installs are installed (Debian)."""
    if shutil.which("dpkg-query") is None:
        return set()
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Status}\\n", *SLURM_PACKAGES],
                         capture_output=True, text=True, timeout=60).stdout
    return {line.split()[0] for line in out.splitlines() if line.endswith(" installed")}


def squeue_states(ids: list[str]) -> dict[str, str]:
    """State of each job squeue still knows (MinJobAge=300: finished jobs for 5 minutes)."""
    if not ids:
        return {}
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i %T", "-j", ",".join(ids)],
                         capture_output=True, text=True, timeout=60).stdout
    return dict(line.split() for line in out.splitlines() if line.strip())


def node_memory_mb() -> int:
    out = subprocess.run(["scontrol", "show", "node", "-o"], capture_output=True, text=True,
                         timeout=60).stdout
    return min(int(m) for m in re.findall(r"RealMemory=(\d+)", out))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, request):
    """SLURM up; the two runs (and the session's local one); SLURM down (always)."""
    if os.geteuid() != 0:
        pytest.skip("starting a local SLURM needs root (slurm-local-up installs and runs "
                    "slurmctld, slurmd, munged)")
    up, down = slurm_tool("slurm-local-up"), slurm_tool("slurm-local-down")
    if up is None or down is None:
        pytest.skip(f"slurm-local-up/slurm-local-down not found in {[str(d) for d in TOOL_DIRS]}")
    lock = LOCK.open("a")
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                lock.close()
                pytest.skip(f"another test session used this machine's SLURM ({LOCK}) for "
                            f"more than {LOCK_WAIT} s")
            time.sleep(2)
    base = tmp_path_factory.mktemp("slurm")
    dirs = {name: base / name for name in ("slurm", "fail")}
    for path in dirs.values():
        path.mkdir()
    packages_before = installed_packages()
    started, starting = [], None
    try:
        clock = time.monotonic()
        starting = subprocess.Popen([str(up)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True)
        # the local reference run needs no cluster: it overlaps with starting SLURM (and is
        # already there when another module made it)
        dirs["local"] = request.getfixturevalue("small_run")
        try:
            output, _ = starting.communicate(timeout=max(1.0, 600 - (time.monotonic() - clock)))
        except subprocess.TimeoutExpired:
            starting.kill()
            starting.communicate()
            pytest.skip("slurm-local-up did not finish within 600 s")
        if starting.returncode != 0:
            pytest.skip(f"slurm-local-up failed (rc {starting.returncode}): {output[-1500:]}")
        up_wall = time.monotonic() - clock
        # a rule may ask for more memory than this test machine has
        options = [*TEST_OPTIONS, "--resources", f"mem_mb={node_memory_mb()}"]
        # The failing workflow first; the SLURM run starts once the last attempt is
        # submitted, so that no attempt waits for a CPU behind it.
        failing = Run("fail", snakemake_cmd("--profile", str(PROFILE), *options,
                                            "--directory", str(dirs["fail"]),
                                            snakefile=FAIL_SNAKEFILE),
                      base, FAIL_TIMEOUT)
        started.append(failing)
        attempts = profile()["retries"] + 1
        while len(failing.job_ids()) < attempts and not failing.poll():
            time.sleep(0.5)
        cluster = Run("slurm", snakemake_cmd(*TARGETS, "--profile", str(PROFILE), *options,
                                             "--configfile", str(SMALL),
                                             "--directory", str(dirs["slurm"])),
                      base, RUN_TIMEOUT)
        started.append(cluster)
        # squeue forgets a finished job after MinJobAge (300 s), and a run can last longer:
        # ask every few seconds while it runs and keep each job's last state seen
        states, seen, asked = {}, {"fail": {}, "slurm": {}}, 0.0
        while len(states) < 2:
            if time.monotonic() - asked > 5:
                for run in (failing, cluster):
                    if run.name not in states:
                        seen[run.name].update(squeue_states(run.job_ids()))
                asked = time.monotonic()
            for run in (failing, cluster):
                if run.name not in states and run.poll():
                    seen[run.name].update(squeue_states(run.job_ids()))
                    states[run.name] = seen[run.name]
            time.sleep(0.5)
        print(f"\nslurm-local-up {up_wall:.1f} s; wall times: "
              + ", ".join(f"{run.name} {run.wall:.1f} s" for run in started))
        yield {"dirs": dirs, "slurm": cluster, "fail": failing, "states": states}
    finally:
        if starting is not None and starting.poll() is None:
            starting.wait(timeout=600)  # a local run that failed: let SLURM finish starting
        for run in started:
            run.kill()
        ids = [job for run in started for job in run.job_ids()]
        if ids and shutil.which("scancel"):
            subprocess.run(["scancel", *ids], capture_output=True, timeout=60)
        subprocess.run([str(down)], capture_output=True, timeout=180)
        # Leave the machine as found: with SLURM installed but stopped, every later
        # `snakemake` start waits ~10 s (the slurm plugin asks `scontrol show config`).
        new = sorted(installed_packages() - packages_before)
        if new:
            subprocess.run(["apt-get", "purge", "-y", "-q", *new], capture_output=True,
                           timeout=300, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        lock.close()  # releases the lock


def tables(work: Path) -> list[Path]:
    return sorted((work / "results").rglob("tables/*.csv"))


def test_small_config_runs_through_slurm(runs):
    run = runs["slurm"]
    assert not run.timed_out and run.returncode == 0, run.describe()
    ids = run.job_ids()
    assert ids, run.describe()
    logs = {path.stem for path in (runs["dirs"]["slurm"] / ".snakemake" / "slurm_logs").rglob(
        "*.log")}
    assert set(ids) <= logs, (ids, logs)
    # squeue, polled while the run went on, last saw every job as COMPLETED
    assert runs["states"]["slurm"] == dict.fromkeys(ids, "COMPLETED"), runs["states"]
    # groups from the profile: fewer SLURM jobs than jobs
    if profile().get("groups"):
        assert "Group job" in run.output


def test_slurm_tables_are_byte_identical_to_local(runs):
    assert runs["slurm"].returncode == 0, runs["slurm"].describe()
    local, cluster = runs["dirs"]["local"], runs["dirs"]["slurm"]
    audit = sorted((cluster / "results" / "audit").glob("*.csv"))
    made = [p.relative_to(cluster) for p in [*tables(cluster), *audit]]
    # TARGETS' tables: those of two studies and the audit's
    assert {p.parts[1] for p in made} >= {"ldp_indicators", "rrr_survival", "audit"}, made
    for path in made:
        assert (local / path).is_file(), f"{path}: made by SLURM, not by the local run"
        assert (cluster / path).read_bytes() == (local / path).read_bytes(), path


def test_failing_rule_is_retried_then_reported(runs):
    run = runs["fail"]
    assert not run.timed_out, f"no answer within {FAIL_TIMEOUT} s: {run.describe()}"
    assert run.returncode != 0, run.describe()
    assert "Error in rule always_fails" in run.output, run.describe()
    attempts = (runs["dirs"]["fail"] / "attempts.txt").read_text().split()
    ids = run.job_ids()
    assert len(attempts) == profile()["retries"] + 1, (attempts, run.describe())
    # every attempt ran as its own SLURM job and left its SLURM log
    assert attempts == ids, (attempts, ids)
    assert runs["states"]["fail"] == dict.fromkeys(ids, "FAILED"), runs["states"]
    logs = runs["dirs"]["fail"] / ".snakemake" / "slurm_logs" / "rule_always_fails"
    assert sorted(p.stem for p in logs.glob("*.log")) == sorted(ids)
