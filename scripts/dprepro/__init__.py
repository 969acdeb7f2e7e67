"""dprepro: methods behind the dprepro reproduction workflow.

The library is pure Python + numpy/scipy/pandas (torch for the VAE); it never
imports snakemake, so every estimator can be used and tested on its own.
"""

__version__ = "0.1.0"
