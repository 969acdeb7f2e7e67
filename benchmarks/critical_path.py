"""How many cores a finished run could use: its jobs' wall times and its critical path.

A run on two cores is CPU-bound when the sum of its jobs' wall times is about twice its own
wall time; more cores then help until the run reaches its critical path, the longest chain of
jobs that each read an output of the one before. This reads both off a run's Snakemake log
(``.snakemake/log/*.snakemake.log``, or the run's printed output): each job's start and
finish (the log's timestamps, to the second) and its input and output files, and prints

* the jobs, the sum of their wall times and the critical path, job by job;
* for k cores, the lower bound ``max(critical path, sum / k)`` of a run's wall time (no
  schedule is faster; it does not say one reaches it), and the wall time of one list
  schedule of these job times (a free core takes the ready job with the longest chain still
  after it): estimates from this run's job times, not runs on k cores (a job's wall time on
  two busy cores is about its time alone: every job is single-threaded unless its rule says
  otherwise). Snakemake orders ready jobs by its rules' priorities, not by chains.

A job printed with a ``message:`` (no rule or files in the log) is refused; a run that
stopped part-way is read for the jobs that finished (those left out are counted).

    python benchmarks/critical_path.py                      # the newest log under .snakemake/log
    python benchmarks/critical_path.py path/to/run.log [--cores 2 4 8]
"""

from __future__ import annotations

import argparse
import datetime
import heapq
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
# a group job's member jobs are printed indented one level more
_RULE = re.compile(r"^\s*(?:local)?(?:rule|checkpoint) (\w+):$")
_FILES = re.compile(r"^\s+(input|output): (.*)$")
_JOBID = re.compile(r"^\s+jobid: (\d+)$")
_FINISHED = re.compile(r"^\s*Finished jobid: (\d+)")


@dataclass
class Job:
    """One job of a run's log: its rule, files, and start and finish (None: not seen)."""

    rule: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    start: datetime.datetime | None = None
    finish: datetime.datetime | None = None

    @property
    def seconds(self) -> float:
        return (self.finish - self.start).total_seconds()


def read_jobs(text: str) -> dict[int, Job]:
    """The jobs of a Snakemake log, by job id: a job printed again (a retry) keeps its last
    start. A finished job the log printed without its rule and files (a rule with a
    ``message:``) is a ValueError: its place in the chains is unknown."""
    jobs: dict[int, Job] = {}
    stamp = current = None
    for line in text.splitlines():
        if match := _STAMP.match(line):
            stamp = datetime.datetime.strptime(match.group(1), "%a %b %d %H:%M:%S %Y")
        elif match := _RULE.match(line):
            current = Job(match.group(1), start=stamp)
        elif current is not None and (match := _FILES.match(line)):
            files = [name.strip() for name in match.group(2).split(",")]
            setattr(current, "inputs" if match.group(1) == "input" else "outputs", files)
        elif current is not None and (match := _JOBID.match(line)):
            jobs[int(match.group(1))] = current
            current = None
        elif match := _FINISHED.match(line):
            job = int(match.group(1))
            if job not in jobs:
                raise ValueError(f"job {job} finished but the log printed no rule, input or "
                                 "output for it (a rule with a message: directive?)")
            jobs[job].finish = stamp
    return jobs


def _dependencies(jobs: dict[int, Job]) -> dict[int, set[int]]:
    """For each job, the jobs that wrote a file it reads."""
    producer = {path: j for j, job in jobs.items() for path in job.outputs}
    return {j: {producer[p] for p in job.inputs if p in producer and producer[p] != j}
            for j, job in jobs.items()}


def _checked(jobs: dict[int, Job]) -> None:
    if not jobs:
        raise ValueError("no job in the log")
    unfinished = sorted(j for j, job in jobs.items() if job.start is None or job.finish is None)
    if unfinished:
        raise ValueError(f"jobs without a start or a finish in the log: {unfinished[:10]}")


def critical_path(jobs: dict[int, Job]) -> tuple[float, list[int]]:
    """The longest chain of jobs, each reading an output of the one before, by the sum of
    their wall times: ``(seconds, job ids from first to last)``. Every job must have
    finished."""
    _checked(jobs)
    before = _dependencies(jobs)
    longest: dict[int, tuple[float, int | None]] = {}

    def visit(j: int) -> tuple[float, int | None]:
        # recursive: a workflow's DAG is tens of levels deep
        if j not in longest:
            best = max(((visit(d)[0], d) for d in sorted(before[j])), default=(0.0, None))
            longest[j] = (best[0] + jobs[j].seconds, best[1])
        return longest[j]

    last = max(jobs, key=lambda j: (visit(j)[0], -j))
    chain, j = [], last
    while j is not None:
        chain.append(j)
        j = longest[j][1]
    return visit(last)[0], chain[::-1]


def list_schedule(jobs: dict[int, Job], cores: int) -> float:
    """The wall time of these jobs on ``cores`` cores in one list schedule: whenever a core
    is free it starts the ready job with the longest chain still after it (itself
    included; ties: the lower job id). An achievable time, for comparison with
    :func:`wall_bound`, not Snakemake's own order."""
    _checked(jobs)
    before = _dependencies(jobs)
    after: dict[int, set[int]] = {j: set() for j in jobs}
    for j, deps in before.items():
        for d in deps:
            after[d].add(j)
    tail: dict[int, float] = {}

    def chain(j: int) -> float:
        if j not in tail:
            tail[j] = jobs[j].seconds + max((chain(k) for k in after[j]), default=0.0)
        return tail[j]

    waiting = {j: len(deps) for j, deps in before.items()}
    ready = [(-chain(j), j) for j, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []
    now = 0.0
    while ready or running:
        while ready and len(running) < cores:
            _, j = heapq.heappop(ready)
            heapq.heappush(running, (now + jobs[j].seconds, j))
        now, j = heapq.heappop(running)
        for k in after[j]:
            waiting[k] -= 1
            if waiting[k] == 0:
                heapq.heappush(ready, (-chain(k), k))
    return now


def wall_bound(jobs: dict[int, Job], cores: int) -> float:
    """``max(critical path, sum of job wall times / cores)``: no schedule on ``cores`` cores
    finishes these jobs sooner."""
    total = sum(job.seconds for job in jobs.values())
    return max(critical_path(jobs)[0], total / cores)


def _newest_log(folder: Path) -> Path:
    logs = sorted((folder / ".snakemake" / "log").glob("*.snakemake.log"))
    if not logs:
        raise SystemExit(f"no Snakemake log under {folder / '.snakemake' / 'log'}")
    return logs[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", nargs="?", type=Path,
                        help="a Snakemake log (default: the newest under .snakemake/log)")
    parser.add_argument("--cores", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    args = parser.parse_args(argv)
    path = args.log or _newest_log(Path.cwd())
    read = read_jobs(path.read_text())
    jobs = {j: job for j, job in read.items() if job.start is not None and job.finish is not None}
    seconds, chain = critical_path(jobs)
    total = sum(job.seconds for job in jobs.values())
    unfinished = len(read) - len(jobs)
    left_out = f" ({unfinished} unfinished jobs left out)" if unfinished else ""
    print(f"{path}: {len(jobs)} finished jobs{left_out}, {total:.0f} s of job wall time, "
          f"critical path {seconds:.0f} s:")
    for j in chain:
        print(f"  {jobs[j].seconds:6.0f} s  {jobs[j].rule} (job {j})")
    for cores in args.cores:
        print(f"  {cores:3d} cores: no run shorter than {wall_bound(jobs, cores):.0f} s; "
              f"longest chain first {list_schedule(jobs, cores):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
