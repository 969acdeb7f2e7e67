"""Plot one rrr_survival figure rule's files from their aggregated tables."""

from dprepro import plots, plots_rrr, rrr_study, step
from dprepro.io import read_table

log = step.start(snakemake, "rrr_plot")
p = snakemake.params
figures = plots_rrr.RRR_FIGURES[p.figure](snakemake.input, datasets=p.datasets, epsilons=p.epsilons,
                                      cohorts=p.cohorts)
written = []
for stem, fig in figures:
    paths = [f"{p.figure_dir}/{stem}.pdf", f"{p.figure_dir}/{stem}.png"]
    plots.save_figure(fig, paths, dpi=p.dpi)
    written.extend(paths)
sidecars = {f"{w}.prov.json" for w in written}
missing = sorted(set(map(str, snakemake.output)) - set(written) - sidecars)
if missing:
    raise RuntimeError(f"declared outputs not written: {missing}")
# only the records of the cohorts this job drew (a cohort's figure lists its own releases)
tables = (read_table(path) for path in snakemake.input)
records = rrr_study.records_from_tables(t[t["dataset"].isin(p.datasets)] for t in tables)
step.write_sidecars(snakemake, __file__, written, config=dict(p.items()),
                    privacy=rrr_study.table_privacy(records, compares_with_original=True,
                                                    draws=p.get("draws")),
                    data_origin=p.data_origin)
log.info("wrote %d figure files", len(written))
