"""Time dprepro.survival.bandwidth.dpik_rows on the hot-path shape and dpik on single samples.

Run from the repository root:

    python benchmarks/bench_dpik.py [--repeats 7]

The target is 1,800 replicates of n = 500 in well under one second on one core.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from dprepro.survival.bandwidth import dpik, dpik_rows  # noqa: E402


def _best_and_median(fn, repeats: int) -> tuple[float, float]:
    fn()  # warm-up: first call pays for imports and allocator growth
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    X = rng.uniform(size=(1800, 500))
    best, median = _best_and_median(lambda: dpik_rows(X), args.repeats)
    print(f"dpik_rows 1800 x 500 uniform: best {best * 1e3:8.1f} ms, median {median * 1e3:8.1f} ms")

    loops = 200  # calls per timing, so the per-call figure is not timer noise
    for n in (50, 500, 5000):
        x = rng.uniform(size=n)
        best, median = _best_and_median(
            lambda x=x, loops=loops: [dpik(x) for _ in range(loops)], args.repeats
        )
        print(
            f"dpik single sample n = {n:>4}:  best {best / loops * 1e6:8.1f} us, "
            f"median {median / loops * 1e6:8.1f} us per call"
        )
    h = dpik_rows(X)
    print(f"(sanity: bandwidths of the uniform replicates range {h.min():.4f} to {h.max():.4f})")


if __name__ == "__main__":
    main()
