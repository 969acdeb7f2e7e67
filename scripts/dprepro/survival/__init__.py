"""Survival estimators: Kaplan–Meier, medians, log-rank (plain and cluster-robust), conditional
Beran / Nelson–Aalen and their bandwidth.
"""
