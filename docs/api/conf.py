"""Sphinx configuration of the API reference (tests/test_api_docs.py builds it with -W)."""

import re
import sys
from pathlib import Path

from sphinx.util import logging

# the checkout's library first, installed or not
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import dprepro  # noqa: E402

project = "dprepro"
author = "the dprepro maintainers"
copyright = "the dprepro maintainers"
version = release = dprepro.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_default_options = {"member-order": "groupwise"}
autodoc_typehints = "description"
html_theme = "alabaster"
html_static_path: list[str] = []


def _skip_foreign(app, what, name, obj, skip, options):
    """Leave out members a base class of another library generates (scikit-learn's
    ``set_fit_request`` and the like): their docstrings refer to that library's docs."""
    module = getattr(obj, "__module__", None) if callable(obj) else None
    if isinstance(module, str) and not module.startswith("dprepro"):
        return True
    return None


_CITATION = re.compile(r"(?P<indent>\s*)\.\. \[(?P<key>[A-Za-z][\w.-]*)\] (?P<text>.*)")
_cited: dict[str, str] = {}


def _one_citation_per_key(app, what, name, obj, options, lines):
    """Each module lists the works it cites, so a work cited by two modules is listed twice,
    and Sphinx keeps one target per key: later copies are left out (their citations link to
    the first). A key must name one work (its authors and year): two are an error."""
    kept, dropping = [], None
    for line in lines:
        if dropping is not None and line.strip() and line.startswith(dropping + " "):
            continue
        dropping = None
        match = _CITATION.fullmatch(line)
        if match:
            key, work = match["key"], match["text"].split(")", 1)[0]
            if key not in _cited:
                _cited[key] = work
            elif _cited[key] != work:
                logging.getLogger(__name__).warning(
                    "[%s] in %s names %r, elsewhere %r", key, name, work, _cited[key])
            else:
                dropping = match["indent"]
                continue
        kept.append(line)
    lines[:] = kept


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign)
    app.connect("autodoc-process-docstring", _one_citation_per_key)
