"""Render the report's tables (claims, headline tables) as sortable HTML pages."""

import pandas as pd

from dprepro.figures.html_table import html_table
from dprepro.runtime import step
from dprepro.runtime.io import atomic_path
from dprepro.runtime.privacy_record import non_private

log = step.start(snakemake, "report_tables")
# each page's title and caption are the rule's params (from the studies' manifests), so a
# changed caption reruns this job
titles, captions = snakemake.params.titles, snakemake.params.captions
outputs = []
for name, html_path in snakemake.output.items():
    if name == "prov":
        continue
    frame = pd.read_csv(snakemake.input[name])
    with atomic_path(html_path) as tmp:
        tmp.write_text(html_table(frame, title=titles[name], caption=captions[name]),
                       encoding="utf-8")
    log.info("%s: %d rows of %s -> %s", name, len(frame), snakemake.input[name], html_path)
    outputs.append(html_path)
names = [name for name in snakemake.output.keys() if name != "prov"]
step.write_sidecars(snakemake, __file__, outputs, config={"tables": names},
                    privacy=non_private("tables of the run, as the CSVs hold them"))
