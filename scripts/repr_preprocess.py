"""Parse the raw GDSC, DepMap or TCGA files of the repr_transfer paper mode into Parquet caches."""

from dprepro.data import tcga
from dprepro.data.expression import PREPROCESSORS, write_parquet_atomic
from dprepro.runtime import step
from dprepro.studies.repr_transfer import privacy as repr_privacy

log = step.start(snakemake, "repr_preprocess")
p = step.job_params(snakemake)
out = snakemake.output
options = dict(getattr(p, "options", {}) or {})
frames = PREPROCESSORS[p.kind](snakemake.input, **options)
for name, frame in frames.items():
    log.info("%s %s: %d x %d (%s)", p.kind, name, *frame.shape,
             {k: v for k, v in frame.attrs.items() if k != "source"})
    write_parquet_atomic(frame, out[name])
step.write_sidecars(snakemake, __file__, [out[name] for name in frames],
                    config={"kind": p.kind, **options},
                    privacy={**repr_privacy.INTERMEDIATES, "tcga": tcga.PRIVACY}[p.kind],
                    data_origin="real")
