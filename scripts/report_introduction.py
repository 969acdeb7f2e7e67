"""Write the report's introduction (what was run, on which data, the headline verdicts, how
to rebuild) from the merged claims and the configuration: reStructuredText for the report's
landing page and an HTML page for its first section."""

import pandas as pd

from dprepro.data.cohort_spec import CohortSpec
from dprepro.figures.report_introduction import (
    DataSource,
    RunDescription,
    introduction_blocks,
    to_html,
    to_rst,
)
from dprepro.runtime import step
from dprepro.runtime.io import atomic_path
from dprepro.runtime.privacy_record import non_private

#: A cohort's origin in words (CohortSpec.origin), as the captions say it.
ORIGIN_WORDS = {"real": "real", "synthetic": "synthetic stand-in", "simulation": "simulation"}


def cohort_source(spec) -> str:
    """Where a cohort's records come from, in words."""
    return {"bundled": f"bundled with the project ({spec.path})",
            "file": f"a file ({spec.path})", "url": f"downloaded ({spec.url})",
            "cbioportal": f"cBioPortal study {spec.study_id}",
            "package": f"Python package data ({spec.package})",
            "synthetic": "generated from published group sizes and medians",
            "simulation": "simulated with known hazard ratios"}.get(spec.source, spec.source)


def data_sources(config) -> list[DataSource]:
    """Every data set the configured studies read, with its origin and source."""
    studies = config["studies"]
    data = []
    if "ldp_indicators" in studies:
        data.append(DataSource("ldp_indicators", "simulated censored samples", "simulation",
                               "drawn in the run (the paper's design)", "ldp_indicators"))
    if "rrr_survival" in studies:
        rrr = config["rrr_survival"]
        own = set(rrr["datasets"])
        # the study's cohorts, then those only its Cox analysis reads (the workflow's
        # script reads the cohorts' entries, not the study's plan: scripts import no study)
        for name in dict.fromkeys([*rrr["datasets"], *rrr["cox"]["extra_datasets"]]):
            spec = CohortSpec.from_config(name, config["datasets"][name])
            data.append(DataSource(name, spec.display_title, ORIGIN_WORDS.get(
                spec.origin, spec.origin), cohort_source(spec),
                "rrr_survival" if name in own else "rrr_survival (Cox regression only)"))
    if "repr_transfer" in studies:
        rt = config["repr_transfer"]
        if config["datasets"]["gdsc"]["source"] == "synthetic":
            data.append(DataSource("gdsc", "expression and drug responses (private side) "
                                   "and public expression", "synthetic stand-in",
                                   "generated with shared latent structure", "repr_transfer"))
        else:
            public = "TCGA (UCSC Xena)" if rt["public_source"] == "tcga" else "DepMap"
            data.append(DataSource("gdsc", "GDSC cell lines (private side)", "real",
                                   "downloaded", "repr_transfer"))
            data.append(DataSource(rt["public_source"], f"{public} (public side)", "real",
                                   "downloaded", "repr_transfer"))
    if "audit" in studies:
        data.append(DataSource("audit", "worst-case neighbouring inputs", "synthetic",
                               "constructed per mechanism", "audit"))
    return data


log = step.start(snakemake, "report_introduction")
config = snakemake.config
claims = pd.read_csv(snakemake.input.claims)
run = RunDescription(studies=list(config["studies"]), sections=snakemake.params.sections,
                     configfiles=snakemake.params.configfiles, seed=int(config["seed"]),
                     dpi=int(config["figures"]["dpi"]), run_name=config.get("run_name") or "",
                     data=data_sources(config), example_target=snakemake.params.example)
blocks = introduction_blocks(run, claims)
for path, text in ((snakemake.output.rst, to_rst(blocks)), (snakemake.output.html,
                                                              to_html(blocks))):
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
step.write_sidecars(snakemake, __file__, [snakemake.output.rst, snakemake.output.html],
                    config={"studies": list(config["studies"])},
                    privacy=non_private("counts of the claims' verdicts; no data"))
log.info("wrote %s and %s (%d claims)", snakemake.output.rst, snakemake.output.html,
         len(claims))
