"""Wall time of study targets from nothing (fresh working directory), --cores 2.

Issue targets: ldp_indicators to Figure 1 <= 45 s; rrr_survival study <= 2 min.

Run: python benchmarks/bench_workflow.py [target ...]
(default: Figure 1 of ldp_indicators, rrr_survival, all)
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(target: str, cores: int = 2) -> float:
    with tempfile.TemporaryDirectory() as work:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "snakemake", target, "--snakefile",
                        str(ROOT / "Snakefile"), "--directory", work, "--cores", str(cores),
                        "--configfile", str(ROOT / "config" / "config.yaml")],
                       check=True, capture_output=True)
        return time.perf_counter() - start


if __name__ == "__main__":
    figure1 = "results/ldp_indicators/figures/figure1.pdf"
    for target in sys.argv[1:] or [figure1, "rrr_survival", "all"]:
        print(f"{target:>44}: {run(target):6.1f} s from nothing with --cores 2", flush=True)
