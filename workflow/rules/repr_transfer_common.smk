# ---- repr_transfer: the study's plan (dprepro.studies.repr_transfer.plan) and its names ----
# Included by the Snakefile before data.smk, whose download rules name the raw files.
from dprepro.studies.repr_transfer import plan as repr_plan  # noqa: E402
from dprepro.studies.repr_transfer.privacy import epsilon_grid  # noqa: E402

REPR = config["repr_transfer"]
REPR_DIR = "results/repr_transfer"
REPR_PLAN = repr_plan.ReprPlan(config)
# printed before any job runs (the run goes on): e.g. cases chosen from private data
for _warning in REPR_PLAN.config_warnings():
    print(f"dprepro: warning: {_warning}", file=sys.stderr)
REPR_RAW_FILE = repr_plan.RAW_FILE
GDSC_CACHE = repr_plan.GDSC_CACHE
DEPMAP_CACHE = repr_plan.DEPMAP_CACHE
TCGA_CACHE = repr_plan.TCGA_CACHE
REPR_ORIGIN = REPR_PLAN.origin
REPR_METHODS = REPR_PLAN.methods()
REPR_PUBLIC = REPR_PLAN.public
REPR_PRIVATE = REPR_PLAN.private
REPR_TABLES = REPR_PLAN.tables
REPR_FIGURE_KIND = repr_plan.FIGURE_KIND
REPR_SUMMARY = repr_plan.SUMMARY
REPR_PIPELINES = REPR_PLAN.pipelines
REPR_FIGURES = REPR_PLAN.figures
REPR_DATA_SETTINGS = REPR_PLAN.data_settings()
REPR_MEM_MB = REPR_PLAN.mem_mb
STUDY_CLAIMS["repr_transfer"] = [REPR_TABLES["claims"]]
STUDY_TARGETS["repr_transfer"] = [
    *REPR_TABLES.values(),
    *[path for paths in REPR_FIGURES.values() for path in paths],
]
