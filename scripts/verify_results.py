"""Check every file under results/ against its sidecar: output, inputs, script, library, params.

Run as ``snakemake verify`` (with the --configfile options of the run, if any): prints one
line per file and exits non-zero when any file does not match.
"""

from pathlib import Path

from dprepro.runtime import step
from dprepro.runtime.verify import verify_run

log = step.start(snakemake, "verify")
report = verify_run(Path.cwd(), workflow_root=step.script_path(__file__).parents[1],
                    config=snakemake.config, expected=snakemake.params.expected,
                    params_now=snakemake.params.params_now)
# one line per file beside the log; the terminal gets the mismatches and the summary
every_file = Path(snakemake.log[0]).with_name("verify_report.txt")
every_file.write_text("\n".join(report.lines(every_file=True)) + "\n")
for line in report.lines():
    print(line)
log.info("%s (every file: %s)", report.lines()[-1], every_file)
if not report.ok:
    # an exception (not SystemExit) so the job fails with status 1 (dprepro.runtime.step)
    raise RuntimeError(f"verify: {len(report.mismatches)} mismatches; see the lines above")
