"""Plot one repr_transfer figure from its summary table."""

from dprepro import repr_privacy, repr_study, step
from dprepro.io import read_table
from dprepro.plots_base import save_figure

log = step.start(snakemake, "repr_figure")
p = snakemake.params
out = snakemake.output
figure, pipeline = snakemake.wildcards.figure, snakemake.wildcards.pipeline
summary = read_table(snakemake.input.summary)
fig = repr_study.draw_figure(figure, summary, settings=p.settings, data_origin=p.data_origin,
                             pipeline=pipeline)
save_figure(fig, [out.pdf, out.png], dpi=p.dpi)
drawn = summary[summary["pipeline"] == pipeline]
records = repr_privacy.table_records(drawn, kind=repr_study.FIGURES[figure]["kind"],
                                     settings=p.settings)
step.write_sidecars(snakemake, __file__, [out.pdf, out.png], config=dict(p.items()),
                    privacy=repr_privacy.distinct(records), data_origin=p.data_origin)
log.info("wrote %s and %s", out.pdf, out.png)
