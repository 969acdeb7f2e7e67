"""Check every file under results/ against its sidecar: output, inputs, script, library, config.

Run as ``snakemake verify`` (with the --configfile options of the run, if any): prints one
line per file and exits non-zero when any file does not match.
"""

from pathlib import Path

from dprepro.runtime import step
from dprepro.runtime.verify import verify_run

log = step.start(snakemake, "verify")
report = verify_run(Path.cwd(), workflow_root=step.script_path(__file__).parents[1],
                    config=snakemake.config)
for line in report.lines():
    print(line)
    if line.startswith("MISMATCH"):
        log.error(line)
log.info(report.lines()[-1])
if not report.ok:
    # an exception (not SystemExit) so the job fails with status 1 (dprepro.runtime.step)
    raise RuntimeError(f"verify: {len(report.mismatches)} mismatches; see the lines above")
