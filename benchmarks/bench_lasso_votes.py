"""DP feature selection's Lasso votes at paper size: coordinate descent against the homotopy.

Run from the repository root (about 2-4 CPU-minutes; one BLAS thread):

    nice -n 10 python benchmarks/bench_lasso_votes.py [--drugs 2] [--splits 2]
        [--converged 6] [--out benchmarks/lasso_votes.json]

The drug task's votes as ``repr_drug`` computes them in paper mode: 1,018 private lines,
2,000 candidate genes (SYNTHETIC stand-in with the real shape and 18 % missing responses),
100 test lines a split, both pipelines' schemes (``as_published``: k = isqrt(n) interleaved
parts, α = 1/n; ``corrected``: hashed parts, k = isqrt(N), α = 1/k²). For ``--drugs`` x
``--splits`` (drug, split) pairs it times the votes with ``coordinate_descent``
(scikit-learn's ``Lasso``, the authors' solver) and ``lars`` (``dprepro.learners.lasso``)
and, part by part, compares the coefficients and their top-10 votes:

* the KKT violation of each solver's solution (``dprepro.learners.lasso.kkt_violation``: 0
  at the Lasso's optimum), a check that depends on neither solver;
* how many top-10 votes coordinate descent gives to other genes than the exact solution,
  and whether every such swap is explained by its tolerance: the two genes' exact |β|
  closer than twice coordinate descent's largest coefficient error;
* on the first ``--converged`` parts, coordinate descent run to a duality gap of 1e-13
  (up to 10^6 sweeps): its votes against the homotopy's, its KKT violation and sweeps
  (a part that runs out of sweeps has not converged).

CPU per drug = the timed splits' CPU x 10 splits / the splits timed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import scipy.linalg  # noqa: E402,F401  (loaded before the thread limit, which covers loaded BLAS)
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import Lasso  # noqa: E402

from dprepro.data.synthetic_expression import synthetic_public_private  # noqa: E402
from dprepro.learners.lasso import kkt_violation, lasso_coef  # noqa: E402
from dprepro.studies.repr_transfer import baselines, drug  # noqa: E402

M, PAPER_SPLITS = 10, 10


def parts_of(scheme, X, y, lines, nominal, key):
    """(alpha, list of (X_part, y_part)) of one drug and split, as the vote functions do."""
    keep = ~np.isnan(y)
    X, y, lines = X[keep], y[keep], lines[keep]
    if scheme == "as_published":
        k = math.isqrt(len(y))
        return 1.0 / len(y), [(X[i::k], y[i::k]) for i in range(k)]
    k = max(1, math.isqrt(nominal))
    part = baselines.hashed_parts(lines, k, key)
    return 1.0 / k**2, [(X[part == j], y[part == j]) for j in range(k)
                        if np.sum(part == j) >= 2]


def top(coef):
    return set(np.argsort(-np.abs(coef), kind="stable")[:M].tolist())


def compare_part(X, y, alpha, converged: bool) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        today = lasso_coef(X, y, alpha, max_iter=10_000)
        exact = lasso_coef(X, y, alpha, solver="lars")
        error = float(np.abs(today - exact).max())
        gained, lost = top(today) - top(exact), top(exact) - top(today)
        explained = all(abs(abs(exact[a]) - abs(exact[b])) <= 2 * error
                        for a in lost for b in gained)
        out = {"kkt_today": kkt_violation(X, y, today, alpha),
               "kkt_lars": kkt_violation(X, y, exact, alpha), "swaps": len(gained),
               "explained": explained, "coef_error": error,
               "nonzero_lars": int(np.count_nonzero(exact)), "rows": len(y)}
        if converged:
            cd = Lasso(alpha=alpha, tol=1e-13, max_iter=1_000_000).fit(X, y)
            tight = cd.coef_
            out["converged_equal_votes"] = top(tight) == top(exact)
            out["converged_max_diff"] = float(np.abs(tight - exact).max())
            out["converged_kkt"] = kkt_violation(X, y, tight, alpha)
            out["converged_sweeps"] = int(cd.n_iter_)
    return out


def timed_votes(fs, X, y, lines, nominal):
    start = time.process_time()
    votes, k = fs.votes(X, y, lines, nominal=nominal)
    return time.process_time() - start, votes, k


def run(args) -> dict:
    data = synthetic_public_private(np.random.default_rng(0), n_public=2000, n_private=1018,
                                    n_genes=2000, n_drugs=max(args.drugs, 2),
                                    missing_fraction=0.18)
    genes = baselines.variable_genes(data["public_expression"], 2000)
    public, private = baselines.centred_genes(data["public_expression"],
                                              data["private_expression"], genes)
    response = data["private_response"]
    lines = np.asarray(response.index, dtype=object)
    splits = drug.drug_splits(response, splits=args.splits, test_size=100,
                              rng=np.random.default_rng(1))
    key = baselines.part_key(0)
    cpu = {(s, v): 0.0 for s in ("as_published", "corrected")
           for v in ("coordinate_descent", "lars")}
    parts, same_votes, checked = [], 0, 0
    for d in range(args.drugs):
        y_all = response.iloc[:, d].to_numpy(float)
        for train, _ in splits:
            for scheme in ("as_published", "corrected"):
                votes = {}
                for solver in ("coordinate_descent", "lars"):
                    fs = baselines.FeatureSelection(
                        n_select=M, public=public, hashed=scheme == "corrected",
                        part_key=key, lasso_solver=solver)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        seconds, votes[solver], _ = timed_votes(
                            fs, private[train], y_all[train], lines[train], len(train))
                    cpu[(scheme, solver)] += seconds
                same_votes += int(np.array_equal(votes["coordinate_descent"], votes["lars"]))
                checked += 1
                alpha, chunks = parts_of(scheme, private[train], y_all[train], lines[train],
                                         len(train), key)
                for X, y in chunks:
                    parts.append({"scheme": scheme, **compare_part(
                        X, y, alpha, converged=len(parts) < args.converged)})
    pairs = args.drugs * args.splits
    per_drug = {f"{s}/{v}": cpu[(s, v)] / pairs * PAPER_SPLITS for s, v in cpu}
    conv = [p for p in parts if "converged_equal_votes" in p]
    return {
        "drugs": args.drugs, "splits_timed": args.splits, "parts": len(parts),
        "cpu_s_per_drug": per_drug,
        "speedup_per_drug": {s: per_drug[f"{s}/coordinate_descent"] / per_drug[f"{s}/lars"]
                             for s in ("as_published", "corrected")},
        "cpu_s_per_fit": {v: sum(cpu[(s, v)] for s in ("as_published", "corrected"))
                          / len(parts) for v in ("coordinate_descent", "lars")},
        "kkt_today_median": float(np.median([p["kkt_today"] for p in parts])),
        "kkt_today_max": float(np.max([p["kkt_today"] for p in parts])),
        "kkt_lars_max": float(np.max([p["kkt_lars"] for p in parts])),
        "parts_with_swaps": sum(p["swaps"] > 0 for p in parts),
        "swapped_votes_share": sum(p["swaps"] for p in parts) / (M * len(parts)),
        "swaps_explained_by_tolerance": all(p["explained"] for p in parts),
        "vote_vectors_equal": f"{same_votes} of {checked} (drug, split, scheme)",
        "converged_parts": len(conv),
        "converged_equal_votes": sum(p["converged_equal_votes"] for p in conv),
        "converged_max_coef_diff": max((p["converged_max_diff"] for p in conv), default=None),
        # (votes, KKT violation, sweeps) of each part's long coordinate descent
        "converged_detail": [(p["converged_equal_votes"], p["converged_kkt"],
                              p["converged_sweeps"]) for p in conv],
        "nonzero_lars_median": float(np.median([p["nonzero_lars"] for p in parts])),
        "part_rows_median": float(np.median([p["rows"] for p in parts])),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drugs", type=int, default=2)
    parser.add_argument("--splits", type=int, default=2)
    parser.add_argument("--converged", type=int, default=6)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "lasso_votes.json"))
    args = parser.parse_args(argv)
    with threadpool_limits(1):
        summary = run(args)
    text = json.dumps(summary, indent=1)
    print(text)
    Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
