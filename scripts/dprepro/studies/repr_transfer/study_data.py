"""The repr_transfer study's data: public and private expression, drug responses and lineages
(synthetic or real).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from dprepro.studies.repr_transfer.common import (
    STUDY,
)

__all__ = ["public_set_table", "real_data", "study_data", "synthetic_data"]


def _lineage_frame(values: pd.Series) -> pd.DataFrame:
    text = values.astype("string").str.strip()
    text = text.mask(text.str.upper().isin(_UNKNOWN_LINEAGE))
    frame = pd.DataFrame({"lineage": text.astype(object).where(text.notna(), None)})
    frame.index = pd.Index([str(i) for i in values.index], name="sample")
    return frame


def _named(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out.index = pd.Index([str(i) for i in frame.index], name="sample")
    out.columns = pd.Index([str(c) for c in frame.columns], name=frame.columns.name)
    return out


def synthetic_data(rng: np.random.Generator, settings: Mapping, *,
                   private: bool = True) -> dict[str, pd.DataFrame]:
    """The SYNTHETIC public/private pair, private expression quantile-mapped onto public.

    ``settings`` are keyword arguments of
    :func:`dprepro.data.synthetic_expression.synthetic_public_private` (``n_public``,
    ``n_private``, ``n_genes``, ``rank``, ``n_lineages``, ``n_drugs``, ...).
    Returns ``public_expression``, ``public_lineage``, ``private_expression``,
    ``private_lineage``, ``private_response`` (frames indexed by ``sample``);
    with ``private=False`` only the public two (the same values: the public
    matrix is not changed by the mapping, and every gene is shared).
    """
    from dprepro.data.synthetic_expression import synthetic_public_private

    data = synthetic_public_private(rng, **dict(settings))
    if not private:
        return {"public_expression": _named(data["public_expression"].astype(np.float32)),
                "public_lineage": _lineage_frame(data["public_lineage"])}
    from dprepro.data.expression import harmonise_genes

    names = {"min_shared": int(settings["n_genes"]), "private_name": "synthetic private",
             "public_name": "synthetic public"}
    private, public = harmonise_genes(data["private_expression"], data["public_expression"],
                                      **names)
    local, _ = harmonise_genes(data["private_expression"], data["public_expression"],
                               local=True, **names)
    return {"public_expression": _named(public),
            "public_lineage": _lineage_frame(data["public_lineage"]),
            "private_expression": _named(private),
            "private_expression_line_local": _named(local),
            "private_lineage": _lineage_frame(data["private_lineage"]),
            "private_response": _named(data["private_response"])}


def public_set_table(*, source: str, source_lines: int, public_lines: int, private_lines: int,
                     excluded_by_cosmic_id: int = 0, excluded_by_sanger_model_id: int = 0,
                     held_out: int = 0, genes: int) -> pd.DataFrame:
    """One-row table of the public set's size after exclusion (``public_set.csv``).

    ``smaller_than_private`` flags the case the log and the report warn about.
    It and ``private_lines`` count the private lines, so the table is not a DP
    release (its sidecar says so); the exclusion counts are of GDSC's public
    catalogue.
    """
    return pd.DataFrame([{
        "source": source, "source_lines": int(source_lines),
        "excluded_by_cosmic_id": int(excluded_by_cosmic_id),
        "excluded_by_sanger_model_id": int(excluded_by_sanger_model_id),
        "held_out_cancer_types": int(held_out), "public_lines": int(public_lines),
        "private_lines": int(private_lines), "genes": int(genes),
        "smaller_than_private": bool(public_lines < private_lines)}])


def real_data(gdsc_expression: pd.DataFrame, depmap_expression: pd.DataFrame,
              depmap_models: pd.DataFrame, *, min_shared_genes: int,
              exclude_private_lines: bool, lineage_column: str = "TCGA_LABEL",
              gdsc_cell_lines: pd.DataFrame | None = None,
              gdsc_dose_response: pd.DataFrame | None = None,
              min_public_median: float | None = None, public_source: str = "depmap",
              holdout: Sequence[str] = ()) -> dict[str, pd.DataFrame]:
    """GDSC (private) and DepMap or TCGA (public) as the study's five tables.

    With ``public_source = "tcga"`` the second and third arguments are the
    TCGA caches (samples x symbols, and the ``lineage`` table of TCGA study
    labels by sample): tumours, not cell lines, so no line overlaps GDSC;
    instead, as the paper did, the samples of the private cancer types of the
    cases (``holdout``, TCGA study labels) are held out of the public set, so
    the representation never saw the types it is evaluated on.

    * low-expression filter (``min_public_median``, as the authors did):
      public genes whose median expression is below it are dropped before the
      genes are intersected and mapped (public data only: no privacy cost);

    * public lines: DepMap models, without every line of GDSC's public
      catalogue (``gdsc_cell_lines``, by COSMIC or Sanger model id) when
      ``exclude_private_lines`` (the representation must not have seen the
      private lines, and the public set must not depend on which lines are
      private: :func:`_without_gdsc_catalogue`); lineage = ``OncotreeLineage``;
    * both matrices restricted to the shared gene symbols and the private one
      quantile-mapped onto the public distribution, globally and line by line
      (:func:`dprepro.data.expression.harmonise_genes`);
    * private lineage = ``lineage_column`` of the cell-line details
      (``UNCLASSIFIED`` and empty values are missing); responses = LN_IC50 of
      every drug of the dose-response table, also one without a response on any
      private line (its column is empty): dropping it would make the drug columns,
      and so the rows released, depend on the private responses (the experiment's
      drugs: :func:`dprepro.studies.repr_transfer.drug.drug_list`).

    The private tables are returned only when cell lines and dose response
    are given.
    """
    from dprepro.data.expression import harmonise_genes

    private_ids = set(int(i) for i in gdsc_expression.index)
    public = depmap_expression
    # before any hold-out or exclusion: public_set.csv reports what each step removed
    n_source = len(public)
    if public_source == "tcga":
        models = depmap_models
        held = models["lineage"].reindex(public.index).isin(set(holdout)).to_numpy()
        public = public.loc[~held]
        if held.any():
            warnings.warn(f"held out {int(held.sum())} TCGA samples of the cases' cancer types "
                          f"{sorted(set(holdout))}; {len(public)} public samples left",
                          stacklevel=2)
    elif public_source != "depmap":
        raise ValueError(f"public_source must be 'depmap' or 'tcga', got {public_source!r}")
    else:
        models = depmap_models.set_index("ModelID")
    excluded = {"cosmic": 0, "sanger": 0}
    if public_source == "depmap" and exclude_private_lines:
        public, excluded = _without_gdsc_catalogue(public, models, gdsc_cell_lines, private_ids)
    if len(public) < len(gdsc_expression):
        what = {"depmap": "DepMap models after excluding the GDSC lines",
                "tcga": "TCGA samples after holding out the cases' cancer types"}[public_source]
        warnings.warn(f"the public set ({len(public)} {what}) is smaller than the private set "
                      f"({len(gdsc_expression)} lines)", stacklevel=2)
    if min_public_median is not None:
        keep = public.median(axis=0).to_numpy() >= float(min_public_median)
        public = public.loc[:, keep]
    private, public_shared = harmonise_genes(gdsc_expression, public,
                                             min_shared=min_shared_genes)
    local, _ = harmonise_genes(gdsc_expression, public, min_shared=min_shared_genes, local=True)
    public = public_shared
    out = {"public_expression": _named(public),
           "public_lineage": _lineage_frame(models["lineage"].reindex(public.index)),
           "public_set": public_set_table(
               source=public_source, source_lines=n_source, public_lines=len(public),
               private_lines=len(gdsc_expression), excluded_by_cosmic_id=excluded["cosmic"],
               excluded_by_sanger_model_id=excluded["sanger"],
               held_out=n_source - len(public) - excluded["cosmic"] - excluded["sanger"],
               genes=public.shape[1])}
    if gdsc_cell_lines is not None and gdsc_dose_response is not None:
        if lineage_column not in gdsc_cell_lines.columns:
            raise ValueError(f"cell-line details lack column {lineage_column!r}; found "
                             f"{list(gdsc_cell_lines.columns)}")
        response = gdsc_dose_response.reindex(private.index).astype(float)
        out.update(private_expression=_named(private),
                   private_expression_line_local=_named(local),
                   private_lineage=_lineage_frame(
                       gdsc_cell_lines[lineage_column].reindex(private.index)),
                   private_response=_named(response))
    return out


def _without_gdsc_catalogue(public: pd.DataFrame, models: pd.DataFrame,
                            catalogue: pd.DataFrame | None, private_ids: set
                            ) -> tuple[pd.DataFrame, dict]:
    """DepMap ``public`` without every line of GDSC's published catalogue of cell lines.

    The catalogue (``Cell_Lines_Details``: COSMIC ids, with the Sanger model ids
    the release names) is public and fixed, so the public set it leaves is a
    function of public data alone: the same for any two neighbouring private
    samples. Excluding the private lines' own ids instead (as before) made the
    public set, and every representation learned on it, depend on which lines
    are private, voiding the finite ε of the learners trained on top. A DepMap
    model matches on its COSMIC id or, where that is missing or differs, on its
    Sanger model id.
    """
    if catalogue is None:
        raise ValueError(
            "excluding the GDSC lines from DepMap (datasets.depmap.exclude_private_lines) "
            "needs GDSC's catalogue of cell lines (gdsc_cell_lines): excluding the private "
            "lines' own ids would make the public set depend on the private sample")
    cosmic_ids = {int(i) for i in catalogue.index}
    cosmic = models["COSMICID"].reindex(public.index)
    by_cosmic = cosmic.notna().to_numpy() & cosmic.fillna(-1).astype(np.int64).isin(
        cosmic_ids).to_numpy()
    by_sanger = np.zeros(len(public), dtype=bool)
    if "SANGER_MODEL_ID" in catalogue.columns and "SangerModelID" in models.columns:
        sanger = {str(v) for v in catalogue["SANGER_MODEL_ID"].dropna() if str(v)}
        by_sanger = models["SangerModelID"].reindex(public.index).astype(object).isin(
            sanger).to_numpy()
    outside = len(private_ids - cosmic_ids)
    if outside:
        # the public set must not depend on them, so they are not excluded one by one
        warnings.warn(f"{outside} private GDSC line(s) are not in GDSC's catalogue of cell "
                      "lines: a DepMap copy of them stays in the public set", stacklevel=3)
    excluded = {"cosmic": int(by_cosmic.sum()), "sanger": int((by_sanger & ~by_cosmic).sum())}
    return public.loc[~(by_cosmic | by_sanger)], excluded


def study_data(origin: str, kind: str, inputs, *, settings: Mapping,
               seed: int) -> tuple[dict[str, pd.DataFrame], dict | None]:
    """The public or private tables of the study and the seed record of their draw.

    ``origin`` ``"synthetic"``: :func:`synthetic_data` from stream
    ``data/synthetic``; ``"real"``: :func:`real_data` from the GDSC/DepMap
    caches named in ``inputs`` (``gdsc_expression``, ``depmap_expression``,
    ``depmap_models`` and, for ``kind = "private"``, ``gdsc_cell_lines``,
    ``gdsc_dose_response``).
    """
    from dprepro.data.expression import read_parquet_matrix
    from dprepro.runtime.seeds import seed_record, seed_sequence

    if kind not in ("public", "private"):
        raise ValueError(f"kind must be 'public' or 'private', got {kind!r}")
    private = kind == "private"
    if origin == "synthetic":
        stream = "data/synthetic"
        rng = np.random.default_rng(seed_sequence(seed, STUDY, stream, 0))
        data = synthetic_data(rng, settings, private=private)
        if not private:
            data["public_set"] = public_set_table(
                source="synthetic", source_lines=int(settings["n_public"]),
                public_lines=len(data["public_expression"]),
                private_lines=int(settings["n_private"]),
                genes=data["public_expression"].shape[1])
        return data, seed_record(seed, STUDY, stream, 1)
    if origin != "real":
        raise ValueError(f"origin must be 'synthetic' or 'real', got {origin!r}")
    tcga = settings.get("public_source", "depmap") == "tcga"
    data = real_data(
        read_parquet_matrix(inputs.gdsc_expression),
        read_parquet_matrix(inputs.tcga_expression if tcga else inputs.depmap_expression),
        read_parquet_matrix(inputs.tcga_lineage if tcga else inputs.depmap_models),
        public_source="tcga" if tcga else "depmap", holdout=settings.get("holdout", ()),
        min_shared_genes=settings["min_shared_genes"],
        exclude_private_lines=settings["exclude_private_lines"],
        min_public_median=settings.get("min_public_median"),
        lineage_column=settings["lineage_column"],
        gdsc_cell_lines=(read_parquet_matrix(inputs.gdsc_cell_lines)
                         if "gdsc_cell_lines" in inputs.keys() else None),
        gdsc_dose_response=read_parquet_matrix(inputs.gdsc_dose_response) if private else None)
    return data, None


# --------------------------------------------------------------------------- #
# input data
# --------------------------------------------------------------------------- #
_UNKNOWN_LINEAGE = ("", "UNCLASSIFIED", "UNABLE TO CLASSIFY", "NA", "NAN", "NONE", "UNKNOWN")

