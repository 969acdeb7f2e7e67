"""figures: TODO."""
