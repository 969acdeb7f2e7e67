"""studies.ldp_indicators: TODO."""
