"""Time the rrr_survival hot paths: RRR sampling, batched log-rank / KM, LNTE.

Run from the repository root (single-threaded BLAS is irrelevant here: numpy only):

    python benchmarks/bench_rrr.py [--repeats 5] [--draws 100]

Targets: 10^6 labels privatised in < 0.1 s; 100 RRR draws + batched pairwise
log-rank on the synthetic IPSS-R cohort (2,742 rows, 10 pairs) in < 0.3 s;
100 LNTE draws per epsilon in well under 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from dprepro.data.cohorts import load_kidney, synthetic_ipssr_cohort  # noqa: E402
from dprepro.mechanisms.lnte import lnte_survival  # noqa: E402
from dprepro.mechanisms.rrr import RevisedRandomizedResponse  # noqa: E402
from dprepro.survival.kaplan_meier import km_batch  # noqa: E402
from dprepro.survival.logrank import pairwise_logrank, pairwise_logrank_batch  # noqa: E402


def _timed(fn, repeats: int) -> tuple[float, float]:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def _report(name: str, best: float, median: float) -> None:
    print(f"{name:<58s} best {best * 1e3:8.1f} ms   median {median * 1e3:8.1f} ms")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--draws", type=int, default=100)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(20240611)

    cohorts = {
        "synthetic IPSS-R": synthetic_ipssr_cohort(np.random.default_rng(1)),
        "kidney": load_kidney(ROOT / "resources" / "kidney" / "kidney.csv"),
    }
    print(f"numpy {np.__version__}; draws = {args.draws}; repeats = {args.repeats}")

    cats = list(cohorts["synthetic IPSS-R"].group.unique())
    mech = RevisedRandomizedResponse(epsilon=1.0, categories=cats)
    labels = np.asarray(cats, dtype=object)[rng.integers(0, len(cats), 10**6)]
    codes = mech.encode(labels)
    _report(
        "RRR: 10^6 integer codes",
        *_timed(lambda: mech.privatize_codes(codes, rng=rng), args.repeats),
    )
    _report(
        "RRR: 10^6 string labels (encode + sample + decode)",
        *_timed(lambda: mech.privatize(labels, rng=rng), args.repeats),
    )

    for name, frame in cohorts.items():
        cats = sorted(frame.group.unique())
        t, e, g = frame.time.to_numpy(), frame.event.to_numpy(), frame.group.to_numpy()
        npairs = len(cats) * (len(cats) - 1) // 2
        for eps in (1.0, 2.0, 3.0):
            mech = RevisedRandomizedResponse(epsilon=eps, categories=cats)
            true_codes = mech.encode(g)

            def rrr_logrank(mech=mech, true_codes=true_codes, t=t, e=e, cats=cats):
                draws = mech.privatize_codes(true_codes, rng=rng, draws=args.draws)
                return pairwise_logrank_batch(t, e, draws, labels=np.arange(len(cats)))

            _report(
                f"{name} (n={len(t)}, {npairs} pairs) eps={eps:g}: RRR + batched log-rank",
                *_timed(rrr_logrank, args.repeats),
            )

        draws = mech.privatize_codes(mech.encode(g), rng=rng, draws=args.draws)
        _report(
            f"{name}: batched KM ({args.draws} draws x {len(cats)} groups) + grid",
            *_timed(
                lambda t=t, e=e, d=draws: km_batch(t, e, d).on_grid(np.linspace(0, t.max(), 200)),
                args.repeats,
            ),
        )
        _report(
            f"{name}: unbatched pairwise log-rank, 1 draw (reference)",
            *_timed(lambda t=t, e=e, g=g: pairwise_logrank(t, e, g), args.repeats),
        )
        for eps in (1.0, 2.0, 3.0):

            def lnte_all_groups(eps=eps, t=t, e=e, g=g, cats=cats):
                for c in cats:
                    lnte_survival(t[g == c], e[g == c], epsilon=eps, rng=rng, draws=args.draws)

            _report(
                f"{name} eps={eps:g}: LNTE, {args.draws} draws, all groups",
                *_timed(lnte_all_groups, args.repeats),
            )


if __name__ == "__main__":
    main()
