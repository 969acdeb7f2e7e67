"""Inputs: checked downloads, cBioPortal, survival cohorts by config, expression sources (GDSC,
DepMap, TCGA) and the synthetic stand-ins.
"""
