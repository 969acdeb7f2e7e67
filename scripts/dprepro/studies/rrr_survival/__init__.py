"""Study rrr_survival: Revised Randomized Response against LNTE on Kaplan–Meier curves, medians and
log-rank tests.
"""
