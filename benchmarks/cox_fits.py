"""Cox fits per second: the batched fit against R's ``coxph``, lifelines and its own loop.

Run from the repository root (one BLAS thread is set here, before numpy loads):

    python benchmarks/cox_fits.py [--n 500 3000] [--designs 400] [--repeats 5]
                                  [--design factor factor+age] [--r-fits 60]
                                  [--lifelines-fits 6] [--loop-fits 40]

Designs share exponential follow-up times (about 30 % censored, rounded to 0.1: tied
event times) and differ in a random group label: ``factor`` is a 5-level factor alone
(the RRR study's Cox designs, fitted by per-level risk-set sums), ``factor+age`` 3 levels
plus a numeric covariate (the row-level kernel). Efron's ties everywhere. Per repeat,
interleaved: ``fit_cox_batch`` on all ``--designs`` designs at once ("batch"), ``CoxPH`` one
design at a time ("loop"), lifelines' ``CoxPHFitter`` one at a time, and R's ``coxph`` in a
loop inside one ``Rscript`` (timed in R, start-up excluded; skipped with a note when
``Rscript`` or the ``survival`` package is missing). Each rate is the median over the
repeats. "max |diff| R" is the largest coefficient difference between the batch and
``coxph`` polished by one more Newton step from its estimate, on the first ``--r-fits``
designs; R's timed loop uses its defaults.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy loads: one BLAS thread, for every side

import argparse  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from dprepro.survival.cox import CoxPH, fit_cox_batch, treatment_dummies  # noqa: E402

DESIGNS = {"factor": (5, False), "factor+age": (3, True)}  # levels, with the covariate

R_SCRIPT = r"""
suppressPackageStartupMessages(library(survival))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
fits <- as.integer(args[2])
labels <- grep("^g", names(d), value = TRUE)[seq_len(fits)]
f <- function(lab, ...) {
  if ("age" %in% names(d)) coxph(Surv(time, event) ~ factor(d[[lab]]) + d$age, ...)
  else coxph(Surv(time, event) ~ factor(d[[lab]]), ...)
}
attach(d)
if (args[3] == "time") {
  st <- system.time(for (lab in labels) f(lab))
  cat(fits / st[["user.self"]], "\n")
} else {
  # R's fit, then one more Newton step from it (its score is then ~1e-12). Tightening eps
  # instead does not help: R's criterion is the log-likelihood's relative change, which
  # at n = 3000 with many ties sits in rounding noise, and the iterations drift (by up
  # to 1e-6, the score growing to 1e-4) while the noisy log-likelihood "increases"
  polish <- function(lab) {
    fit <- f(lab)
    coef(suppressWarnings(f(lab, init = coef(fit), control = coxph.control(iter.max = 1))))
  }
  coefs <- t(sapply(labels, polish))
  write.csv(coefs, args[4], row.names = FALSE)
}
"""


def _data(n: int, designs: int, k: int, covariate: bool, rng: np.random.Generator):
    labels = rng.integers(0, k, (designs, n))
    age = rng.normal(60, 10, (n, 1))
    rate = 0.1 * np.exp(0.4 * labels[0] + 0.02 * (age[:, 0] - 60))
    t0, c = rng.exponential(1 / rate), rng.exponential(25, n)
    t, e = np.round(np.minimum(t0, c), 1), (t0 <= c).astype(int)
    return t, e, labels, (age if covariate else None)


def _cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _r_available() -> bool:
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(survival)"], capture_output=True)
    return probe.returncode == 0


class _R:
    """R's coxph loop on the benchmark's data, through one CSV in a temporary folder."""

    def __init__(self, folder: Path, t, e, labels, age, fits: int):
        frame = pd.DataFrame(labels[:fits].T, columns=[f"g{b}" for b in range(fits)])
        frame.insert(0, "event", e)
        frame.insert(0, "time", t)
        if age is not None:
            frame["age"] = age[:, 0]
        self.csv, self.script, self.fits = folder / "data.csv", folder / "coxph.R", fits
        frame.to_csv(self.csv, index=False)
        self.script.write_text(R_SCRIPT)

    def _run(self, *args) -> str:
        out = subprocess.run(["Rscript", str(self.script), str(self.csv), str(self.fits), *args],
                             capture_output=True, text=True, check=True)
        return out.stdout

    def rate(self) -> float:
        return float(self._run("time").split()[0])

    def coef(self) -> np.ndarray:
        dest = self.csv.with_name("coef.csv")
        self._run("coef", str(dest))
        return pd.read_csv(dest).to_numpy()


def _lifelines_loop(t, e, X):
    from lifelines import CoxPHFitter

    frames = []
    for x in X:
        df = pd.DataFrame(x, columns=[f"x{j}" for j in range(x.shape[1])])
        df["T"], df["E"] = t, e
        frames.append(df)

    def loop():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for df in frames:
                CoxPHFitter().fit(df, "T", "E")
    return loop


def _case(n, design, args, rng, use_r, folder) -> dict:
    k, covariate = DESIGNS[design]
    t, e, labels, age = _data(n, args.designs, k, covariate, rng)
    X = treatment_dummies(labels, k, age)
    fit_cox_batch(t, e, X[:2])  # warm-up
    lifelines = _lifelines_loop(t, e, X[: args.lifelines_fits])
    r = _R(folder, t, e, labels, age, args.r_fits) if use_r else None
    rates = {"batch": [], "loop": [], "lifelines": [], "R": []}
    for _ in range(args.repeats):  # interleaved, so a busy machine slows every side alike
        rates["batch"].append(args.designs / _cpu(lambda: fit_cox_batch(t, e, X)))
        rates["loop"].append(args.loop_fits / _cpu(
            lambda: [CoxPH().fit(t, e, X[b]) for b in range(args.loop_fits)]))
        rates["lifelines"].append(args.lifelines_fits / _cpu(lifelines))
        if r is not None:
            rates["R"].append(r.rate())
    out = {"design": design, "n": n, "events": int(e.sum()),
           "event times": len(np.unique(t[e == 1]))}
    out.update({side: float(np.median(v)) if v else np.nan for side, v in rates.items()})
    coef = fit_cox_batch(t, e, X).coef
    out["max |diff| R"] = (float(np.max(np.abs(r.coef() - coef[: args.r_fits])))
                           if r is not None else np.nan)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[500, 3000])
    parser.add_argument("--design", nargs="+", choices=sorted(DESIGNS), default=list(DESIGNS))
    parser.add_argument("--designs", type=int, default=400, help="designs of the batch")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--r-fits", type=int, default=60)
    parser.add_argument("--lifelines-fits", type=int, default=6)
    parser.add_argument("--loop-fits", type=int, default=40)
    args = parser.parse_args(argv)
    use_r = _r_available()
    rng = np.random.default_rng(20240611)
    print(f"numpy {np.__version__}; one BLAS thread; CPU time; medians of {args.repeats} "
          f"interleaved repeats; Efron; R: {'coxph loop' if use_r else 'not available'}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for design in args.design:
            for n in args.n:
                rows.append(_case(n, design, args, rng, use_r, Path(tmp)))
    table = pd.DataFrame(rows)
    table["batch / R"] = table["batch"] / table["R"]
    table["batch / loop"] = table["batch"] / table["loop"]
    table["batch / lifelines"] = table["batch"] / table["lifelines"]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))


if __name__ == "__main__":
    main()
