"""Parse the raw GDSC or DepMap files of the repr_transfer paper mode into Parquet caches."""

from dprepro import step
from dprepro.expression_data import (
    read_depmap_expression,
    read_depmap_models,
    read_gdsc_cell_lines,
    read_gdsc_dose_response,
    read_gdsc_expression,
    write_parquet_atomic,
)

log = step.start(snakemake, "repr_preprocess")
p = snakemake.params
inp, out = snakemake.input, snakemake.output
if p.kind == "gdsc":
    frames = {"expression": read_gdsc_expression(inp.expression),
              "dose_response": read_gdsc_dose_response(inp.dose_response),
              "cell_lines": read_gdsc_cell_lines(inp.cell_lines)}
    privacy = {"release": False, "note": "raw private data (GDSC; sensitive, never released)"}
elif p.kind == "depmap":
    frames = {"expression": read_depmap_expression(inp.expression),
              "models": read_depmap_models(inp.models)}
    privacy = {"release": False, "note": "public data (DepMap, CC BY 4.0)"}
else:
    raise ValueError(f"unknown kind {p.kind!r}")
for name, frame in frames.items():
    log.info("%s %s: %d x %d (%s)", p.kind, name, *frame.shape,
             {k: v for k, v in frame.attrs.items() if k != "source"})
    write_parquet_atomic(frame, out[name])
step.write_sidecars(snakemake, __file__, [out[name] for name in frames],
                    config={"kind": p.kind}, privacy=privacy, data_origin="real")
