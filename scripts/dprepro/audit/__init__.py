"""audit: TODO."""
