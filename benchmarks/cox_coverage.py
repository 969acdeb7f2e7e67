"""Coverage of the true log hazard ratio by the RRR Cox estimators, over replicated cohorts.

An accuracy benchmark, not a timing one: the measurement the workflow cannot make. The
workflow's Cox claims fit one fixed cohort per dataset and vary only the privacy noise over
draws, so their coverage rows cannot test nominal coverage (they are ``untestable``). Here
each replicate draws a FRESH cohort of the ``sim300`` design and a FRESH RRR release:

* the cohort: ``dprepro.data.cohorts.simulated_cox_cohort`` with the parameters of
  ``datasets.sim300`` in ``config/config.yaml`` (groups, hazard ratios, baseline and
  censoring rates, follow-up), read from the file so they stay in step, at each ``--n``
  (default the design's own n, 300, and 1,000);
* the release and the fits: ``dprepro.studies.rrr_survival.cox.cox_fits``, the study's own
  function, with the study's settings read from the same file (``rrr_survival.epsilons``,
  ``calibration`` and ``extra_calibrations``, ``cox.estimators``, ``cox.simex_replicates``,
  ``cox.lambdas``, ``cox.tau_at_risk``): ``original`` and ``original_tau`` (true labels),
  ``naive``, ``mc_simex`` (quadratic), ``mc_simex_loglinear`` (the same replicates via
  ``SimexResult.extrapolated("loglinear")``) and ``corrected_score`` (τ where 10 % of the
  rows are still at risk), one draw per release. ``--configfile config/full.yaml`` lays the
  full run's overlay over it (B = 50 replicates on λ = 0, 0.5, ..., 2), as Snakemake does.

Per n, estimator, calibration, stated ε and group term it reports, against the TRUE log HR
(log of the configured hazard ratio): the mean estimate and its bias (normal Monte Carlo
interval), the empirical SD over replicates (chi-square interval) and the mean SE (normal
interval; also the median SE, robust to the few huge SEs of near-singular fits), all over
the converged fits; the coverage of the true log HR by the 95 %
interval among converged fits and over all replicates (a replicate without a fit covers
nothing), and the convergence share (a fit with an estimate and a positive variance), the
three with 95 % Clopper–Pearson intervals. Under proportional hazards the τ cut does not
change the true log HR, so ``original_tau`` and ``corrected_score`` are scored against the
same truth.

Seeds: every cohort draws from ``SeedSequence`` ``seed_sequence(seed, "rrr_survival",
"bench/cox_coverage/cohort/n<n>", replicate)``; every release and MC-SIMEX stream is the
study's own (:func:`~dprepro.studies.rrr_survival.cox.release_stream`) for the dataset name
``bench_cox_coverage/n<n>/rep<replicate>``, so replicate r is the same whatever ``--reps``.
No global random state. The cohorts have their own event times, so the fits cannot be
batched across replicates (``fit_cox_batch`` batches designs on shared times); within a
replicate the library batches the MC-SIMEX replicates.

Run from the repository root (about 1 minute with the defaults on one core of a shared 2-core
machine, 2026-12-04; the full overlay about 6.5 minutes):

    python benchmarks/cox_coverage.py [--reps 300] [--n 300 1000] [--configfile config/full.yaml]
                                      [--out cox_coverage.csv]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from dprepro.config.reference import overlay  # noqa: E402
from dprepro.config.schema import fill_defaults, load_schema  # noqa: E402
from dprepro.data.cohorts import simulated_cox_cohort  # noqa: E402
from dprepro.mechanisms.rrr import RevisedRandomizedResponse  # noqa: E402
from dprepro.runtime.seeds import seed_sequence  # noqa: E402
from dprepro.studies.rrr_survival.cox import cox_fits, term_names  # noqa: E402

DESIGN = "sim300"
#: Estimators in table order (``original_tau`` is fitted with ``corrected_score``).
ORDER = ["original", "original_tau", "naive", "mc_simex", "mc_simex_loglinear",
         "corrected_score"]
COLUMNS = ["n", "estimator", "calibration", "epsilon", "true_epsilon", "term", "true_log_hr",
           "reps", "converged", "converged_lo", "converged_hi", "mean", "bias", "bias_lo",
           "bias_hi", "emp_sd", "emp_sd_lo", "emp_sd_hi", "se_mean", "se_mean_lo",
           "se_mean_hi", "se_median", "coverage_converged", "coverage_converged_lo",
           "coverage_converged_hi", "coverage_all", "coverage_all_lo", "coverage_all_hi"]


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for ``k`` successes in ``n`` trials (NaN for ``n = 0``)."""
    if n == 0:
        return np.nan, np.nan
    alpha = 1.0 - level
    lower = 0.0 if k == 0 else stats.beta.ppf(alpha / 2, k, n - k + 1)
    upper = 1.0 if k == n else stats.beta.ppf(1 - alpha / 2, k + 1, n - k)
    return float(lower), float(upper)


