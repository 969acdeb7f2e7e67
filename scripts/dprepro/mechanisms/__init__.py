"""Privacy mechanisms: indicator mechanisms and their registry, Revised Randomized Response (plain
and debiased), LNTE as published and on a grid.
"""
