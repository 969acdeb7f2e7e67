"""survival: TODO."""
