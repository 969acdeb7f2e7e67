"""Coverage of the debiased-RRR median's bootstrap interval, with many cohorts.

An accuracy benchmark, not a timing one. ``tests/test_debiased_rrr.py`` shows
with 320 cohorts (960 intervals, significance 1e-9) that the coverage of the
nominal 95 % interval, pooled over the three groups, is at least 0.85; this
script estimates it with ``--cohorts`` cohorts (default 1,000: 3,000 intervals)
in the same design (not the study's cohorts: kidney's groups are 8-26 rows):

* 3 groups × 150 persons, exponential survival with medians 10, 20 and 40,
  uniform censoring on [0, 150];
* one Revised Randomized Response release of the group labels per cohort
  (ε = 2, exact calibration; ``--epsilon``, ``--calibration``);
* the debiased median's percentile interval from ``--resamples`` (100)
  bootstrap resamples of persons, with the study's rule for resamples whose
  curve stops early (censored medians count as at least their stop time:
  ``dprepro.studies.rrr_survival.analysis.censored_quantile``).

It prints the coverage per group and overall with 95 % Clopper–Pearson
intervals, and the shares of intervals missing below and above.

Run:  python benchmarks/bench_debiased_coverage.py [--cohorts 1000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from dprepro.mechanisms.debiased_rrr import bootstrap_medians  # noqa: E402
from dprepro.mechanisms.rrr import RevisedRandomizedResponse  # noqa: E402
from dprepro.runtime.seeds import seed_sequence  # noqa: E402
from dprepro.studies.rrr_survival.analysis import censored_quantile  # noqa: E402

MEDIANS = {"a": 10.0, "b": 20.0, "c": 40.0}
PER_GROUP = 150


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    alpha = 1.0 - level
    lower = 0.0 if k == 0 else stats.beta.ppf(alpha / 2, k, n - k + 1)
    upper = 1.0 if k == n else stats.beta.ppf(1 - alpha / 2, k + 1, n - k)
    return float(lower), float(upper)


def one_cohort(mech, rng, resamples):
    labels = list(MEDIANS)
    truth = np.array(list(MEDIANS.values()))
    groups = np.repeat(np.asarray(labels, dtype=object), PER_GROUP)
    event_time = rng.exponential(np.repeat(truth, PER_GROUP) / np.log(2))
    censor = rng.uniform(0, 150, size=event_time.size)
    t, e = np.minimum(event_time, censor), (event_time <= censor).astype(int)
    codes = mech.encode(mech.privatize(groups, rng=rng, draws=1))[0]
    boot, at = bootstrap_medians(t, e, codes, np.arange(t.size), p=mech.p, k=mech.k, rng=rng,
                                 resamples=resamples)
    lo = np.array([censored_quantile(boot[:, g], at[:, g], 0.025)[0] for g in range(3)])
    hi = np.array([censored_quantile(boot[:, g], at[:, g], 0.975)[1] for g in range(3)])
    return lo > truth, hi < truth


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cohorts", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--calibration", default="exact")
    parser.add_argument("--seed", type=int, default=20240915)
    args = parser.parse_args(argv)
    mech = RevisedRandomizedResponse(epsilon=args.epsilon, categories=list(MEDIANS),
                                     calibration=args.calibration)
    rng = np.random.default_rng(seed_sequence(args.seed, "rrr_survival",
                                              "bench_debiased_coverage", 0))
    start = time.perf_counter()
    below, above = [], []
    for _ in range(args.cohorts):
        b, a = one_cohort(mech, rng, args.resamples)
        below.append(b)
        above.append(a)
    below, above = np.array(below), np.array(above)
    covered = ~(below | above)
    print(f"{args.cohorts} cohorts of 3 x {PER_GROUP}, RRR eps = {args.epsilon:g} "
          f"({args.calibration}), {args.resamples} resamples, "
          f"{time.perf_counter() - start:.0f} s")
    print("group  median  coverage  95% CP interval     missed below  missed above")
    for g, (name, median) in enumerate(MEDIANS.items()):
        k, n = int(covered[:, g].sum()), covered.shape[0]
        lo, hi = clopper_pearson(k, n)
        print(f"{name:5s}  {median:6g}  {k / n:8.3f}  [{lo:.3f}, {hi:.3f}]  "
              f"{below[:, g].mean():12.3f}  {above[:, g].mean():12.3f}")
    k, n = int(covered.sum()), covered.size
    lo, hi = clopper_pearson(k, n)
    print(f"all            {k / n:8.3f}  [{lo:.3f}, {hi:.3f}]  {below.mean():12.3f}  "
          f"{above.mean():12.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
