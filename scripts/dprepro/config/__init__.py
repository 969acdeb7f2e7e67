"""The workflow's configuration: checked against the schema before any job runs (schema),
the shipped overlays laid over the embedded default (overlays) and the generated reference
(reference).

Its public names load their module on first use (:mod:`dprepro.runtime.exports`).
"""

from dprepro.runtime.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "overlays": ["SHIPPED_OVERLAYS", "embedded_default_to_lay_under"],
    "reference": ["DOCS_LINK", "LONG_VALUE", "MAX_DESCRIPTION", "PRIVACY_KEYS",
                  "RELATED_PRIVACY_KEYS", "SECTION_MIN_KEYS", "documented_keys", "is_privacy_key",
                  "load_inputs", "main", "overlay", "render_config_readme", "schema_keys", "slug"],
    "schema": ["ConfigError", "check_and_fill", "check_config", "check_studies_registered",
               "fill_defaults", "key_path", "load_schema", "repeated_defaults"],
})
