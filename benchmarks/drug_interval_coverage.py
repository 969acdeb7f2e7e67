"""Coverage of the repr drug claims' intervals: data with a known effect, the same resampling.

A drug claim's statistic is the mean of a drugs x splits x seeds array of paired
differences (one method minus another), and its interval is the crossed (pigeonhole)
percentile bootstrap of ``dprepro.studies.repr_transfer.claims.crossed_bootstrap``. This
script draws such arrays from a random-effects model with a known mean

    C[d, p, s] = mu + drug_d + split_p + (drug x split)_dp + seed noise_dps,

with the variance components of a quick run's drug differences, builds the interval as
the claims do, and counts how often it covers mu, for several numbers of splits (drugs
and seeds as configured). Run from the repository root:

    PYTHONPATH=scripts python benchmarks/drug_interval_coverage.py [--reps 400]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.stats import binomtest

from dprepro.claims.table import percentile_interval
from dprepro.studies.repr_transfer.claims import crossed_bootstrap


def coverage(drugs: int, splits: int, seeds: int, *, reps: int, sd: dict, seed: int) -> float:
    rng = np.random.default_rng(seed)
    mu, covered = 0.05, 0
    for _ in range(reps):
        C = (mu + sd["drug"] * rng.standard_normal((drugs, 1, 1))
             + sd["split"] * rng.standard_normal((1, splits, 1))
             + sd["drug_split"] * rng.standard_normal((drugs, splits, 1))
             + sd["seed"] * rng.standard_normal((drugs, splits, seeds)))
        _, lower, upper = percentile_interval(float(C.mean()),
                                              crossed_bootstrap(C, rng=rng, resamples=1000))
        covered += lower <= mu <= upper
    return covered / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    args = parser.parse_args()
    # variance components of the order of a quick run's Spearman differences
    sd = {"drug": 0.04, "split": 0.03, "drug_split": 0.03, "seed": 0.02}
    print("drugs splits seeds coverage  95% CI (Clopper-Pearson)")
    for drugs, splits, seeds in ((8, 5, 3), (8, 10, 3), (8, 20, 3), (10, 10, 5)):
        share = coverage(drugs, splits, seeds, reps=args.reps, sd=sd, seed=splits * 100 + drugs)
        ci = binomtest(round(share * args.reps), args.reps).proportion_ci(0.95)
        print(f"{drugs:5d} {splits:6d} {seeds:5d} {share:8.3f}  [{ci.low:.3f}, {ci.high:.3f}]")
    print(f"nominal 0.95; {args.reps} simulated data sets per row")


if __name__ == "__main__":
    main()
