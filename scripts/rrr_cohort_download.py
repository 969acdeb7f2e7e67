"""Download the CSV of a cohort whose source is a URL (checksummed, atomic)."""

from dprepro.data.download import download
from dprepro.runtime import step
from dprepro.runtime.privacy_record import non_private

log = step.start(snakemake, "rrr_cohort_download")
p = step.job_params(snakemake)
name = snakemake.wildcards.dataset
record = download(p.url, snakemake.output.table, sha256=p.sha256 or None,
                  retries=p.downloads["retries"], backoff=p.downloads["backoff_seconds"],
                  timeout=p.downloads["timeout_seconds"],
                  offline_hint=f"without network, download {p.url} elsewhere and set "
                               f"datasets.{name}.source: file with its path")
log.info("downloaded %s (%s bytes, sha256 %s)", record.url, record.bytes, record.sha256)
step.write_sidecars(snakemake, __file__, [snakemake.output.table],
                    config={"dataset": name, "url": p.url},
                    privacy=non_private("raw cohort (sensitive)"), data_origin="real",
                    extra={"download": record.to_dict()})
