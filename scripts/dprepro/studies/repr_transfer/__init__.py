"""studies.repr_transfer: TODO."""
