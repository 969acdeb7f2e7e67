"""Plot one ldp_indicators figure (the ``figure`` wildcard) from its aggregated tables."""

import pandas as pd

from dprepro import plots, step
from dprepro.io import read_table
from dprepro.ldp_tables import table_privacy_records

log = step.start(snakemake, "ldp_plot")
p = snakemake.params
tables = {name: read_table(path) for name, path in snakemake.input.items()}
fig = plots.LDP_FIGURES[snakemake.wildcards.figure](**tables, **p.options)
outputs = plots.figure_paths(snakemake.output)
plots.save_figure(fig, outputs, dpi=p.dpi)
step.write_sidecars(snakemake, __file__, outputs, config=dict(p.items()),
                    privacy=table_privacy_records(pd.concat(tables.values())),
                    data_origin="simulation")
log.info("wrote %s", ", ".join(map(str, outputs)))
