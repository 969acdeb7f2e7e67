"""Plot one ldp_indicators figure from its aggregated table(s)."""

from dprepro import plots, step
from dprepro.io import read_table

log = step.start(snakemake, "ldp_plot")
p = snakemake.params
if p.kind == "figure1":
    fig = plots.ldp_figure1(read_table(snakemake.input.table), alphas=p.alphas,
                            log_scale=p.log_scale)
elif p.kind == "mse_vs_alpha":
    fig = plots.ldp_mse_vs_alpha(read_table(snakemake.input.table))
elif p.kind == "mse_vs_n":
    fig = plots.ldp_mse_vs_n(read_table(snakemake.input.table), read_table(snakemake.input.rates))
else:
    raise ValueError(f"unknown figure kind {p.kind!r}")
outputs = plots.figure_paths(snakemake.output)
plots.save_figure(fig, outputs, dpi=p.dpi)
step.write_sidecars(snakemake, __file__, outputs, config=dict(p.items()),
                    privacy={"release": True, "mechanism": "laplace_indicators"},
                    data_origin="simulation")
log.info("wrote %s", ", ".join(map(str, outputs)))
