"""The ``>>>`` examples in the docstrings of funcgrad's public names run as doctests and
print what they show.

The objects are found the way the API reference finds them (``docs/_ext/apigen.py``: every
public name of every module in ``MODULES``, funcgrad's own functions and classes, each
object once). Each example runs in a fresh namespace holding ``np`` (NumPy), ``funcgrad``
and ``fg``, ``fnp`` (``funcgrad.numpy``), ``lax``, ``random`` and the public names of the
module the object is documented in, so an example may call its function unqualified.
"""
import doctest
import importlib.util
import inspect
import pathlib
import types

import numpy as np
import pytest

import funcgrad

ROOT = pathlib.Path(__file__).resolve().parent.parent
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _apigen():
    path = ROOT / "docs" / "_ext" / "apigen.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("apigen", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _examples():
    """(qualified name, object, module path) for every public object with an example,
    first occurrence in ``MODULES`` order wins."""
    apigen = _apigen()
    if apigen is None:
        return []
    seen, found = set(), []

    def visit(path, owner):
        for name in apigen.public_names(owner):
            value = getattr(owner, name)
            if isinstance(value, types.ModuleType):
                visit(f"{path}.{name}", value)
                continue
            if not apigen._own(value) or id(value) in seen:
                continue
            seen.add(id(value))
            if ">>>" in (inspect.getdoc(value) or ""):
                found.append((f"{path}.{name}", value, path))

    for path in apigen.MODULES:
        visit(path, apigen.resolve(path))
    return found


EXAMPLES = _examples()


def _namespace(module_path):
    import funcgrad.numpy as fnp
    apigen = _apigen()
    owner = apigen.resolve(module_path)
    ns = {name: getattr(owner, name) for name in apigen.public_names(owner)}
    ns.update(np=np, funcgrad=funcgrad, fg=funcgrad, fnp=fnp, lax=funcgrad.lax, random=funcgrad.random)
    return ns


def test_examples_are_found():
    if _apigen() is None:
        pytest.skip("docs/ not next to the package (installed copy)")
    assert len(EXAMPLES) > 100


@pytest.mark.parametrize("name,obj,module_path", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_docstring_example(name, obj, module_path):
    if module_path.startswith("funcgrad.dask"):
        pytest.importorskip("dask.array")  # the optional ``dask`` extra
    doc = inspect.getdoc(obj)
    test = doctest.DocTestParser().get_doctest(doc, _namespace(module_path), name, None, 0)
    out = []
    runner = doctest.DocTestRunner(verbose=False, optionflags=FLAGS)
    runner.run(test, out=out.append, clear_globs=True)
    assert not runner.failures, f"{name}: {runner.failures} example(s) fail:\n" + "".join(out)
