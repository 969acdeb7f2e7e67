"""Plot the privacy audit: claimed ε against the empirical lower bound."""

from dprepro import plots, step
from dprepro.io import read_table
from dprepro.privacy import AUDIT_PRIVACY

log = step.start(snakemake, "privacy_audit_plot")
outputs = [snakemake.output.pdf, snakemake.output.png]
plots.save_figure(plots.privacy_audit(read_table(snakemake.input.table)), outputs,
                  dpi=snakemake.params.dpi)
step.write_sidecars(snakemake, __file__, outputs, config=dict(snakemake.params.items()),
                    privacy=AUDIT_PRIVACY, data_origin="simulation")
log.info("wrote %s", ", ".join(outputs))
