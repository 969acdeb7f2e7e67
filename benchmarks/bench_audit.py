"""Time dprepro.audit.suite.run_all_audits and each audit in it.

Run from the repository root:

    python benchmarks/bench_audit.py [--draws-scale 1.0] [--seed 20240611] [--table]

The target is the whole table in under 60 s on one core at draws scale 1
(pin BLAS to one thread, e.g. OMP_NUM_THREADS=1, to measure that).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from dprepro.audit.suite import _audit_plan, audit_row_seeds, run_all_audits  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws-scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--table", action="store_true", help="print the audit table")
    args = parser.parse_args(argv)

    plan, fixed = _audit_plan(args.draws_scale)
    children = audit_row_seeds(plan, args.seed, fixed=fixed)
    print(f"numpy {np.__version__}; draws scale {args.draws_scale:g}; {len(plan)} audits")
    for (role, fn, kwargs), child in zip(plan, children, strict=True):
        start = time.perf_counter()
        res = fn(rng=np.random.default_rng(child), **kwargs)
        elapsed = time.perf_counter() - start
        print(
            f"{elapsed * 1e3:9.1f} ms  {role:9s} {res.mechanism:22s} {res.variant:34s} "
            f"draws {res.draws:>9,d}"
        )

    start = time.perf_counter()
    table = run_all_audits(rng_seed=args.seed, draws_scale=args.draws_scale)
    total = time.perf_counter() - start
    print(f"run_all_audits: {total:.2f} s for {len(table)} rows")
    if args.table:
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print(
                table[
                    [
                        "mechanism",
                        "variant",
                        "role",
                        "claimed_epsilon",
                        "true_epsilon",
                        "empirical_epsilon_lower_bound",
                        "verdict",
                    ]
                ].to_string(index=False, float_format=lambda v: f"{v:.3f}")
            )


if __name__ == "__main__":
    main()
