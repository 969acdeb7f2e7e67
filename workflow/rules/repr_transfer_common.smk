# ---- repr_transfer: the study's plan (dprepro.studies.repr_transfer.plan) and its names ----
# Included by the Snakefile before data.smk, whose download rules name the raw files.
from dprepro.studies.repr_transfer import plan as repr_plan  # noqa: E402
from dprepro.studies.repr_transfer.jobs import StudyPlan as ReprStudyPlan  # noqa: E402

REPR_DIR = "results/repr_transfer"
# the study's files and each job's plan (dprepro.studies.repr_transfer.jobs): the rules'
# params carry a digest of it (plan_sha256), the steps rebuild it from the configuration
REPR_PLAN = ReprStudyPlan(config)
# printed before any job runs (the run goes on): e.g. cases chosen from private data
for _warning in REPR_PLAN.config_warnings():
    print(f"dprepro: warning: {_warning}", file=sys.stderr)
REPR_RAW_FILE = repr_plan.RAW_FILE
GDSC_CACHE = repr_plan.GDSC_CACHE
DEPMAP_CACHE = repr_plan.DEPMAP_CACHE
TCGA_CACHE = repr_plan.TCGA_CACHE
REPR_PUBLIC = REPR_PLAN.public
REPR_PRIVATE = REPR_PLAN.private
REPR_TABLES = REPR_PLAN.tables
REPR_PIPELINES = REPR_PLAN.pipelines
REPR_FIGURES = REPR_PLAN.figures
REPR_MEM_MB = REPR_PLAN.mem_mb
STUDY_CLAIMS["repr_transfer"] = [REPR_TABLES["claims"]]
STUDY_TARGETS["repr_transfer"] = REPR_PLAN.targets
