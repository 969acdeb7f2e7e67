"""Time the batched SSP clipping-weight grid search against the per-draw search it
replaced, and assert bit-identical scores.

Run from the repository root:

    OMP_NUM_THREADS=1 python benchmarks/bench_clipping.py [--n 300] [--d 20] [--draws 20]

The reference below is the previous implementation: per noise draw, one
broadcast solve of the g² systems and one einsum for the predictions. The
library version draws a data set's noise first (same generator calls, same
order), then solves one factorisation per (draw, w_x) with the g right-hand
sides of w_y together and predicts by one matrix product, for many draws at
once. The predictions may differ in the last bits, but the score is a sum of
Spearman ρ, exact given the ranks, summed in draw order: the scores must agree
bit for bit, so the chosen (w_x, w_y) does too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from dprepro.learners import clipping  # noqa: E402
from dprepro.learners.noise import psd_repair, ssp_laplace_noise, ssp_noise  # noqa: E402


def per_draw_scores(n, d, *, epsilon, rng, grid, n_datasets, n_noise, xx_share, ridge,
                    xx_noise):
    """The previous implementation: every noise draw's g² fits one at a time."""
    g = grid.size
    score = np.zeros((g, g))
    eye = np.eye(d)
    for _ in range(n_datasets):
        x = rng.standard_normal((n, d))
        x -= x.mean(axis=0)
        beta = rng.standard_normal(d)
        y = x @ beta + rng.standard_normal(n)
        y -= y.mean()
        sx, sy = np.std(x, ddof=1), np.std(y, ddof=1)
        xcs = [np.clip(x, -wx * sx, wx * sx) for wx in grid]
        xx = np.stack([xc.T @ xc for xc in xcs])
        ycs = np.stack([np.clip(y, -wy * sy, wy * sy) for wy in grid])
        xy = np.einsum("and,bn->abd", np.stack(xcs), ycs)
        bx, by = grid * sx, grid * sy
        for _ in range(n_noise):
            noise = ssp_noise if xx_noise == "wishart" else ssp_laplace_noise
            W1, L1 = noise(d, epsilon=epsilon, clip_x=1.0, clip_y=1.0, rng=rng,
                           xx_share=xx_share)
            prec = xx + W1[None] * (bx**2)[:, None, None]
            if xx_noise == "laplace":
                prec = psd_repair(prec)
            prec = prec + ridge * eye[None]
            rhs = xy + L1[None, None, :] * (bx[:, None] * by[None, :])[:, :, None]
            w = np.linalg.solve(prec[:, None, :, :], rhs[..., None])[..., 0]
            pred = np.einsum("nd,abd->abn", x, w)
            score += clipping._spearman_rows(pred.reshape(g * g, n), y).reshape(g, g)
    return score


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
    for name, fn in (("per-draw", per_draw_scores),
                     ("batched", clipping._ssp_clipping_scores)):
        start, cpu = time.perf_counter(), time.process_time()
        scores[name] = fn(args.n, args.d, rng=np.random.default_rng(args.seed), **kw)
        timings[name] = (time.perf_counter() - start, time.process_time() - cpu)
    assert np.array_equal(scores["per-draw"], scores["batched"]), "scores differ"
    best = np.unravel_index(np.argmax(scores["batched"]), scores["batched"].shape)
    print(f"numpy {np.__version__}; n={args.n} d={args.d} grid 20x20 "
          f"draws {args.draws}x{args.draws} eps={args.eps:g} {args.xx_noise}")
    for name, (wall, cpu) in timings.items():
        print(f"  {name:9s} wall {wall:8.2f} s  cpu {cpu:8.2f} s")
    ratio = timings["per-draw"][1] / timings["batched"][1]
    print(f"  cpu speed-up {ratio:.1f}x; scores bit-identical; "
          f"chosen (w_x, w_y) = ({kw['grid'][best[0]]:g}, {kw['grid'][best[1]]:g})")


if __name__ == "__main__":
    main()
