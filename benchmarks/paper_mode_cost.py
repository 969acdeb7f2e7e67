"""Paper mode's CPU-hours per rule and in total, and its wall time on 16-core nodes, from the
measured steps of benchmarks/paper_scale.csv.

    python benchmarks/paper_mode_cost.py [--table benchmarks/paper_scale.csv] [--nodes 1 2 4]

(benchmarks/bench_paper_scale.py prints the same at its end.) Every job of the paper mode's
repr_transfer chain runs on one thread (the rules' ``threads: 1``); its CPU time is the
measured step's, times how often config/paper.yaml makes the job run it:

* ``repr_search`` (PCA, random projection): the search's r is its only parameter, so at most
  ``dim_range`` distinct candidates are scored per pipeline (``trials`` = 50 proposals
  repeat them; a repeat reuses its score), each trial's score as measured for the pipeline's
  DP logistic variant; PCA adds one randomized fit at r_max per pair fold;
* ``repr_fit`` (PCA, its equal-dimension control, the random projection): one fit per
  pipeline's selected candidate (its mapping serves every seed);
* ``repr_clipping_weights``: every (d, ε_learner) of every method, at most methods x ε per
  pipeline, at the measured time of one;
* ``repr_cancer_type``, ``repr_drug``: the measured jobs (every method of the pipeline;
  ``repr_drug`` per drug, 265 drugs per pipeline in 16 chunks).

Not measured here, bounded instead (``ESTIMATES``): repr_transfer's data jobs (reading and
quantile-mapping the Parquet matrices), its tables, claims and figures, and the other
studies (ldp_indicators, rrr_survival, audit), whose paper-mode sizes are the full run's:
bounded by the whole full run's measured CPU. The VAE and the joint model (their searches,
fits and the control ``vae_svae_dim``) are excluded: they need a GPU and are budgeted by
``selection.trial_minutes``; their budget is printed beside the total.

Wall time: the chain's stages run one after another (downloads excluded), each stage's
jobs packed longest-first onto the cores, and the other jobs fill idle cores, so the wall
time is the larger of the chain's time and the total CPU over the cores (a lower bound of
any schedule, reached when the filler fits in the chain's idle cores).
"""

from __future__ import annotations

import argparse
import csv
import heapq
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PAPER_DRUGS = 265  # the paper's GDSC drugs (IC50_v17)
CORES_PER_NODE = 16
#: CPU-s of steps not measured at the paper's size: bounds, with their reason.
ESTIMATES = {
    "repr data": (2 * 120.0, "repr_public_data, repr_private_data: read, quantile-map and "
                             "write 10,535 and 2 x 1,018 rows of 17,737 genes; bounded at "
                             "2 minutes each (tcga_preprocess parses 60,498 x 10,535 in 71 s)"),
    "repr tables": (60.0, "hyperparameter, cancer-type and drug tables, claims, 8 figures: "
                          "the full run's repr tables and figures took under a minute"),
    "other studies": (573.0, "ldp_indicators, rrr_survival, audit at the full run's sizes (paper "
                             "mode's): bounded by the whole full run's measured CPU, "
                             "510 s user + 63 s system (docs/performance.md)"),
}


