"""One package per study: its simulation or analysis, tables, claims, figures and the workflow's
path helpers.
"""
