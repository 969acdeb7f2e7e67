"""Print, as JSON, where the report files every file the workflow marks for it: run as
``python report_flags.py <project root> <configfile> <working dir>`` (a subprocess: parsing
the Snakefile changes the process's directory and ``sys.path``).

One record per concrete file: its rule, path, category (the report's section),
subcategory (its part) and labels, each evaluated with the file's wildcards as Snakemake
evaluates them when it builds the report. A pattern's wildcards take every value its rule
allows: ``dataset`` each cohort the rule's jobs are planned for (read off the pattern's
expansion over the configured cohorts), a constrained wildcard (``{figure,a|b}``) each
alternative, ``ext`` pdf and png.
"""

import json
import re
import sys
from itertools import product
from pathlib import Path

from snakemake.api import SnakemakeApi
from snakemake.iocontainers import Wildcards
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

WILDCARD = re.compile(r"\{(\w+)(?:,([^}]*))?\}")


def values(name: str, constraint: str | None, config: dict) -> list[str]:
    if constraint:
        return constraint.split("|")
    if name == "dataset":
        rrr = config["rrr_survival"]
        return list(dict.fromkeys([*rrr["datasets"], *rrr["cox"]["extra_datasets"]]))
    if name == "ext":
        return ["pdf", "png"]
    raise ValueError(f"no values for wildcard {name!r}")


def evaluate(value, wildcards):
    return value(wildcards) if callable(value) else value


def main(root: Path, configfile: Path, workdir: Path) -> list[dict]:
    records = []
    with SnakemakeApi(OutputSettings()) as api:
        workflow = api.workflow(snakefile=root / "Snakefile", workdir=workdir,
                                config_settings=ConfigSettings(configfiles=[configfile]),
                                resource_settings=ResourceSettings())._workflow
        config = workflow.config
        cox = set(config["rrr_survival"]["datasets"]) | set(
            config["rrr_survival"]["cox"]["extra_datasets"])
        for rule in workflow.rules:
            for pattern in rule.output:
                flag = pattern.flags.get("report")
                if flag is None:
                    continue
                names = WILDCARD.findall(str(pattern))
                for combo in product(*(values(n, c, config) for n, c in names)):
                    given = dict(zip([n for n, _ in names], combo, strict=True))
                    # Figure 2, the bands and the table pages are of the study's cohorts
                    # only; Cox of all
                    if rule.name in ("rrr_figure2", "rrr_km_bands",
                                     "report_cohort_tables") and given.get(
                            "dataset") not in config["rrr_survival"]["datasets"]:
                        continue
                    if "dataset" in given and given["dataset"] not in cox:
                        continue
                    wildcards = Wildcards(fromdict=given)
                    path = WILDCARD.sub(lambda m, given=given: given[m.group(1)], str(pattern))
                    records.append({
                        "rule": rule.name, "path": path, "wildcards": given,
                        "category": evaluate(flag.category, wildcards),
                        "subcategory": evaluate(flag.subcategory, wildcards),
                        "labels": evaluate(flag.labels, wildcards),
                        "caption": str(flag.caption) if flag.caption else ""})
    return records


if __name__ == "__main__":
    out = main(*map(Path, sys.argv[1:4]))
    sys.stdout.write("REPORT-FLAGS " + json.dumps(out) + "\n")