def read_rows(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _row(rows, rule, contains) -> dict:
    found = [r for r in rows if r["rule"] == rule and contains in r["step"]]
    if len(found) != 1:
        raise KeyError(f"paper_scale.csv needs one {rule} row with {contains!r}, has "
                       f"{len(found)}: rerun benchmarks/bench_paper_scale.py")
    return found[0]


def _f(row, key) -> float:
    return float(row[key])


def rule_costs(rows: list[dict], paper: dict) -> list[dict]:
    """Per rule of the chain: jobs, the CPU-s of each job, and how they were obtained."""
    pipelines = list(paper["pipelines"])
    sel = paper["selection"]
    low, high = (int(v) for v in sel["dim_range"])
    scored = min(int(sel["trials"]), high - low + 1)
    trial = {v: _f(_row(rows, "repr_search", f"variant {v}"), "per_fit_s")
             for v in ("paper", "cms11")}
    # as_published scores with the paper's objective perturbation, corrected with cms11
    trials = scored * (trial["paper"] + trial["cms11"] * (len(pipelines) - 1))
    pca = _row(rows, "repr_fit", "PCA r = 20")
    fit, job = _f(pca, "per_fit_s"), _f(pca, "cpu_s")
    overhead = job - fit  # the process, its data and the transforms
    clip = max(_f(_row(rows, "repr_clipping_weights", f"({law})"), "per_fit_s")
               for law in ("wishart", "laplace"))
    methods = 8  # 4 representations, 2 equal-dimension controls, 2 gene baselines
    settings = len(pipelines) * methods * len(paper["drug"]["epsilons"])
    cancer = [_f(_row(rows, "repr_cancer_type", f"({p})"), "cpu_s") for p in pipelines]
    chunks = int(paper["drug"]["chunks"])
    drug = []
    for p in pipelines:
        r = _row(rows, "repr_drug", f"every method ({p})")
        per_drug = _f(r, "per_fit_s")
        largest = -(-PAPER_DRUGS // chunks)
        start = _f(r, "cpu_s") - largest * per_drug  # start-up and data of one job
        sizes = [len(range(c, PAPER_DRUGS, chunks)) for c in range(chunks)]
        drug += [start + n * per_drug for n in sizes]
    out = [
        {"rule": "gdsc_preprocess", "stage": 0,
         "jobs": [_f(_row(rows, "gdsc_preprocess", "Parquet"), "cpu_s")], "how": "measured"},
        {"rule": "tcga_preprocess", "stage": 0,
         "jobs": [_f(_row(rows, "tcga_preprocess", "Parquet"), "cpu_s")], "how": "measured"},
        {"rule": "repr_public_data, repr_private_data", "stage": 1,
         "jobs": [ESTIMATES["repr data"][0] / 2] * 2, "how": "bound"},
        {"rule": "repr_search (pca)", "stage": 2,
         "jobs": [overhead + int(sel["pair_folds"]) * fit + trials],
         "how": f"{sel['pair_folds']} randomized fits + {scored} scored trials a pipeline"},
        {"rule": "repr_search (random_projection)", "stage": 2, "jobs": [overhead + trials],
         "how": f"{scored} scored trials a pipeline"},
        {"rule": "repr_fit (pca, pca_vae_dim, random_projection)", "stage": 3,
         "jobs": [job + (len(pipelines) - 1) * fit] * 3,
         "how": "one randomized fit per pipeline (the projection bounded by it)"},
        {"rule": "repr_clipping_weights", "stage": 3, "jobs": [settings * clip],
         "how": f"<= {settings} settings x one measured"},
        {"rule": "repr_cancer_type", "stage": 4, "jobs": cancer, "how": "measured jobs"},
        {"rule": "repr_drug", "stage": 4, "jobs": drug,
         "how": f"{PAPER_DRUGS} drugs x measured per drug, {chunks} chunks a pipeline"},
        {"rule": "repr tables, claims, figures", "stage": 5,
         "jobs": [ESTIMATES["repr tables"][0]], "how": "bound"},
    ]
    return out


def makespan(jobs: list[float], cores: int) -> float:
    """Longest-processing-time-first packing of ``jobs`` (seconds) onto ``cores``."""
    loads = [0.0] * min(cores, max(1, len(jobs)))
    heapq.heapify(loads)
    for t in sorted(jobs, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + t)
    return max(loads)


def wall_time(costs: list[dict], other_s: float, cores: int) -> float:
    """max(the chain's stages one after another, all CPU over the cores), in seconds."""
    stages = sorted({c["stage"] for c in costs})
    chain = sum(makespan([t for c in costs if c["stage"] == s for t in c["jobs"]], cores)
                for s in stages)
    total = sum(sum(c["jobs"]) for c in costs) + other_s
    return max(chain, total / cores)


def vae_budget_hours(paper: dict) -> float:
    """The VAE searches' wall-clock budget (both VAE models, every pipeline), in hours."""
    sel = paper["selection"]
    trials = int(sel["vae_trials"]) + int(sel["supervised_vae_trials"])
    return len(paper["pipelines"]) * trials * float(sel["trial_minutes"]) / 60


def report(rows: list[dict], paper: dict, nodes=(1, 2, 4)) -> str:
    costs = rule_costs(rows, paper)
    other = ESTIMATES["other studies"][0]
    lines = [f"{'rule':<48} {'jobs':>4} {'CPU-h':>7}  how"]
    for c in costs:
        lines.append(f"{c['rule']:<48} {len(c['jobs']):>4} {sum(c['jobs']) / 3600:>7.2f}  "
                     f"{c['how']}")
    lines.append(f"{'other studies (ldp_indicators, rrr_survival, audit)':<48} {'':>4} "
                 f"{other / 3600:>7.2f}  bound")
    total = sum(sum(c["jobs"]) for c in costs) + other
    lines.append(f"{'total, excluding the VAE':<48} {'':>4} {total / 3600:>7.2f}")
    for n in nodes:
        cores = n * CORES_PER_NODE
        lines.append(f"wall time on {n} node(s) of {CORES_PER_NODE} cores: "
                     f"{wall_time(costs, other, cores) / 60:.0f} min")
    lines.append(f"excluded, the VAE and the joint model: searches budgeted at "
                 f"{vae_budget_hours(paper):.0f} h (selection.trial_minutes; a GPU), plus "
                 "their fits")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default=str(ROOT / "benchmarks" / "paper_scale.csv"))
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args(argv)
    paper = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())["repr_transfer"]
    print(report(read_rows(Path(args.table)), paper, args.nodes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
