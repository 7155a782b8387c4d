"""JAX's module paths import as modules under funcgrad (``jax`` -> ``funcgrad``), and the
submodules that are also attributes are the same objects either way."""
import importlib
import subprocess
import sys

import pytest

MODULES = [
    "funcgrad.numpy", "funcgrad.numpy.linalg", "funcgrad.numpy.fft", "funcgrad.lax", "funcgrad.lax.linalg",
    "funcgrad.random", "funcgrad.nn", "funcgrad.nn.initializers", "funcgrad.tree", "funcgrad.tree_util",
    "funcgrad.flatten_util", "funcgrad.example_libraries", "funcgrad.example_libraries.optimizers",
    "funcgrad.example_libraries.stax", "funcgrad.custom_derivatives", "funcgrad.typing", "funcgrad.config",
    "funcgrad.scipy", "funcgrad.scipy.special", "funcgrad.scipy.stats", "funcgrad.scipy.stats.norm",
    "funcgrad.scipy.stats.multivariate_normal", "funcgrad.scipy.linalg", "funcgrad.scipy.optimize",
    "funcgrad.scipy.integrate", "funcgrad.scipy.signal", "funcgrad.scipy.interpolate", "funcgrad.scipy.spatial",
    "funcgrad.scipy.spatial.transform", "funcgrad.debug", "funcgrad.errors",
    "funcgrad.experimental.ode",
]


# The paths that are easy to get wrong (a module that is also an attribute of its parent).
FRESH = ["funcgrad.numpy.linalg", "funcgrad.numpy.fft", "funcgrad.lax.linalg", "funcgrad.example_libraries.stax",
         "funcgrad.flatten_util", "funcgrad.scipy.stats.norm"]


@pytest.mark.parametrize("path", FRESH)
def test_module_path_imports_fresh(path):
    # A fresh interpreter: ``import a.b.c`` must work on its own, not only after ``import funcgrad``.
    code = f"import {path} as m, types; assert isinstance(m, types.ModuleType), m"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("path", MODULES)
def test_module_is_its_parents_attribute(path):
    parent, _, name = path.rpartition(".")
    assert getattr(importlib.import_module(parent), name) is importlib.import_module(path)


def test_numpy_linalg_is_a_module_with_the_same_functions():
    import funcgrad.numpy as fnp
    import funcgrad.numpy.linalg
    import funcgrad.numpy_api.linalg as impl
    from funcgrad.numpy.linalg import LinAlgError, solve

    assert fnp.linalg is funcgrad.numpy.linalg
    assert solve is fnp.linalg.solve is impl.solve
    assert set(impl.__all__) <= set(dir(fnp.linalg))
    assert LinAlgError is impl.LinAlgError


def test_from_imports_of_common_names():
    import funcgrad as fg
    from funcgrad.custom_derivatives import custom_jvp
    from funcgrad.numpy.fft import rfft  # noqa: F401
    from funcgrad.scipy.special import logsumexp  # noqa: F401
    from funcgrad.scipy.stats import norm

    assert custom_jvp is fg.custom_jvp
    assert callable(norm.logpdf)
