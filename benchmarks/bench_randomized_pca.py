"""Accuracy and cost of PCA's randomized solver against the exact SVD, at the paper's size.

Run from the repository root (about 3-6 minutes on one core; ~5 GB of memory at full size):

    nice -n 10 python benchmarks/bench_randomized_pca.py [--rows 10535] [--genes 17737]
        [--exact-rows 2000] [--draws 40] [--out benchmarks/randomized_pca.csv]

(the summary, with the timings and the downstream scores, goes to the same name .json).

The public matrix is SYNTHETIC, of the paper's size (10,535 TCGA samples x 17,737 genes),
with a slowly decaying spectrum: 300 latent factors whose variances fall as 1/i (so the
top 20 components explain about 40 % of the variance, consecutive eigenvalues near r = 20
differ by only ~5 %, a hard case for a randomized solver) plus isotropic noise holding
30 % of the variance. Real expression spectra fall at least as fast at the top; the
randomized solver's error grows as the spectrum flattens, so this errs on the hard side.

Three comparisons, each printed and written to ``--out`` (one row per r and reference):

* ``arpack``: at full size, against the top singular vectors from ARPACK's Lanczos
  iteration run to machine precision (``scipy.sparse.linalg.svds``, ``tol=0``; its
  residuals ``||A v - s u|| / s_1`` are printed): LAPACK's exact SVD of the full matrix
  costs ~2,560 CPU-s (benchmarks/paper_scale.csv), ARPACK far less;
* ``lapack``: on the first ``--exact-rows`` rows, against LAPACK's exact SVD
  (scikit-learn ``svd_solver="full"``, what the exact option runs), which also checks the
  ARPACK reference there;
* downstream, at full size: the DP learners of the study on a private set of 1,018 lines
  drawn from the same model, mapped by the exact (ARPACK) and by the randomized PCA at
  r = 5, 10, 20: objective-perturbation logistic regression (ε = 1, 10-fold CV accuracy of a
  label driven by the latent factors) and SSP linear regression (ε = 1, Spearman ρ on 100
  held-out lines of a drug-like response), over ``--draws`` noise draws with the same
  draws for both maps (paired), with the Monte Carlo SE of each mean.

Per r: the largest principal angle between the randomized and the exact top-r subspaces
(the search truncates the r_max = 20 fit to every r), the largest angle between matching
components, the largest relative error of the explained variances, and the share of the
exact top-r variance the randomized subspace misses. The randomized fit is repeated to
check that it is byte-identical given its seed. Timings are CPU seconds on one BLAS thread
(the rules' ``threads: 1``).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.linalg import subspace_angles
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from dprepro.representations.pca import PCA_DEFAULTS, fit_pca  # noqa: E402

R_MAX, N_PRIVATE, FACTORS, NOISE_SHARE = 20, 1_018, 300, 0.3
FIELDS = ["reference", "rows", "genes", "r", "max_subspace_angle", "max_component_angle",
          "max_rel_var_error", "missed_variance_share"]


def draw_model(rows: int, genes: int, rng: np.random.Generator) -> dict:
    """Latent factors (variance 1/i), loadings and noise scale of the synthetic matrix."""
    scale = np.arange(1, FACTORS + 1) ** -0.5
    signal = float(np.sum(scale**2))
    return {"rows": rows, "genes": genes, "scale": scale,
            "loadings": rng.standard_normal((FACTORS, genes)),
            "noise_sd": np.sqrt(NOISE_SHARE / (1 - NOISE_SHARE) * signal),
            "mean": 5.0 + rng.standard_normal(genes)}


def draw_rows(model: dict, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of the matrix and their latent factors (in row blocks, bounded memory)."""
    latent = rng.standard_normal((n, FACTORS))
    out = np.empty((n, model["genes"]))
    for lo in range(0, n, 1024):
        hi = min(n, lo + 1024)
        block = (latent[lo:hi] * model["scale"]) @ model["loadings"]
        block += model["noise_sd"] * rng.standard_normal(block.shape)
        out[lo:hi] = block + model["mean"]
    return out, latent


def timed(fn):
    start = time.process_time()
    value = fn()
    return value, time.process_time() - start


