"""Render the report's table pages (claims, headline tables; a page per cohort or pipeline
where a table is split) as sortable HTML pages."""

from functools import cache
from pathlib import Path

import pandas as pd

from dprepro.figures.html_table import html_table
from dprepro.runtime import step
from dprepro.runtime.io import atomic_path
from dprepro.runtime.privacy_record import non_private

log = step.start(snakemake, "report_tables")
# each page's table, rows, columns, title and caption are the rule's params (from the
# studies' manifests and dprepro.figures.report_tables), so a changed page reruns this job
pages = snakemake.params.pages


@cache
def table(name: str) -> tuple[pd.DataFrame, bytes]:
    path = Path(snakemake.input[name])
    return pd.read_csv(path), path.read_bytes()


def download_name(csv: str) -> str:
    """``results/rrr_survival/tables/claims.csv`` → ``rrr_survival_tables_claims.csv``: the
    saved file says which table it is."""
    return csv.removeprefix("results/").replace("/", "_")


outputs = []
for name, page in pages.items():
    frame, data = table(page["table"])
    if page["split"]:
        frame = frame[frame[page["split"]].astype(str) == page["value"]]
    html_path = snakemake.output[name]
    text = html_table(frame, title=page["title"], caption=page["caption"],
                      columns=page["columns"] or None,
                      download=(download_name(snakemake.input[page["table"]]), data))
    with atomic_path(html_path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    log.info("%s: %d rows of %s -> %s", name, len(frame), snakemake.input[page["table"]],
             html_path)
    outputs.append(html_path)
step.write_sidecars(snakemake, __file__, outputs, config={"tables": list(pages)},
                    privacy=non_private("tables of the run, as the CSVs hold them"))
