"""studies: TODO."""
