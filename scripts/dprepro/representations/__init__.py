"""representations: TODO."""
