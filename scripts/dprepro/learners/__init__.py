"""DP learners of the repr study: objective-perturbation logistic regression, SSP linear
regression, clipping search, DP feature selection, metrics.
"""
