"""learners: TODO."""
