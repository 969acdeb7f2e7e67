"""benchmarks/critical_path.py: a run's jobs and its critical path, read off its Snakemake log."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from helpers.recipes import planned_jobs

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("critical_path",
                                              ROOT / "benchmarks" / "critical_path.py")
critical_path = importlib.util.module_from_spec(spec)
sys.modules["critical_path"] = critical_path  # its dataclass looks its module up there
spec.loader.exec_module(critical_path)


def _log(jobs: list[tuple[int, str, str, str, int, int]]) -> str:
    """A log in Snakemake's format: (job id, rule, inputs, outputs, start s, finish s)."""
    lines = []
    for job, rule, inputs, outputs, start, _ in jobs:
        lines += [f"[Mon Dec  7 10:00:{start:02d} 2026]", f"rule {rule}:",
                  *([f"    input: {inputs}"] if inputs else []), f"    output: {outputs}",
                  f"    jobid: {job}", "    resources: tmpdir=/tmp"]
    for job, *_, finish in sorted(jobs, key=lambda j: j[-1]):
        lines += [f"[Mon Dec  7 10:00:{finish:02d} 2026]", f"Finished jobid: {job} (Rule: x)"]
    return "\n".join(lines) + "\n"


def test_the_critical_path_is_the_longest_chain_of_dependent_jobs():
    # a (2 s) feeds b (10 s) and c (3 s); d (1 s) reads b's and c's outputs; e (20 s) is alone
    text = _log([(1, "a", "", "a.csv", 0, 2), (2, "b", "a.csv", "b.csv", 2, 12),
                 (3, "c", "a.csv", "c.csv, c.csv.prov.json", 2, 5),
                 (4, "d", "b.csv, c.csv", "d.png", 12, 13), (5, "e", "", "e.csv", 0, 20)])
    jobs = critical_path.read_jobs(text)
    assert [jobs[j].seconds for j in sorted(jobs)] == [2, 10, 3, 1, 20]
    assert critical_path.critical_path(jobs) == (20.0, [5])
    assert critical_path.wall_bound(jobs, 1) == 36 and critical_path.wall_bound(jobs, 4) == 20
    # two cores, longest chain first: a and e at 0; b at 2 (c waits for a core until 12);
    # d after c, at 15: e's 20 s end the run
    assert [critical_path.list_schedule(jobs, k) for k in (1, 2, 3)] == [36, 20, 20]
    del jobs[5]
    assert critical_path.critical_path(jobs) == (13.0, [1, 2, 4])
    # one core for a, b, c, d: 16 s; two: c beside b, d after b at 12
    assert [critical_path.list_schedule(jobs, k) for k in (1, 2)] == [16, 13]
    jobs[4].finish = None
    with pytest.raises(ValueError, match=r"without a start or a finish in the log: \[4\]"):
        critical_path.critical_path(jobs)
    with pytest.raises(ValueError, match="no job in the log"):
        critical_path.critical_path(critical_path.read_jobs("Building DAG of jobs...\n"))


def test_group_members_retries_and_jobs_printed_without_their_files():
    # a group job's members are printed one level deeper; a retried job keeps its last start
    text = _log([(1, "a", "", "a.csv", 0, 4), (2, "b", "a.csv", "b.csv", 4, 6)])
    nested = "\n".join(("    " + line if line.startswith(("rule", "    ")) else line)
                       for line in text.splitlines())
    assert {j: job.seconds for j, job in critical_path.read_jobs(nested).items()} == {1: 4, 2: 2}
    retried = text.replace("Finished jobid: 1", "[Mon Dec  7 10:00:09 2026]\nrule a:\n"
                           "    output: a.csv\n    jobid: 1\nFinished jobid: 1")
    assert critical_path.read_jobs(retried)[1].start.second == 9
    with pytest.raises(ValueError, match="job 7 finished but the log printed no rule"):
        critical_path.read_jobs(text + "Job 7: drawing the figure\nFinished jobid: 7 (Rule: f)\n")


@pytest.mark.workflow
def test_the_small_runs_log_gives_every_job_and_a_chain_of_dependent_jobs(small_run):
    """On the log Snakemake wrote for the small configuration's run: every job of its 'Job
    stats' once, each finished after it started; the critical path a chain of jobs each
    reading an output of the one before, no shorter than any job and no longer than the run."""
    logs = [path for path in sorted((small_run / ".snakemake" / "log").glob("*.snakemake.log"))
            if "steps (100%) done" in path.read_text() and "--cores 2" in path.read_text()]
    text = logs[0].read_text()
    jobs = critical_path.read_jobs(text)
    planned = planned_jobs(text)
    assert sorted(job.rule for job in jobs.values()) == sorted(
        rule for rule, count in planned.items() for _ in range(count))
    assert all(job.finish >= job.start for job in jobs.values())
    seconds, chain = critical_path.critical_path(jobs)
    for before, after in zip(chain, chain[1:], strict=False):
        assert set(jobs[before].outputs) & set(jobs[after].inputs), (before, after)
    assert jobs[chain[-1]].rule == "all"
    assert seconds == sum(jobs[j].seconds for j in chain)
    assert max(job.seconds for job in jobs.values()) <= seconds
    elapsed = re.search(r"Elapsed time: (\d+):(\d\d):(\d\d)", text)
    assert elapsed, text[-500:]
    hours, minutes, secs = map(int, elapsed.groups())
    assert seconds <= 3600 * hours + 60 * minutes + secs + 1
