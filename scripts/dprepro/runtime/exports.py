"""The public names of a subpackage, imported on first use (PEP 562).

Each subpackage's ``__init__.py`` lists, module by module, the names a user imports from it
(``from dprepro.survival import beran_cdf``, ``from dprepro.mechanisms import
RevisedRandomizedResponse``)::

    __all__, __getattr__, __dir__ = lazy_exports(__name__, {
        "conditional": ["beran_cdf", "private_beran_cdf"],
        "kaplan_meier": ["KaplanMeier"],
    })

A name's module is imported when the name is first asked for, not when the package is: ``import
dprepro.survival`` imports no estimator (nor numpy), ``dprepro.representations`` loads torch
only for the VAE, and each name is the very object its module defines.

Why lazily: the workflow reruns a step when a library file its script reaches through
``dprepro`` import statements changes (:mod:`dprepro.runtime.code_version`, which includes the
``__init__.py`` of every package on the way). Imports written in the ``__init__.py`` files would
make every step that touches a package depend on all its modules; these lookups are not import
statements, so a step depends only on the modules it imports. For the same reason the library
and the step scripts import from the modules themselves, never through these names
(``tests/test_layout.py`` checks it): an import through a package would hide the module from
the digest.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, Sequence[str]]
                 ) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` of a package whose public names load lazily.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : mapping of str to sequence of str
        Module name relative to ``package`` -> the public names it defines.

    Returns
    -------
    all_names : list of str
        The sorted public names (the package's ``__all__``).
    getattr_ : callable
        The package's ``__getattr__``: imports the module that defines a public name, keeps the
        object in the package's namespace and returns it; any other name raises
        :class:`AttributeError`, as for a missing attribute.
    dir_ : callable
        The package's ``__dir__``: its namespace and the public names.

    Raises
    ------
    ValueError
        If a name is listed twice, or a name is also one of the package's submodules (an
        import of the submodule would rebind the name to the module).
    """
    where: dict[str, str] = {}
    for module, names in exports.items():
        for name in names:
            if name in where:
                raise ValueError(f"{package}: {name!r} is exported by both "
                                 f"{where[name]!r} and {module!r}")
            if name in exports:
                raise ValueError(f"{package}: {name!r} is both a public name and a module")
            where[name] = module

    def getattr_(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return sorted(where), getattr_, dir_
