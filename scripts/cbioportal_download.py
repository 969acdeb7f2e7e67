"""Download the clinical data of a cBioPortal study (raw JSON kept, checksummed)."""

from pathlib import Path

from dprepro import step
from dprepro.cbioportal import fetch_clinical

log = step.start(snakemake, "cbioportal_download")
p = snakemake.params
raw_dir = Path(snakemake.output.patient).parent
hint = ("without network, use the embedded default (datasets.ipssr.source: synthetic in "
        "config/config.yaml) or download the two JSON files elsewhere and set "
        "datasets.ipssr.source: file with a CSV of group, time, event")
result = fetch_clinical(p.base, p.study_id, raw_dir, offline_hint=hint,
                        retries=p.downloads["retries"], backoff=p.downloads["backoff_seconds"],
                        timeout=p.downloads["timeout_seconds"])
for record in result.records.values():
    log.info("downloaded %s (%s bytes, sha256 %s)", record.url, record.bytes, record.sha256)
log.info("manifest written to %s", snakemake.output.manifest)
