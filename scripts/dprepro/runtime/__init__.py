"""What every step shares: atomic I/O, seeds, provenance sidecars, privacy records, the
step start-up, the library-code digests of the rules (code_version), canonical params and the
scheduler-timer cleanup.
"""
