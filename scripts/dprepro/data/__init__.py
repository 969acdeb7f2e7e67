"""data: TODO."""