def load_config(configfile: str | None) -> dict:
    """``config/config.yaml``, with ``configfile`` laid over it as Snakemake does and the
    schema's defaults filled in."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    if configfile:
        config = overlay(config, yaml.safe_load(Path(configfile).read_text(encoding="utf-8")))
    return fill_defaults(config, load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml"))


def settings(config: dict) -> dict:
    """The ``sim300`` design and the study's Cox settings, from the configuration."""
    spec = config["datasets"][DESIGN]
    sim = spec["simulation"]
    study = config["rrr_survival"]
    cox = study.get("cox", {})
    calibrations = [study.get("calibration", "paper")] + list(study.get("extra_calibrations",
                                                                        []))
    return {
        "seed": int(config["seed"]),
        "groups": [str(g) for g in spec["groups"]],
        "n": int(sim["n"]),
        "hazard_ratios": [float(h) for h in sim["hazard_ratios"]],
        "baseline_rate": float(sim["baseline_rate"]),
        "censoring_rate": float(sim["censoring_rate"]),
        "follow_up": float(sim.get("follow_up", 0.0) or 0.0),
        "releases": [(float(e), c) for c in calibrations for e in study["epsilons"]],
        "estimators": tuple(cox.get("estimators", ("naive", "mc_simex", "corrected_score"))),
        "simex_replicates": int(cox.get("simex_replicates", 20)),
        "lambdas": tuple(float(x) for x in cox.get("lambdas", (0.0, 1.0, 2.0))),
        "tau_at_risk": float(cox.get("tau_at_risk", 0.1)),
    }


def replicate_fits(s: dict, n: int, rep: int) -> pd.DataFrame:
    """One fresh cohort of size ``n`` and one fresh release per (calibration, ε), fitted by
    the study's :func:`cox_fits` (one draw)."""
    rng = np.random.default_rng(seed_sequence(s["seed"], "rrr_survival",
                                              f"bench/cox_coverage/cohort/n{n}", rep))
    cohort = simulated_cox_cohort(rng, n=n, groups=s["groups"],
                                  hazard_ratios=s["hazard_ratios"],
                                  baseline_rate=s["baseline_rate"],
                                  censoring_rate=s["censoring_rate"],
                                  follow_up=s["follow_up"])
    fits = cox_fits(cohort, dataset=f"bench_cox_coverage/n{n}/rep{rep}", labels=s["groups"],
                    releases=s["releases"], draws=1, seed=s["seed"],
                    estimators=s["estimators"], simex_replicates=s["simex_replicates"],
                    lambdas=s["lambdas"], tau_at_risk=s["tau_at_risk"],
                    data_origin="simulation")
    return fits.assign(rep=rep)


def summarise(fits: pd.DataFrame, truth: dict, n: int, groups, calibrations) -> pd.DataFrame:
    """One row per estimator, calibration, ε and term (:data:`COLUMNS`), in the order of
    :data:`ORDER` and ``calibrations``."""
    rows = []
    keys = ["estimator", "calibration", "epsilon", "term"]
    for (estimator, calibration, epsilon, term), part in fits.groupby(keys, sort=False,
                                                                      dropna=False):
        beta = truth[term]
        ok = part[part["converged"].astype(bool)]
        reps, m = len(part), len(ok)
        est, se = ok["log_hr"].to_numpy(float), ok["se"].to_numpy(float)
        hit = (ok["ci_lower"] <= beta) & (beta <= ok["ci_upper"])
        mean = float(est.mean()) if m else np.nan
        sd = float(est.std(ddof=1)) if m > 1 else np.nan
        half = 1.959964 * sd / np.sqrt(m) if m > 1 else np.nan
        se_half = 1.959964 * float(se.std(ddof=1)) / np.sqrt(m) if m > 1 else np.nan
        if m > 1:
            sd_lo = sd * np.sqrt((m - 1) / stats.chi2.ppf(0.975, m - 1))
            sd_hi = sd * np.sqrt((m - 1) / stats.chi2.ppf(0.025, m - 1))
        else:
            sd_lo = sd_hi = np.nan
        true_eps = (RevisedRandomizedResponse(epsilon=epsilon, categories=list(groups),
                                              calibration=calibration).true_epsilon
                    if calibration else np.nan)
        rows.append({
            "n": n, "estimator": estimator, "calibration": calibration or "-",
            "epsilon": epsilon, "true_epsilon": true_eps, "term": term, "true_log_hr": beta,
            "reps": reps, "converged": m / reps,
            **dict(zip(("converged_lo", "converged_hi"), clopper_pearson(m, reps),
                       strict=True)),
            "mean": mean, "bias": mean - beta, "bias_lo": mean - beta - half,
            "bias_hi": mean - beta + half, "emp_sd": sd, "emp_sd_lo": sd_lo,
            "emp_sd_hi": sd_hi, "se_mean": float(se.mean()) if m else np.nan,
            "se_mean_lo": float(se.mean()) - se_half if m else np.nan,
            "se_mean_hi": float(se.mean()) + se_half if m else np.nan,
            "se_median": float(np.median(se)) if m else np.nan,
            "coverage_converged": float(hit.mean()) if m else np.nan,
            **dict(zip(("coverage_converged_lo", "coverage_converged_hi"),
                       clopper_pearson(int(hit.sum()), m), strict=True)),
            "coverage_all": int(hit.sum()) / reps,
            **dict(zip(("coverage_all_lo", "coverage_all_hi"),
                       clopper_pearson(int(hit.sum()), reps), strict=True)),
        })
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["_order"] = out["estimator"].map({e: i for i, e in enumerate(ORDER)})
    out["_cal"] = out["calibration"].map({c: i for i, c in enumerate(calibrations)})
    out = out.sort_values(["_order", "_cal", "epsilon", "term"], kind="stable")
    return out.drop(columns=["_order", "_cal"]).reset_index(drop=True)