def flip(vt: np.ndarray) -> np.ndarray:
    """scikit-learn's sign convention: each row's largest-magnitude entry positive."""
    top = np.abs(vt).argmax(axis=1)
    return vt * np.sign(vt[np.arange(len(vt)), top])[:, None]


def arpack_reference(Xc: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Top-k singular values and right vectors of the centred matrix by ARPACK (tol 0)."""
    from scipy.sparse.linalg import svds

    v0 = np.random.default_rng(7).standard_normal(min(Xc.shape))
    u, s, vt = svds(Xc, k=k, tol=0, v0=v0, maxiter=100_000)
    order = np.argsort(-s)
    u, s, vt = u[:, order], s[order], vt[order]
    resid = np.linalg.norm(Xc @ vt.T - u * s, axis=0).max() / s[0]
    return s, flip(vt), float(resid)


def compare(reference: str, shape, s_ref, vt_ref, model_pca) -> list[dict]:
    """Accuracy rows of the randomized fit against a reference, for every r."""
    n = shape[0]
    var_ref = s_ref**2 / (n - 1)
    rows = []
    for r in range(2, R_MAX + 1):
        vt = model_pca.components_[:r]
        angles = subspace_angles(vt.T, vt_ref[:r].T)
        pair = np.abs(np.sum(vt * vt_ref[:r], axis=1)).clip(max=1.0)
        var = model_pca.explained_variance_[:r]
        # variance of the data along the randomized subspace: sum of (v^T C v) over its
        # basis, from the reference's spectrum (the rest of the spectrum is below
        # var_ref[r-1] and counted as zero: an upper bound of the deficit's size)
        proj = (vt @ vt_ref[:R_MAX + 5].T) ** 2
        captured = float(np.sum(proj @ var_ref[:R_MAX + 5]))
        rows.append({"reference": reference, "rows": shape[0], "genes": shape[1], "r": r,
                     "max_subspace_angle": float(np.max(angles)),
                     "max_component_angle": float(np.max(np.arccos(pair))),
                     "max_rel_var_error": float(np.max(np.abs(var - var_ref[:r]) / var_ref[:r])),
                     "missed_variance_share": max(0.0, 1.0 - captured / float(np.sum(
                         var_ref[:r])))})
    return rows


def downstream(Z_exact: dict, Z_rand: dict, latent: np.ndarray, draws: int) -> list[dict]:
    """Paired DP-learner scores of the two maps (same labels, folds and noise draws)."""
    from sklearn.model_selection import StratifiedKFold

    from dprepro.learners.linear_regression import SSPLinearRegression
    from dprepro.learners.logistic_regression import DPLogisticRegression
    from dprepro.learners.metrics import spearman

    rng = np.random.default_rng(11)
    w = rng.standard_normal(12) / np.arange(1, 13)
    score = latent[:, :12] @ w + 0.5 * rng.standard_normal(len(latent))
    label = (score > np.median(score)).astype(int)
    response = latent[:, :12] @ rng.standard_normal(12) + rng.standard_normal(len(latent))
    folds = list(StratifiedKFold(10, shuffle=True, random_state=3).split(latent, label))
    tests = [rng.permutation(len(latent))[:100] for _ in range(draws)]
    out = []
    for r, pub_scale in sorted(Z_exact["scale"].items()):
        for task in ("logistic accuracy", "SSP Spearman"):
            got = {}
            for name, Z in (("exact", Z_exact), ("randomized", Z_rand)):
                X, vals = Z["private"][r], []
                for d in range(draws):
                    noise = np.random.default_rng([5, r, d])
                    if task == "logistic accuracy":
                        hit = 0
                        for tr, te in folds:
                            m = DPLogisticRegression(1.0, l2=0.1, scale=pub_scale, rng=noise)
                            hit += int(np.sum(m.fit(X[tr], label[tr]).predict(X[te])
                                              == label[te]))
                        vals.append(hit / len(label))
                    else:
                        te = tests[d]
                        tr = np.setdiff1d(np.arange(len(X)), te)
                        sd = float(np.std(X[tr] - X[tr].mean(axis=0)))
                        m = SSPLinearRegression(1.0, clip_x=0.5 * sd,
                                                clip_y=0.5 * float(np.std(response[tr])),
                                                rng=noise).fit(X[tr], response[tr])
                        vals.append(spearman(response[te], m.predict(X[te])))
                got[name] = np.asarray(vals)
            diff = got["randomized"] - got["exact"]
            out.append({"task": task, "r": r, "exact": got["exact"].mean(),
                        "exact_se": got["exact"].std(ddof=1) / np.sqrt(draws),
                        "randomized": got["randomized"].mean(),
                        "randomized_se": got["randomized"].std(ddof=1) / np.sqrt(draws),
                        "paired_diff": diff.mean(),
                        "paired_diff_se": diff.std(ddof=1) / np.sqrt(draws)})
    return out


def digest(model) -> str:
    return hashlib.sha256(np.ascontiguousarray(model.components_).tobytes()).hexdigest()[:16]


def run(args) -> tuple[list[dict], dict]:
    rng = np.random.default_rng(2024)
    model = draw_model(args.rows, args.genes, rng)
    X, _ = draw_rows(model, args.rows, rng)
    private, latent = draw_rows(model, N_PRIVATE, rng)
    options = {**PCA_DEFAULTS, "svd_solver": "randomized"}
    if args.oversamples is not None:
        options["oversamples"] = args.oversamples
    if args.power_iterations is not None:
        options["power_iterations"] = args.power_iterations
    summary = {"shape": list(X.shape), "options": options}
    pca, summary["randomized_cpu_s"] = timed(lambda: fit_pca(X, R_MAX, random_state=123,
                                                             **options))
    summary["byte_identical_refit"] = digest(pca) == digest(
        fit_pca(X, R_MAX, random_state=123, **options))
    rows = []
    if args.exact_rows:
        sub = X[:args.exact_rows]
        exact, summary["lapack_cpu_s_subsample"] = timed(
            lambda: fit_pca(sub, R_MAX, svd_solver="full"))
        small = fit_pca(sub, R_MAX, random_state=123, **options)
        rows += compare("lapack", sub.shape, exact.singular_values_, exact.components_, small)
        s_chk, vt_chk, _ = arpack_reference(sub - sub.mean(axis=0), R_MAX + 5)
        summary["arpack_vs_lapack_max_angle"] = float(np.max(subspace_angles(
            vt_chk[:R_MAX].T, exact.components_.T)))
        del sub, exact, small
    X -= pca.mean_  # centred in place: the reference and the transforms need no copy
    (s_ref, vt_ref, resid), summary["arpack_cpu_s"] = timed(
        lambda: arpack_reference(X, R_MAX + 5))
    summary["arpack_max_residual"] = resid
    rows += compare("arpack", X.shape, s_ref, vt_ref, pca)
    summary["top20_variance_share"] = float(np.sum(s_ref[:R_MAX]**2)
                                            / np.einsum("ij,ij->", X, X))
    Z_exact, Z_rand = {"private": {}, "scale": {}}, {"private": {}, "scale": {}}
    for r in (5, 10, R_MAX):
        for Z, vt, centre in ((Z_exact, vt_ref[:r], pca.mean_),
                              (Z_rand, pca.components_[:r], pca.mean_)):
            Z["private"][r] = (private - centre) @ vt.T
            Z["scale"][r] = float(np.mean(np.linalg.norm(X @ vt.T, axis=1)))
    summary["downstream"] = downstream(Z_exact, Z_rand, latent, args.draws)
    return rows, summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_535)
    parser.add_argument("--genes", type=int, default=17_737)
    parser.add_argument("--exact-rows", type=int, default=2_000,
                        help="rows of the LAPACK comparison (0: skip it)")
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--oversamples", type=int, default=None)
    parser.add_argument("--power-iterations", type=int, default=None)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "randomized_pca.csv"))
    args = parser.parse_args(argv)
    with threadpool_limits(1):
        rows, summary = run(args)
    for row in rows:
        if row["r"] in (2, 5, 10, 15, 20):
            print(json.dumps(row))
    print(json.dumps(summary, indent=1, default=float))
    Path(args.out).with_suffix(".json").write_text(json.dumps(summary, indent=1, default=float)
                                                   + "\n")
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: (f"{v:.3e}" if isinstance(v, float) else v)
                          for k, v in row.items()} for row in rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
