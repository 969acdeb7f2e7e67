"""Helpers shared by the test modules (imported as ``helpers.<module>``)."""