def _interval(value, lo, hi, digits: int = 3) -> str:
    if not np.isfinite(value):
        return "-"
    return f"{value:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def print_table(table: pd.DataFrame) -> None:
    """The tidy table, one line per row, intervals in brackets."""
    text = pd.DataFrame({
        "n": table["n"], "estimator": table["estimator"], "cal": table["calibration"],
        "eps": table["epsilon"].map(lambda e: "-" if not np.isfinite(e) else f"{e:g}"),
        "term": table["term"], "truth": table["true_log_hr"].map("{:.3f}".format),
        "conv": table["converged"].map("{:.3f}".format),
        "bias [95% MC]": [_interval(*r) for r in
                          table[["bias", "bias_lo", "bias_hi"]].to_numpy()],
        "emp SD": table["emp_sd"].map("{:.3f}".format),
        "mean SE": table["se_mean"].map("{:.3f}".format),
        "median SE": table["se_median"].map("{:.3f}".format),
        "cover|conv [CP]": [_interval(*r) for r in table[
            ["coverage_converged", "coverage_converged_lo", "coverage_converged_hi"]
        ].to_numpy()],
        "cover all [CP]": [_interval(*r) for r in table[
            ["coverage_all", "coverage_all_lo", "coverage_all_hi"]].to_numpy()],
    })
    with pd.option_context("display.width", 250, "display.max_rows", None,
                           "display.max_columns", None):
        print(text.to_string(index=False))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="replicated cohorts per n")
    parser.add_argument("--n", type=int, nargs="+", default=None,
                        help=f"cohort sizes (default: {DESIGN}'s n and 1000)")
    parser.add_argument("--configfile", default=None,
                        help="overlay on config/config.yaml, e.g. config/full.yaml")
    parser.add_argument("--out", default=None, help="CSV path for the table")
    args = parser.parse_args(argv)
    s = settings(load_config(args.configfile))
    sizes = args.n or [s["n"], 1000]
    truth = dict(zip(term_names(s["groups"]), np.log(s["hazard_ratios"][1:]), strict=True))
    print(f"{DESIGN} design: groups {s['groups']}, HR {s['hazard_ratios']}, baseline "
          f"{s['baseline_rate']:g}, censoring {s['censoring_rate']:g}; releases "
          f"{s['releases']}; MC-SIMEX B = {s['simex_replicates']} on lambda "
          f"{list(s['lambdas'])}; tau_at_risk {s['tau_at_risk']:g}; {args.reps} replicates")
    tables, total = [], time.perf_counter()
    for n in sizes:
        start = time.perf_counter()
        fits = pd.concat([replicate_fits(s, n, r) for r in range(args.reps)],
                         ignore_index=True)
        calibrations = list(dict.fromkeys(c for _, c in s["releases"]))
        tables.append(summarise(fits, truth, n, s["groups"], calibrations))
        print(f"n = {n}: {args.reps} replicates in {time.perf_counter() - start:.1f} s",
              flush=True)
    table = pd.concat(tables, ignore_index=True)
    print_table(table)
    print(f"total {time.perf_counter() - total:.1f} s")
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
