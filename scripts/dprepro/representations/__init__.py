"""Representations learned on public data: PCA, random projection, the torch VAE, quantile
normalisation.
"""
