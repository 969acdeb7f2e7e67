"""A figure of the Cox analysis (forest plot of one cohort, or bias and coverage) from cox.csv."""

from dprepro.figures.style import save_figure
from dprepro.runtime import step
from dprepro.runtime.io import read_table
from dprepro.studies.rrr_survival import cox_figures
from dprepro.studies.rrr_survival import releases as rrr_releases

log = step.start(snakemake, "rrr_cox_plot")
p = step.job_params(snakemake)
table = read_table(snakemake.input.table, text_columns=("dataset", "term", "calibration"))
if p.figure == "forest":
    dataset = snakemake.wildcards.dataset
    fig = cox_figures.forest_figure(table, dataset, calibration=p.calibration,
                                    title=p.titles[dataset])
    shown = table[table["dataset"] == dataset]
    origin = p.data_origin[dataset]
else:
    fig = cox_figures.bias_coverage_figure(table, titles=p.titles)
    shown = table
    origin = ",".join(sorted(set(p.data_origin.values())))
paths = list(map(str, snakemake.output.figure))
save_figure(fig, paths, dpi=p.dpi)
records = [rrr_releases.release_record(
    m, epsilon=None if m == "original" else e, labels=p.groups[d],
    calibration="" if m == "original" else c, privacy_unit=p.privacy_unit[d])
    for (d, m, e, c) in shown[["dataset", "mechanism", "epsilon", "calibration"]]
    .drop_duplicates().itertuples(index=False)]
step.write_sidecars(snakemake, __file__, paths, config=dict(p.items()), data_origin=origin,
                    privacy=rrr_releases.table_privacy(records, compares_with_original=True))
log.info("wrote %s", paths)
