"""Plot one repr_transfer figure from its summary table."""

from dprepro.figures.style import save_figure
from dprepro.runtime import step
from dprepro.runtime.io import read_table
from dprepro.studies.repr_transfer import figures as repr_figures
from dprepro.studies.repr_transfer import privacy as repr_privacy

log = step.start(snakemake, "repr_figure")
p = step.job_params(snakemake)
out = snakemake.output
figure, pipeline = snakemake.wildcards.figure, snakemake.wildcards.pipeline
summary = read_table(snakemake.input.summary)
fig = repr_figures.draw_figure(figure, summary, settings=p.settings, data_origin=p.data_origin,
                             pipeline=pipeline)
save_figure(fig, [out.pdf, out.png], dpi=p.dpi)
drawn = summary[summary["pipeline"] == pipeline]
records = repr_privacy.table_records(drawn, kind=repr_figures.FIGURES[figure]["kind"],
                                     settings=p.settings)
step.write_sidecars(snakemake, __file__, [out.pdf, out.png], config=dict(p.items()),
                    privacy=repr_privacy.distinct(records), data_origin=p.data_origin)
log.info("wrote %s and %s", out.pdf, out.png)
