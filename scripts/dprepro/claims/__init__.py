"""claims: TODO."""
