"""Download the clinical data of a cBioPortal study (raw JSON kept, checksummed)."""

from pathlib import Path

from dprepro.data.cbioportal import fetch_clinical
from dprepro.runtime import step

log = step.start(snakemake, "cbioportal_download")
p = step.job_params(snakemake)
raw_dir = Path(snakemake.output.patient).parent
keys = ", ".join(f"datasets.{name}.source" for name in p.datasets)
hint = (f"without network, set {keys} to synthetic (the embedded default for ipssr in "
        "config/config.yaml), or download the two JSON files elsewhere and set the source to "
        "file with a CSV of id, time, status, group")
result = fetch_clinical(p.base, snakemake.wildcards.study, raw_dir,
                        manifest_name=Path(snakemake.output.manifest).name, offline_hint=hint,
                        retries=p.downloads["retries"], backoff=p.downloads["backoff_seconds"],
                        timeout=p.downloads["timeout_seconds"])
for record in result.records.values():
    log.info("downloaded %s (%s bytes, sha256 %s)", record.url, record.bytes, record.sha256)
log.info("manifest written to %s", snakemake.output.manifest)
