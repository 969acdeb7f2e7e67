"""What every step shares: atomic I/O, seeds, provenance sidecars, privacy records and the step
start-up.
"""
