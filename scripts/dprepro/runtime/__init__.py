"""runtime: TODO."""
