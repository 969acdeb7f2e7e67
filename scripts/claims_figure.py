"""Draw results/claims.csv: a one-page summary of the verdicts and the claims page by page."""

import json

from matplotlib.backends.backend_pdf import PdfPages

from dprepro.claims import figure as claims_figure
from dprepro.claims.table import CLAIMS_PRIVACY
from dprepro.figures import style
from dprepro.runtime import step
from dprepro.runtime.io import atomic_path, read_table

log = step.start(snakemake, "claims_figure")
with open(f"{snakemake.input.table}.prov.json", encoding="utf-8") as handle:
    origin = json.load(handle)["data_origin"]
claims = read_table(snakemake.input.table)
outputs = [snakemake.output.pdf, snakemake.output.png]
style.save_figure(claims_figure.claims_summary_figure(claims), outputs,
                  dpi=snakemake.params.dpi)
pages = claims_figure.claims_pages(claims, rows_per_page=snakemake.params.rows_per_page)
with atomic_path(snakemake.output.detail) as tmp:
    # no creation date in the file: the same table gives the same bytes
    with PdfPages(tmp, metadata={"CreationDate": None, "Creator": None,
                                 "Producer": None}) as pdf:
        for title, rows in pages:
            figure = claims_figure.claims_figure(rows, title=title)
            pdf.savefig(figure)
            claims_figure.plt.close(figure)
outputs.append(snakemake.output.detail)
step.write_sidecars(snakemake, __file__, outputs, config=dict(snakemake.params.items()),
                    privacy=CLAIMS_PRIVACY, data_origin=origin)
log.info("wrote %s (%d detail pages)", ", ".join(outputs), len(pages))
