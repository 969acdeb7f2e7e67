"""Wall and CPU time of study targets from nothing (fresh working directory), --cores 2.

Goals (the issues'): ``ldp_indicators`` <= 60 s, ``rrr_survival`` <= 60 s,
``repr_transfer`` <= 300 s, ``all`` <= 120 s wall on 2 cores. CPU seconds
(user + sys of every job) are printed beside the wall time: on a shared
machine they are the comparable number.

Run: python benchmarks/bench_workflow.py [target ...]
(default: ldp_indicators, rrr_survival, repr_transfer, all)
"""

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"ldp_indicators": 60, "rrr_survival": 60, "repr_transfer": 300, "all": 120}


def run(target: str, cores: int = 2) -> tuple[float, float]:
    """(wall s, CPU s of the run and its jobs) of ``target`` from nothing."""
    with tempfile.TemporaryDirectory() as work:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "snakemake", target, "--snakefile",
                        str(ROOT / "Snakefile"), "--directory", work, "--cores", str(cores),
                        "--configfile", str(ROOT / "config" / "config.yaml")],
                       check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


if __name__ == "__main__":
    for target in sys.argv[1:] or list(GOALS):
        wall, cpu = run(target)
        goal = f" (goal {GOALS[target]} s)" if target in GOALS else ""
        print(f"{target:>16}: {wall:6.1f} s wall, {cpu:7.1f} CPU-s from nothing with "
              f"--cores 2{goal}", flush=True)
