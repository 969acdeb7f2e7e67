"""The shipped configurations as a run sees them: config/config.yaml, the named overlays
laid over it key by key (as Snakemake's --configfile does), the schema's defaults filled in."""

from __future__ import annotations

from pathlib import Path

import yaml

from dprepro.config.schema import fill_defaults, load_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")


def shipped_config(*overlays: str) -> dict:
    """``config/config.yaml`` with ``config/<overlay>`` files merged over it, filled in."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    for name in overlays:
        _merge(config, yaml.safe_load((ROOT / "config" / name).read_text()))
    fill_defaults(config, SCHEMA)
    return config


def _merge(base: dict, overlay: dict) -> None:
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
