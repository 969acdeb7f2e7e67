"""A real single-node SLURM and the two test runs through the profile, in the background.

Started when the session starts if it runs the whole suite, else after collection when a
selected test of tests/test_slurm.py needs them (conftest), so that SLURM's start and its
runs, which spend most of their time waiting for the scheduler, overlap with the unit
tests and the small configuration's local runs. The test module's fixture waits for the
result (``wait``) and stops SLURM after its tests
(``stop``; conftest also calls it at the end of the session).

Two runs through the profile: tests/data/slurm_fail (a rule that always fails), then,
once that one's last attempt is submitted, TARGETS of the small configuration, whose
tables test_slurm compares byte for byte with the session's local run of the small
configuration (conftest.small_run). Options added to the profile for the test only: status
checks start after 2 s instead of 40 s (speed), SLURM logs of successful jobs are kept (to
check them), and mem_mb is capped at the node's memory (a small test machine). Without
root, without local-up, when it fails, or while another session holds the
machine's SLURM, ``wait`` gives the reason to skip.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from .smallruns import SMALL

ROOT = Path(__file__).resolve().parents[2]
FAIL_SNAKEFILE = ROOT / "tests" / "data" / "slurm_fail" / "Snakefile"
PROFILE = ROOT / "workflow" / "profiles" / "slurm"
# the project's own one-node SLURM (tests/helpers/slurm/local-up, local-down)
SLURM_TOOLS = ROOT / "tests" / "helpers" / "slurm"
TEST_OPTIONS = ["--slurm-init-seconds-before-status-checks", "2", "--slurm-keep-successful-logs"]
RUN_TIMEOUT = 900  # s, the SLURM run
FAIL_TIMEOUT = 420  # s: the failing workflow gives up after about 70 s on an idle machine
SLURM_PACKAGES = ["munge", "slurm-wlm", "slurmctld", "slurmd", "slurm-client"]
# targets of the SLURM run: grouped jobs (ldp_simulate in ldp_sim, ldp_mse_table in
# ldp_summary, the rrr rules in rrr) and jobs outside any group (privacy_audit_table,
# repr_public_data); few, since every SLURM job costs seconds of submission and status
# polling whatever it computes (repr_summary's tables would need the whole repr_transfer
# study), and one VAE search, which asks SLURM for repr_transfer.vae.threads CPUs
# (cpus_per_task) beyond the profile's cores: 2 in the small configuration
VAE_SEARCH = "results/repr_transfer/candidates/as_published/vae.csv"
TARGETS: list[str] = ["ldp_mse_table", "rrr_logrank_table", "privacy_audit_table",
                      "repr_public_data", VAE_SEARCH]
# one session at a time may use the machine's SLURM: another one's local-down
# would stop this one's jobs
LOCK = Path("/tmp/dprepro-slurm-test.lock")
LOCK_WAIT = 900  # s
JOB_ID = re.compile(r"submitted with SLURM jobid (\d+)")


def profile() -> dict:
    return yaml.safe_load((PROFILE / "config.yaml").read_text())


def snakemake_cmd(*args, snakefile=ROOT / "Snakefile") -> list[str]:
    return [sys.executable, "-m", "snakemake", "--snakefile", str(snakefile), *args]


def slurm_tool(name: str) -> Path | None:
    path = SLURM_TOOLS / name
    return path if path.is_file() else None


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
    """Which of the packages local-up installs are installed (Debian)."""
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


class _Skip(Exception):
    """SLURM cannot run here; the message says why."""


class _Session:
    """SLURM up, the two runs, SLURM down; the setup and the runs in a thread."""

    def __init__(self, base: Path):
        self.base = base
        self.result: dict | None = None
        self.skip: str | None = None
        self.error: BaseException | None = None
        self.lock = None
        self.started: list[Run] = []
        self.starting: subprocess.Popen | None = None
        self.down: Path | None = None
        self.packages_before: set[str] = set()
        self.stopped = False
        self.thread = threading.Thread(target=self._main, name="slurm-test-runs", daemon=True)
        self.thread.start()

    def _main(self):
        try:
            self.result = self._run()
        except _Skip as reason:
            self.skip = str(reason)
        except BaseException as error:  # re-raised in the test's fixture
            self.error = error

    def _acquire_lock(self):
        lock = LOCK.open("a")
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.lock = lock
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    lock.close()
                    raise _Skip(f"another test session used this machine's SLURM ({LOCK}) "
                                f"for more than {LOCK_WAIT} s") from None
                time.sleep(2)

    def _run(self) -> dict:
        if os.geteuid() != 0:
            raise _Skip("starting a local SLURM needs root (local-up installs and runs "
                        "slurmctld, slurmd, munged)")
        up, down = slurm_tool("local-up"), slurm_tool("local-down")
        if up is None or down is None:
            raise _Skip(f"local-up/local-down not found in {SLURM_TOOLS}")
        self._acquire_lock()
        self.down = down
        dirs = {name: self.base / name for name in ("slurm", "fail")}
        for path in dirs.values():
            path.mkdir()
        self.packages_before = installed_packages()
        clock = time.monotonic()
        self.starting = subprocess.Popen([str(up)], stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True)
        try:
            output, _ = self.starting.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            self.starting.kill()
            self.starting.communicate()
            raise _Skip("local-up did not finish within 600 s") from None
        if self.starting.returncode != 0:
            raise _Skip(f"local-up failed (rc {self.starting.returncode}): "
                        f"{output[-1500:]}")
        up_wall = time.monotonic() - clock
        # a rule may ask for more memory than this test machine has
        options = [*TEST_OPTIONS, "--resources", f"mem_mb={node_memory_mb()}"]
        # The failing workflow first; the SLURM run starts once the last attempt is
        # submitted, so that no attempt waits for a CPU behind it.
        failing = Run("fail", snakemake_cmd("--profile", str(PROFILE), *options,
                                            "--directory", str(dirs["fail"]),
                                            snakefile=FAIL_SNAKEFILE),
                      self.base, FAIL_TIMEOUT)
        self.started.append(failing)
        attempts = profile()["retries"] + 1
        while len(failing.job_ids()) < attempts and not failing.poll():
            time.sleep(0.5)
        cluster = Run("slurm", snakemake_cmd(*TARGETS, "--profile", str(PROFILE), *options,
                                             "--configfile", str(SMALL),
                                             "--directory", str(dirs["slurm"])),
                      self.base, RUN_TIMEOUT)
        self.started.append(cluster)
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
        walls = ", ".join(f"{run.name} {run.wall:.1f} s" for run in self.started)
        return {"dirs": dirs, "slurm": cluster, "fail": failing, "states": states,
                "timing": f"local-up {up_wall:.1f} s; wall times: {walls}"}

    def stop(self):
        """Stop the runs and SLURM, leave the machine as found (once)."""
        if self.stopped:
            return
        self.stopped = True
        for run in self.started:
            run.kill()
        self.thread.join(timeout=60)
        if self.starting is not None and self.starting.poll() is None:
            self.starting.wait(timeout=600)  # let SLURM finish starting, then stop it
        if self.lock is None:  # never got as far as starting SLURM
            return
        ids = [job for run in self.started for job in run.job_ids()]
        if ids and shutil.which("scancel"):
            subprocess.run(["scancel", *ids], capture_output=True, timeout=60)
        if self.down is not None:
            subprocess.run([str(self.down)], capture_output=True, timeout=180)
        # Leave the machine as found: with SLURM installed but stopped, every later
        # `snakemake` start waits ~10 s (the slurm plugin asks `scontrol show config`).
        new = sorted(installed_packages() - self.packages_before)
        if new:
            subprocess.run(["apt-get", "purge", "-y", "-q", *new], capture_output=True,
                           timeout=300, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        self.lock.close()  # releases the lock


_SESSION: _Session | None = None


def start(base: Path) -> None:
    """Start SLURM and the two runs in the background (once per test session)."""
    global _SESSION
    if _SESSION is None:
        _SESSION = _Session(base)


def started() -> bool:
    return _SESSION is not None


def wait(base: Path | None = None, timeout: float = LOCK_WAIT + 600 + RUN_TIMEOUT + 60):
    """The runs' result: a dict, or a str saying why SLURM could not run here."""
    if _SESSION is None:
        start(base)
    _SESSION.thread.join(timeout=timeout)
    if _SESSION.thread.is_alive():
        raise AssertionError(f"the SLURM runs gave no answer within {timeout:.0f} s")
    if _SESSION.error is not None:
        raise _SESSION.error
    return _SESSION.skip if _SESSION.skip is not None else _SESSION.result


def join() -> None:
    """Block until the SLURM session's runs have ended (at once if none started); their
    outcome is :func:`wait`'s to report."""
    if _SESSION is not None:
        _SESSION.thread.join()


def stop() -> None:
    if _SESSION is not None:
        _SESSION.stop()
