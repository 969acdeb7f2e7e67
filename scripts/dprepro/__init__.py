"""dprepro: methods behind the dprepro reproduction workflow.

The library is pure Python + numpy/scipy/pandas (torch for the VAE); it never
imports snakemake, so every estimator can be used and tested on its own.

Each subpackage exports its public names (``from dprepro.mechanisms import
RevisedRandomizedResponse``, ``from dprepro.survival import KaplanMeier``) and is
itself loaded on first use (``dprepro.survival``), so ``import dprepro`` imports
nothing else.
"""

import importlib

__version__ = "0.1.0"

# the subpackages, by layer (docs/design.md §1)
_SUBPACKAGES = ("runtime", "survival", "learners", "representations", "figures", "mechanisms",
                "data", "claims", "audit", "config", "studies")

__all__ = ["__version__", *_SUBPACKAGES]


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBPACKAGES})
