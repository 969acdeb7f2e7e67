"""Download one raw input of the repr_transfer paper mode (GDSC, DepMap or TCGA), checksummed."""

import json

from dprepro.data.download import download
from dprepro.runtime import step
from dprepro.runtime.io import write_json

log = step.start(snakemake, "repr_download")
p = step.job_params(snakemake)
spec = p.spec
hint = ("without network, use the embedded default (datasets.gdsc.source and "
        "datasets.depmap.source: synthetic in config/config.yaml), or download the file "
        f"elsewhere and set datasets.{spec['source']}.{spec['item']}_url to its local path")
state = {"next": 0}
TERMS = {"gdsc": "GDSC: download only, never redistribute", "depmap": "DepMap: CC BY 4.0",
         "tcga": "TCGA via UCSC Xena: open access"}


def progress(done, total):
    if done >= state["next"]:
        log.info("%s: %.0f MB%s", spec["url"], done / 1e6,
                 f" of {total / 1e6:.0f} MB" if total else "")
        state["next"] = done + 50_000_000


record = download(spec["url"], snakemake.output.file, sha256=spec["sha256"] or None,
                  retries=p.downloads["retries"], backoff=p.downloads["backoff_seconds"],
                  timeout=p.downloads["timeout_seconds"], progress=progress, offline_hint=hint)
log.info("downloaded %s (%s bytes, sha256 %s, %d attempt(s))", record.url, record.bytes,
         record.sha256, record.attempts)
if not spec["sha256"]:
    log.info("no expected sha256 configured; put %s into datasets.%s.%s_sha256 to pin it",
             record.sha256, spec["source"], spec["item"])
write_json({**record.to_dict(), "source": spec["source"], "item": spec["item"],
            "expected_sha256": spec["sha256"] or None,
            "terms": TERMS[spec["source"]]}, snakemake.output.record)
log.info("record: %s", json.dumps({"path": record.path, "sha256": record.sha256}))
