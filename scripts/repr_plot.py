"""Plot one repr_transfer figure from its aggregated table."""

from dprepro import plots, step
from dprepro.io import read_table

log = step.start(snakemake, "repr_plot")
p = snakemake.params
out = snakemake.output
summary = read_table(snakemake.input.summary)
if p.kind == "cancer_type":
    fig = plots.repr_cancer_type_cases(summary, epsilon=p.epsilon, variant=p.variant,
                                       data_origin=p.data_origin)
elif p.kind == "cancer_type_vs_epsilon":
    fig = plots.repr_cancer_type_vs_epsilon(summary, variant=p.variant,
                                            data_origin=p.data_origin)
elif p.kind == "drug":
    fig = plots.repr_drug_prediction(summary, epsilon=p.epsilon, data_origin=p.data_origin)
elif p.kind == "drug_vs_epsilon":
    fig = plots.repr_drug_vs_epsilon(summary, data_origin=p.data_origin)
else:
    raise ValueError(f"unknown figure kind {p.kind!r}")
plots.save_figure(fig, [out.pdf, out.png], dpi=p.dpi)
step.write_sidecars(
    snakemake, __file__, [out.pdf, out.png], config=dict(p.items()),
    privacy={"release": False,
             "note": "DP results beside non-private references (epsilon = inf)",
             "mechanisms": sorted(set(summary["mechanism"]))},
    data_origin=p.data_origin)
log.info("wrote %s and %s", out.pdf, out.png)
