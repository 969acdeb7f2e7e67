"""The shipped overlays (config/full.yaml, config/paper.yaml) always lie over config/config.yaml.

Snakemake reads the Snakefile's ``configfile`` relative to the working directory and
skips it silently when ``--configfile`` is given, so a run with ``--directory``
elsewhere would lay a shipped overlay over the schema's defaults alone (the full run
without its cohorts' definitions). The workflow therefore puts the embedded file
underneath whenever a shipped overlay was given without it, as in a run from the
checkout. A user's own overlay is left as given.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["SHIPPED_OVERLAYS", "embedded_default_to_lay_under"]

SHIPPED_OVERLAYS = ("full.yaml", "paper.yaml")


def embedded_default_to_lay_under(configfiles: Iterable, shipped_dir: str | Path) -> Path | None:
    """``shipped_dir/config.yaml`` when ``configfiles`` name a shipped overlay but not it.

    Parameters
    ----------
    configfiles : iterable of path-like
        The configuration files Snakemake loaded (``workflow.configfiles``).
    shipped_dir : path-like
        The workflow's ``config/`` folder.

    Returns
    -------
    Path or None
        The embedded default to read underneath the loaded configuration, or None.
    """
    shipped = Path(shipped_dir)
    embedded = (shipped / "config.yaml").resolve()
    loaded = {Path(f).resolve() for f in configfiles}
    overlays = {(shipped / name).resolve() for name in SHIPPED_OVERLAYS}
    if loaded & overlays and embedded not in loaded:
        return embedded
    return None
