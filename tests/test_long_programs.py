"""Long programs compile: no compiler pass recurses on program length (a chain of
thousands of fused elementwise operations raised RecursionError, and crashed with a
raised recursion limit), and the fusion plan bounds how deep fused code nests."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.lowering.compiler import MAX_FUSED_DEPTH, plan, simplify

# Run in a child: a recursion overflow in native code would kill the test run.
_CHAIN = textwrap.dedent("""
    import numpy as np, funcgrad as fg, funcgrad.numpy as fnp

    def chain(x, y):
        for i in range(2000):
            k = i % 4
            if k == 0:
                x = fnp.sin(x) * 0.5 + 0.1
            elif k == 1:
                x = fnp.where(x > 0, x, y.T * 0.3)
            elif k == 2:
                x = fnp.maximum(x, -1.0) + fnp.exp(-x * x)
            else:
                x = x * 1.01 - 0.2
        return x

    x = np.linspace(-1, 1, 12).reshape(3, 4)
    y = np.linspace(2, -2, 12).reshape(4, 3)
    got, want = fg.jit(chain)(x, y), chain(x, y)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    print("ok")
""")


def test_a_chain_of_2000_elementwise_operations_compiles_and_matches_eager():
    env = dict(os.environ, FUNCGRAD_NO_DISK_CACHE="1", FUNCGRAD_LOG_COMPILES="1")
    r = subprocess.run([sys.executable, "-c", _CHAIN], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "ok"
    assert "running the interpreter" not in r.stderr, r.stderr[-3000:]


def _fused_depths(jaxpr, p) -> dict:
    """For each value: the longest chain of fused (buffer-less) equations from it down
    to buffers and inputs, the depth of ``at`` calls evaluating it in a loop."""
    producer = {id(o): e for e in jaxpr.eqns for o in e.outputs}
    depth: dict = {}
    for e in jaxpr.eqns:
        below = [depth.get(id(a), 0) for a in e.inputs
                 if id(a) in producer and id(a) not in p.materialized]
        for o in e.outputs:
            depth[id(o)] = 1 + max(below, default=0)
    return depth


def test_fused_regions_are_bounded_in_depth():
    def f(x):
        for _ in range(500):
            x = fnp.sin(x) * 0.5 + 0.25
        return fnp.sum(x * x)

    jaxpr = simplify(fg.make_jaxpr(f)(np.ones(8)).jaxpr)
    p = plan(jaxpr)
    depth = _fused_depths(jaxpr, p)
    assert max(depth.values()) <= MAX_FUSED_DEPTH + 1
    # ... by giving a buffer to a value now and then, not to every value
    assert len(p.materialized) < len(jaxpr.eqns) // 20
