"""studies.rrr_survival: TODO."""
