"""Plot the files of one rrr_survival figure job (a cohort's, or the utility figure of every
cohort) from the aggregated tables."""

import os

from dprepro.figures.style import save_figure
from dprepro.runtime import step
from dprepro.studies.rrr_survival import figures as rrr_figures
from dprepro.studies.rrr_survival import releases as rrr_releases

log = step.start(snakemake, "rrr_plot")
p = step.job_params(snakemake)
tables = rrr_figures.read_figure_tables(snakemake.input)
declared = set(map(str, snakemake.output))
figure_dir = os.path.dirname(snakemake.output[0])
written = {}
for dataset, stem, fig in rrr_figures.RRR_FIGURES[p.figure](
        tables, datasets=p.datasets, epsilons=p.epsilons, cohorts=p.cohorts):
    # the formats the rule declares (Figure 2's single panels: PNG only)
    paths = [f"{figure_dir}/{stem}.{ext}" for ext in ("pdf", "png")
             if f"{figure_dir}/{stem}.{ext}" in declared]
    save_figure(fig, paths, dpi=p.dpi)
    written[(dataset, stem)] = paths
files = {path for paths in written.values() for path in paths}
missing = sorted(declared - files - {f"{w}.prov.json" for w in files})
if missing:
    raise RuntimeError(f"declared outputs not written: {missing}")
# each file lists the records of the rows it draws (dataset None: every cohort); a
# cohort's rows are selected once for its files (Figure 2: 14 files a cohort)
cohort_tables = {}
for (dataset, stem), paths in written.items():
    if dataset is not None and dataset not in cohort_tables:
        cohort_tables[dataset] = {name: frame[frame["dataset"] == dataset]
                                  for name, frame in tables.items()}
    records = rrr_releases.records_from_tables(rrr_figures.shown_rows(
        p.figure, tables if dataset is None else cohort_tables[dataset], dataset, stem=stem))
    origin = p.data_origin if dataset is None else p.cohorts[dataset]["data_origin"]
    # the utility figure scores every release against the original; Figure 2's panels
    # of one private release neither draw nor score it, but their job reads it
    compares = p.figure == "utility" or any(r.mechanism == "original" for r in records)
    step.write_sidecars(snakemake, __file__, paths, config=dict(p.items()),
                        privacy=rrr_releases.table_privacy(records,
                                                        compares_with_original=compares,
                                                        job_reads_original=True,
                                                        draws=p.get("draws")),
                        data_origin=origin)
log.info("wrote %d figure files", len(files))
