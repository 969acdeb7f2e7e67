"""Plot one ldp_indicators figure (the ``figure`` wildcard) from its aggregated tables."""

import pandas as pd

from dprepro.figures import style
from dprepro.runtime import step
from dprepro.runtime.io import read_table
from dprepro.studies.ldp_indicators import figures
from dprepro.studies.ldp_indicators.tables import table_privacy_records

log = step.start(snakemake, "ldp_plot")
p = step.job_params(snakemake)
tables = {name: read_table(path) for name, path in snakemake.input.items()}
fig = figures.LDP_FIGURES[snakemake.wildcards.figure](**tables, **p.options)
outputs = figures.figure_paths(snakemake.output)
style.save_figure(fig, outputs, dpi=p.dpi)
step.write_sidecars(snakemake, __file__, outputs, config=dict(p.items()),
                    privacy=table_privacy_records(pd.concat(tables.values())),
                    data_origin="simulation")
log.info("wrote %s", ", ".join(map(str, outputs)))
