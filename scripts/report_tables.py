"""Render the report's tables (claims, headline tables) as sortable HTML pages."""

import pandas as pd

from dprepro.figures.html_table import html_table
from dprepro.figures.report_tables import REPORT_TABLES
from dprepro.runtime import step
from dprepro.runtime.io import atomic_path
from dprepro.runtime.privacy_record import non_private

log = step.start(snakemake, "report_tables")
outputs = []
for name, html_path in snakemake.output.items():
    if name == "prov":
        continue
    spec = REPORT_TABLES[name]
    frame = pd.read_csv(snakemake.input[name])
    with atomic_path(html_path) as tmp:
        tmp.write_text(html_table(frame, title=spec.title,
                                  caption=f"{spec.caption} CSV: {spec.csv}"),
                       encoding="utf-8")
    log.info("%s: %d rows of %s -> %s", name, len(frame), spec.csv, html_path)
    outputs.append(html_path)
names = [name for name in snakemake.output.keys() if name != "prov"]
step.write_sidecars(snakemake, __file__, outputs, config={"tables": names},
                    privacy=non_private("tables of the run, as the CSVs hold them"))
