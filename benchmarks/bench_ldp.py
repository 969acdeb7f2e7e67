"""Benchmark of the ldp_indicators simulation (issue target: paper scale <= 5 s on one core).

Paper scale: 6 settings (2 censoring levels x 3 alphas) x 300 replicates x n = 500,
three estimators on 100 time points, dpik per replicate. For comparison, the
presmoothing p̂ written as the [EBG23] authors' style of Python loop over
observations is timed on a few replicates and extrapolated.

Run: python benchmarks/bench_ldp.py
"""

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from dprepro.runtime.seeds import seed_sequence  # noqa: E402
from dprepro.studies.ldp_indicators.simulation import (  # noqa: E402
    simulate_and_estimate,
    simulate_censored_regression,
)
from dprepro.survival.bandwidth import dpik_rows  # noqa: E402

SETTINGS = [([1 / 3] * 3, a) for a in (0.2, 0.3, 0.4)] + [([1, 1, 1], a) for a in (0.2, 0.3, 0.4)]
T = np.linspace(0.015, 1.5, 100)


def paper_scale():
    for lambda_c, alpha in SETTINGS:
        simulate_and_estimate(
            data_seed=seed_sequence(1, "bench", f"sim{lambda_c[0]}", 0),
            noise_seed=seed_sequence(1, "bench", f"noise{lambda_c[0]}{alpha}", 0),
            replicates=300, n=500, lambda_t=[1, 1, 1], lambda_c=lambda_c, alpha=alpha, x=0.5,
            bandwidth_multiplier=5, t=T)


def loop_presmoothing(y, z, x, b):
    """p̂ at every observation with a Python loop over observations (reference style)."""
    out = np.empty_like(z)
    for i in range(len(y)):
        k = (np.abs(x[i] - x) <= b) & (np.abs(y[i] - y) <= b)
        out[i] = z[k].sum() / k.sum()
    return out


def main():
    with threadpool_limits(1):
        paper_scale()  # warm-up (imports, caches)
        times = []
        for _ in range(3):
            start = time.perf_counter()
            paper_scale()
            times.append(time.perf_counter() - start)
        print(f"paper-scale simulation (6 settings x 300 x n=500, 3 estimators, 100 t): "
              f"best {min(times):.2f} s, median {np.median(times):.2f} s  (target <= 5 s)")
        x, y, d = simulate_censored_regression(seed_sequence(2, "b", "s", 0), replicates=20,
                                               n=500, lambda_t=[1, 1, 1], lambda_c=[1, 1, 1])
        b = np.sqrt(5 * dpik_rows(x))
        start = time.perf_counter()
        for r in range(20):
            loop_presmoothing(y[r], d[r].astype(float), x[r], b[r])
        per_300 = (time.perf_counter() - start) / 20 * 300
        print(f"reference-style loop presmoothing: {per_300:.2f} s per 300 replicates "
              f"(x6 settings = {6 * per_300:.1f} s for p̂ alone)")


if __name__ == "__main__":
    main()
