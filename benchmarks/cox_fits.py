"""Cox fits per second: batched ``fit_cox_batch`` against a loop of lifelines' CoxPHFitter.

Run from the repository root:

    python benchmarks/cox_fits.py [--designs 200] [--lifelines-fits 20] [--repeats 3]

Each design is a 3-group label vector (treatment dummies) plus one numeric covariate,
on shared exponential times with ~30 % censoring and rounded (tied) times; both
sides use Efron's ties. lifelines is timed on the first ``--lifelines-fits`` designs
(its per-fit cost does not depend on the batch) and reported per second; "max |diff|"
is the largest coefficient difference, at lifelines' default convergence (|step| < 1e-7).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from dprepro.survival.cox import fit_cox_batch, treatment_dummies  # noqa: E402


def _data(n: int, designs: int, rng: np.random.Generator):
    labels = rng.integers(0, 3, (designs, n))
    age = rng.normal(60, 10, (n, 1))
    rate = 0.1 * np.exp(0.5 * labels[0] + 0.02 * (age[:, 0] - 60))
    t0, c = rng.exponential(1 / rate), rng.exponential(25, n)
    t, e = np.round(np.minimum(t0, c), 1), (t0 <= c).astype(int)
    return t, e, treatment_dummies(labels, 3, age)


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", type=int, default=200)
    parser.add_argument("--lifelines-fits", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from lifelines import CoxPHFitter

    rng = np.random.default_rng(20240611)
    print(f"numpy {np.__version__}; B = {args.designs} designs (3 groups + 1 covariate), Efron")
    print(
        f"{'n':>6s} {'batch s':>9s} {'batch fits/s':>13s} {'lifelines fits/s':>17s} "
        f"{'speed-up':>9s} {'max |diff|':>11s}"
    )
    for n in (500, 1000, 2000):
        t, e, X = _data(n, args.designs, rng)
        fit_cox_batch(t, e, X[:2])  # warm-up
        batch_s = _best(lambda t=t, e=e, X=X: fit_cox_batch(t, e, X), args.repeats)
        res = fit_cox_batch(t, e, X)
        m = min(args.lifelines_fits, args.designs)
        frames = []
        for b in range(m):
            df = pd.DataFrame(X[b], columns=["g1", "g2", "age"])
            df["T"], df["E"] = t, e
            frames.append(df)

        def loop(frames=frames):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return [CoxPHFitter().fit(df, "T", "E").params_.to_numpy() for df in frames]

        ll_s = _best(loop, 1)
        diff = np.max(np.abs(np.array(loop()) - res.coef[:m]))
        batch_rate, ll_rate = args.designs / batch_s, m / ll_s
        print(
            f"{n:6d} {batch_s:9.3f} {batch_rate:13.0f} {ll_rate:17.1f} "
            f"{batch_rate / ll_rate:8.0f}x {diff:11.1e}"
        )


if __name__ == "__main__":
    main()
