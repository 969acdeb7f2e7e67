"""mechanisms: TODO."""
