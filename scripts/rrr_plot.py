"""Plot the rrr_survival figures from their aggregated tables."""

from dprepro import plots, step
from dprepro.io import read_table

log = step.start(snakemake, "rrr_plot")
p = snakemake.params
out = snakemake.output
written = []


def save(fig, stem):
    paths = [f"{stem}.pdf", f"{stem}.png"]
    plots.save_figure(fig, paths, dpi=p.dpi)
    written.extend(paths)


if p.kind == "figure2":
    curves = read_table(snakemake.input.curves)
    for dataset in p.datasets:
        save(plots.rrr_figure2(curves, dataset=dataset, epsilons=p.epsilons),
             f"{p.figure_dir}/figure2_{dataset}")
        panels = plots.rrr_figure2_panels(curves, dataset=dataset, epsilons=p.epsilons)
        for letter, fig in zip("abcdefghijklmnopqrstuvwxyz", panels, strict=False):
            save(fig, f"{p.figure_dir}/figure2_{dataset}_{letter}")
elif p.kind == "bands":
    bands, curves = read_table(snakemake.input.bands), read_table(snakemake.input.curves)
    for dataset in p.datasets:
        save(plots.rrr_bands(bands, curves, dataset=dataset, epsilons=p.epsilons),
             f"{p.figure_dir}/km_bands_{dataset}")
elif p.kind == "utility":
    save(plots.rrr_utility(read_table(snakemake.input.utility)), f"{p.figure_dir}/utility")
else:
    raise ValueError(f"unknown figure kind {p.kind!r}")
missing = sorted(set(map(str, out)) - set(written) - {f"{w}.prov.json" for w in written})
if missing:
    raise RuntimeError(f"declared outputs not written: {missing}")
step.write_sidecars(snakemake, __file__, written, config=dict(p.items()),
                    privacy={"release": False,
                             "note": "non-private reference: shows the original curves too",
                             "mechanisms": ["original", "rrr", "lnte"],
                             "epsilons": list(p.epsilons)},
                    data_origin=p.data_origin)
log.info("wrote %d figure files", len(written))
