"""How many cores a finished run could use: its jobs' wall times and its critical path.

A run on two cores is CPU-bound when the sum of its jobs' wall times is about twice its own
wall time; more cores then help until the run reaches its critical path, the longest chain of
jobs that each read an output of the one before. This reads both off a run's Snakemake log
(``.snakemake/log/*.snakemake.log``, or the run's printed output): each job's start and
finish (the log's timestamps, to the second) and its input and output files, and prints

* the jobs, the sum of their wall times and the critical path, job by job;
* for k cores, the lower bound ``max(critical path, sum / k)`` of a run's wall time: an
  estimate from this run's job times, not a measurement (a job's wall time on two busy cores
  is about its time alone: every job is single-threaded unless its rule says otherwise).

    python benchmarks/critical_path.py                      # the newest log under .snakemake/log
    python benchmarks/critical_path.py path/to/run.log [--cores 2 4 8]
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
_RULE = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
_FILES = re.compile(r"^    (input|output): (.*)$")
_JOBID = re.compile(r"^    jobid: (\d+)$")
_FINISHED = re.compile(r"^Finished jobid: (\d+)")


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
    """The jobs of a Snakemake log, by job id (a job printed twice is read once)."""
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
            jobs.setdefault(int(match.group(1)), current)
            current = None
        elif match := _FINISHED.match(line):
            if int(match.group(1)) in jobs:
                jobs[int(match.group(1))].finish = stamp
    return jobs


def critical_path(jobs: dict[int, Job]) -> tuple[float, list[int]]:
    """The longest chain of jobs, each reading an output of the one before, by the sum of
    their wall times: ``(seconds, job ids from first to last)``. Every job must have
    finished."""
    unfinished = sorted(j for j, job in jobs.items() if job.start is None or job.finish is None)
    if unfinished:
        raise ValueError(f"jobs without a start or a finish in the log: {unfinished[:10]}")
    producer = {path: j for j, job in jobs.items() for path in job.outputs}
    longest: dict[int, tuple[float, int | None]] = {}

    def visit(j: int) -> tuple[float, int | None]:
        # iterative over the inputs: the DAG is shallow (tens of levels), recursion is fine
        if j not in longest:
            before = {producer[p] for p in jobs[j].inputs if p in producer and producer[p] != j}
            best = max(((visit(d)[0], d) for d in sorted(before)), default=(0.0, None))
            longest[j] = (best[0] + jobs[j].seconds, best[1])
        return longest[j]

    last = max(jobs, key=lambda j: (visit(j)[0], -j))
    chain, j = [], last
    while j is not None:
        chain.append(j)
        j = longest[j][1]
    return visit(last)[0], chain[::-1]


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
    jobs = read_jobs(path.read_text())
    seconds, chain = critical_path(jobs)
    total = sum(job.seconds for job in jobs.values())
    print(f"{path}: {len(jobs)} jobs, {total:.0f} s of job wall time, critical path "
          f"{seconds:.0f} s:")
    for j in chain:
        print(f"  {jobs[j].seconds:6.0f} s  {jobs[j].rule} (job {j})")
    for cores in args.cores:
        print(f"  {cores:3d} cores: no run shorter than {wall_bound(jobs, cores):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
