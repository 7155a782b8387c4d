"""Writes the API reference pages (``docs/api/*.rst``) from the public names of funcgrad's
public modules, before Sphinx reads the sources.

One page per module; every name in the module's ``__all__`` (or, without one, every
public attribute) gets an entry: ``autofunction``/``autoclass`` for funcgrad's own objects,
a one-line ``py:data`` entry for what a module re-exports from NumPy (dtypes, constants).
``tests/test_docs_api_coverage.py`` checks that every public name has its entry.
"""
from __future__ import annotations

import importlib
import inspect
import types
from pathlib import Path

# The public modules (an attribute namespace that is not an importable module would work
# too: ``resolve`` falls back to ``getattr``).
MODULES = [
    "funcgrad", "funcgrad.numpy", "funcgrad.numpy.linalg", "funcgrad.numpy.fft", "funcgrad.lax",
    "funcgrad.random", "funcgrad.nn", "funcgrad.nn.initializers", "funcgrad.tree", "funcgrad.tree_util",
    "funcgrad.scipy.special", "funcgrad.scipy.stats", "funcgrad.scipy.linalg", "funcgrad.scipy.optimize",
    "funcgrad.scipy.integrate", "funcgrad.scipy.signal", "funcgrad.scipy.interpolate", "funcgrad.scipy.spatial",
    "funcgrad.scipy.spatial.transform", "funcgrad.ops", "funcgrad.debug",
    "funcgrad.experimental.ode", "funcgrad.export", "funcgrad.errors", "funcgrad.test_util",
    "funcgrad.autograph", "funcgrad.config", "funcgrad.dask", "funcgrad.lax.linalg", "funcgrad.flatten_util",
    "funcgrad.example_libraries", "funcgrad.example_libraries.optimizers", "funcgrad.example_libraries.stax",
    "funcgrad.custom_derivatives", "funcgrad.typing", "funcgrad.extend", "funcgrad.extend.core",
    "funcgrad.extend.core.primitives", "funcgrad.dtypes", "funcgrad.dlpack", "funcgrad.version",
    "funcgrad.stages", "funcgrad.image", "funcgrad.custom_batching",
]


def resolve(path: str):
    """The module (or attribute namespace) at ``path``."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        parent, _, name = path.rpartition(".")
        return getattr(importlib.import_module(parent), name)


def public_names(obj) -> list[str]:
    """The names a user reaches on ``obj``: its ``__all__``, else its public attributes that
    are not modules (submodules get pages of their own or are implementation)."""
    names = getattr(obj, "__all__", None)
    if names is None:
        names = [n for n in dir(obj) if not n.startswith("_")
                 and not isinstance(getattr(obj, n), types.ModuleType)]
    return sorted(set(names))


def _own(value) -> bool:
    module = getattr(value, "__module__", None) or ""
    return module.startswith("funcgrad") and (inspect.isfunction(value) or inspect.isclass(value)
                                              or callable(value))


def _entry(path: str, name: str, value) -> list[str]:
    target = f"{path}.{name}"
    if isinstance(value, types.ModuleType):
        lines = [f".. py:module:: {target}", "   :no-index:", ""]
        for sub in public_names(value):
            lines += _entry(target, sub, getattr(value, sub))
        return lines
    if _own(value) and inspect.isclass(value):
        return [f".. autoclass:: {target}", "   :no-index:", ""]
    if _own(value) and (inspect.isfunction(value) or callable(value)):
        return [f".. autofunction:: {target}", "   :no-index:", ""]
    origin = getattr(value, "__module__", None) or type(value).__module__
    what = getattr(value, "__name__", None) or type(value).__name__
    return [f".. py:data:: {target}", "   :no-index:", "", f"   ``{origin}.{what}``, as in NumPy/JAX.", ""]


def page(path: str) -> str:
    obj = resolve(path)
    title = f"``{path}``"
    lines = [title, "=" * len(title), ""]
    doc = inspect.getdoc(obj) if isinstance(obj, types.ModuleType) else None
    if doc:
        lines += [".. code-block:: text", ""] + ["   " + ln for ln in doc.splitlines()[:1]] + [""]
    for name in public_names(obj):
        lines += _entry(path, name, getattr(obj, name))
    return "\n".join(lines) + "\n"


def write_pages(out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for path in MODULES:
        (out / f"{path}.rst").write_text(page(path))
        names.append(path)
    toc = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", ""]
    toc += [f"   {p}" for p in names]
    (out / "index.rst").write_text("\n".join(toc) + "\n")
    return names


def setup(app):
    app.connect("builder-inited", lambda app: write_pages(Path(app.srcdir) / "api"))
    return {"parallel_read_safe": True}
