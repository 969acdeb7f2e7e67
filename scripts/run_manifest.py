"""Record the configuration a results folder was made under (results/run_manifest.json)."""

from dprepro.runtime import step
from dprepro.runtime.io import write_json
from dprepro.runtime.params import canonical
from dprepro.runtime.privacy_record import non_private

log = step.start(snakemake, "run_manifest")
out = snakemake.output.manifest
# the configuration whose digest is the rule's configuration_sha256 (the job's own)
write_json({"run_name": snakemake.params.run_name,
            "configuration": canonical(dict(snakemake.config))}, out)
# its inputs are every other target, read for their order only: the manifest is written
# once they all exist, and is made from none of them
step.write_sidecars(snakemake, __file__, [out], config={"run_name": snakemake.params.run_name},
                    privacy=non_private("the run's configuration; no data"),
                    record_inputs=False)
log.info("wrote %s", out)
