"""GDSC files in the real layouts at a size paper mode can run to its tables.

The committed fixtures (``tests/fixtures/expression``) are a dozen lines, enough
for the readers; this writes the same three layouts (RMA expression zip, GDSC2
fitted dose response, cell-line details) for ``per_type`` lines of each TCGA
label, with a lineage signal on the first ``signal`` genes so that the
cancer-type task has something to find.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

_SPEC = importlib.util.spec_from_file_location(
    "make_fixtures",
    Path(__file__).resolve().parents[1] / "fixtures" / "expression" / "make_fixtures.py")
fixtures = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fixtures)


def write_gdsc(folder: Path, symbols: list[str], labels: list[str], *, per_type: int = 15,
               drugs: int = 3, signal: int = 3, seed: int = 0) -> dict:
    """Write the GDSC expression zip, dose-response CSV and cell-line details CSV.

    Line ``k`` of label ``labels[t]`` has COSMIC id ``1_000_000 + 100 t + k``;
    its expression is N(6, 1) per gene plus ``6 t`` on the first ``signal``
    genes; every line is screened against every drug except one pair in seven.
    Returns the paths and the COSMIC ids by label.
    """
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    ids = {label: [1_000_000 + 100 * t + k for k in range(per_type)]
           for t, label in enumerate(labels)}
    lines = [(label, t, cosmic) for t, label in enumerate(labels) for cosmic in ids[label]]
    values = rng.normal(6.0, 1.0, size=(len(symbols), len(lines)))
    values[:signal] += np.array([6.0 * t for _, t, _ in lines])[None, :]
    header = ["GENE_SYMBOLS", "GENE_title"] + [f"DATA.{cosmic}" for _, _, cosmic in lines]
    rows = ["\t".join(header)] + [
        "\t".join([sym, f"{sym} protein"] + [f"{v:.6f}" for v in row])
        for sym, row in zip(symbols, values, strict=True)]
    expression = folder / f"{fixtures.GDSC_NAME}.zip"
    fixtures.write_zip(expression, fixtures.GDSC_NAME, "\n".join(rows) + "\n")
    template = fixtures.dose_response(np.random.default_rng(0)).iloc[:1]
    screens = []
    for i, (label, _, cosmic) in enumerate(lines):
        for j in range(drugs):
            if (i + j) % 7 == 3:
                continue  # not screened
            screens.append(template.assign(
                COSMIC_ID=cosmic, CELL_LINE_NAME=f"LINE-{cosmic}", TCGA_DESC=label,
                SANGER_MODEL_ID=f"SIDM{cosmic % 100000:05d}", DRUG_ID=2000 + j,
                DRUG_NAME=f"Drug{j}", LN_IC50=round(float(rng.normal(2.0, 2.0)), 6)))
    response = folder / "GDSC2_fitted_dose_response.csv"
    pd.concat(screens, ignore_index=True).assign(
        NLME_CURVE_ID=lambda f: 15_946_000 + np.arange(len(f))).to_csv(
        response, index=False, lineterminator="\n")
    details = pd.DataFrame(
        [[f"LINE-{cosmic}", cosmic, "Y", "Y", "Y", "Y", "Y", "tissue", "tissue", label,
          "MSS/MSI-L", "R", "Adherent"] for label, _, cosmic in lines],
        columns=fixtures.CELL_LINE_HEADERS)
    cell_lines = folder / "Cell_Lines_Details.csv"
    details.to_csv(cell_lines, index=False, lineterminator="\n")
    return {"expression": expression, "dose_response": response, "cell_lines": cell_lines,
            "ids": ids}
