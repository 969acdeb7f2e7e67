"""Time the SSP clipping-weight grid search with the sort-based Spearman ρ
against the rank-array formula it replaced, and assert identical outputs.

Run from the repository root:

    OMP_NUM_THREADS=1 python benchmarks/bench_clipping.py [--n 300] [--d 20] [--draws 20]

Both versions score the same fits (same rng stream, same batched solve and
einsum per noise draw); only the rank correlation differs. The scores must
agree bit for bit, so the chosen (w_x, w_y) does too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from dprepro import dp_learners  # noqa: E402


def spearman_by_rankdata(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The previous implementation: full mid-rank arrays from scipy."""
    rp = stats.rankdata(P, axis=1)
    ry = stats.rankdata(y)
    rp = rp - rp.mean(axis=1, keepdims=True)
    ry = ry - ry.mean()
    num = rp @ ry
    den = np.sqrt(np.sum(rp**2, axis=1) * np.sum(ry**2))
    out = np.zeros(P.shape[0])
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--draws", type=int, default=20, help="data sets and noise draws each")
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--xx-noise", default="wishart", choices=["wishart", "laplace"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    kw = dict(epsilon=args.eps, grid=np.arange(1, 21) / 10.0, n_datasets=args.draws,
              n_noise=args.draws, xx_share=0.5, ridge=1.0, xx_noise=args.xx_noise)
    timings, scores = {}, {}
    for name, rho in (("rankdata", spearman_by_rankdata), ("sorted", dp_learners._spearman_rows)):
        with mock.patch.object(dp_learners, "_spearman_rows", rho):
            start, cpu = time.perf_counter(), time.process_time()
            scores[name] = dp_learners._ssp_clipping_scores(
                args.n, args.d, rng=np.random.default_rng(args.seed), **kw)
            timings[name] = (time.perf_counter() - start, time.process_time() - cpu)
    assert np.array_equal(scores["rankdata"], scores["sorted"]), "scores differ"
    best = np.unravel_index(np.argmax(scores["sorted"]), scores["sorted"].shape)
    print(f"numpy {np.__version__}; n={args.n} d={args.d} grid 20x20 "
          f"draws {args.draws}x{args.draws} eps={args.eps:g} {args.xx_noise}")
    for name, (wall, cpu) in timings.items():
        print(f"  {name:9s} wall {wall:8.2f} s  cpu {cpu:8.2f} s")
    ratio = timings["rankdata"][1] / timings["sorted"][1]
    print(f"  cpu speed-up {ratio:.1f}x; scores bit-identical; "
          f"chosen (w_x, w_y) = ({kw['grid'][best[0]]:g}, {kw['grid'][best[1]]:g})")


if __name__ == "__main__":
    main()
