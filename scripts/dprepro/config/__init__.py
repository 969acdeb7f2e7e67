"""The workflow's configuration: checked against the schema before any job runs (schema),
the shipped overlays laid over the embedded default (overlays) and the generated reference
(reference).
"""
