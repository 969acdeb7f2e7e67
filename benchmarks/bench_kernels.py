"""Library kernels against a plain vectorised numpy version of the same computation.

For each kernel of ``dprepro.survival.conditional`` used by the ldp_indicators simulation,
a straightforward numpy implementation (argsort + cumprod/cumsum +
``searchsorted`` per row; one kernel product per replicate for p̂) computes the
same numbers. The benchmark checks that both give equal outputs (to 1e-12) and
reports the time ratio; the target is a ratio of at most 1.5 (issue 14).
Timings are the best of several interleaved repeats, on one BLAS thread.

Run:       python benchmarks/bench_kernels.py
Older lib: python benchmarks/bench_kernels.py --scripts /path/to/old/checkout/scripts
Exit status 1 when an output differs or a ratio exceeds the target.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402  (after the thread settings)
from threadpoolctl import threadpool_limits  # noqa: E402

TARGET = 1.5


def plain_sorted(times, exponents, covariates, x, h):
    """Rows sorted by time (no ties in simulated data), window and at-risk counts."""
    order = np.argsort(times, axis=1)
    times_s = np.take_along_axis(times, order, axis=1)
    exps_s = np.take_along_axis(exponents, order, axis=1)
    window = np.take_along_axis(np.abs(covariates - x) <= h[:, None], order, axis=1)
    at_risk = np.cumsum(window[:, ::-1], axis=1)[:, ::-1]
    return times_s, exps_s, window, at_risk


def plain_step(values, times_s, t, start):
    counts = np.stack([np.searchsorted(row, t, side="right") for row in times_s])
    padded = np.concatenate([np.full((values.shape[0], 1), start), values], axis=1)
    return np.take_along_axis(padded, counts, axis=1)


def plain_beran(times, exponents, covariates, *, x, h, t):
    """1 - prod_{Y(i) <= t} (1 - 1/at_risk(i))^{e(i)} over the window, by cumprod."""
    times_s, exps_s, window, at_risk = plain_sorted(times, exponents, covariates, x, h)
    factor = np.where(window, 1.0 - 1.0 / np.maximum(at_risk, 1), 1.0)
    survival = np.cumprod(np.where(window & (exps_s != 0), factor ** exps_s, 1.0), axis=1)
    return 1.0 - plain_step(survival, times_s, t, 1.0)


def plain_nelson_aalen(times, values, covariates, *, x, h, t):
    times_s, vals_s, window, at_risk = plain_sorted(times, values, covariates, x, h)
    increments = np.where(window, vals_s / np.maximum(at_risk, 1), 0.0)
    return plain_step(np.cumsum(increments, axis=1), times_s, t, 0.0)


def plain_presmoothed(times, covariates, indicator_sets, *, b, where):
    """p̂ at the window points: one (m x n) uniform product-kernel product per replicate."""
    stacked = np.stack(indicator_sets, axis=2)
    out = np.full(stacked.shape, np.nan)
    for r in range(times.shape[0]):
        q = np.flatnonzero(where[r])
        near = ((np.abs(covariates[r, q, None] - covariates[r]) <= b[r])
                & (np.abs(times[r, q, None] - times[r]) <= b[r])).astype(float)
        out[r, q] = near @ stacked[r] / near.sum(axis=1)[:, None]
    return [out[..., k] for k in range(out.shape[2])]


def best_of(functions, repeats):
    """Best wall time of each function, run interleaved so load hits both alike."""
    best = [float("inf")] * len(functions)
    results = [function() for function in functions]  # warm-up: first-call allocations
    for _ in range(repeats):
        for i, function in enumerate(functions):
            start = time.perf_counter()
            results[i] = function()
            best[i] = min(best[i], time.perf_counter() - start)
    return best, results


def equal(a, b):
    a = np.stack(a) if isinstance(a, list) else a
    b = np.stack(b) if isinstance(b, list) else b
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripts", type=Path,
                        default=Path(__file__).resolve().parents[1] / "scripts",
                        help="directory holding the dprepro package to time")
    parser.add_argument("--replicates", type=int, default=300)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--times", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.scripts))
    from dprepro.mechanisms.indicator_draws import laplace_indicators
    from dprepro.runtime.seeds import seed_sequence
    from dprepro.studies.ldp_indicators.simulation import simulate_censored_regression
    from dprepro.survival import bandwidth, conditional

    threadpool_limits(1)
    covariates, times, delta = simulate_censored_regression(
        seed_sequence(1, "bench", "kernels", 0), replicates=args.replicates, n=args.n,
        lambda_t=[1, 1, 1], lambda_c=[1, 1, 1])
    private = laplace_indicators(delta, alpha=0.3, rng=np.random.default_rng(2))
    h = 5 * bandwidth.dpik_rows(covariates)
    b = np.sqrt(h)
    t = np.linspace(0.015, 1.5, args.times)
    window = conditional.uniform_kernel_window(covariates, x=0.5, h=h)
    phat = np.clip(np.where(window, conditional.presmoothed_indicator_sets(
        times, covariates, [private], b=b, where=window)[0], 0.0), 0.0, 1.0)
    cases = {
        "beran_cdf (0/1 indicators)": (
            lambda: conditional.beran_cdf(times, delta, covariates, x=0.5, h=h, t=t),
            lambda: plain_beran(times, delta, covariates, x=0.5, h=h, t=t)),
        "beran_cdf (p̂ exponents)": (
            lambda: conditional.beran_cdf(times, phat, covariates, x=0.5, h=h, t=t),
            lambda: plain_beran(times, phat, covariates, x=0.5, h=h, t=t)),
        "conditional_nelson_aalen": (
            lambda: conditional.conditional_nelson_aalen(times, private, covariates, x=0.5, h=h,
                                                      t=t),
            lambda: plain_nelson_aalen(times, private, covariates, x=0.5, h=h, t=t)),
        "presmoothed_indicator_sets (δ, Z)": (
            lambda: conditional.presmoothed_indicator_sets(times, covariates, [delta, private], b=b,
                                                        where=window),
            lambda: plain_presmoothed(times, covariates, [delta, private], b=b, where=window)),
    }
    print(f"{args.replicates} replicates x n = {args.n}, {args.times} times, one BLAS thread, "
          f"best of {args.repeats}; library from {args.scripts}")
    print(f"{'kernel':38s} {'library':>10s} {'numpy':>10s} {'ratio':>6s}")
    failed = False
    for name, (kernel, plain) in cases.items():
        (t_kernel, t_plain), (out_kernel, out_plain) = best_of([kernel, plain], args.repeats)
        same = equal(out_kernel, out_plain)
        ratio = t_kernel / t_plain
        flag = "" if same and ratio <= TARGET else ("  OUTPUTS DIFFER" if not same else
                                                    f"  above target {TARGET}")
        failed |= bool(flag)
        print(f"{name:38s} {t_kernel * 1e3:8.1f} ms {t_plain * 1e3:8.1f} ms {ratio:6.2f}{flag}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
