"""The API reference (docs/_ext/apigen.py writes docs/api/ when Sphinx builds) covers every
public name of funcgrad and of each public module, and every public module has a page."""
import importlib.util
import pathlib
import types

import pytest

import funcgrad

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Attributes of ``funcgrad`` that are modules but not public API: the layers and
# implementation packages (documented in the developer guide instead).
IMPLEMENTATION = {"api", "callbacks", "core", "lowering", "numpy_api", "tapes", "transforms", "viz",
                  "experimental", "scipy"}


def _apigen():
    path = ROOT / "docs" / "_ext" / "apigen.py"
    if not path.exists():
        pytest.skip("docs/ not next to the package (installed copy)")
    spec = importlib.util.spec_from_file_location("apigen", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_public_module_has_a_page():
    apigen = _apigen()
    modules = {n for n in dir(funcgrad) if not n.startswith("_")
               and isinstance(getattr(funcgrad, n), types.ModuleType)}
    missing = sorted(f"funcgrad.{n}" for n in modules - IMPLEMENTATION if f"funcgrad.{n}" not in apigen.MODULES)
    assert not missing, f"public modules without an API page (add them to apigen.MODULES): {missing}"
    for sub in ("special", "stats", "linalg", "optimize", "integrate", "signal"):
        assert f"funcgrad.scipy.{sub}" in apigen.MODULES
    assert "funcgrad.experimental.ode" in apigen.MODULES


@pytest.mark.parametrize("path", _apigen().MODULES if (ROOT / "docs").exists() else [])
def test_every_public_name_has_an_entry(path):
    apigen = _apigen()
    obj = apigen.resolve(path)
    text = apigen.page(path)
    names = apigen.public_names(obj)
    assert names, path
    for name in names:
        assert f":: {path}.{name}\n" in text, f"{path}.{name} has no entry in the API reference"


@pytest.mark.parametrize("path", _apigen().MODULES if (ROOT / "docs").exists() else [])
def test_every_public_function_has_a_docstring(path):
    import inspect

    apigen = _apigen()
    obj = apigen.resolve(path)
    undocumented = []
    for name in apigen.public_names(obj):
        value = getattr(obj, name)
        members = ([(f"{name}.{s}", getattr(value, s)) for s in apigen.public_names(value)]
                   if isinstance(value, types.ModuleType) else [(name, value)])
        undocumented += [n for n, v in members if apigen._own(v) and not inspect.getdoc(v)]
    assert not undocumented, f"{path}: no docstring for {undocumented}"
