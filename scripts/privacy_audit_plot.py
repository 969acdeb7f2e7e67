"""Plot the privacy audit: claimed ε against the empirical lower bound."""

from dprepro.audit import figure as audit_figure
from dprepro.figures import style
from dprepro.runtime import step
from dprepro.runtime.io import read_table
from dprepro.runtime.privacy_record import AUDIT_PRIVACY

log = step.start(snakemake, "privacy_audit_plot")
outputs = [snakemake.output.pdf, snakemake.output.png]
style.save_figure(audit_figure.privacy_audit(read_table(snakemake.input.table)), outputs,
                  dpi=snakemake.params.dpi)
step.write_sidecars(snakemake, __file__, outputs, config=dict(snakemake.params.items()),
                    privacy=AUDIT_PRIVACY, data_origin="simulation")
log.info("wrote %s", ", ".join(outputs))
