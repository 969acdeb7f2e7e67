"""Study repr_transfer: DP drug-sensitivity and cancer-type prediction on representations learned
from public data.
"""
