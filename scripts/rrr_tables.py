"""Aggregate the rrr_survival releases into one table (kind given by the rule)."""

import pandas as pd

from dprepro import rrr_study, step

log = step.start(snakemake, "rrr_tables")
p = snakemake.params


def read(path):
    return pd.read_parquet(path) if str(path).endswith(".parquet") else pd.read_csv(path)


def key(release):
    return release["dataset"], release["mechanism"], release["epsilon"]


def load(name, releases):
    return {key(r): read(path) for r, path in zip(releases, snakemake.input[name], strict=True)}


medians = load("medians", p.releases)
# group order per dataset: the original's where the table uses it, else the releases'
# (the bands table reads released data only, so it never touches the original)
labels = {}
for r in sorted(p.releases, key=lambda r: r["mechanism"] != "original"):
    labels.setdefault(r["dataset"], list(dict.fromkeys(medians[key(r)]["group"])))
infos = {key(r): {"dataset": r["dataset"], "data_origin": r["data_origin"],
                  "labels": labels[r["dataset"]],
                  "privacy": rrr_study.privacy_columns(r["mechanism"], r["epsilon"],
                                                       len(labels[r["dataset"]]),
                                                       r["calibration"])}
         for r in p.releases}


def original(frames, dataset):
    return frames[(dataset, "original", None)]


if p.kind == "medians":
    table = rrr_study.median_table((infos[k], f) for k, f in medians.items())
elif p.kind in ("logrank", "rejection"):
    logrank = load("logrank", p.logrank_releases)
    if p.kind == "logrank":
        table = rrr_study.logrank_table((infos[k], f) for k, f in logrank.items())
    else:
        table = rrr_study.rejection_table(
            ((infos[k], f, original(logrank, k[0])) for k, f in logrank.items()
             if k[1] != "original"), significance=p.significance)
else:
    curves = load("curves", p.releases)
    private = [k for k in curves if k[1] != "original"]
    if p.kind == "utility":
        table = rrr_study.utility_table(
            (infos[k], curves[k], medians[k], original(curves, k[0]), original(medians, k[0]))
            for k in private)
    elif p.kind == "bands":
        table = rrr_study.band_table(((infos[k], curves[k]) for k in private),
                                     level=p.band_level)
    elif p.kind == "curves":
        table = rrr_study.curve_table((infos[k], f) for k, f in curves.items())
    else:
        raise ValueError(f"unknown table kind {p.kind!r}")
step.write_csv(table, snakemake.output.table)
log.info("wrote %s (%d rows)", snakemake.output.table, len(table))
step.write_sidecars(
    snakemake, __file__, [snakemake.output.table], config=dict(p.items()),
    privacy={"release": p.kind == "bands",
             "note": ("built from privatised releases only" if p.kind == "bands" else
                      "non-private reference: holds or compares with the original data "
                      "(mechanism = original)"),
             "mechanisms": sorted({r["mechanism"] for r in p.releases}),
             "epsilons": sorted({r["epsilon"] for r in p.releases if r["epsilon"] is not None}),
             "true_epsilon": "column true_epsilon (RRR paper calibration: ε + ln(k−1); "
                             "LNTE as published: ∞)"},
    data_origin=",".join(sorted({r["data_origin"] for r in p.releases})),
)
