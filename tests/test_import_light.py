"""``import funcgrad`` (and its user-facing modules) loads no llvmlite and no lowering:
the compiler is imported by the first call that compiles."""
import subprocess
import sys

CHECK = """
import sys
import funcgrad, funcgrad.numpy, funcgrad.lax, funcgrad.random, funcgrad.nn, funcgrad.tree_util
import funcgrad.scipy.special, funcgrad.scipy.stats, funcgrad.scipy.linalg, funcgrad.scipy.optimize
import funcgrad.experimental.ode, funcgrad.export
heavy = sorted(m for m in sys.modules if m == "llvmlite" or m.startswith(("llvmlite.", "funcgrad.lowering", "dask")))
print(heavy)
import numpy as np
funcgrad.grad(lambda x: funcgrad.numpy.sum(funcgrad.numpy.sin(x)))(np.ones(3))   # eager: still nothing compiled
print("llvmlite" in sys.modules)
print(funcgrad.jit(lambda x: x * 2.0)(np.ones(2)).tolist(), "llvmlite" in sys.modules)
"""


def test_import_loads_no_compiler():
    proc = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    heavy, eager, compiled = proc.stdout.strip().splitlines()
    assert heavy == "[]", f"import funcgrad loaded {heavy}"
    assert eager == "False"
    assert compiled == "[2.0, 2.0] True"
