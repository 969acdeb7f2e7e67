from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/ldp_indicators.smk"
include: "workflow/rules/repr_transfer_common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/rrr_survival.smk"
include: "workflow/rules/repr_transfer.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/verify.smk"


# The report's landing page: the introduction the run wrote (rule report_introduction:
# what was run, on which data, the verdicts, how to rebuild), else the text of
# workflow/report/workflow.rst (the configuration only). It lies in the run's folder: a
# named run's results move under runs/<run_name>/ below.
REPORT_INTRODUCTION_PATH = os.path.join(
    os.path.abspath(os.path.join(LAUNCH_DIR, RUN_DIRECTORY or "")), REPORT_INTRODUCTION
)
REPORT_TEXT = (
    REPORT_INTRODUCTION_PATH
    if os.path.exists(REPORT_INTRODUCTION_PATH)
    else "workflow/report/workflow.rst"
)


report: REPORT_TEXT


rule all:
    default_target: True
    input:
        [path for study in config["studies"] for path in STUDY_TARGETS[study]],
        CLAIMS_TARGETS,
        REPORT_TABLE_TARGETS,
        RUN_MANIFEST,
    localrule: True


# A named run moves into runs/<run_name>/ once every check above has passed (a refused
# run leaves no folder behind); the configuration files are named absolutely first, as
# the report reads them again from the run's folder.
if RUN_DIRECTORY and workflow.overwrite_workdir is None:
    workflow.configfiles[:] = [os.path.abspath(f) for f in workflow.configfiles]
    workflow.workdir(os.path.join(LAUNCH_DIR, RUN_DIRECTORY))
