"""The privacy audit: empirical lower bounds on ε for every registered mechanism and learner, and
its figure.
"""
