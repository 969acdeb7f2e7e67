"""The workflow's configuration: checked against the schema before any job runs, and its generated
reference.
"""
